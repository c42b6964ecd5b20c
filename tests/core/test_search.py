"""The local search runner: real trials of a tiny table model in worker processes (shared by
the tests, as each pays a TensorFlow start), every strategy, failures, stop and resume."""

from __future__ import annotations

import itertools
import json
import os
import signal
import struct
import threading
import time
from pathlib import Path

import pytest

from studio.core.model.graph import Node
from studio.core.project.document import Dimension, Project, load_project
from studio.core.runs.folders import PROJECT_FILE
from studio.core.runs.history import read_run
from studio.core.search import worker as search_worker
from studio.core.search.runner import (
    SearchError,
    WorkerPool,
    last_search,
    resume_search,
    run_search,
    search_folder,
)
from studio.core.search.space import presence_target, repeats_target
from studio.core.search.state import SEARCH_FILE, SearchState, read_state, write_state
from tests.core.search_support import (
    LEARNING_RATES,
    UNITS,
    check_failing_grid,
    failing_grid,
    searched,
    table_project,
)
from tests.detection_runs import detection_project
from tests.gate import HOLD_SECONDS
from tests.segmentation_runs import demo_folder, segmenter


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(2) as workers:
        yield workers


def search(project: Project, tmp_path: Path, pool: WorkerPool, **kw):
    events: list[dict] = []
    result = run_search(project, tmp_path / "runs", tmp_path / "search", events.append,
                        threading.Event(), pool=pool, **kw)
    return result, events


def search_stopped_at(kind: str, project: Project, tmp_path: Path, pool: WorkerPool):
    """Search, pressing Stop at the first event of ``kind``."""
    stop = threading.Event()

    def on_event(event):
        if event["type"] == kind:
            stop.set()

    return run_search(project, tmp_path / "runs", tmp_path / "search", on_event, stop,
                      pool=pool)


def ends_held_until_starts(pool: WorkerPool, monkeypatch, starts: int) -> None:
    """Hold back the workers' trial ends from the search until ``starts`` trials have
    started: a search that waited for a trial to end before starting the next never gets
    there, and fails once the held end has waited the gate's time."""
    real, started, held = pool.message, set(), []

    def message(timeout: float) -> dict | None:
        if held and len(started) >= starts:
            return held.pop(0)[1]
        if held and time.monotonic() - held[0][0] > HOLD_SECONDS:
            raise TimeoutError(f"{len(started)} of {starts} trials started")
        message = real(timeout)
        if message is not None and message["type"] == "start":
            started.add(message["number"])
        if message is not None and message["type"] == "end" and len(started) < starts:
            held.append((time.monotonic(), message))
            return None
        return message

    monkeypatch.setattr(pool, "message", message)


