"""How many trials a search runs and about how long. The time an epoch takes comes from the
newest run in the project's runs folder, read in the background, or, with none, is measured
in the background once per model, data and training."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from studio.core.base.messages import count, format_duration
from studio.core.build.estimate import measure_epoch_time
from studio.core.project.document import Project
from studio.core.runs.folders import runs_root
from studio.core.runs.history import latest_seconds_per_epoch
from studio.core.search.space import estimated_seconds, trial_count
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.jobs import JobSlot

MEASURE_DEVICES = ["/CPU:0"]


def _measure_task(project: Project, info):
    def task(on_event, stop):
        return measure_epoch_time(project, info, project.training.batch_size,
                                  MEASURE_DEVICES, None, stop).seconds_per_epoch

    return task


def _latest_task(root: Path):
    def task(on_event, stop):
        return root, latest_seconds_per_epoch(root)

    return task


class SearchEstimate(QObject):
    """The trial count and time of the document's search; ``changed`` when a time per epoch
    has been read or measured."""

    changed = Signal()

    def __init__(self, doc: ProjectDocument, cores: int, reasons: Callable[[], list[str]],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.cores = cores
        self.reasons = reasons
        """Why the search cannot start now (nothing is measured for a search that cannot)."""
        self.measuring = JobSlot(self)
        self.measuring.succeeded.connect(
            lambda seconds: self._measured.__setitem__(self._measuring_key, seconds))
        self.measuring.failed.connect(
            lambda _: self._measured.__setitem__(self._measuring_key, None))
        self.measuring.finished.connect(self.changed)
        self._measuring_key = ""
        self.reader = JobSlot(self)
        """Reads the newest run's time per epoch, off the GUI thread."""
        self.reader.succeeded.connect(self._read)
        self.reader.failed.connect(lambda _: self._read((self._reading, None)))
        self._reading: Path | None = None
        """The runs folder being read."""
        self._latest: tuple[Path, float | None] | None = None
        """The runs folder last read and the seconds per epoch of its newest run."""
        self._measured: dict[str, float | None] = {}
        """Seconds per epoch measured, by what they depend on (model, data, training)."""

    def text(self, reasons: list[str]) -> str:
        """``4 trials, about 2 min`` (or why the time is unknown)."""
        project, search = self.doc.project, self.doc.project.search
        if reasons:
            return "The number of trials is known once the search space is valid."
        trials = count(trial_count(project, search), "trial")
        per_epoch = self.seconds_per_epoch()
        if per_epoch is None:
            busy = self.measuring.busy() or self.reader.busy()
            measuring = " (measuring…)" if busy else ""
            return f"{trials}, time unknown until measured{measuring}"
        seconds = estimated_seconds(project, search, per_epoch, self.cores)
        return f"{trials}, about {format_duration(seconds, 'rough')}"

    def seconds_per_epoch(self) -> float | None:
        """Seconds an epoch takes: of the newest run in the project's runs, else as measured
        for this model, data and training; None until known."""
        if self._runs_read() and self._latest[1] is not None:
            return self._latest[1]
        return self._measured.get(_measured_key(self.doc.project))

    def _runs_read(self) -> bool:
        return self._latest is not None and self._latest[0] == runs_root(self.doc.place)

    def read_runs(self) -> None:
        """Read the newest run's time per epoch in the background, unless it is known or
        being read for the project's runs folder."""
        root = runs_root(self.doc.place)
        if self._runs_read() or self._reading == root:
            return
        self._reading = root
        self.reader.start(_latest_task(root))

    def _read(self, result: tuple[Path, float | None]) -> None:
        self._latest = result
        self._reading = None
        self.changed.emit()

    def runs_changed(self) -> None:
        """A run ended somewhere, or the runs folder moved: read the newest run again."""
        self._latest = None
        self._reading = None
        self.read_runs()

    def measure(self) -> None:
        """Measure the time per epoch in the background, once per model, data and training,
        if no run says it and the search could start."""
        project = self.doc.project.copy()
        key = _measured_key(project)
        info = self.doc.dataset()
        if (self.measuring.busy() or info is None or key in self._measured
                or not self._runs_read() or self.seconds_per_epoch() is not None
                or self.reasons()):
            return
        self._measuring_key = key
        self.measuring.start(_measure_task(project, info))
        self.changed.emit()


def _measured_key(project: Project) -> str:
    """What a measured time per epoch depends on."""
    return repr((project.graph, project.dataset, project.training))
