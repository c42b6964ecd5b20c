"""Python's garbage collector, run on the GUI thread only, and never over TensorFlow's objects."""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QObject, QTimer

from studio.core.base.runtime import tensorflow_loading


class GuiCollector(QObject):
    """Turns Python's automatic collection off and collects every ``interval_ms`` on the GUI
    thread instead, each generation when its threshold is passed (as pyqtgraph's
    GarbageCollector does): a collection that a worker thread triggered could free Qt objects
    there, which deadlocks against Qt, and stalled the window mid-batch.

    While TensorFlow or Keras loads (on any thread) it waits: each collection scanned the
    hundreds of thousands of objects they had made so far, holding the interpreter lock for
    0.1-0.5 s each time. Once they have loaded, their objects are frozen out of the collector
    (``gc.freeze``) without a collection first, which would walk all of them on this thread:
    the import leaves under two thousand unreachable objects, which are kept.
    """

    def __init__(self, parent: QObject | None = None, interval_ms: int = 1000) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        self.loaded = False
        """Whether TensorFlow's objects have been frozen."""
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> None:
        """Collect what is due, or wait for TensorFlow to load, or freeze what it loaded."""
        if tensorflow_loading():
            return
        if not self.loaded and "keras" in sys.modules:
            gc.freeze()
            self.loaded = True
            return
        counts = gc.get_count()
        oldest_due = -1
        while oldest_due < 2 and counts[oldest_due + 1] > self.thresholds[oldest_due + 1]:
            oldest_due += 1
        if oldest_due >= 0:
            gc.collect(oldest_due)
