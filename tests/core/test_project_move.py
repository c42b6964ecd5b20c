"""A project's runs and searches move with it when it is saved under a new name: its first
save, Save As, and a move interrupted part-way, which loses nothing and finishes later."""

from __future__ import annotations

import errno
import json
import os
import shutil
import threading

import pytest

from studio.cli import main
from studio.core.base.paths import workspace
from studio.core.project.document import DatasetChoice, Project, load_project, save_project
from studio.core.runs.folders import PROJECT_FILE, runs_home, runs_root, scratch_project
from studio.core.runs.index import RunIndex
from studio.core.runs.lock import RunLock
from studio.core.search import moving
from studio.core.search.moving import EARLIER, finish_move, has_work, journal_path, plan_move
from studio.core.search.runner import last_search, searches_root
from studio.core.search.state import SearchState, TrialRecord, read_state, write_state
from tests.run_folders import rename_failing_at, write_runs


def searched(project_path, runs) -> object:
    """A search of the project at ``project_path`` (EARLIER: in the workspace's shared
    folder) whose trials are ``runs``."""
    folder = searches_root(project_path) / "20260105-090000"
    trials = [TrialRecord(number=i, params={"training.learning_rate": 0.001 * (i + 1)},
                          status="finished", value=0.9, run_dir=str(run))
              for i, run in enumerate(runs)]
    write_state(folder, SearchState(Project(), workers=1, planned=len(runs), trials=trials))
    return folder


def names(root) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir()} if root.is_dir() else set()


def save_and_move(old, new, project=None, **options):
    """What the window does: plan, write the project, move."""
    plan_move(old, new)
    save_project(project or Project(), new)
    return finish_move(new, **options)


def test_the_first_save_moves_the_runs_and_the_search_into_the_projects_place(tmp_path):
    scratch = scratch_project()
    runs = write_runs(runs_root(scratch), 3)
    RunIndex(runs_root(scratch)).sync()
    searched(scratch, runs[:2])
    saved = tmp_path / "work" / "digits.studio.json"
    told = []

    report = save_and_move(scratch, saved, on_progress=lambda *args: told.append(args))

    assert (report.runs, report.searches, report.kept, report.done) == (3, 1, [], True)
    assert told == [(moving.MOVING, done, 4) for done in range(1, 5)]
    index = RunIndex(runs_root(saved))
    assert {run.path for run in index.runs()} == {runs_root(saved) / p.name for p in runs}
    state = read_state(last_search(saved))
    assert [t.run_dir for t in state.trials] == [str(runs_root(saved) / p.name)
                                                 for p in runs[:2]]
    assert not scratch.parent.exists()  # the scratch folder is gone with nothing in it
    assert not journal_path(saved).exists()


def test_save_as_moves_runs_with_data_paths_that_still_lead_to_the_data(tmp_path):
    first = tmp_path / "one" / "cats.studio.json"
    data = tmp_path / "one" / "images"
    data.mkdir(parents=True)
    project = Project(dataset=DatasetChoice(source="folder", name="", path=str(data)))
    save_project(project, first)
    runs = write_runs(runs_root(first), 2)
    save_project(project, runs[0] / PROJECT_FILE, runs_home(runs[0]))  # stored relative
    assert not os.path.isabs(json.loads((runs[0] / PROJECT_FILE).read_text())
                             ["dataset"]["path"])
    searched(first, runs)
    second = tmp_path / "two" / "cats-bigger.studio.json"

    report = save_and_move(first, second, project)

    assert (report.runs, report.searches, report.done) == (2, 1, True)
    assert names(runs_root(second)) == {p.name for p in runs}
    assert names(runs_root(first)) == set()
    moved = runs_root(second) / runs[0].name
    assert load_project(moved / PROJECT_FILE).dataset.path == str(data)
    assert {t.run_dir for t in read_state(last_search(second)).trials} == {
        str(runs_root(second) / p.name) for p in runs}
    assert last_search(first) is None


def test_a_run_training_during_the_save_moves_once_it_has_ended(tmp_path):
    scratch = scratch_project()
    runs = write_runs(runs_root(scratch), 2)
    searched(scratch, runs[1:])
    saved = tmp_path / "p.studio.json"
    trainer = RunLock(runs[1])
    assert trainer.acquire()

    report = save_and_move(scratch, saved)

    assert (report.runs, report.searches, report.done) == (1, 0, False)
    assert sorted(report.kept) == sorted([runs[1].name, "20260105-090000"])
    assert names(runs_root(scratch)) == {runs[1].name}
    trainer.release()
    report = finish_move(saved)  # as the project's next opening does
    assert (report.runs, report.searches, report.done) == (1, 1, True)
    assert names(runs_root(saved)) == {p.name for p in runs}
    assert read_state(last_search(saved)).trials[0].run_dir == str(runs_root(saved) /
                                                                   runs[1].name)


def place_of(runs, old, new) -> dict[str, list[str]]:
    """For each run: the places (old, new) holding it."""
    return {p.name: [where for where, root in (("old", runs_root(old)), ("new", runs_root(new)))
                     if (root / p.name).is_dir()] for p in runs}


