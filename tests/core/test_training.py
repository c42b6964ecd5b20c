"""The core trainer: live events, stopping, run folders and clear failures."""

from __future__ import annotations

import csv
import json
import threading

import pytest

from studio.core.data import sources as data
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project, Schedule, load_project
from studio.core.runs import folders as runs
from studio.core.training.trainer import TrainingError, train
from tests.helpers import regression_project, tiny_project, two_tower_project


def test_training_reports_events_and_writes_the_run_folder(tmp_path):
    events = []
    result = train(tiny_project(epochs=2), tmp_path, events.append, report_every=5)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "start" and kinds.count("epoch") == 2
    batches = [e for e in events if e["type"] == "batch"]
    steps = events[0]["steps"]
    assert len(batches) == 2 * (steps // 5 + (steps % 5 != 0))
    assert all(isinstance(v, int | float | str) for e in events for v in e.values())
    assert batches[-1]["progress"] == pytest.approx(1.0)
    assert result.status == "finished"
    assert result.epochs[-1]["val_accuracy"] > 0.8

    folder = result.run_dir
    assert folder.parent == tmp_path
    assert load_project(folder / runs.PROJECT_FILE).name == "Tiny"
    rows = list(csv.DictReader((folder / runs.METRICS_FILE).open()))
    assert [int(r["epoch"]) for r in rows] == [1, 2]
    assert {"loss", "accuracy", "val_loss", "val_accuracy"} <= set(rows[0])
    prep = json.loads((folder / runs.PREPROCESSING_FILE).read_text())
    assert prep["scale"] == pytest.approx([1 / 255]) and prep["offset"] == [0.0]
    assert prep["sample_shape"] == [28, 28, 1] and prep["class_names"] == list("0123456789")
    assert json.loads((folder / runs.RUN_FILE).read_text())["status"] == "finished"

    import keras

    model = keras.saving.load_model(folder / runs.MODEL_FILE, safe_mode=True)
    assert model.count_params() == 7850


def test_stop_event_ends_the_run_after_the_current_batch(tmp_path):
    stop = threading.Event()
    batches = []

    def on_event(event):
        if event["type"] == "batch":
            batches.append(event)
            stop.set()

    result = train(tiny_project(epochs=50), tmp_path, on_event, stop, report_every=1)
    assert result.status == "stopped"
    assert len(batches) <= 2
    assert json.loads((result.run_dir / runs.RUN_FILE).read_text())["status"] == "stopped"
    assert (result.run_dir / runs.MODEL_FILE).exists()


def test_stop_before_training_begins_ends_the_run_as_stopped(tmp_path):
    # Stop pressed while the run is still starting: fit never runs, and the run is "stopped".
    stop = threading.Event()
    stop.set()
    events = []
    result = train(tiny_project(epochs=5), tmp_path, events.append, stop)
    assert result.status == "stopped"
    assert result.epochs == []
    assert [e["type"] for e in events] == ["start"]
    status = json.loads((result.run_dir / runs.RUN_FILE).read_text())
    assert status["status"] == "stopped"
    assert status["error"] is None and status["epochs"] == 0
    assert not (result.run_dir / runs.MODEL_FILE).exists()


def test_stop_after_the_last_epoch_still_completes_the_run(tmp_path):
    stop = threading.Event()

    def on_event(event):
        if event["type"] == "epoch" and event["epoch"] == 2:
            stop.set()

    result = train(tiny_project(epochs=2), tmp_path, on_event, stop, batch_size=512)
    assert result.status == "finished" and len(result.epochs) == 2
    assert json.loads((result.run_dir / runs.RUN_FILE).read_text())["status"] == "finished"


def test_diverging_loss_ends_the_run_with_a_clear_message(tmp_path):
    project = tiny_project(epochs=1)
    overflow = Node("rescaling_1", "Rescaling", {"scale": 1e38, "offset": 0.0})
    project.graph.insert(1, overflow)
    expected = r"loss became (nan|inf) in epoch 1, batch 1.*lower learning rate"
    with pytest.raises(TrainingError, match=expected):
        train(project, tmp_path, report_every=1)
    (folder,) = tmp_path.iterdir()
    status = json.loads((folder / runs.RUN_FILE).read_text())
    assert status["status"] == "failed" and "learning rate" in status["error"]


def test_invalid_model_fails_before_training(tmp_path):
    project = tiny_project(units=7)
    with pytest.raises(TrainingError, match="Set units to 10"):
        train(project, tmp_path)


def test_overrides_and_seeded_runs_repeat(tmp_path):
    a = train(tiny_project(), tmp_path / "a", epochs=1, batch_size=256)
    b = train(tiny_project(), tmp_path / "b", epochs=1, batch_size=256)
    assert a.epochs[0]["loss"] == pytest.approx(b.epochs[0]["loss"], rel=1e-4)
    assert len(a.epochs) == 1


def test_runs_root_next_to_saved_project_or_in_workspace(tmp_path, private_workspace):
    assert runs.runs_root(tmp_path / "digits.studio.json") == tmp_path / "runs" / "digits"
    assert runs.runs_root(None) == private_workspace / "runs"


def test_a_model_with_two_inputs_and_two_outputs_trains(tmp_path):
    events = []
    result = train(two_tower_project(), tmp_path, events.append)
    assert result.status == "finished"
    row = result.epochs[0]
    assert {"main_accuracy", "aux_accuracy", "val_main_accuracy", "val_aux_accuracy"} <= set(row)
    assert row["accuracy"] == pytest.approx((row["main_accuracy"] + row["aux_accuracy"]) / 2)
    assert row["val_main_accuracy"] > 0.5 and row["val_aux_accuracy"] > 0.5  # chance is 0.1
    batches = [e for e in events if e["type"] == "batch"]
    assert batches and all("accuracy" in e for e in batches)

    import keras

    model = keras.saving.load_model(result.run_dir / runs.MODEL_FILE, safe_mode=True)
    assert len(model.inputs) == 2 and len(model.outputs) == 2


def test_a_held_out_test_split_is_scored_after_the_last_epoch(tmp_path):
    project = tiny_project(epochs=1)
    project.dataset.test_split = 0.1
    events = []
    result = train(project, tmp_path, events.append)
    (test,) = [e for e in events if e["type"] == "test"]
    assert 0.5 < test["accuracy"] <= 1 and test["loss"] > 0
    assert abs(events[0]["samples"] - 7_000) <= 5  # 70% of each class, rounded per class
    recorded = json.loads((result.run_dir / runs.RUN_FILE).read_text())["test"]
    assert recorded == {k: v for k, v in test.items() if k != "type"}


def test_class_weights_reach_keras_fit(tmp_path, monkeypatch):
    import keras

    seen = {}
    real_fit = keras.Model.fit

    def fit(self, *args, **kwargs):
        seen["class_weight"] = kwargs.get("class_weight")
        return real_fit(self, *args, **kwargs)

    monkeypatch.setattr(keras.Model, "fit", fit)
    project = tiny_project(epochs=1)
    project.dataset.class_weights = True
    assert train(project, tmp_path).status == "finished"
    weights = seen["class_weight"]
    assert sorted(weights) == list(range(10))
    counts = data.load(project.dataset).class_counts("train")
    products = [weights[c] * counts[c] for c in range(10)]
    assert max(products) == pytest.approx(min(products))


def test_a_text_csv_trains_an_embedding_model(tmp_path):
    words = {"good": ["great fun", "loved it", "very good", "nice and warm"],
             "bad": ["awful mess", "hated it", "very bad", "cold and dull"]}
    rows = [f'"{text} {i}",{label}' for i in range(10) for label, texts in words.items()
            for text in texts]
    path = tmp_path / "reviews.csv"
    path.write_text("review,label\n" + "\n".join(rows) + "\n")
    project = Project(name="Reviews", graph=Graph.from_chain([
        Node("input_1", "Input", {"shape": [8]}),
        Node("embedding_1", "Embedding", {"input_dim": 50, "output_dim": 4}),
        Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"}),
    ]))
    project.dataset = DatasetChoice(source="csv", path=str(path), text_column="review",
                                    max_tokens=50, sequence_length=8)
    project.training.epochs = 1
    result = train(project, tmp_path / "runs")
    assert result.status == "finished"
    prep = json.loads((result.run_dir / runs.PREPROCESSING_FILE).read_text())
    assert prep["kind"] == "text" and "great" in prep["vocabulary"]
    assert prep["class_names"] == ["bad", "good"]


def test_a_regression_csv_trains_with_squared_error(tmp_path):
    result = train(regression_project(tmp_path), tmp_path / "runs")
    assert result.status == "finished"
    assert {"loss", "mae", "val_loss", "val_mae"} <= set(result.epochs[-1])
    assert result.epochs[-1]["loss"] < result.epochs[0]["loss"]


def test_the_schedule_spans_the_epochs_the_run_plans(tmp_path):
    project = tiny_project(epochs=10)
    project.training.schedule = Schedule(kind="cosine")
    result = train(project, tmp_path, epochs=1)  # as `studio train --epochs 1`
    # The cosine has fallen to about 0 by the end of this one-epoch run, not by epoch 10.
    assert result.epochs[0]["learning_rate"] < 0.01 * project.training.learning_rate