def test_a_grid_runs_every_combination_two_at_a_time_each_an_ordinary_run(tmp_path, pool,
                                                                           monkeypatch):
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES, UNITS)
    ends_held_until_starts(pool, monkeypatch, 2)
    result, events = search(project, tmp_path, pool)
    assert not result.stopped
    assert [t.status for t in result.trials] == ["finished"] * 4
    assert sorted((t.params["training.learning_rate"], t.params["layer.dense_1.units"])
                  for t in result.trials) == sorted(itertools.product([0.01, 0.001], [4, 8]))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "search_start" and kinds[-1] == "search_end"
    starts = [i for i, kind in enumerate(kinds) if kind == "trial_start"]
    assert starts[1] < kinds.index("trial_end")  # both workers started a trial before one ended
    assert len({e["pid"] for e in events if e["type"] == "trial_start"}) == 2
    share = max(1, (os.cpu_count() or 1) // 2)  # each worker's TensorFlow has its share
    assert {e["threads"] for e in events if e["type"] == "trial_start"} == {share}
    for trial in result.trials:
        run = read_run(Path(trial.run_dir))
        assert run.status == "finished" and f"trial {trial.number}" in run.name
        assert trial.value == max(row["val_accuracy"] for row in trial.epochs)
    assert result.best.value == max(t.value for t in result.trials)
    assert events[-1]["best"] == result.best.number
    saved = read_state(tmp_path / "search")
    assert [t.status for t in saved.trials] == ["finished"] * 4


@pytest.mark.parametrize("strategy", ["random", "bayes"])
def test_sampled_strategies_draw_values_inside_the_ranges(tmp_path, pool, strategy):
    project = searched(table_project(tmp_path), strategy,
                       Dimension("training.learning_rate", low=1e-3, high=1e-1, scale="log",
                                 count=3),
                       Dimension("layer.dense_1.units", low=2, high=16, step=2), trials=3)
    result, _ = search(project, tmp_path, pool)
    assert [t.status for t in result.trials] == ["finished"] * 3
    for trial in result.trials:
        assert 1e-3 <= trial.params["training.learning_rate"] <= 1e-1
        units = trial.params["layer.dense_1.units"]
        assert isinstance(units, int) and 2 <= units <= 16 and units % 2 == 0
    assert len({t.params["training.learning_rate"] for t in result.trials}) == 3


def test_a_grid_over_a_dropout_trains_a_model_with_it_and_one_without(tmp_path, pool):
    project = table_project(tmp_path)
    project.graph.insert_between("dense_1", "dense_2", Node("dropout_1", "Dropout",
                                                            {"rate": 0.5}))
    project.training.epochs = 1
    present = presence_target("dropout_1")
    result, _ = search(searched(project, "grid", Dimension(present, values=[True, False])),
                       tmp_path, pool)
    assert [t.status for t in result.trials] == ["finished"] * 2
    for trial in result.trials:
        graph = load_project(Path(trial.run_dir) / PROJECT_FILE).graph
        kept = trial.params[present]
        assert ("dropout_1" in graph.ids()) is kept
        assert graph.inputs_of("dense_2") == ["dropout_1" if kept else "dense_1"]


def test_a_grid_over_a_block_s_repeats_trains_a_model_with_each_count(tmp_path, pool):
    project = table_project(tmp_path)
    project.graph.blocks = {"block_1": ["dense_1"]}
    project.training.epochs = 1
    project.search.objectives = ["params"]
    repeats = repeats_target("block_1")
    result, _ = search(searched(project, "grid", Dimension(repeats, values=[1, 3])),
                       tmp_path, pool)
    assert [t.status for t in result.trials] == ["finished"] * 2
    by_count = {t.params[repeats]: t for t in result.trials}
    # Dense 4 -> 8, then 8 -> 8 per copy, then 8 -> 2
    assert by_count[1].measures["params"] == 40 + 18
    assert by_count[3].measures["params"] == 40 + 2 * 72 + 18
    graph = load_project(Path(by_count[3].run_dir) / PROJECT_FILE).graph
    assert graph.inputs_of("dense_2") == ["dense_4"] and graph.inputs_of("dense_4") == [
        "dense_3"]


def test_a_search_of_several_objectives_measures_each_model_and_keeps_the_front(tmp_path,
                                                                               pool):
    project = searched(table_project(tmp_path), "grid", UNITS)
    project.training.epochs = 1
    project.search.objectives = ["latency", "params"]
    result, events = search(project, tmp_path, pool)
    assert [t.status for t in result.trials] == ["finished"] * 2
    by_units = {t.params[UNITS.target]: t for t in result.trials}
    # Dense 4 -> units -> 2: (4 * units + units) + (units * 2 + 2) parameters
    assert by_units[4].measures["params"] == 30 and by_units[8].measures["params"] == 58
    assert all(0 < t.measures["latency"] < 1000 for t in result.trials)
    assert by_units[4].number in result.front  # the fewest parameters: none beats it in all
    saved = read_state(tmp_path / "search")
    assert saved.trials[0].measures == result.trials[0].measures
    assert saved.front() == result.front == events[-1]["front"]
    assert json.loads((tmp_path / "search" / SEARCH_FILE).read_text())["front"] == result.front


def test_failing_trials_are_recorded_with_their_reason_and_the_search_goes_on(tmp_path, pool):
    result, _ = search(failing_grid(tmp_path), tmp_path, pool)
    check_failing_grid(result)


def test_stop_then_resume_keeps_finished_trials_and_runs_the_rest(tmp_path, pool):
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES, UNITS, workers=1)
    first = search_stopped_at("trial_end", project, tmp_path, pool)
    assert first.stopped
    finished = [t for t in first.trials if t.status == "finished"]
    assert len(finished) == 1 and len(first.trials) == 1
    events: list[dict] = []
    second = resume_search(tmp_path / "search", tmp_path / "runs", events.append,
                           threading.Event(), pool=pool)
    assert not second.stopped
    assert events[0]["done"] == [finished[0].to_dict()]
    assert [t.status for t in second.trials] == ["finished"] * 4
    assert second.trials[0] == finished[0]
    assert len({tuple(t.params.values()) for t in second.trials}) == 4
    assert sum(e["type"] == "trial_start" for e in events) == 3


def test_stop_ends_running_trials_as_stopped(tmp_path, pool):
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES, UNITS, workers=2)
    project.training.epochs = 200
    result = search_stopped_at("trial_epoch", project, tmp_path, pool)
    assert result.stopped and result.trials
    assert {t.status for t in result.trials} == {"stopped"}
    assert {t.status for t in read_state(tmp_path / "search").trials} == {"stopped"}


def test_hyperband_prunes_trials_that_fall_behind(tmp_path, pool):
    project = searched(table_project(tmp_path), "hyperband",
                       Dimension("training.learning_rate", values=[0.05, 1e-5]), trials=4,
                       workers=1)
    project.training.epochs = 9  # rungs at 1 and 3 epochs; the study's fixed name fixes brackets
    project.search.metric = "val_loss"
    project.search.startup_trials = 4  # all drawn at random: TPE would leave the slow rate
    result, _ = search(project, tmp_path, pool)
    statuses = [t.status for t in result.trials]
    assert "pruned" in statuses and "finished" in statuses
    pruned = next(t for t in result.trials if t.status == "pruned")
    assert pruned.params["training.learning_rate"] == 1e-5
    assert len(pruned.epochs) < 9
    assert read_run(Path(pruned.run_dir)).status == "stopped"


