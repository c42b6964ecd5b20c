"""Optimizers and learning-rate schedules, checked against Keras itself."""

from __future__ import annotations

import subprocess
import sys

import keras
import numpy as np
import pytest

from studio.core.build.optimizers import (
    OPTIMIZER_CLASSES,
    PARAMETERS_BY_OPTIMIZER,
    current_learning_rate,
    make_optimizer,
    optimizer_slots,
    schedule_callbacks,
    schedule_curve,
    schedule_problems,
)
from studio.core.project.document import OPTIMIZERS, Schedule, TrainingSettings

UNUSUAL = {"momentum": 0.8, "nesterov": True, "beta_1": 0.85, "beta_2": 0.99, "rho": 0.8,
           "weight_decay": 0.01}
"""Values no optimizer has by default, so the config shows that ours arrived."""


def settings(optimizer: str = "sgd", kind: str = "constant", epochs: int = 10,
             **schedule) -> TrainingSettings:
    training = TrainingSettings(optimizer=optimizer, learning_rate=0.1, epochs=epochs,
                                schedule=Schedule(kind=kind, **schedule))
    for name, value in UNUSUAL.items():
        setattr(training, name, value)
    return training


def tiny_model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    return model


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_every_optimizer_builds_with_its_parameters(name):
    optimizer = make_optimizer(settings(name), steps_per_epoch=5)
    config = optimizer.get_config()
    assert type(optimizer).__name__ == OPTIMIZER_CLASSES[name]
    assert config["learning_rate"] == pytest.approx(0.1)
    for field in PARAMETERS_BY_OPTIMIZER[name]:
        assert config[field] == pytest.approx(UNUSUAL[field]), field


def test_no_weight_decay_is_left_out_except_for_adamw():
    training = settings("adam")
    training.weight_decay = 0.0
    assert make_optimizer(training, 5).get_config()["weight_decay"] is None
    training.optimizer = "adamw"
    assert schedule_problems(training) == [
        "AdamW with no weight decay is plain Adam: set a weight decay above 0 (0.004 is usual) "
        "or pick Adam."]


SCHEDULES = [
    ("constant", {}),
    ("step", {"step_epochs": 3, "factor": 0.5}),
    ("exponential", {"factor": 0.7}),
    ("cosine", {"min_learning_rate": 0.01}),
    ("cosine", {"warmup_epochs": 2, "min_learning_rate": 0.0}),
    ("plateau", {"factor": 0.2, "patience": 2}),
]


@pytest.mark.parametrize(("kind", "schedule"), SCHEDULES)
def test_the_drawn_curve_is_the_keras_schedule(kind, schedule):
    training, steps = settings("sgd", kind, epochs=10, **schedule), 7
    optimizer = make_optimizer(training, steps)
    curve = schedule_curve(training, 12, steps, points=60)
    assert curve.x[0] == 0 and curve.x[-1] == 12
    assert np.all(np.diff(curve.x) > 0)
    keras_rates = []
    for x in curve.x:  # the end of the run repeats the last step's rate
        optimizer.iterations.assign(min(round(x * steps), 12 * steps - 1))
        keras_rates.append(current_learning_rate(optimizer))
    np.testing.assert_allclose(curve.rate, keras_rates, rtol=2e-6, atol=1e-7 * 0.1)
    assert (curve.note != "") == (kind == "plateau")


def test_a_step_schedule_drops_exactly_at_its_epochs():
    curve = schedule_curve(settings("sgd", "step", step_epochs=3, factor=0.5), 10, 20)
    for epoch, rate in ((2.95, 0.1), (3, 0.05), (5.95, 0.05), (6, 0.025), (9, 0.0125)):
        assert curve.rate[np.searchsorted(curve.x, epoch)] == pytest.approx(rate)
    assert curve.x[np.searchsorted(curve.x, 3) - 1] == pytest.approx(3 - 1 / 20)


def test_cosine_warms_up_then_falls_to_the_minimum():
    curve = schedule_curve(settings("sgd", "cosine", warmup_epochs=2, min_learning_rate=0.001),
                           10, 50)
    assert curve.rate[0] == 0
    peak = int(np.argmax(curve.rate))
    assert curve.x[peak] == 2 and curve.rate[peak] == pytest.approx(0.1)
    assert np.all(np.diff(curve.rate[:peak]) > 0) and np.all(np.diff(curve.rate[peak:]) <= 0)
    assert curve.rate[-1] == pytest.approx(0.001, rel=1e-2)  # the last step is nearly there


