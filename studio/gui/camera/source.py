"""What every source of camera frames offers: start, stop, and frames as signals.

A frame is a numpy uint8 array, height × width × 3, RGB. Nobody writes to a frame once it is
sent (its receivers share it), so a receiver may keep it, record it or hand it to a model on
another thread as it is.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class FrameSource(QObject):
    """A camera, real or fake. Its frames arrive as ``frame`` signals on the GUI thread while
    it runs; a source that cannot run says why in ``why_unavailable``."""

    frame = Signal(object)
    """A new frame (uint8 H × W × 3 RGB)."""
    failed = Signal(str)
    """The camera stopped, or could not start, for the reason given."""
    running_changed = Signal(bool)
    """The source started (True) or stopped (False)."""

    def start(self) -> None:
        """Start sending frames (nothing happens while it is unavailable)."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop sending frames; no frame arrives after this returns."""
        raise NotImplementedError

    def is_running(self) -> bool:
        """Whether frames are being sent."""
        raise NotImplementedError

    def why_unavailable(self) -> str:
        """Why the source cannot run, in words for the person; empty when it can."""
        raise NotImplementedError

    def available(self) -> bool:
        """Whether the source can run."""
        return not self.why_unavailable()
