"""The training lock of a run folder: one process at a time trains a run, and the OS releases
the lock when the process that held it dies."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from studio.cli import main
from studio.core.runs.folders import read_metrics
from studio.core.runs.lock import RunLock, is_locked
from studio.core.training.trainer import TrainingError, resume, train
from tests.helpers import tiny_project
from tests.run_folders import training_process


@pytest.fixture
def finished_run(tmp_path) -> Path:
    """A one-epoch run of the tiny project, to resume to a second epoch."""
    return train(tiny_project(epochs=1), tmp_path / "runs").run_dir


def test_a_resume_is_refused_while_another_process_trains_the_run_and_goes_on_once_it_died(
        finished_run, capsys):
    resume_it = ["train", "--resume", str(finished_run), "--epochs", "2"]
    with training_process(finished_run) as trainer:
        assert main(resume_it) == 1
        assert capsys.readouterr().err == (f"studio: error: {finished_run.name} is being "
                                           "trained by another process.\n")
        trainer.kill()
        trainer.wait()
        assert main(resume_it) == 0
    assert [row["epoch"] for row in read_metrics(finished_run)] == [1, 2]


def test_of_two_resumes_started_together_exactly_one_trains(finished_run):
    start_together = threading.Barrier(2)
    refused = threading.Event()
    outcomes, locked_while_training = [], []

    def hold_until_the_other_is_refused(event):
        if event["type"] == "start":
            locked_while_training.append(is_locked(finished_run))
            if not refused.wait(timeout=60):
                raise AssertionError("the other resume was not refused")

    def resume_now():
        start_together.wait()
        try:
            result = resume(finished_run, hold_until_the_other_is_refused, epochs=2)
            outcomes.append(result.status)
        except TrainingError as exc:
            outcomes.append(str(exc))
            refused.set()

    threads = [threading.Thread(target=resume_now) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == sorted(
        ["finished", f"{finished_run.name} is being trained by another process."])
    assert locked_while_training == [True] and not is_locked(finished_run)
    assert [row["epoch"] for row in read_metrics(finished_run)] == [1, 2]


def test_a_lock_is_taken_by_one_holder_at_a_time(tmp_path):
    first, second = RunLock(tmp_path), RunLock(tmp_path)
    assert not is_locked(tmp_path)
    with first:
        assert first.acquire() and is_locked(tmp_path)
        assert not second.acquire()
    assert not is_locked(tmp_path) and second.acquire()
    second.release()