def test_a_killed_worker_fails_its_trial_and_is_replaced(tmp_path, pool):
    # Trial 0 has epochs enough not to end before its kill; trial 1, which replaces it, one.
    project = searched(table_project(tmp_path), "grid",
                       Dimension("training.epochs", values=[50, 1]), workers=1)

    def kill_first(event):
        if event["type"] == "trial_start" and event["number"] == 0:
            os.kill(event["pid"], signal.SIGKILL)

    result = run_search(project, tmp_path / "runs", tmp_path / "search", kill_first,
                        threading.Event(), pool=pool)
    assert [t.status for t in result.trials] == ["failed", "finished"]
    assert "ended unexpectedly" in result.trials[0].reason
    assert pool.wait_ready(60)  # the replacement loaded TensorFlow and the trainer


def torn_message_worker(index, tasks, results, stop, ready, threads):
    """Worker 0 dies in the middle of a message, as a worker the out-of-memory killer ends
    while it writes; worker 1 answers its task."""
    if index == 0:
        os.write(results.fileno(), struct.pack("!i", 1000) + b"half a message")
        os._exit(9)
    task = tasks.get()
    results.send({"type": "begin", "number": task["number"], "worker": index,
                  "pid": os.getpid()})
    tasks.get()


def test_a_worker_dying_in_the_middle_of_a_message_silences_no_other(monkeypatch):
    monkeypatch.setattr(search_worker, "worker_main", torn_message_worker)
    with WorkerPool(2) as pool:
        torn, answering = pool.workers
        torn.process.join(60)
        pool.submit(answering, {"number": 7})
        for _ in range(60):
            if (message := pool.message(1)) is not None:
                break
        assert message["worker"] == 1 and message["number"] == 7
        assert torn.results.closed and pool.message(0) is None  # its half message is dropped


def test_an_invalid_space_is_refused_with_every_reason(tmp_path):
    project = searched(table_project(tmp_path), "grid",
                       Dimension("training.learning_rate", values=[-0.1]),
                       Dimension("layer.dense_1.units", values=[0]))
    with pytest.raises(SearchError) as refused:
        run_search(project, tmp_path / "runs", tmp_path / "search")
    assert len(refused.value.reasons) == 2
    assert not (tmp_path / "search" / SEARCH_FILE).exists()


def test_the_last_search_of_a_saved_project_is_the_one_written_last(tmp_path):
    project_path = tmp_path / "demo.studio.json"
    assert last_search(project_path) is None and last_search(None) is None
    first, second = search_folder(project_path), search_folder(project_path).with_name("later")
    assert first.parent == tmp_path / "searches" / "demo"
    for folder in (second, first):  # the first search was resumed, so written last
        write_state(folder, SearchState(table_project(tmp_path), 1, 2))
    (first.parent / "empty").mkdir()
    assert last_search(project_path) == first
    os.utime(second / SEARCH_FILE)
    os.utime(first / SEARCH_FILE, (1, 1))
    assert last_search(project_path) == second


def test_a_detection_search_maximises_validation_map50(tmp_path, pool):
    """A detector's project left with the classifier's default metric searches val_map50,
    the best trial the one of highest mAP@0.5."""
    project = searched(detection_project(tmp_path), "grid",
                       Dimension("training.learning_rate", values=[0.01, 0.00001]))
    assert project.search.metric == "val_accuracy"
    result, events = search(project, tmp_path, pool)
    assert [t.status for t in result.trials] == ["finished"] * 2
    for trial in result.trials:
        assert len(trial.epochs) == 1 and trial.value == trial.epochs[0]["val_map50"]
    saved = read_state(tmp_path / "search").project.search
    assert saved.metric == "val_map50" and not saved.minimize
    ranked = sorted(result.trials, key=lambda t: t.value, reverse=True)
    assert ranked[0].value > ranked[1].value
    assert result.best is ranked[0] and events[-1]["best"] == ranked[0].number


def test_a_segmentation_search_maximises_validation_mean_iou(tmp_path, pool):
    """A segmentation project left with the classifier's default metric searches
    val_mean_iou, the best trial the one of highest mean IoU."""
    project = searched(segmenter(demo_folder(tmp_path / "digits")), "grid",
                       Dimension("training.learning_rate", values=[0.01, 0.00001]), workers=1)
    assert project.search.metric == "val_accuracy"
    result, events = search(project, tmp_path, pool)
    assert [t.status for t in result.trials] == ["finished"] * 2
    for trial in result.trials:
        assert len(trial.epochs) == 1 and trial.value == trial.epochs[0]["val_mean_iou"]
        assert 0 <= trial.value <= 1
    saved = read_state(tmp_path / "search").project.search
    assert saved.metric == "val_mean_iou" and not saved.minimize
    assert result.best.value == max(t.value for t in result.trials)
    assert events[-1]["best"] == result.best.number
