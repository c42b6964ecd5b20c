"""The SQLite index of runs: built from the folders, kept in step with them, rebuilt when its
file is missing, damaged, outdated or unusable, sorted and filtered."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from studio.core.runs import folders as runs
from studio.core.runs import index as run_index
from studio.core.runs.history import RunInUseError
from studio.core.runs.index import INDEX_FILE, RunIndex
from studio.core.runs.lock import RunLock
from tests.run_folders import (
    dead_pid,
    now_iso,
    rewrite_record,
    training_process,
    write_run,
    write_runs,
)


def ids(found) -> list[str]:
    return [run.id for run in found]


@pytest.fixture
def root(tmp_path) -> Path:
    """A runs root with five finished runs."""
    write_runs(tmp_path, 5)
    return tmp_path


def test_a_missing_index_is_built_and_survives_a_restart(root):
    report = RunIndex(root).sync()
    assert (report.read, report.removed, report.total) == (5, 0, 5)
    assert (root / INDEX_FILE).is_file()
    again = RunIndex(root)
    assert len(again.runs()) == 5
    assert again.sync().read == 0 and again.notes == []
    with sqlite3.connect(root / INDEX_FILE) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_sync_follows_folders_added_changed_and_deleted_behind_its_back(root):
    index = RunIndex(root)
    index.sync()
    first, *_ = sorted(root.glob("2026*"))
    added = write_run(root, 10, optimizer="nadam")
    rewrite_record(first, status="failed", error="Out of memory.")
    os.replace(sorted(root.glob("2026*"))[1], root / ".elsewhere")
    report = index.sync()
    assert (report.read, report.removed, report.total) == (2, 1, 5)
    by_id = {run.id: run for run in index.runs()}
    assert by_id[added.name].optimizer == "nadam"
    assert (by_id[first.name].status, by_id[first.name].error) == ("failed", "Out of memory.")
    assert index.sync().read == 0


def test_a_garbage_index_is_set_aside_and_rebuilt(root):
    (root / INDEX_FILE).write_bytes(b"this is not a database\n" * 200)
    index = RunIndex(root)
    assert len(index.runs()) == 5
    assert "moved to index.sqlite.bad" in index.notes[0]
    assert (root / "index.sqlite.bad").read_bytes().startswith(b"this is not")
    assert RunIndex(root).sync().read == 0


def test_a_malformed_index_is_rebuilt(root):
    for i in range(40):
        write_run(root, 100 + i)
    RunIndex(root).sync()
    data = bytearray((root / INDEX_FILE).read_bytes())
    assert len(data) > 8192
    data[4096:] = os.urandom(len(data) - 4096)
    (root / INDEX_FILE).write_bytes(bytes(data))
    index = RunIndex(root)
    assert len(index.runs()) == 45
    assert "malformed" in index.notes[0]


def test_an_index_of_another_schema_version_is_rebuilt(root):
    with sqlite3.connect(root / INDEX_FILE) as db:
        db.execute("CREATE TABLE runs (id TEXT)")
        db.execute("INSERT INTO runs VALUES ('ghost')")
        db.execute("PRAGMA user_version = 99")
    index = RunIndex(root)
    assert len(index.runs()) == 5 and "schema version 99" in index.notes[0]
    with sqlite3.connect(root / INDEX_FILE) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == run_index.SCHEMA_VERSION


def test_the_index_gives_each_runs_task_and_an_index_without_tasks_is_rebuilt(tmp_path):
    write_run(tmp_path, 0, task="segmentation", best={"val_mean_iou": 0.5})
    write_run(tmp_path, 1, task="regression", best={"val_mae": 0.25})
    write_run(tmp_path, 2)
    RunIndex(tmp_path).sync()
    with sqlite3.connect(tmp_path / INDEX_FILE) as db:  # as the index was before tasks
        db.execute("ALTER TABLE runs DROP COLUMN task")
        db.execute("PRAGMA user_version = 1")
    index = RunIndex(tmp_path)
    found = index.runs(order_by="id", descending=False)
    assert [run.task for run in found] == ["segmentation", "regression", "classification"]
    assert [run.headline() for run in found][:2] == ["val mean IoU 50.0%", "val mae 0.25"]
    assert "schema version 1" in index.notes[0]
    assert [run.task for run in RunIndex(tmp_path).runs(order_by="id", descending=False)] == [
        "segmentation", "regression", "classification"]


def test_an_index_file_that_cannot_be_written_lists_from_the_folders(root, monkeypatch):
    RunIndex(root).sync()
    write_run(root, 20)
    connect = sqlite3.connect

    def read_only(path, *args, **kwargs):
        if path == ":memory:":
            return connect(path, *args, **kwargs)
        return connect(f"file:{path}?mode=ro", *args, uri=True, **kwargs)

    monkeypatch.setattr(run_index.sqlite3, "connect", read_only)
    index = RunIndex(root)
    assert index.sync().total == 6 and len(index.runs()) == 6
    assert "listed from their folders" in index.notes[-1]


def test_a_locked_index_lists_from_the_folders_and_is_kept(root):
    RunIndex(root).sync()
    holder = sqlite3.connect(root / INDEX_FILE, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    write_run(root, 20)
    try:
        index = RunIndex(root, timeout=0.05)
        assert index.sync().total == 6 and "locked" in index.notes[-1]
        assert len(index.runs()) == 6
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not (root / "index.sqlite.bad").exists()
    assert index.sync().read == 1 and len(index.runs()) == 6


def test_no_runs_folder_lists_nothing_and_writes_nothing(tmp_path):
    index = RunIndex(tmp_path / "runs" / "demo")
    assert index.sync().total == 0 and index.runs() == [] and index.notes == []
    assert not (tmp_path / "runs").exists()


def test_sort_and_filter(tmp_path):
    write_run(tmp_path, 0, optimizer="sgd", epochs=3)
    write_run(tmp_path, 1, optimizer="adam", epochs=10)
    write_run(tmp_path, 2, optimizer="adam", epochs=20, status="failed")
    write_run(tmp_path, 3, status="running", pid=dead_pid())
    write_run(tmp_path, 4, epochs=0, status="stopped", name="50%_off")
    index = RunIndex(tmp_path)
    index.sync()
    by_val = index.runs(order_by="val_accuracy")
    assert [run.epochs for run in by_val] == [20, 20, 10, 3, 0]
    assert ids(index.runs(order_by="val_accuracy", descending=False))[-1] == by_val[-1].id
    assert [run.epochs for run in index.runs(order_by="epochs", descending=False)] == [
        0, 3, 10, 20, 20]
    assert ids(index.runs(order_by="started", descending=False)) == sorted(ids(by_val))
    assert [run.optimizer for run in index.runs(text="SGD")] == ["sgd"]
    assert [run.name for run in index.runs(text="50%_")] == ["50%_off"]
    assert index.runs(text="0%x") == []
    assert [run.epochs for run in index.runs(status="interrupted")] == [20]
    assert [run.status for run in index.runs(order_by="status", descending=False)] == [
        "failed", "finished", "finished", "interrupted", "stopped"]
    with pytest.raises(ValueError, match="Cannot sort"):
        index.runs(order_by="pid; DROP TABLE runs")


def test_a_running_run_reads_interrupted_once_its_process_ends(tmp_path):
    index = RunIndex(tmp_path)
    path = write_run(tmp_path, status="running")
    with training_process(path):
        index.sync()
        assert [run.status for run in index.runs()] == ["running"]
    assert [run.status for run in index.runs()] == ["interrupted"]
    assert index.sync().read == 0


def test_delete_removes_the_folder_and_the_row_but_not_a_live_run(root):
    index = RunIndex(root)
    index.sync()
    victim, live = index.runs()[:2]
    rewrite_record(live.path, status="running", pid=os.getpid(), updated=now_iso())
    index.sync()
    index.delete(victim.id)
    assert not victim.path.exists() and victim.id not in ids(index.runs())
    with RunLock(live.path) as lock, pytest.raises(RunInUseError):
        assert lock.acquire()
        index.delete(live.id)
    assert live.id in ids(index.runs()) and (live.path / runs.RUN_FILE).exists()


def test_sync_while_a_trainer_writes_runs(tmp_path):
    index = RunIndex(tmp_path)
    done = threading.Event()

    def trainer():
        for i in range(30):
            path = write_run(tmp_path, i)
            rewrite_record(path, epochs=i)
        done.set()

    thread = threading.Thread(target=trainer)
    thread.start()
    while not done.is_set():
        index.sync()
    thread.join()
    index.sync()
    assert sorted(run.epochs for run in index.runs()) == list(range(30))
    assert index.notes == []
