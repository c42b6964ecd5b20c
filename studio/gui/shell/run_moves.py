"""The window's side of moving a project's runs and searches with it (the move itself is
``studio.core.search.moving``): planned when the project is saved under a new name, made in
the background after the save, when the project opens (a move interrupted before) and when a
run or search that held it back ends; and, asked for in the Runs dock, the adoption of the
runs and searches that earlier versions kept in the workspace for every unsaved project."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QMainWindow, QMessageBox

from studio.core.base.events import OnEvent, progress_events
from studio.core.project.document import ProjectFileError
from studio.core.project.weights import ImportedWeights
from studio.core.runs.folders import runs_root
from studio.core.search.moving import (
    EARLIER,
    MoveReport,
    finish_move,
    journal_path,
    not_moved,
    plan_move,
)
from studio.gui.training.panel import TrainingPanel
from studio.gui.widgets.deferred import Deferred
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.errors import show_error
from studio.gui.widgets.jobs import JobSlot, Policy


def _adopt(place: Path, on_event: OnEvent, stop: threading.Event) -> MoveReport:
    """Move the workspace's earlier runs and searches into the place of the project at
    ``place`` (on the worker thread)."""
    plan_move(EARLIER, place)
    return finish_move(place, progress_events(on_event), stop)


class RunMoves(QObject):
    """Moves the runs and searches of the window's project into its place, one move at a
    time, and brings the run lists (``list_runs``), the Search tab (``search_page``, once
    built) and the Training dock up to date after. The Search tab's ``search_finished`` and
    the Runs dock's ``adopt_requested`` are wired to :meth:`finish` and :meth:`adopt_earlier`
    where those panels are built."""

    def __init__(self, window: QMainWindow, doc: ProjectDocument, training: TrainingPanel,
                 search_page: Deferred, list_runs: Callable[[], None]) -> None:
        super().__init__(window)
        self.window, self.doc = window, doc
        self.training, self.search_page, self.list_runs = training, search_page, list_runs
        self.job = JobSlot(self, Policy.RERUN)
        """Renames, but copies where the workspace and the project's folder are on different
        disks, so it runs in the background; a move asked for meanwhile waits for it."""
        self.job.event.connect(self._progressed)
        self.job.succeeded.connect(self._moved)
        self.job.failed.connect(self._failed)
        training.run_finished.connect(self.finish)

    def busy(self) -> bool:
        """True while runs move (what the Runs dock lists meanwhile is out of date)."""
        return self.job.busy()

    def save(self, path: Path, carried: ImportedWeights | None = None) -> None:
        """Write the project at ``path`` (with its imported weights ``carried`` beside it
        already, see ``ProjectDocument.save``); saved under a new name, it takes its runs and
        searches along (planned here, moved by :meth:`finish`). Raises OSError or
        ProjectFileError if it cannot be written, and nothing moves then."""
        moves = False
        try:
            if path != self.doc.place:
                moves = plan_move(self.doc.place, path)
            self.doc.save(path, carried)
        except (OSError, ProjectFileError):
            if moves:  # nothing moves into a project that was not written
                journal_path(path).unlink(missing_ok=True)
            raise

    @Slot()
    def finish(self) -> None:
        """Move the project's runs and searches into its place if a move is under way (after
        a save under a new name, or one interrupted), in the background. A run training
        stays until it ends (its lock keeps it); a search in the old place makes new runs
        there, so while one runs, the move waits for it to end."""
        place = self.doc.place
        if not journal_path(place).exists():
            return
        search = self.search_page.built_widget()
        if search is not None and search.is_running():
            self.window.statusBar().showMessage("The runs move to the project's folder once "
                                                "the search ends.", 8000)
            return
        self.job.start(lambda on_event, stop: finish_move(place, progress_events(on_event),
                                                          stop))

    @Slot()
    def adopt_earlier(self) -> None:
        """Ask, then move the runs and searches that earlier versions kept for every unsaved
        project in the workspace's shared folders into this project's place, where its Runs
        dock lists them (and they move with it when it is saved under a new name)."""
        answer = QMessageBox.question(
            self.window, "Import earlier runs",
            f"Move the runs and searches that earlier versions kept in "
            f"{runs_root(EARLIER).parent} into the folder of {self.doc.title}? They are then "
            "listed with its runs.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Yes:
            place = self.doc.place
            self.job.start(lambda on_event, stop: _adopt(place, on_event, stop))

    @Slot(object)
    def _progressed(self, event) -> None:
        self.window.statusBar().showMessage(
            f"{event['what']}: {event['done']} of {event['total']}…")

    @Slot(object)
    def _moved(self, report: MoveReport) -> None:
        self.training.follow_moved(report.moved)
        self.list_runs()
        search = self.search_page.built_widget()
        if search is not None:  # one built later reads the moved searches then
            search.show_last_search()
            search.runs_changed()
        self.window.statusBar().showMessage(report.summary(), 8000)

    @Slot(str)
    def _failed(self, text: str) -> None:
        self.list_runs()
        show_error(self.window, "Runs not moved yet", not_moved(text))
