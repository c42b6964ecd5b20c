"""Reading run folders: summaries of whole, damaged and interrupted runs, curves, config
differences, deleting and finding runs."""

from __future__ import annotations

import json
import os
from datetime import datetime

import pytest

from studio.core.runs import folders as runs
from studio.core.runs.history import (
    RunInUseError,
    RunNotFoundError,
    config_diff,
    delete_run,
    effective_status,
    find_run,
    latest_seconds_per_epoch,
    read_metrics,
    read_run,
)
from studio.core.runs.lock import RunLock
from tests.run_folders import (
    dead_pid,
    now_iso,
    rewrite_record,
    training_process,
    write_run,
    write_runs,
)


def test_a_finished_run_reads_whole(tmp_path):
    path = write_run(tmp_path, 3, optimizer="sgd", learning_rate=0.01, batch_size=128,
                     epochs=5, epochs_planned=8, status="stopped")
    run = read_run(path)
    assert (run.id, run.name, run.status, run.epochs, run.epochs_planned) == (
        path.name, "Demo CNN", "stopped", 5, 8)
    assert (run.optimizer, run.learning_rate, run.batch_size) == ("sgd", 0.01, 128)
    rows = read_metrics(path)
    assert [r["epoch"] for r in rows] == [1, 2, 3, 4, 5]
    assert run.best["val_loss"] == min(r["val_loss"] for r in rows)
    assert run.best["val_accuracy"] == max(r["val_accuracy"] for r in rows)
    assert run.started == "2026-01-05T09:21:00" and run.seconds == 7.5
    assert json.loads(json.dumps(run.to_dict()))["path"] == str(path)


def test_a_run_reads_its_task_and_headline_score(tmp_path):
    masks = write_run(tmp_path, 0, task="segmentation",
                      best={"val_mean_iou": 0.712, "val_pixel_accuracy": 0.93, "val_loss": 0.4})
    numbers = write_run(tmp_path, 1, task="regression", best={"mae": 0.5, "val_loss": 0.2})
    old = write_run(tmp_path, 2)
    config = json.loads((old / runs.CONFIG_FILE).read_text(encoding="utf-8"))
    del config["dataset"]["task"]  # written before projects had tasks
    (old / runs.CONFIG_FILE).write_text(json.dumps(config), encoding="utf-8")
    unknown = write_run(tmp_path, 3, task="captioning")
    assert [read_run(p).task for p in (masks, numbers, old, unknown)] == [
        "segmentation", "regression", "classification", "captioning"]
    assert read_run(masks).headline() == "val mean IoU 71.2%"
    assert read_run(numbers).headline() == "mae 0.5"  # no validation split
    assert read_run(old).headline() == f"val accuracy {read_run(old).best['val_accuracy']:.1%}"
    assert read_run(unknown).headline() == ""


def test_completed_from_older_runs_reads_as_finished(tmp_path):
    path = write_run(tmp_path, status="completed")
    assert read_run(path).status == "finished"
    assert effective_status({"status": "completed"}, path) == "finished"


def test_a_run_killed_mid_write_still_reads(tmp_path):
    path = write_run(tmp_path, epochs=4)
    (path / runs.RUN_FILE).write_text('{"status": "runn', encoding="utf-8")
    (path / runs.CONFIG_FILE).unlink()
    with (path / runs.METRICS_FILE).open("a", encoding="utf-8") as handle:
        handle.write("5,0.1,oops,0.2")
    run = read_run(path)
    assert (run.status, run.error) == ("interrupted", "Its run.json is damaged.")
    assert run.epochs == 5 and run.optimizer == "adam" and run.batch_size == 64
    assert read_metrics(path)[-1] == {"epoch": 5, "loss": 0.1, "val_loss": 0.2}
    assert run.best["loss"] == 0.1 and "accuracy" not in run.best


def test_values_that_are_not_numbers_are_left_out(tmp_path):
    path = write_run(tmp_path, epochs=6)
    rewrite_record(path, best={"val_loss": float("nan"), "loss": 0.5}, epochs="six",
                   seconds=None, pid=float("inf"), status="running")
    run = read_run(path)
    assert (run.best, run.epochs, run.seconds, run.pid) == ({"loss": 0.5}, 6, 0.0, None)
    assert run.status == "interrupted"
    json.dumps(run.to_dict(), allow_nan=False)


