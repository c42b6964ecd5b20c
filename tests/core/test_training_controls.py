"""Checkpoints, resume, early stopping, the run record, and runs that end in a fault."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys

import pytest

from studio.cli import main
from studio.core.project.document import Checkpoints, EarlyStopping, save_project
from studio.core.runs import folders as runs
from studio.core.runs.folders import checkpoints, read_metrics
from studio.core.training.trainer import TrainingError, resume, train
from tests.helpers import tiny_project


def status_of(run_dir):
    return json.loads((run_dir / runs.RUN_FILE).read_text())


def load(path):
    import keras

    return keras.saving.load_model(path, safe_mode=True)


def test_checkpoints_hold_the_optimizer_state_and_the_run_record_is_complete(tmp_path):
    project = tiny_project(epochs=2)
    result = train(project, tmp_path)
    folder = result.run_dir
    found = checkpoints(folder)
    assert [epoch for epoch, _ in found] == [1, 2]
    steps = -(-8000 // project.training.batch_size)
    model = load(found[0][1])
    assert int(model.optimizer.iterations.numpy()) == steps  # saved with the optimizer
    assert len(model.optimizer.variables) > 1
    config = json.loads((folder / runs.CONFIG_FILE).read_text())
    assert config["seed"] == 0 and config["training"]["epochs"] == 2
    assert len(config["dataset_fingerprint"]) == 32
    assert {"tensorflow", "keras", "numpy", "python", "layer_studio"} <= set(config["versions"])
    assert config["devices"] == ["/cpu:0"] and config["replicas"] == 1
    info = status_of(folder)
    assert info["status"] == "finished" and info["epochs"] == info["epochs_planned"] == 2
    assert info["best"]["val_accuracy"] == max(r["val_accuracy"] for r in result.epochs)
    assert info["pid"] == os.getpid()
    assert list((folder / runs.LOGS / "train").glob("events.out.tfevents.*"))
    assert all("learning_rate" in row for row in read_metrics(folder))


def test_keep_best_only_keeps_one_checkpoint_of_the_best_epoch(tmp_path):
    project = tiny_project(epochs=3)
    project.training.checkpoints = Checkpoints(every_epochs=1, keep_best_only=True,
                                               monitor="val_accuracy")
    result = train(project, tmp_path)
    (epoch, _), = checkpoints(result.run_dir)
    accuracies = [row["val_accuracy"] for row in result.epochs]
    assert accuracies[epoch - 1] == max(accuracies)


def test_a_stopped_run_resumes_with_its_epoch_counter_optimizer_and_curves(tmp_path):
    project = tiny_project(epochs=4)
    stop_after = 2

    def on_event(event):
        if event["type"] == "epoch" and event["epoch"] == stop_after:
            stopping.set()  # while epoch 2's checkpoint is written in the background
        checkpointed.extend([event["epoch"]] if event["type"] == "checkpoint" else [])

    import threading

    stopping = threading.Event()
    checkpointed = []
    first = train(project, tmp_path, on_event, stopping)
    assert first.status == "stopped" and status_of(first.run_dir)["status"] == "stopped"
    # The stop lands in epoch 3, which is cut short: neither recorded nor checkpointed; the
    # checkpoint of epoch 2 was written and reported before the run ended.
    assert [row["epoch"] for row in first.epochs] == [1, 2]
    assert [epoch for epoch, _ in checkpoints(first.run_dir)] == checkpointed == [1, 2]
    events = []
    second = resume(first.run_dir, events.append)
    assert second.status == "finished" and second.run_dir == first.run_dir
    start = next(e for e in events if e["type"] == "start")
    assert start["initial_epoch"] == 2 and start["epochs"] == 4
    assert [row["epoch"] for row in json.loads(start["history"])] == [1, 2]
    assert [e["epoch"] for e in events if e["type"] == "epoch"] == [3, 4]
    assert [row["epoch"] for row in read_metrics(first.run_dir)] == [1, 2, 3, 4]
    steps = -(-8000 // project.training.batch_size)
    final = load(first.run_dir / runs.MODEL_FILE)
    assert int(final.optimizer.iterations.numpy()) == 4 * steps


def test_resume_needs_a_checkpoint_and_more_epochs(tmp_path):
    project = tiny_project(epochs=1)
    project.training.checkpoints = Checkpoints(every_epochs=0)
    result = train(project, tmp_path)
    with pytest.raises(TrainingError, match="no checkpoint"):
        resume(result.run_dir)
    project.training.checkpoints = Checkpoints(every_epochs=1)
    result = train(project, tmp_path)
    with pytest.raises(TrainingError, match="already has 1 epochs"):
        resume(result.run_dir)
    assert resume(result.run_dir, epochs=2).status == "finished"
    assert [row["epoch"] for row in read_metrics(result.run_dir)] == [1, 2]


def test_early_stopping_ends_the_run_as_finished_with_a_note(tmp_path):
    project = tiny_project(epochs=8)
    project.training.learning_rate = 1e-12  # nothing changes, so nothing improves
    project.training.early_stopping = EarlyStopping(enabled=True, monitor="val_accuracy",
                                                    patience=1)
    result = train(project, tmp_path)
    assert result.status == "finished" and len(result.epochs) == 2
    assert "did not improve for 1 epochs" in result.note


def test_out_of_memory_fails_the_run_with_a_batch_size_that_fits(tmp_path, monkeypatch):
    import keras
    import tensorflow as tf

    def out_of_memory(*args, **kwargs):
        raise tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor")

    monkeypatch.setattr(keras.Model, "fit", out_of_memory)
    project = tiny_project(epochs=1)
    with pytest.raises(TrainingError, match="out of memory") as caught:
        train(project, tmp_path)
    assert "batch size" in str(caught.value)
    (run_dir,) = tmp_path.iterdir()
    assert status_of(run_dir)["status"] == "failed"


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS], ids=["full-disk", "read-only"])
def test_a_full_disk_or_read_only_workspace_fails_the_run_and_keeps_earlier_checkpoints(
        tmp_path, monkeypatch, error):
    import keras

    real_save = keras.Model.save

    def save(model, path, *args, **kwargs):
        if str(path).endswith(runs.checkpoint_name(2)):
            with open(path, "wb") as half_written:
                half_written.write(b"PK")
            raise OSError(error, os.strerror(error), str(path))
        real_save(model, path, *args, **kwargs)

    monkeypatch.setattr(keras.Model, "save", save)
    with pytest.raises(TrainingError, match=os.strerror(error)) as caught:
        train(tiny_project(epochs=3), tmp_path)
    assert "earlier checkpoint" in str(caught.value)
    (run_dir,) = tmp_path.iterdir()
    assert status_of(run_dir)["status"] == "failed"
    assert [epoch for epoch, _ in checkpoints(run_dir)] == [1]
    assert load(checkpoints(run_dir)[0][1]).count_params() == 7850
    assert sorted(p.name for p in (run_dir / runs.CHECKPOINTS).iterdir()) == [
        runs.checkpoint_name(1)]


def test_a_killed_training_process_leaves_an_interrupted_run_that_resumes(tmp_path, capsys):
    from studio.core.runs.history import effective_status
    from studio.core.runs.index import INDEX_FILE, RunIndex

    project_path = tmp_path / "p.studio.json"
    save_project(tiny_project(epochs=40), project_path)
    command = [sys.executable, "-m", "studio", "train", str(project_path), "--json"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=tmp_path,
                             env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        for line in child.stdout:
            event = json.loads(line)
            if event["type"] == "checkpoint" and event["epoch"] == 1:
                assert RunIndex(runs.runs_root(project_path)).sync().total == 1  # mid-run
            if event["type"] == "checkpoint" and event["epoch"] == 2:
                break
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
        child.stdout.close()
    root = runs.runs_root(project_path)
    (run_dir,) = (path for path in root.iterdir() if path.is_dir())
    info = status_of(run_dir)
    assert info["status"] == "running" and effective_status(info, run_dir) == "interrupted"
    assert project_path.exists() and [e for e, _ in checkpoints(run_dir)][:2] == [1, 2]
    assert [run.status for run in RunIndex(root).runs()] == ["interrupted"]  # no re-sync
    assert sorted(path.name for path in root.glob(INDEX_FILE + "*")) == [INDEX_FILE]
    kept = max(e for e, _ in checkpoints(run_dir))
    assert main(["train", str(project_path), "--resume", run_dir.name, "--epochs",
                 str(kept + 1), "--json"]) == 0  # the run's id among the project's runs
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["type"] == "start" and lines[0]["initial_epoch"] == kept
    assert lines[-1]["status"] == "finished" and lines[-1]["run_dir"] == str(run_dir)
    assert [row["epoch"] for row in read_metrics(run_dir)] == list(range(1, kept + 2))
    assert status_of(run_dir)["status"] == "finished"
