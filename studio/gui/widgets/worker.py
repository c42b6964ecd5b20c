"""Running a core function on a QThread and turning its callbacks into Qt signals."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from studio.core.base.events import OnEvent

Task = Callable[[OnEvent, threading.Event], Any]


class _Runner(QObject):
    """Lives on the worker thread, runs the task and reports; it never touches a widget."""

    event = Signal(object)
    succeeded = Signal(object)
    failed = Signal(str)
    done = Signal()

    def __init__(self, task: Task, stop: threading.Event) -> None:
        super().__init__()
        self._task = task
        self._stop = stop

    @Slot()
    def run(self) -> None:
        try:
            result = self._task(self.event.emit, self._stop)
        except Exception as exc:  # noqa: BLE001 - every failure is shown, never raised
            self.failed.emit(str(exc) or type(exc).__name__)
        else:
            self.succeeded.emit(result)
        finally:
            self.done.emit()
            self.thread().quit()


class Worker(QObject):
    """Runs ``task(on_event, stop)`` on its own thread; its signals arrive on the thread that
    made the worker, and stop arriving once it is discarded.

    The worker runs from ``start`` until its ``done`` has been delivered on the receiving
    thread, not merely until its thread ends: the task's last signals are queued there, and a
    check between the two would see a job that has ended without saying how.
    """

    event = Signal(object)
    """An event (``studio.core.base.events``) the task reported through ``on_event``."""
    succeeded = Signal(object)
    """The task's return value."""
    failed = Signal(str)
    """The task raised; the argument is its message."""
    done = Signal()
    """The task has ended, whichever way; emitted after ``succeeded`` or ``failed``."""

    def __init__(self, task: Task) -> None:
        super().__init__()
        self._stop = threading.Event()
        self._discarded = False
        self._started = False
        self._delivered = False
        self._thread = QThread()
        self._thread.setObjectName("studio-worker")
        self._runner = _Runner(task, self._stop)
        self._runner.moveToThread(self._thread)
        self._thread.started.connect(self._runner.run)
        self._runner.event.connect(self._relay_event)
        self._runner.succeeded.connect(self._relay_succeeded)
        self._runner.failed.connect(self._relay_failed)
        self._runner.done.connect(self._relay_done)

    def start(self) -> None:
        """Start the task on the worker thread."""
        self._started = True
        self._thread.start()

    def stop(self) -> None:
        """Ask the task to stop at its next check."""
        self._stop.set()

    def stop_requested(self) -> bool:
        """True once ``stop`` has been called."""
        return self._stop.is_set()

    def discard(self) -> None:
        """Stop the task and drop whatever it still reports, even results already queued:
        nothing more reaches the receivers (used when their window closes)."""
        self._discarded = True
        self._stop.set()

    def is_running(self) -> bool:
        """True from ``start`` until ``done`` has been delivered; a discarded worker, whose
        signals nobody receives, until its thread has ended."""
        if self._discarded:
            return self._thread.isRunning()
        return self._started and not self._delivered

    def wait(self) -> None:
        """Block until the thread has finished (the window is closing; once ``done`` has
        arrived the thread has already ended)."""
        self._thread.wait()

    @Slot(object)
    def _relay_event(self, event: dict) -> None:
        if not self._discarded:
            self.event.emit(event)

    @Slot(object)
    def _relay_succeeded(self, result: Any) -> None:
        if not self._discarded:
            self.succeeded.emit(result)

    @Slot(str)
    def _relay_failed(self, message: str) -> None:
        if not self._discarded:
            self.failed.emit(message)

    @Slot()
    def _relay_done(self) -> None:
        self._thread.wait()  # it is quitting: once done arrives, the thread has ended too
        self._delivered = True
        if not self._discarded:
            self.done.emit()

