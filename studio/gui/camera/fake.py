"""A camera that shows given images, for tests and benchmarks: on a timer at a given rate, or
one frame each time it is asked to."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer

from studio.gui.camera.source import FrameSource


def rgb(image: np.ndarray) -> np.ndarray:
    """A new uint8 H × W × 3 copy of a grey (H × W or H × W × 1) or RGB image, as a camera
    sends: each frame is its receivers' own."""
    pixels = np.asarray(image, np.uint8)
    pixels = pixels if pixels.ndim == 3 else pixels[..., None]
    return np.repeat(pixels, 3, axis=-1) if pixels.shape[-1] == 1 else pixels[..., :3].copy()


class FakeCamera(FrameSource):
    """Sends ``frames`` (grey or RGB uint8 images) in turn (a list is repeated without end;
    an iterator ends when it does): ``fps`` a second once started, or, with ``fps`` 0, one at
    each ``send``.
    ``unavailable``: the reason to give for a camera that cannot run (none by default)."""

    def __init__(self, frames: Iterable[np.ndarray], fps: float = 30.0, unavailable: str = "",
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._frames: Iterator[np.ndarray] = (itertools.cycle(frames)
                                              if isinstance(frames, list) else iter(frames))
        self._unavailable = unavailable
        self._running = False
        self.sent = 0
        """How many frames were sent."""
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        if fps > 0:
            self.timer.setInterval(round(1000 / fps))
        self.timer.timeout.connect(self.send)
        self._timed = fps > 0

    def start(self) -> None:
        if self._running or self._unavailable:
            return
        self._running = True
        if self._timed:
            self.timer.start()
        self.running_changed.emit(True)

    def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        self.timer.stop()
        self.running_changed.emit(False)

    def is_running(self) -> bool:
        return self._running

    def why_unavailable(self) -> str:
        return self._unavailable

    def send(self) -> bool:
        """Send the next frame, if the camera runs and has one left; whether it did."""
        if not self._running:
            return False
        frame = next(self._frames, None)
        if frame is None:
            self.stop()
            return False
        self.sent += 1
        self.frame.emit(rgb(frame))
        return True
