"""The runs and searches of an unsaved project are its own: the first save (and Save As)
takes them along into the project's folder, where the Runs dock, Try, Evaluate and the Search
tab find them, also once reopened; another unsaved project never sees them."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from studio.core.runs.folders import RunFolder, runs_root
from studio.core.search import moving
from studio.core.search.moving import EARLIER, journal_path
from studio.core.search.runner import search_folder
from studio.core.search.state import SearchState, TrialRecord, write_state
from studio.gui.inference.try_panel import NO_MODEL
from tests.gui.support import RUN_TIMEOUT_MS, runs_of
from tests.helpers import tiny_project
from tests.run_folders import rename_failing_at, write_run

CTRL = Qt.KeyboardModifier.ControlModifier
LEFT = Qt.MouseButton.LeftButton


def listed(qtbot, window, count: int) -> None:
    """Wait until the Runs dock lists ``count`` runs of the window's project."""
    window.runs.refresh()
    qtbot.waitUntil(lambda: not window.runs.listing.busy() and not window.moving.busy()
                    and window.runs.count_label.text() == f"{count} run{'s' * (count != 1)}"
                    and all(run.path.parent == runs_of(window)
                            for run in window.runs.model.runs))


def offered(box) -> list[str]:
    """The run folders a Try or Evaluate chooser offers."""
    return [box.itemData(i) for i in range(box.count())]


def test_the_first_save_takes_the_runs_and_the_search_along(window, qtbot, tmp_path,
                                                              monkeypatch):
    made = [write_run(runs_of(window), i, model=True, learning_rate=0.01 / (i + 1))
            for i in range(2)]
    trials = [TrialRecord(i, {"training.learning_rate": 0.01 / (i + 1)}, "finished", 0.9,
                          run_dir=str(path)) for i, path in enumerate(made)]
    write_state(search_folder(window.doc.place),
                SearchState(window.doc.project.copy(), 1, 2, trials))
    window.search.show_last_search()  # as a search ended in this window shows it
    listed(qtbot, window, 2)
    window.runs.select_runs([path.name for path in made])
    window.runs.compare_action.trigger()
    assert window.runs.differences.rowCount() > 0
    for view in (window.try_panel, window.evaluation):  # the person picks the older run
        view.run_box.setCurrentIndex(1)
        view.run_box.activated.emit(1)
    scratch = window.doc.place.parent
    path = tmp_path / "digits.studio.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))

    qtbot.keyClick(window, Qt.Key.Key_S, CTRL)  # an unsaved project: Save asks where

    moved = [str(runs_root(path) / p.name) for p in reversed(made)]  # newest first
    listed(qtbot, window, 2)
    assert offered(window.try_panel.run_box) == moved
    assert offered(window.evaluation.run_box) == moved
    for view in (window.try_panel, window.evaluation):  # still the run picked, where it is now
        assert view.run_box.currentData() == moved[1]
        assert Path(view.model_box.currentData()).parent == Path(moved[1])
    assert window.try_panel.run_box.isEnabled() and window.evaluation.evaluate_button.isEnabled()
    assert str(scratch) not in window.try_panel.status.text()
    assert window.runs.differences.rowCount() == 0  # it compared runs no longer listed
    assert [row[0] for row in window.search.table.row_texts()] == ["0", "1"]
    assert not scratch.exists()

    window.doc.replace(window.doc.project.copy(), None)  # another project, then reopen
    listed(qtbot, window, 0)
    assert window.search.table.row_texts() == []
    assert window.open_path(path)
    listed(qtbot, window, 2)
    assert [row[0] for row in window.search.table.row_texts()] == ["0", "1"]
    window.search.table.selectRow(1)
    window.search.table.activated.emit(window.search.table.currentIndex())
    assert [run.path for run in window.runs.selected_runs()] == [Path(moved[0])]


def test_save_as_takes_the_runs_to_the_new_name(window, qtbot, tmp_path, monkeypatch):
    first, second = tmp_path / "one" / "a.studio.json", tmp_path / "two" / "b.studio.json"
    first.parent.mkdir()
    assert window._save_to(first)
    write_run(runs_of(window), 0, model=True)
    listed(qtbot, window, 1)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(second), ""))

    qtbot.keyClick(window, Qt.Key.Key_S, CTRL | Qt.KeyboardModifier.ShiftModifier)

    listed(qtbot, window, 1)
    assert runs_of(window) == runs_root(second)
    assert offered(window.try_panel.run_box) == [str(runs_root(second) /
                                                     window.runs.model.runs[0].id)]
    assert not runs_root(first).exists()


