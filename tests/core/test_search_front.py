"""Searches of several objectives without training: the Pareto front of hand-made points and
trials, the checks of the objectives, their place in the project file, the study's directions
(TPE and grid told several values, as after a resume) and the latency timing they share with
the export's verification."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from studio.core.inference import timing
from studio.core.project.document import Dimension, SearchSettings, load_project, save_project
from studio.core.search.runner import SearchSession, new_state, resumed_state
from studio.core.search.space import problems
from studio.core.search.state import (
    SearchState,
    TrialRecord,
    pareto_front,
    read_state,
    write_state,
)
from tests.core.search_support import UNITS, searched, table_project

RATE = Dimension("training.learning_rate", low=1e-4, high=1e-1, scale="log", count=4)


@pytest.fixture
def project(tmp_path):
    return table_project(tmp_path)


def test_the_front_keeps_the_points_no_other_beats_in_every_objective():
    # (accuracy, maximised; latency, minimised)
    points = [(0.9, 5.0), (0.8, 2.0), (0.85, 6.0), (0.7, 2.0), (0.8, 2.0), (0.95, 10.0),
              (0.95, 11.0)]
    assert pareto_front(points, [False, True]) == [0, 1, 4, 5]
    assert pareto_front(points, [True, True]) == [3]  # (0.7, 2) beats all when both fall
    assert pareto_front([(1.0, 2.0, 3.0), (1.0, 2.0, 4.0), (2.0, 1.0, 9.0)],
                        [True, True, True]) == [0, 2]
    assert pareto_front([], [True]) == []


def record(number: int, accuracy: float | None, status: str = "finished", **measures):
    return TrialRecord(number, {UNITS.target: 4}, status=status, value=accuracy,
                       measures=measures)


def test_a_searchs_front_holds_finished_trials_measured_in_every_objective(project):
    project = searched(project, "random", UNITS)
    project.search.objectives = ["latency", "params"]
    state = SearchState(project, 1, 6, [
        record(0, 0.9, latency=1.0, params=58),
        record(1, 0.8, latency=0.5, params=30),
        record(2, 0.7, latency=2.0, params=58),  # beaten by 0
        record(3, 0.99, "failed", latency=0.1, params=1),
        record(4, 0.95),  # finished but never measured
        record(5, 0.9, latency=1.0, params=30),  # beats 0
    ])
    assert state.front() == [1, 5]
    assert state.best().number == 4  # the metric's best is still the metric's
    project.search.objectives = []
    assert state.front() == [4]


@pytest.mark.parametrize(("objectives", "strategy", "reason"), [
    (["speed"], "random", "Unknown objective 'speed': choose one of latency, params, size."),
    (["latency", "latency"], "random", "An objective is listed twice."),
    (["params", "size"], "bayes", "Choose parameters or model file size"),
    (["latency"], "hyperband", "Optuna prunes no search of several objectives"),
])
def test_objectives_are_checked_in_one_line_each(project, objectives, strategy, reason):
    project = searched(project, strategy, UNITS)
    project.search.objectives = objectives
    found = problems(project, project.search)
    assert len(found) == 1 and reason in found[0], found


def test_objectives_are_saved_with_the_project_and_a_file_without_them_has_none(project,
                                                                                 tmp_path):
    project.search = SearchSettings(dimensions=[UNITS], strategy="bayes",
                                    objectives=["latency", "size"])
    path = tmp_path / "p.studio.json"
    save_project(project, path)
    assert load_project(path).search.objectives == ["latency", "size"]
    document = json.loads(path.read_text())
    del document["search"]["objectives"]
    path.write_text(json.dumps(document))
    assert load_project(path).search.objectives == []
    document["format_version"] = 9
    path.write_text(json.dumps(document))
    assert load_project(path).search == SearchSettings(dimensions=[UNITS], strategy="bayes")


def measured(params: dict) -> tuple[list[dict], dict]:
    """A trial's epochs and measures as if trained: a larger learning rate scores better and
    answers slower (a trade-off with a front of every trial)."""
    rate = math.log10(params[RATE.target])
    return [{"epoch": 1, "val_accuracy": 0.5 + rate / 10}], {"latency": 2.0 + rate}


@pytest.mark.parametrize("strategy", ["bayes", "random", "grid"])
def test_the_study_is_told_every_objective_and_agrees_on_the_front(project, tmp_path,
                                                                    strategy):
    project = searched(project, strategy, RATE, trials=6, workers=1)
    project.search.objectives = ["latency"]
    session = SearchSession(new_state(project), tmp_path, tmp_path, None, None, 5)
    assert session.study.directions[1].name == "MINIMIZE"
    for _ in range(session.prepare()):
        trial_record, trial = session.propose()
        session.state.trials.append(trial_record)
        trial_record.epochs, trial_record.measures = measured(trial_record.params)
        session.conclude(trial_record, trial, "finished")
    state = read_state(tmp_path)
    assert all(t.values(["latency"]) is not None for t in state.trials)
    optuna_front = sorted(t.number for t in session.study.best_trials)
    assert state.front() == optuna_front == json.loads(
        (tmp_path / "search.json").read_text())["front"]


def test_a_resumed_search_tells_the_study_the_kept_trials_values(project, tmp_path):
    project = searched(project, "bayes", RATE, trials=4, workers=1)
    project.search.objectives = ["latency"]
    state = new_state(project)
    for number, rate in enumerate((1e-4, 1e-2, 1e-1)):
        epochs, measures = measured({RATE.target: rate})
        state.trials.append(TrialRecord(number, {RATE.target: rate}, "finished",
                                        epochs[0]["val_accuracy"], epochs=epochs,
                                        measures=measures))
    state.trials.append(TrialRecord(3, {RATE.target: 1e-3}, "failed", reason="diverged"))
    write_state(tmp_path, state)
    session = SearchSession(resumed_state(tmp_path), tmp_path, tmp_path, None, None, 5)
    assert session.prepare() == 0
    assert sorted(t.number for t in session.study.best_trials) == [0, 1, 2]


def test_latency_is_the_median_time_of_inputs_answered_one_by_one(monkeypatch):
    ticks = iter([0.0, 0.5, 1.0, 1.002, 2.0, 2.004, 3.0, 3.003])  # first answer: tracing
    monkeypatch.setattr(timing, "perf_counter", lambda: next(ticks))
    seen = []
    answers, latency = timing.answered_one_by_one(lambda x: x * 2, np.arange(4.0), seen.append)
    assert [a.tolist() for a in answers] == [[0.0], [2.0], [4.0], [6.0]]
    assert seen == [1, 2, 3, 4]
    assert latency == pytest.approx(3.0)
