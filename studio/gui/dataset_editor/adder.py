"""Adding images as background jobs, one after another: each copies files (or first saves
camera frames or a pasted picture as PNG files) into a class with the core's ``add_images``,
reporting progress; a Cancel keeps what was added. Each add that added something is one
undoable step."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal

from studio.core.base.events import progress_events
from studio.core.data.editable.adding import AddReport, add_images
from studio.core.data.editable.dataset import EditableDataset
from studio.gui.dataset_editor.transfer import save_frames
from studio.gui.widgets.jobs import JobSlot


@dataclass
class AddJob:
    """Files (or frames) to add to a class; ``temporary`` holds files made for the add
    (pasted pictures, frames), removed once it ends."""

    dataset: EditableDataset
    class_name: str
    sources: list[Path]
    frames: list[np.ndarray] = field(default_factory=list)
    temporary: tempfile.TemporaryDirectory | None = None
    max_side: int | None = None
    keep_originals: bool = False

    def task(self):
        def run(on_event, stop) -> AddReport:
            sources = self.sources
            if self.frames:
                sources = sources + save_frames(self.frames, Path(self.temporary.name))
            return add_images(self.dataset, self.class_name, sources, progress_events(on_event),
                              stop, max_side=self.max_side, keep_originals=self.keep_originals)

        return run


def temporary_folder() -> tempfile.TemporaryDirectory:
    """A folder for files made only to be added (removed when the add ends)."""
    return tempfile.TemporaryDirectory(prefix="layer-studio-add-")


def one_line(report: AddReport) -> str:
    """The add's summary, with the first refused file's reason."""
    text = report.summary()
    if report.refused:
        path, why = report.refused[0]
        text += f" First refused: {path.name}: {why}"
    return text


class Adder(QObject):
    """Runs adds one at a time in the order asked."""

    progress = Signal(object)
    """A progress event of the add running."""
    added = Signal(object, object)
    """An add ended: (its AddJob, its AddReport)."""
    failed = Signal(str)
    """An add could not start (an unknown class, a read-only folder): why."""
    busy_changed = Signal(bool)

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.slot = JobSlot(self)
        self.slot.event.connect(self.progress)
        self.slot.succeeded.connect(lambda report: self.added.emit(self._job, report))
        self.slot.failed.connect(self.failed)
        self.slot.finished.connect(self._ended)
        self._job: AddJob | None = None
        self._queue: list[AddJob] = []

    def add(self, job: AddJob) -> None:
        """Add after the adds asked before."""
        self._queue.append(job)
        if not self.slot.busy():
            self._next()

    def busy(self) -> bool:
        """Whether an add runs (or waits)."""
        return self.slot.busy() or bool(self._queue)

    def cancel(self) -> None:
        """Stop the add running (the images it added stay, one undoable step) and drop those
        waiting."""
        for job in self._queue:
            _clean(job)
        self._queue.clear()
        self.slot.stop()

    def _next(self) -> None:
        self._job = self._queue.pop(0)
        self.slot.start(self._job.task())
        self.busy_changed.emit(True)

    def _ended(self) -> None:
        _clean(self._job)
        self._job = None
        if self._queue:
            self._next()
        else:
            self.busy_changed.emit(False)


def _clean(job: AddJob | None) -> None:
    if job is not None and job.temporary is not None:
        job.temporary.cleanup()
