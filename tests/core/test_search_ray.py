"""The Ray runner: the same search on one local Ray instance (two CPUs, shared by the tests,
as each actor pays a TensorFlow start), real trials of the tiny table model. Ray is a test
dependency (the test extra), so these run wherever the tests do."""

from __future__ import annotations

import functools
import itertools
import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path

import pytest
import ray

from studio.cli import main
from studio.core.project.document import Dimension, save_project
from studio.core.runs.history import read_run, run_folders
from studio.core.search.on_ray import (
    USAGE_STATS,
    _connected,
    resume_search_on_ray,
    run_search_on_ray,
)
from studio.core.search.state import SearchError, read_state, write_state
from tests.core.search_support import (
    LEARNING_RATES,
    UNITS,
    check_failing_grid,
    failing_grid,
    searched,
    table_project,
)


@pytest.fixture(scope="module")
def ray_instance():
    """A fresh local Ray (never one already running) of two CPUs, started and shut down as a
    search with ``--ray local`` does."""
    assert not ray.is_initialized()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ray, "init", functools.partial(ray.init, num_cpus=2))
        with _connected(ray, "local"):
            yield ray
    assert not ray.is_initialized()


def test_the_workers_of_a_ray_we_start_send_no_usage_statistics(ray_instance):
    assert ray.get(ray.remote(lambda: os.environ.get(USAGE_STATS)).remote()) == "0"


def search(project, tmp_path: Path, stop_at: str | None = None, resume: bool = False, **kw):
    """Search on Ray (or resume the search in ``tmp_path``), pressing Stop at the first event
    of type ``stop_at``; the result and the events."""
    events: list[dict] = []
    stop = threading.Event()

    def on_event(event: dict) -> None:
        events.append(event)
        if event["type"] == stop_at:
            stop.set()

    if resume:
        result = resume_search_on_ray(tmp_path / "search", tmp_path / "runs", on_event, stop,
                                      address="local", **kw)
    else:
        result = run_search_on_ray(project, tmp_path / "runs", tmp_path / "search", on_event,
                                   stop, address="local", **kw)
    return result, events


def test_a_grid_on_ray_runs_every_combination_two_at_a_time_each_an_ordinary_run(
        tmp_path, ray_instance):
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES, UNITS)
    project.search.objectives = ["params"]  # measured in the actor, as in a local worker
    result, events = search(project, tmp_path)
    assert not result.stopped
    assert [t.status for t in result.trials] == ["finished"] * 4
    assert sorted((t.params["training.learning_rate"], t.params["layer.dense_1.units"])
                  for t in result.trials) == sorted(itertools.product([0.01, 0.001], [4, 8]))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "search_start" and kinds[-1] == "search_end"
    assert len({e["pid"] for e in events if e["type"] == "trial_start"}) == 2
    for trial in result.trials:
        run = read_run(Path(trial.run_dir))
        assert run.status == "finished" and f"trial {trial.number}" in run.name
        assert [row["epoch"] for row in trial.epochs] == [1, 2]
        assert trial.value == max(row["val_accuracy"] for row in trial.epochs)
        epochs = [e for e in events if e["type"] == "trial_epoch"
                  and e["number"] == trial.number]
        assert [e["metrics"]["val_accuracy"] for e in epochs] == [
            row["val_accuracy"] for row in trial.epochs]
    assert result.best.value == max(t.value for t in result.trials)
    assert events[-1]["best"] == result.best.number
    assert [t.status for t in read_state(tmp_path / "search").trials] == ["finished"] * 4
    assert {t.params["layer.dense_1.units"]: t.measures["params"] for t in result.trials} == {
        4: 30, 8: 58}
    assert result.best.number in result.front == events[-1]["front"]
    assert sorted(run_folders(tmp_path / "runs")) == sorted(Path(t.run_dir)
                                                           for t in result.trials)
    assert (tmp_path / "search" / "ray").is_dir()


def test_failing_trials_on_ray_are_recorded_with_their_reason_and_the_search_goes_on(
        tmp_path, ray_instance):
    project = failing_grid(tmp_path)
    project.search.workers = 1  # one actor start: three of the trials fail in a moment
    result, _ = search(project, tmp_path)
    check_failing_grid(result)


def test_stop_on_ray_ends_running_trials_as_stopped_runs_and_resume_runs_the_rest(
        tmp_path, ray_instance):
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES, UNITS, workers=2)
    project.training.epochs = 300
    stopped, _ = search(project, tmp_path, stop_at="trial_epoch")
    assert stopped.stopped and stopped.trials
    assert {t.status for t in stopped.trials} == {"stopped"}
    assert all(len(t.epochs) < 300 for t in stopped.trials)
    assert {read_run(Path(t.run_dir)).status for t in stopped.trials} == {"stopped"}
    assert read_state(tmp_path / "search").stopped

    state = read_state(tmp_path / "search")  # a quick search from here on
    state.project.training.epochs = 2
    write_state(tmp_path / "search", state)
    first, _ = search(None, tmp_path, stop_at="trial_end", resume=True, workers=1)
    assert first.stopped
    finished = [t for t in first.trials if t.status == "finished"]
    assert len(finished) == 1 and len(first.trials) == 1
    second, events = search(None, tmp_path, resume=True, workers=1)  # one actor start
    assert not second.stopped
    assert finished[0].to_dict() in events[0]["done"]
    assert [t.status for t in second.trials] == ["finished"] * 4
    assert len({tuple(t.params.values()) for t in second.trials}) == 4
    assert finished[0] in second.trials


