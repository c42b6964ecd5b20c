"""Background jobs of the Data view where only the newest request matters."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from studio.gui.widgets.worker import Task, Worker


class LatestJob(QObject):
    """Runs one task at a time on a :class:`Worker`; starting another discards the one before.

    A discarded task is asked to stop and nothing it reports arrives any more; its thread is
    kept until it ends, and ``shutdown`` waits for every thread.
    """

    event = Signal(object)
    """A dict the current task reported."""
    succeeded = Signal(object)
    """The current task's result."""
    failed = Signal(str)
    """The current task raised; its message."""
    finished = Signal()
    """The current task ended, whichever way (after ``succeeded`` or ``failed``)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._current: Worker | None = None
        self._retired: list[Worker] = []

    def start(self, task: Task) -> None:
        """Run ``task(on_event, stop)`` in the background instead of any earlier task."""
        self.cancel()
        worker = Worker(task)
        worker.event.connect(self.event)
        worker.succeeded.connect(self.succeeded)
        worker.failed.connect(self.failed)
        worker.done.connect(lambda: self._ended(worker))
        self._current = worker
        worker.start()

    def busy(self) -> bool:
        """True while a task that has not been discarded is running."""
        return self._current is not None

    def cancel(self) -> None:
        """Stop the current task and drop whatever it still reports."""
        if self._current is not None:
            self._current.discard()
            self._retired.append(self._current)
            self._current = None
        ended = [w for w in self._retired if not w.is_running()]
        for worker in ended:
            worker.wait()
            self._retired.remove(worker)

    def shutdown(self) -> None:
        """Cancel and wait until every thread has ended (the window is closing)."""
        self.cancel()
        for worker in self._retired:
            worker.wait()
        self._retired.clear()

    def _ended(self, worker: Worker) -> None:
        if worker is self._current:
            self._current = None
            self.finished.emit()