def test_two_unsaved_projects_do_not_see_each_others_runs(window, qtbot, dialogs):
    demo_run = write_run(runs_of(window), 0, model=True)
    listed(qtbot, window, 1)
    assert offered(window.try_panel.run_box) == [str(demo_run)]

    assert window.new_project("mlp")  # File > New from Template > MLP; Discard is answered

    assert dialogs == [("question", "Unsaved changes", "Save Small CNN with its runs? Unless it "
                        "is saved, no other project lists them (they stay in "
                        f"{demo_run.parents[2]}).")]

    listed(qtbot, window, 0)
    for box in (window.try_panel.run_box, window.evaluation.run_box):
        assert [box.itemText(i) for i in range(box.count())] == ["No trained runs yet"]
    assert window.try_panel.status.text() == NO_MODEL
    mlp_run = write_run(runs_of(window), 1, model=True)
    listed(qtbot, window, 1)
    assert offered(window.try_panel.run_box) == [str(mlp_run)]
    assert offered(window.evaluation.run_box) == [str(mlp_run)]


def test_a_run_training_during_the_save_follows_once_it_ends(window, qtbot, tmp_path, gate):
    gate.after(RunFolder, "add_epoch")  # the run waits once its epoch is recorded
    window.doc.replace(tiny_project(epochs=1), None)
    earlier = write_run(runs_of(window), 0, model=True)
    with qtbot.waitSignal(window.training.run_started, timeout=RUN_TIMEOUT_MS):
        window.training.start()
    assert gate.reached.wait(RUN_TIMEOUT_MS / 1000)
    path = tmp_path / "tiny.studio.json"

    assert window._save_to(path)

    listed(qtbot, window, 1)  # the run that ended moved; the one training stays meanwhile
    assert window.runs.model.runs[0].id == earlier.name
    with qtbot.waitSignal(window.training.run_finished, timeout=RUN_TIMEOUT_MS):
        gate.open()
    listed(qtbot, window, 2)
    assert {run.status for run in window.runs.model.runs} == {"finished"}
    assert not journal_path(path).exists()
    assert Path(window.training.run_dir).parent == runs_root(path)  # the dock followed it


def test_the_training_dock_follows_its_run_into_the_projects_folder(window, qtbot, tmp_path,
                                                                    monkeypatch, opened_urls):
    window.doc.replace(tiny_project(epochs=1), None)
    with qtbot.waitSignal(window.training.run_finished, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(window.training.start_button, LEFT)
    run = Path(window.training.run_dir)
    assert run.parent == runs_of(window)
    path = tmp_path / "tiny.studio.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))

    qtbot.keyClick(window, Qt.Key.Key_S, CTRL)

    listed(qtbot, window, 1)
    moved = runs_root(path) / run.name
    assert not run.exists() and moved.is_dir()
    assert window.training.open_button.toolTip() == f"Show the run's folder: {moved}"
    qtbot.mouseClick(window.training.open_button, LEFT)
    assert [Path(url.toLocalFile()) for url in opened_urls] == [moved]


def test_a_move_that_fails_says_so_and_the_next_opening_finishes_it(window, qtbot, tmp_path,
                                                                    dialogs, monkeypatch):
    made = [write_run(runs_of(window), i, model=True) for i in range(3)]
    real_rename = os.rename
    monkeypatch.setattr(moving.os, "rename", rename_failing_at(2))  # the second run's
    path = tmp_path / "p.studio.json"
    assert window._save_to(path)

    qtbot.waitUntil(lambda: len(dialogs) == 1)
    kind, title, text = dialogs[0]
    assert (kind, title) == ("warning", "Runs not moved yet")
    assert "Input/output error" in text and "kept whole where they were" in text
    listed(qtbot, window, 1)
    monkeypatch.setattr(moving.os, "rename", real_rename)
    window.doc.replace(window.doc.project.copy(), None)

    assert window.open_path(path)

    listed(qtbot, window, 3)
    assert {run.id for run in window.runs.model.runs} == {p.name for p in made}


def test_runs_of_earlier_versions_are_imported_into_the_project_when_asked(window, qtbot,
                                                                           dialogs, monkeypatch):
    earlier = write_run(runs_root(EARLIER), 0, model=True)  # where earlier versions kept it
    window.runs_dock.raise_()
    button = window.runs.adopt_button
    listed(qtbot, window, 0)
    qtbot.waitUntil(button.isVisible)
    assert "Import earlier runs moves them into this project." in window.runs.no_runs.text()
    qtbot.mouseClick(button, LEFT)  # answered Discard: nothing moves
    assert [title for _, title, _ in dialogs] == ["Import earlier runs"]
    assert dialogs[0][2] == (f"Move the runs and searches that earlier versions kept in "
                             f"{earlier.parents[1]} into the folder of Small CNN? They are "
                             "then listed with its runs.")
    assert earlier.is_dir() and not window.moving.busy()
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *args, **kwargs: QMessageBox.StandardButton.Yes)

    qtbot.mouseClick(button, LEFT)

    listed(qtbot, window, 1)
    assert window.runs.model.runs[0].id == earlier.name and not earlier.exists()
    qtbot.waitUntil(lambda: not button.isVisible())
    assert "earlier" not in window.runs.no_runs.text()
    assert offered(window.try_panel.run_box) == [str(runs_of(window) / earlier.name)]
    assert earlier.parents[1].is_dir()  # the workspace stays
