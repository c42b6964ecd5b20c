"""The learning-rate range test on a problem whose good rate is known from theory."""

import threading

import numpy as np
import pytest

from studio.core.runs.folders import runs_root
from studio.core.training.lr_finder import (
    LrFinding,
    RangeTest,
    find_learning_rate,
    range_test,
    suggest,
)
from studio.core.training.trainer import TrainingError
from tests.helpers import regression_project, snapshot

KNOWN_RATE = 0.5
"""Plain SGD's best rate for ``regression_project``: one Dense unit fitting a linear target
with mean squared error on standardised features has the Hessian 2·E[x xᵀ] = 2·I (the bias's
input is 1), so gradient descent converges fastest at 1/2 and diverges above 2/2 = 1."""


def sgd_project(tmp_path):
    project = regression_project(tmp_path)
    project.training.optimizer = "sgd"
    project.training.momentum = 0.0
    project.training.batch_size = 32
    return project


def test_the_suggestion_is_within_a_factor_of_ten_of_the_known_rate(tmp_path):
    project = sgd_project(tmp_path)
    before = snapshot(tmp_path)  # the workspace of unsaved projects' runs is in it
    events = []
    found = find_learning_rate(project, runs_root(tmp_path / "p.studio.json"), events.append)
    assert snapshot(tmp_path) == before  # no run folder, no checkpoint
    assert found.status == "diverged"  # rates up to 10 are 10 times too large
    assert KNOWN_RATE / 10 <= found.suggestion <= KNOWN_RATE * 10, found.suggestion
    assert len(found.rates) == len(found.losses) == len(found.smoothed) < 100
    assert np.all(np.diff(found.rates) > 0) and found.rates[0] == pytest.approx(1e-7)
    batches = [e for e in events if e.get("what") == "Finding the learning rate"]
    assert batches[-1]["done"] in (len(found.rates), len(found.rates) + 1)  # + a NaN batch


def test_the_stop_event_stops_it_after_the_current_batch(tmp_path):
    stop = threading.Event()

    def on_event(event):
        if event.get("done") == 3 and event.get("what") == "Finding the learning rate":
            stop.set()

    found = find_learning_rate(sgd_project(tmp_path), tmp_path / "runs", on_event, stop)
    assert found.status == "stopped" and len(found.rates) == 3 and found.suggestion is None


def linear_fit():
    """A compiled one-unit model at the rate 0.01, and a dataset of a linear target (repeated)
    to fit it on."""
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    x = np.random.default_rng(0).normal(size=(64, 2)).astype("float32")
    return model, tf.data.Dataset.from_tensor_slices((x, x @ [1.0, 2.0])).batch(16).repeat()


def test_the_model_is_given_back_with_its_weights_and_rate():
    model, dataset = linear_fit()
    before = [w.copy() for w in model.get_weights()]
    found = range_test(model, dataset, RangeTest(1e-4, 1.0, 20))
    assert len(found.rates) >= 10
    for old, new in zip(before, model.get_weights(), strict=True):
        np.testing.assert_array_equal(old, new)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.01)


def test_each_batch_s_progress_carries_the_point_it_recorded():
    model, dataset = linear_fit()
    events = []
    found = range_test(model, dataset, RangeTest(1e-4, 1e3, 30), events.append)
    assert found.status == "diverged"  # rates up to 1000 make the loss explode
    points = [(e["learning_rate"], e["loss"]) for e in events if "loss" in e]
    assert points == list(zip(found.rates, found.losses, strict=True))  # drawn as it goes
    assert [e["done"] for e in events if "loss" in e] == list(range(1, len(points) + 1))


def test_the_suggestion_is_the_steepest_fall_before_the_lowest_loss():
    rates = list(np.geomspace(1e-5, 1, 50))
    # a loss falling along a logistic centred on 1e-3, then rising past 0.1
    x = np.log10(rates)
    losses = list(1 / (1 + np.exp(3 * (x + 3))) + np.maximum(0, x + 1) ** 2)
    assert suggest(rates, losses) == pytest.approx(1e-3, rel=0.3)
    assert suggest(rates, sorted(losses)) is None  # never falls
    assert LrFinding().to_dict()["suggestion"] is None


@pytest.mark.parametrize("test, words", [(RangeTest(1.0, 0.1), "grow"),
                                         (RangeTest(batches=3), "at least")])
def test_settings_that_cannot_run_are_refused_in_one_line(tmp_path, test, words):
    with pytest.raises(TrainingError, match=words):
        find_learning_rate(sgd_project(tmp_path), tmp_path, test=test)