def test_a_running_run_whose_process_died_is_interrupted(tmp_path):
    path = write_run(tmp_path, status="running", pid=dead_pid(), started=datetime.now())
    rewrite_record(path, updated=now_iso())
    run = read_run(path)
    assert (run.recorded_status, run.status) == ("running", "interrupted")


def test_a_run_is_running_while_a_process_holds_its_lock_and_interrupted_once_killed(
        tmp_path):
    path = write_run(tmp_path, status="running", pid=dead_pid(), started=datetime.now())
    with training_process(path) as trainer:
        assert read_run(path).status == "running"
        trainer.kill()
        trainer.wait()
        assert read_run(path).status == "interrupted"


def test_runs_of_this_process_and_of_other_hosts(tmp_path):
    path = write_run(tmp_path, status="running")
    mine = {"status": "running", "pid": os.getpid(), "updated": now_iso(-3600)}
    with RunLock(path) as lock:
        assert lock.acquire() and effective_status(mine, path) == "running"
    assert effective_status(mine, path) == "interrupted"
    foreign = {"status": "running", "pid": 1, "host": "another-machine"}
    assert effective_status({**foreign, "updated": now_iso(-60)}, path) == "running"
    assert effective_status({**foreign, "updated": now_iso(-3 * 86400)}, path) == "interrupted"


def test_a_folder_without_a_record_is_running_only_while_locked(tmp_path):
    path = write_run(tmp_path)
    (path / runs.RUN_FILE).unlink()
    assert read_run(path).status == "interrupted"
    with RunLock(path) as lock:
        assert lock.acquire() and read_run(path).status == "running"


def test_config_diff_lists_what_differs(tmp_path):
    a = write_run(tmp_path, 0, optimizer="adam", batch_size=32)
    b = write_run(tmp_path, 1, optimizer="sgd", batch_size=32)
    config = json.loads((b / runs.CONFIG_FILE).read_text())
    config["dataset"]["name"] = "fashion-mnist"
    config["extra"] = {"note": "only in b"}
    (b / runs.CONFIG_FILE).write_text(json.dumps(config))
    assert config_diff(a, b) == [("dataset.name", "mnist-10k", "fashion-mnist"),
                                 ("extra.note", None, "only in b"),
                                 ("training.optimizer", "adam", "sgd")]
    assert config_diff(a, a) == []


def test_config_diff_of_runs_without_config_uses_their_snapshots(tmp_path):
    a = write_run(tmp_path, 0, learning_rate=0.001)
    b = write_run(tmp_path, 1, learning_rate=0.01)
    for path in (a, b):
        (path / runs.CONFIG_FILE).unlink()
    assert config_diff(a, b) == [("training.learning_rate", 0.001, 0.01)]


def test_delete_removes_a_finished_run_and_refuses_a_live_one(tmp_path):
    done, live = write_run(tmp_path, 0), write_run(tmp_path, 1, status="running")
    delete_run(done)
    assert not done.exists() and list(tmp_path.iterdir()) == [live]
    with training_process(live), pytest.raises(RunInUseError, match="still running"):
        delete_run(live)
    assert (live / runs.RUN_FILE).exists()
    (tmp_path / "not a run").mkdir()
    with pytest.raises(ValueError, match="not a run folder"):
        delete_run(tmp_path / "not a run")


def test_find_run_by_path_id_or_unique_prefix(tmp_path):
    project = tmp_path / "demo.studio.json"
    root = runs.runs_root(project)
    first, second = write_runs(root, 2)
    assert find_run(project, first.name) == first
    assert find_run(root, second.name[:20]) == second
    assert find_run(project, str(first)) == first
    with pytest.raises(RunNotFoundError, match="matches 2 runs"):
        find_run(project, "2026")
    with pytest.raises(RunNotFoundError, match="no run nope"):
        find_run(project, "nope")


def test_the_time_per_epoch_is_the_newest_runs_that_trained_an_epoch(tmp_path):
    assert latest_seconds_per_epoch(tmp_path) is None
    rewrite_record(write_run(tmp_path, 0, epochs=4), seconds=20.0)
    rewrite_record(write_run(tmp_path, 1, epochs=2), seconds=5.0)
    write_run(tmp_path, 2, epochs=0)  # stopped before its first epoch: says nothing
    assert latest_seconds_per_epoch(tmp_path) == 2.5
