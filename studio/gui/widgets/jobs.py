"""Job slots: the one way a panel runs background work, and stops all of it when the window
closes."""

from __future__ import annotations

from enum import Enum

from PySide6.QtCore import QObject, Signal
from shiboken6 import isValid

from studio.gui.widgets.worker import Task, Worker


class Policy(Enum):
    """What a slot does with a job asked for while another runs."""

    REPLACE = "replace"
    """The new job starts at once; the running one is asked to stop and nothing more it
    reports arrives (its thread is kept until it ends)."""
    RERUN = "rerun"
    """The new job waits, replacing any job waiting before it, and starts once the running
    job's last signal has been delivered."""


class JobSlot(QObject):
    """Runs one job at a time on a :class:`Worker` and relays the signals of the job that
    counts. A slot is a child of the widget it serves, so the window finds every slot under
    it: :func:`shutdown_jobs` stops them all.

    The slot is busy from ``start`` until its job's ``done`` has been delivered, so no check
    sees a job that has ended without saying how.
    """

    event = Signal(object)
    """A dict the current job reported."""
    succeeded = Signal(object)
    """The current job's result."""
    failed = Signal(str)
    """The current job raised; its message."""
    started = Signal()
    """A job started (one that waited, too)."""
    finished = Signal()
    """The current job ended, whichever way (after ``succeeded`` or ``failed``); the slot is
    no longer busy, and a job that waited starts after this."""

    def __init__(self, parent: QObject, policy: Policy = Policy.REPLACE) -> None:
        super().__init__(parent)
        self.policy = policy
        self._current: Worker | None = None
        self._waiting: Task | None = None
        self._retired: list[Worker] = []
        self._closed = False

    def start(self, task: Task) -> None:
        """Run ``task(on_event, stop)`` in the background, as the slot's policy says; nothing
        starts once the slot is shut down."""
        if self._closed:
            return
        if self._current is not None and self.policy is Policy.RERUN:
            self._waiting = task
            return
        self.cancel()
        self._launch(task)

    def busy(self) -> bool:
        """True from ``start`` until the current job's last signal has been delivered."""
        return self._current is not None

    def waiting(self) -> bool:
        """True while a job waits for the current one to end (what the current one reports
        is then out of date)."""
        return self._waiting is not None

    def stop(self) -> None:
        """Ask the current job to stop at its next check; it still reports how it ended."""
        if self._current is not None:
            self._current.stop()

    def stop_requested(self) -> bool:
        """True once the current job has been asked to stop."""
        return self._current is not None and self._current.stop_requested()

    def cancel(self) -> None:
        """Drop the waiting job, and stop the current one and drop whatever it still
        reports."""
        self._waiting = None
        if self._current is not None:
            self._current.discard()
            self._retired.append(self._current)
            self._current = None
        self._retired = [worker for worker in self._retired if worker.is_running()]

    def close(self) -> None:
        """Cancel, and start nothing more (the window is closing)."""
        self._closed = True
        self.cancel()

    def wait(self) -> None:
        """Block until every thread the slot started has ended (the current job's signals
        still arrive afterwards, unless the slot was closed)."""
        current = [self._current] if self._current is not None else []
        for worker in [*self._retired, *current]:
            worker.wait()
        self._retired.clear()

    def _launch(self, task: Task) -> None:
        worker = Worker(task)
        worker.event.connect(self.event)
        worker.succeeded.connect(self.succeeded)
        worker.failed.connect(self.failed)
        worker.done.connect(lambda: self._ended(worker))
        self._current = worker
        worker.start()
        self.started.emit()

    def _ended(self, worker: Worker) -> None:
        # A slot destroyed with its owner while its job ran (a view rebuilt) hears the job's
        # end still, through the worker: nobody waits for it any more, and its signals are gone.
        if not isValid(self) or worker is not self._current:
            return
        self._current = None
        self.finished.emit()
        waiting, self._waiting = self._waiting, None
        if waiting is not None and self._current is None:  # a receiver may have started one
            self._launch(waiting)


def shutdown_jobs(owner: QObject) -> None:
    """Stop every job of every slot under ``owner``, drop what they still report, and wait
    for their threads (the window is closing): the slots ask their jobs to stop first, so
    the jobs end together."""
    slots = owner.findChildren(JobSlot)
    for slot in slots:
        slot.close()
    for slot in slots:
        slot.wait()
