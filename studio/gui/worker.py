"""Running a core function on a QThread and turning its callbacks into Qt signals."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

Task = Callable[[Callable[[dict], None], threading.Event], Any]


class Worker(QObject):
    """Runs ``task(on_event, stop)`` on its own thread. It never touches a widget."""

    event = Signal(object)
    """A plain dict the task reported through ``on_event``."""
    succeeded = Signal(object)
    """The task's return value."""
    failed = Signal(str)
    """The task raised; the argument is its message."""
    done = Signal()
    """The task has ended, whichever way; emitted after ``succeeded`` or ``failed``."""

    def __init__(self, task: Task) -> None:
        super().__init__()
        self._task = task
        self._stop = threading.Event()
        self._thread = QThread()
        self._thread.setObjectName("studio-worker")
        self.moveToThread(self._thread)
        self._thread.started.connect(self._run)

    def start(self) -> None:
        """Start the task on the worker thread."""
        self._thread.start()

    def stop(self) -> None:
        """Ask the task to stop at its next check."""
        self._stop.set()

    def stop_requested(self) -> bool:
        """True once ``stop`` has been called."""
        return self._stop.is_set()

    def is_running(self) -> bool:
        """True until the thread has finished."""
        return self._thread.isRunning()

    def wait(self) -> None:
        """Block until the thread has finished (used only when the app closes)."""
        self._thread.wait()

    @Slot()
    def _run(self) -> None:
        try:
            result = self._task(self.event.emit, self._stop)
        except Exception as exc:  # noqa: BLE001 - every failure is shown, never raised
            self.failed.emit(str(exc) or type(exc).__name__)
        else:
            self.succeeded.emit(result)
        finally:
            self.done.emit()
            self._thread.quit()