def test_hyperband_on_ray_prunes_trials_that_fall_behind(tmp_path, ray_instance):
    project = searched(table_project(tmp_path), "hyperband",
                       Dimension("training.learning_rate", values=[0.05, 1e-5]), trials=4,
                       workers=1)
    project.training.epochs = 9  # rungs at 1 and 3 epochs
    project.search.metric = "val_loss"
    project.search.startup_trials = 4  # all drawn at random: TPE would leave the slow rate
    result, _ = search(project, tmp_path)
    statuses = [t.status for t in result.trials]
    assert "pruned" in statuses and "finished" in statuses
    for pruned in (t for t in result.trials if t.status == "pruned"):
        assert pruned.params["training.learning_rate"] == 1e-5
        run = read_run(Path(pruned.run_dir))  # stopped at the epoch Tune's scheduler saw
        assert run.status == "stopped" and run.epochs == len(pruned.epochs) < 9


def test_studio_search_on_ray_prints_the_search_as_json(tmp_path, ray_instance, capsys):
    path = tmp_path / "table.studio.json"
    save_project(searched(table_project(tmp_path), "grid", LEARNING_RATES, workers=1), path)
    assert main(["search", str(path), "--ray", "local", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert not document["stopped"] and document["metric"] == "val_accuracy"
    assert sorted(t["params"]["training.learning_rate"] for t in document["trials"]) == [
        0.001, 0.01]
    for trial in document["trials"]:
        assert trial["status"] == "finished"
        assert Path(trial["run_dir"]).parent == tmp_path / "runs" / "table"
        assert read_run(Path(trial["run_dir"])).status == "finished"
    assert document["best"] in (t["number"] for t in document["trials"])


def test_a_search_on_ray_needs_ray(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES)
    with pytest.raises(SearchError, match=r'pip install "\.\[ray\]"'):
        run_search_on_ray(project, tmp_path / "runs", tmp_path / "search", address="local")


@pytest.mark.parametrize("address", ["local", "auto", "127.0.0.1:{port}"])
def test_ray_usage_statistics_are_off_wherever_a_search_starts_or_joins_ray(
        tmp_path, monkeypatch, address):
    monkeypatch.setenv(USAGE_STATS, "unset")  # restored (to absent) after the test
    monkeypatch.delenv(USAGE_STATS)
    seen = {}

    def init(**options):  # Ray as it would start or join: its environment and options
        seen.update(driver=os.environ.get(USAGE_STATS),
                    workers=options["runtime_env"]["env_vars"].get(USAGE_STATS))
        raise ConnectionError("not started in this test")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES)
    with socket.create_server(("127.0.0.1", 0)) as head:  # something listens at HOST:PORT
        with pytest.raises(SearchError):
            run_search_on_ray(project, tmp_path / "runs", tmp_path / "search",
                              address=address.format(port=head.getsockname()[1]))
    assert seen == {"driver": "0", "workers": "0"}


def test_an_address_where_no_ray_cluster_answers_is_refused_in_plain_words(
        tmp_path, monkeypatch, capsys):
    def init(**options):  # Ray itself would retry for minutes
        raise AssertionError("Ray was asked to connect to an address where nothing answers")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as in a fresh process
    monkeypatch.setattr(ray, "init", init)
    path = tmp_path / "table.studio.json"
    save_project(searched(table_project(tmp_path), "grid", LEARNING_RATES), path)
    assert main(["search", str(path), "--ray", "127.0.0.1:9"]) == 2
    assert "No Ray cluster answers at 127.0.0.1:9" in capsys.readouterr().err


def test_a_trial_whose_ray_actor_dies_fails_and_the_search_goes_on(tmp_path, ray_instance):
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES, workers=1)
    # Enough epochs that trial 0 cannot end before its kill: Tune asks an actor for one result
    # at a time and hands it to the search (which kills at trial_start) before asking for the
    # next, and the trial waits after each epoch to be asked, so it is killed by epoch 1.
    project.training.epochs = 3

    def kill_first(event):
        if event["type"] == "trial_start" and event["number"] == 0:
            os.kill(event["pid"], signal.SIGKILL)

    result = run_search_on_ray(project, tmp_path / "runs", tmp_path / "search", kill_first,
                               threading.Event(), address="local")
    assert [t.status for t in result.trials] == ["failed", "finished"]
    assert "ended unexpectedly" in result.trials[0].reason
    assert not result.stopped