def test_plateau_lowers_the_rate_through_a_callback():
    training = settings("adam", "plateau", factor=0.2, patience=2, min_learning_rate=0.01)
    assert schedule_callbacks(settings("adam", "cosine")) == []
    (callback,) = schedule_callbacks(training)
    assert isinstance(callback, keras.callbacks.ReduceLROnPlateau)
    assert (callback.monitor, callback.factor, callback.patience, callback.min_lr) == (
        "val_loss", 0.2, 2, 0.01)
    model = tiny_model()
    model.compile(optimizer=make_optimizer(training, 3), loss="mse")
    callback.set_model(model)
    callback.on_train_begin()
    rates = []
    for epoch in range(6):
        callback.on_epoch_end(epoch, {"val_loss": 1.0})
        rates.append(current_learning_rate(model.optimizer))
    np.testing.assert_allclose(rates, [0.1, 0.1, 0.02, 0.02, 0.01, 0.01], rtol=1e-6)
    note = schedule_curve(training, 10, 3).note
    assert note == ("Starts at 0.1 and is multiplied by 0.2 after 2 epochs without a lower "
                    "validation loss, down to 0.01.")


@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_slots_count_the_optimizer_variables_keras_keeps(name, momentum):
    training = settings(name)
    training.momentum, training.nesterov = momentum, False
    model = tiny_model()
    optimizer = make_optimizer(training, 5)
    optimizer.build(model.trainable_variables)
    shapes = [tuple(v.shape) for v in model.trainable_variables]
    per_weight = [v for v in optimizer.variables if tuple(v.shape) in shapes]
    assert len(per_weight) == optimizer_slots(training) * len(shapes)


@pytest.mark.parametrize(("change", "words"), [
    ({"kind": "cosine", "warmup_epochs": 10}, "warm-up (10 epochs) is as long as the run"),
    ({"kind": "cosine", "min_learning_rate": 0.5}, "minimum learning rate (0.5) is not below"),
    ({"kind": "plateau", "min_learning_rate": 0.1}, "minimum learning rate (0.1) is not below"),
    ({"kind": "step", "factor": 1.0}, "A factor of 1 keeps the rate constant"),
    ({"kind": "exponential", "factor": 1.5}, "factor must be above 0 and below 1 (it is 1.5)"),
])
def test_impossible_schedules_are_explained(change, words):
    training = settings("sgd", epochs=10)
    for key, value in change.items():
        setattr(training.schedule, key, value)
    (problem,) = schedule_problems(training)
    assert words in problem
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        make_optimizer(training, 5)


def test_sensible_settings_have_no_problems():
    assert schedule_problems(TrainingSettings()) == []
    for kind in ("constant", "step", "exponential", "cosine", "plateau"):
        assert schedule_problems(settings("sgd", kind, warmup_epochs=1)) == []
    assert schedule_problems(TrainingSettings(learning_rate=0.0)) == [
        "The learning rate must be a number above 0."]


def test_a_reloaded_checkpoint_continues_the_schedule_and_the_optimizer_state(tmp_path):
    """Three steps, saved and reloaded, then two more: the same weights as five in a row."""
    training, steps = settings("sgd", "cosine", epochs=3, warmup_epochs=1), 4
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(20, 4)).astype("float32"), rng.normal(size=(20, 3)).astype("float32")
    keras.utils.set_random_seed(1)
    straight = tiny_model()
    resumed = keras.models.clone_model(straight)
    resumed.set_weights(straight.get_weights())
    for model in (straight, resumed):
        model.compile(optimizer=make_optimizer(training, steps), loss="mse")
    straight.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    resumed.fit(x[:12], y[:12], batch_size=4, epochs=1, shuffle=False, verbose=0)
    resumed.save(tmp_path / "epoch.keras")
    reloaded = keras.saving.load_model(tmp_path / "epoch.keras", safe_mode=True)
    curve = schedule_curve(training, 3, steps, points=13)
    assert int(reloaded.optimizer.iterations.numpy()) == 3
    assert current_learning_rate(reloaded.optimizer) == pytest.approx(curve.rate[3])
    reloaded.fit(x[12:], y[12:], batch_size=4, epochs=1, shuffle=False, verbose=0)
    assert int(reloaded.optimizer.iterations.numpy()) == 5
    assert current_learning_rate(reloaded.optimizer) == pytest.approx(curve.rate[5])
    for ours, theirs in zip(reloaded.get_weights(), straight.get_weights(), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


def test_drawing_a_schedule_does_not_load_tensorflow():
    code = (
        "import sys\n"
        "from studio.core.build.optimizers import schedule_curve\n"
        "from studio.core.project.document import Schedule, TrainingSettings\n"
        "for kind in ('constant', 'step', 'exponential', 'cosine', 'plateau'):\n"
        "    schedule_curve(TrainingSettings(schedule=Schedule(kind=kind)), 10, 100)\n"
        "print('tensorflow' in sys.modules, 'keras' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_current_rate_reads_through_mixed_precision_loss_scaling():
    training = settings("sgd", "cosine", epochs=4, warmup_epochs=1)
    optimizer = keras.optimizers.LossScaleOptimizer(make_optimizer(training, 10))
    optimizer.inner_optimizer.iterations.assign(5)
    assert current_learning_rate(optimizer) == pytest.approx(0.05)
