"""Saving a project with imported weights: the weights file is copied (and hashed in the same
pass) beside the project file in the background, with its progress and a Cancel button in
the status bar, before the project file is written."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QEventLoop, QObject, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QWidget,
)

from studio.core.base.events import OnEvent, progress_events
from studio.core.project.document import weights_path_for
from studio.core.project.weights import ImportedWeights, WeightsError, carry_weights
from studio.gui.widgets.jobs import JobSlot

SAVING = "The project is being saved: wait for it to finish, or cancel it."
"""Said when the person asks for something that would change the project meanwhile."""


class SaveStopped(Exception):
    """The weights were not carried, so the project was not saved: the copy was cancelled
    (``cancelled``) or failed; the message says which, in one line."""

    def __init__(self, message: str, cancelled: bool) -> None:
        super().__init__(message)
        self.cancelled = cancelled


def _carry(record: ImportedWeights, target: Path, on_event: OnEvent,
           stop: threading.Event) -> ImportedWeights:
    """``carry_weights`` on the worker thread; weights that are missing or changed stay where
    the record says (the project is still saved, see ``ProjectDocument.save``). A target
    that cannot be written is said in one line."""
    try:
        return carry_weights(record, target, progress_events(on_event), stop)
    except WeightsError:
        return record
    except OSError as exc:
        raise OSError(f"{target.name} cannot be written in {str(target.parent)[:80]} "
                      f"({exc.strerror or exc}).") from None


class WeightsCarrier(QObject):
    """Copies a project's imported weights beside the file it is being saved to on a job,
    while the window stays responsive: ``carry`` returns once the copy is in place."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.job = JobSlot(self)
        self.job.event.connect(self._progressed)
        self.job.succeeded.connect(self._succeeded)
        self.job.failed.connect(self._failed)
        self.job.finished.connect(self._finished)
        self.panel = QWidget()
        self.label = QLabel()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(200)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop saving; nothing is written.")
        self.cancel_button.clicked.connect(self.job.stop)
        layout = QHBoxLayout(self.panel)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.progress)
        layout.addWidget(self.cancel_button)
        self.panel.hide()
        window.statusBar().addPermanentWidget(self.panel)
        self._loop: QEventLoop | None = None
        self._outcome: ImportedWeights | SaveStopped | None = None

    def busy(self) -> bool:
        """True while weights are being copied for a save."""
        return self._loop is not None

    def carry(self, record: ImportedWeights, project_path: Path) -> ImportedWeights:
        """Copy ``record``'s file beside ``project_path`` in the background and return the
        record of the copy (or ``record`` itself if the file is missing or changed, which
        stays where it is). Events are handled meanwhile, as in a dialog's ``exec``: the
        window repaints and answers clicks. Raises SaveStopped if the copy is cancelled or
        fails; nothing is left at the target then."""
        target = weights_path_for(project_path)
        self.label.setText(f"Saving {project_path.name}: copying {target.name}…")
        self._outcome = None
        self._loop = QEventLoop()
        self.progress.setRange(0, 0)  # busy until the first progress event
        self.panel.show()
        self.job.start(lambda on_event, stop: _carry(record, target, on_event, stop))
        try:
            self._loop.exec()
        finally:
            self._loop = None
            self.panel.hide()
        outcome = self._outcome
        if isinstance(outcome, SaveStopped):
            raise outcome
        assert outcome is not None  # the job succeeded or failed before it finished
        return outcome

    @Slot(object)
    def _progressed(self, event: dict) -> None:
        if event.get("type") == "progress" and event["total"]:
            self.progress.setRange(0, 1000)
            self.progress.setValue(event["done"] * 1000 // event["total"])

    @Slot(object)
    def _succeeded(self, record: ImportedWeights) -> None:
        self._outcome = record

    @Slot(str)
    def _failed(self, message: str) -> None:
        cancelled = self.job.stop_requested()
        self._outcome = SaveStopped("Saving was cancelled; nothing was written." if cancelled
                                    else f"The imported weights cannot be copied: {message}",
                                    cancelled)

    @Slot()
    def _finished(self) -> None:
        if self._loop is not None:
            self._loop.quit()
