"""Recording a camera's frames at a chosen rate: while a button is held, or hands-free after a
countdown for a set time. Time comes from a clock the recorder is given, so tests step it."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from enum import Enum

import numpy as np
from PySide6.QtCore import QObject, Signal

MAX_FRAMES = 300
"""A recording stops by itself at this many frames (a minute at 5 a second; 280 MB at
640 × 480), so a stuck button cannot fill the memory."""
SLACK = 0.001
"""Seconds a frame may come early and still be taken for its turn (clock readings are
floats: a frame due at 0.2 s may be read at 0.19999…)."""


class State(Enum):
    IDLE = "idle"
    COUNTING = "counting"
    RECORDING = "recording"


class Recorder(QObject):
    """Keeps frames offered to it at ``rate`` a second while recording. ``clock`` gives the
    time in seconds (``time.monotonic`` by default)."""

    counting = Signal(int)
    """Whole seconds left before a hands-free recording starts (each time it changes)."""
    recorded = Signal(int)
    """How many frames the recording under way holds (each time one is kept)."""
    captured = Signal(list)
    """A recording ended, with these frames (never empty)."""
    state_changed = Signal(object)
    """The recorder became idle, started counting down or started recording (a State)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.clock = clock
        self.rate = 5.0
        """Frames kept a second."""
        self.state = State.IDLE
        self.frames: list[np.ndarray] = []
        self._starts = 0.0
        self._until: float | None = None
        """When a hands-free recording ends (None: when the button is let go)."""
        self._due = 0.0
        self._left = 0

    def hold(self) -> None:
        """Record from now until ``release`` (a countdown under way gives way)."""
        self._until = None
        self._record(self.clock())

    def release(self) -> None:
        """End a recording made by holding."""
        if self.state is State.RECORDING and self._until is None:
            self.finish()

    def count_down(self, seconds: float, duration: float) -> None:
        """Record for ``duration`` seconds, starting ``seconds`` from now."""
        self.frames = []
        self._starts = self.clock() + seconds
        self._until = self._starts + duration
        self._left = 0
        self._set_state(State.COUNTING)
        self.tick()

    def offer(self, frame: np.ndarray) -> None:
        """A new frame from the camera: kept if it is recording and the frame's turn has
        come."""
        self.tick()
        if self.state is not State.RECORDING:
            return
        now = self.clock()
        if now + SLACK < self._due:
            return
        self.frames.append(frame)
        self._due += 1 / self.rate
        if self._due <= now:  # the camera is slower than the rate: keep each frame it sends
            self._due = now + 1 / self.rate
        self.recorded.emit(len(self.frames))
        if len(self.frames) >= MAX_FRAMES:
            self.finish()

    def tick(self) -> None:
        """Move on with time: count down, start recording, or end a timed recording."""
        now = self.clock()
        if self.state is State.COUNTING:
            left = math.ceil(self._starts - now - SLACK)
            if left <= 0:
                self._record(self._starts)
            elif left != self._left:
                self._left = left
                self.counting.emit(left)
        if self.state is State.RECORDING and self._until is not None \
                and now + SLACK >= self._until:
            self.finish()

    def finish(self) -> None:
        """End the countdown or the recording; a recording's frames are ``captured``."""
        frames, self.frames = self.frames, []
        self._set_state(State.IDLE)
        if frames:
            self.captured.emit(frames)

    def _record(self, since: float) -> None:
        self.frames = []
        self._due = since
        self._set_state(State.RECORDING)
        self.recorded.emit(0)

    def _set_state(self, state: State) -> None:
        if state is not self.state:
            self.state = state
            self.state_changed.emit(state)
