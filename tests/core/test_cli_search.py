"""``studio search PROJECT [--strategy S] [--trials N] [--startup-trials N] [--workers N]
[--objective NAME] [--ray ADDRESS] [--resume SEARCH_DIR] [--json]``: a line per trial and the
best (or the Pareto front), or one JSON document; exit 2 for a space that cannot be searched
or a runner that is not there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from studio.cli import main
from studio.core.project.document import Dimension, load_project, save_project
from studio.core.runs.history import read_run
from studio.core.search.state import SearchState, TrialRecord, read_state, write_state
from tests.core.test_search import LEARNING_RATES, searched, table_project

TRIAL = re.compile(r"^trial (?P<number>\d+)  (?P<status>\w+)  val_accuracy \d\.\d{4}  "
                   r"Learning rate (?P<rate>[\d.]+)  \d+\.\ds$")


@pytest.fixture
def project_file(tmp_path, private_workspace) -> Path:
    path = tmp_path / "table.studio.json"
    save_project(searched(table_project(tmp_path), "grid", LEARNING_RATES, workers=1), path)
    return path


def test_search_prints_a_line_per_trial_then_the_best(project_file, capsys):
    assert main(["search", str(project_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Search of 2 trials in ")
    trials = [TRIAL.match(line) for line in lines[1:3]]
    assert all(trials), lines
    assert sorted(float(t["rate"]) for t in trials) == [0.001, 0.01]
    assert {t["status"] for t in trials} == {"finished"}
    assert lines[3].startswith("Best: trial ")
    assert (project_file.parent / "searches" / "table").is_dir()


def test_options_override_the_project_and_json_tells_everything(project_file, capsys):
    code = main(["search", str(project_file), "--strategy", "random", "--trials", "1",
                 "--startup-trials", "3", "--workers", "2", "--objective", "latency,params",
                 "--json"])
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    assert not document["stopped"] and document["metric"] == "val_accuracy"
    search = read_state(Path(document["search_dir"])).project.search
    assert search.startup_trials == 3 and search.objectives == ["latency", "params"]
    [trial] = document["trials"]
    assert trial["status"] == "finished" and document["best"] == trial["number"]
    assert trial["measures"]["params"] == 58 and trial["measures"]["latency"] > 0
    assert document["front"] == [trial["number"]]
    assert trial["params"]["training.learning_rate"] in (0.01, 0.001)
    assert read_run(Path(trial["run_dir"])).status == "finished"
    assert Path(trial["run_dir"]).parent == project_file.parent / "runs" / "table"


def test_an_invalid_space_is_refused_with_its_reasons(tmp_path, capsys, private_workspace):
    path = tmp_path / "bad.studio.json"
    save_project(searched(table_project(tmp_path), "grid",
                          Dimension("training.learning_rate", values=[-0.1])), path)
    assert main(["search", str(path)]) == 2
    error = capsys.readouterr().err
    assert "the search cannot run" in error and "-0.1" in error


def test_a_finished_search_of_several_objectives_resumed_lists_its_pareto_front(
        project_file, tmp_path, capsys):
    project = load_project(project_file)
    project.search.strategy, project.search.objectives = "random", ["latency", "params"]
    rate = "training.learning_rate"
    write_state(tmp_path / "search", SearchState(project, 1, 3, [
        TrialRecord(0, {rate: 0.01}, "finished", 0.9, measures={"latency": 1.5, "params": 58}),
        TrialRecord(1, {rate: 0.001}, "finished", 0.8, measures={"latency": 2.5,
                                                                 "params": 58}),
        TrialRecord(2, {rate: 0.01}, "finished", 0.7, measures={"latency": 0.5, "params": 58}),
    ]))
    assert main(["search", str(project_file), "--resume", str(tmp_path / "search")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "Pareto front (2 trials: none is better in every objective):"
    assert lines[2].startswith("  trial 0  finished  val_accuracy 0.9000  latency 1.5 ms, "
                               "params 58  Learning rate 0.01")
    assert lines[3].startswith("  trial 2  finished  val_accuracy 0.7000  latency 0.5 ms, ")
    assert len(lines) == 4


def test_resuming_a_folder_without_a_search_says_so(project_file, tmp_path, capsys):
    assert main(["search", str(project_file), "--resume", str(tmp_path)]) == 2
    assert "holds no search" in capsys.readouterr().err


def test_ray_is_an_optional_extra(project_file, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    assert main(["search", str(project_file), "--ray", "auto"]) == 2
    assert 'pip install ".[ray]"' in capsys.readouterr().err
