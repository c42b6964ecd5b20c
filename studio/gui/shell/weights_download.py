"""Fetching the ImageNet weights a newly opened project lacks, with progress and Cancel."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QProgressDialog, QPushButton, QWidget

from studio.core.base.events import DownloadEvent, OnEvent
from studio.core.model.applications import fetch_weights
from studio.core.model.weights import missing_weights, use_random_weights
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.jobs import JobSlot
from studio.gui.widgets.worker import Task

MEGABYTE = 1 << 20


def _fetch_all(names: list[str]) -> Task:
    def task(on_event: OnEvent, stop: threading.Event) -> None:
        for name in names:
            fetch_weights(name, lambda done, total, n=name: on_event(
                {"type": "download", "name": n, "done": done, "total": total}), stop)

    return task


class WeightsDownload(QObject):
    """Downloads missing ImageNet weights on a worker thread behind a progress dialog.

    If they cannot be had (no network, or Cancel), a message says so and offers to start
    the project's bases from random weights instead; the project stays open either way.
    """

    message = Signal(str)
    """A short note for the status bar."""
    settled = Signal()
    """The download ended and, if it failed, the user has answered the message."""

    def __init__(self, doc: ProjectDocument, parent: QWidget) -> None:
        super().__init__(parent)
        self.doc = doc
        self._parent = parent
        self.job = JobSlot(self)
        self.job.event.connect(self._on_progress)
        self.job.succeeded.connect(self._on_ready)
        self.job.failed.connect(self._on_failed)
        self.job.finished.connect(self._on_done)
        self.progress: QProgressDialog | None = None
        self.notice: QMessageBox | None = None
        self.random_button: QPushButton | None = None
        self._names: list[str] = []

    def fetch_missing(self) -> None:
        """Start downloading the weights the project needs, if any are missing."""
        names = missing_weights(self.doc.project.graph)
        if not names or self.job.busy():
            return
        self.progress = QProgressDialog(self._label(names[0]), "Cancel", 0, 0, self._parent)
        self.progress.setWindowTitle("ImageNet weights")
        self.progress.setWindowModality(Qt.WindowModality.WindowModal)
        self.progress.setMinimumDuration(0)
        self.progress.setAutoReset(False)
        self.progress.setAutoClose(False)
        self.progress.canceled.connect(self._cancel)
        self._names = names
        self.job.start(_fetch_all(names))
        self.progress.show()

    @staticmethod
    def _label(name: str, done: int = 0, total: int = 0) -> str:
        size = f" ({done / MEGABYTE:.1f} of {total / MEGABYTE:.1f} MB)" if total else ""
        return f"Downloading the ImageNet weights for {name}{size}…"

    @Slot()
    def _cancel(self) -> None:
        self.job.stop()

    @Slot(object)
    def _on_progress(self, event: DownloadEvent) -> None:
        if self.progress is None:
            return
        self.progress.setLabelText(self._label(event["name"], event["done"], event["total"]))
        self.progress.setMaximum(event["total"])
        self.progress.setValue(event["done"])

    @Slot(object)
    def _on_ready(self, _result: object) -> None:
        self.message.emit(f"The ImageNet weights for {', '.join(self._names)} are ready.")
        self.settled.emit()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.notice = QMessageBox(QMessageBox.Icon.Warning, "ImageNet weights unavailable",
                                  message, parent=self._parent)
        self.notice.setInformativeText(
            "With random initial weights the whole base learns from scratch, which needs more "
            "data and time. If you keep ImageNet weights, Layer Studio tries to download them "
            "again when training starts.")
        self.random_button = self.notice.addButton("Use random initial weights",
                                                   QMessageBox.ButtonRole.AcceptRole)
        self.notice.addButton("Keep ImageNet weights", QMessageBox.ButtonRole.RejectRole)
        self.notice.setDefaultButton(self.random_button)
        self.notice.buttonClicked.connect(self._answered)
        self.notice.open()

    @Slot(object)
    def _answered(self, button: QPushButton) -> None:
        if button is self.random_button:
            self.doc.edit("Use random initial weights",
                          lambda project: use_random_weights(project.graph))
            self.message.emit("The pre-trained bases now start from random weights.")
        self.settled.emit()

    @Slot()
    def _on_done(self) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress.deleteLater()
            self.progress = None