def test_an_interrupted_move_loses_nothing_and_a_retry_finishes_it(tmp_path, monkeypatch):
    scratch = scratch_project()
    runs = write_runs(runs_root(scratch), 4)
    searched(scratch, runs)
    saved = tmp_path / "p.studio.json"
    plan_move(scratch, saved)
    save_project(Project(), saved)
    real_rename = os.rename
    monkeypatch.setattr(moving.os, "rename", rename_failing_at(2))  # the second run's
    with pytest.raises(OSError, match="Input/output error"):
        finish_move(saved)
    places = place_of(runs, scratch, saved)
    assert sorted(places.values()) == [["new"], ["old"], ["old"], ["old"]]
    assert journal_path(saved).exists()
    assert len(RunIndex(runs_root(saved)).runs()) == 1  # the index says what is there

    monkeypatch.setattr(moving.os, "rename", real_rename)
    report = finish_move(saved)
    assert (report.runs, report.searches, report.done) == (3, 1, True)
    assert set(map(tuple, place_of(runs, scratch, saved).values())) == {("new",)}
    assert len(RunIndex(runs_root(saved)).runs()) == 4
    assert not journal_path(saved).exists()


def test_a_copy_across_file_systems_interrupted_before_removing_the_old_run(tmp_path,
                                                                           monkeypatch):
    scratch = scratch_project()
    runs = write_runs(runs_root(scratch), 3)
    saved = tmp_path / "p.studio.json"
    real_rename, real_rmtree, removals = os.rename, shutil.rmtree, []

    def other_file_system(source, target):
        if not os.path.basename(source).startswith(moving.INCOMING):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_rename(source, target)

    def failing_rmtree(path, *args, **kwargs):
        if os.path.dirname(path) == str(runs_root(scratch)):
            removals.append(path)
            if len(removals) == 2:
                raise OSError(errno.EIO, "Input/output error")
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(moving.os, "rename", other_file_system)
    monkeypatch.setattr(moving.shutil, "rmtree", failing_rmtree)
    plan_move(scratch, saved)
    with pytest.raises(OSError, match="Input/output error"):
        finish_move(saved)
    assert sorted(place_of(runs, scratch, saved).values()) == [["new"], ["old"],
                                                               ["old", "new"]]

    monkeypatch.setattr(moving.shutil, "rmtree", real_rmtree)
    report = finish_move(saved)
    assert report.done
    assert set(map(tuple, place_of(runs, scratch, saved).values())) == {("new",)}
    assert names(runs_root(saved)) == {p.name for p in runs}  # no copy left half-way


def test_a_stopped_move_goes_on_at_the_next_call(tmp_path):
    scratch = scratch_project()
    runs = write_runs(runs_root(scratch), 3)
    (searched(scratch, runs) / "search.json").write_text("{damaged")
    saved = tmp_path / "p.studio.json"
    stop = threading.Event()

    report = save_and_move(scratch, saved, on_progress=lambda *_: stop.set(), stop=stop)

    assert (report.runs, report.done) == (1, False)
    assert len(names(runs_root(scratch))) == 2 and journal_path(saved).exists()
    report = finish_move(saved)
    assert (report.runs, report.searches, report.done) == (2, 1, True)  # damaged, moved as is
    assert names(runs_root(saved)) == {p.name for p in runs}


def test_a_command_on_the_project_finishes_an_interrupted_move_first(tmp_path, monkeypatch,
                                                                      capsys):
    scratch = scratch_project()
    runs = write_runs(runs_root(scratch), 3)
    searched(scratch, runs)
    saved = tmp_path / "p.studio.json"
    real_rename = os.rename
    monkeypatch.setattr(moving.os, "rename", rename_failing_at(2))  # the second run's
    with pytest.raises(OSError, match="Input/output error"):
        save_and_move(scratch, saved)
    monkeypatch.setattr(moving.os, "rename", real_rename)
    capsys.readouterr()

    assert main(["runs", str(saved), "--json"]) == 0

    out, err = capsys.readouterr()
    assert sorted(run["path"] for run in json.loads(out)) == [
        str(runs_root(saved) / p.name) for p in runs]
    assert err == ("Note: an interrupted move went on. Moved 2 runs and 1 search into the "
                   "project's folder.\n")
    assert [t.run_dir for t in read_state(last_search(saved)).trials] == [
        str(runs_root(saved) / p.name) for p in runs]
    assert not journal_path(saved).exists() and not scratch.parent.exists()
    assert main(["runs", str(saved), "--json"]) == 0  # nothing more to say
    assert capsys.readouterr().err == ""


def test_the_runs_earlier_versions_kept_in_the_workspace_move_into_a_project(tmp_path):
    shared = runs_root(EARLIER)
    assert shared == workspace() / "runs"
    runs = write_runs(shared, 2)
    RunIndex(shared).sync()
    earlier_search = searched(EARLIER, runs)
    assert earlier_search.parent == workspace() / "searches"
    (workspace() / "cache").mkdir()
    saved = tmp_path / "p.studio.json"
    save_project(Project(), saved)
    assert has_work(EARLIER) and plan_move(EARLIER, saved)

    report = finish_move(saved)

    assert (report.runs, report.searches, report.done) == (2, 1, True)
    assert report.moved == {str(shared / p.name): str(runs_root(saved) / p.name) for p in runs}
    assert names(runs_root(saved)) == {p.name for p in runs}
    assert [t.run_dir for t in read_state(last_search(saved)).trials] == [
        str(runs_root(saved) / p.name) for p in runs]
    assert not has_work(EARLIER) and not shared.exists() and not earlier_search.exists()
    assert names(workspace()) == {"cache"}  # the workspace itself stays
    assert not plan_move(EARLIER, saved)  # nothing left to adopt
