"""The camera's live preview with its controls: start and stop, and recording frames at a
chosen rate while a button is held, or hands-free after a countdown."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.messages import count as count_of
from studio.gui.camera.preview import FramePreview
from studio.gui.camera.qt_camera import QtCamera
from studio.gui.camera.recorder import MAX_FRAMES, Recorder, State
from studio.gui.camera.source import FrameSource

OFF_TEXT = "The camera is off: press “Start camera”."
START_TIP = "Show what the camera sees"
TICK_MS = 100
"""How often a countdown or a timed recording looks at the clock between frames."""


class CameraView(QWidget):
    """Shows ``source``'s frames (the computer's camera by default) and, with ``recording``,
    records them. The camera runs only while the view shows: hiding it (another tab, another
    view) stops the camera and ends a recording. ``clock`` times recordings (tests step
    one)."""

    frame = Signal(object)
    """A frame the camera sent (uint8 H × W × 3 RGB, never written to)."""
    captured = Signal(list)
    """A recording ended, with its frames (uint8 H × W × 3 RGB arrays; never empty)."""
    recorded = Signal(int)
    """How many frames the recording under way holds, each time one is added."""

    def __init__(self, source: FrameSource | None = None, recording: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.setObjectName("camera-view")
        self.source: FrameSource | None = None
        self._refusal = ""
        """Why recording is off while the camera runs (``refuse_recording``), if it is."""
        self.preview = FramePreview()
        self.camera_button = QPushButton("Start camera")
        self.camera_button.setObjectName("camera-start")
        self.camera_button.setCheckable(True)
        self.camera_button.toggled.connect(self._switch)
        top = QHBoxLayout()
        top.addWidget(self.camera_button)
        top.addStretch(1)

        self.recorder = Recorder(clock, self)
        self.recorder.counting.connect(lambda left: self.count_label.setText(
            f"Recording in {left}…"))
        self.recorder.recorded.connect(self._recorded)
        self.recorder.captured.connect(self._captured)
        self.recorder.state_changed.connect(self._recorder_state)
        self.ticker = QTimer(self)
        self.ticker.setInterval(TICK_MS)
        self.ticker.timeout.connect(self.recorder.tick)
        self.hold_button = QPushButton("Hold to record")
        self.hold_button.setObjectName("camera-hold")
        self.hold_button.setToolTip("Records frames while the button is held down (or the "
                                    "space bar, with the button focused)")
        self.hold_button.pressed.connect(self.recorder.hold)
        self.hold_button.released.connect(self.recorder.release)
        self.rate_box = QSpinBox()
        self.rate_box.setRange(1, 30)
        self.rate_box.setValue(int(self.recorder.rate))
        self.rate_box.setSuffix(" frames/s")
        self.rate_box.setToolTip("How many frames a second a recording keeps")
        self.rate_box.valueChanged.connect(lambda rate: setattr(self.recorder, "rate", rate))
        self.countdown_button = QPushButton("Record hands-free")
        self.countdown_button.setObjectName("camera-countdown")
        self.countdown_button.setToolTip("Count down, then record for the time set, with no "
                                         "button held")
        self.countdown_button.clicked.connect(self._count_down_or_stop)
        self.countdown_box = _seconds_box("after ", 0, 30, 3,
                                          "Seconds to get ready before recording starts")
        self.duration_box = _seconds_box("for ", 1, 60, 5, "Seconds to record")
        self.count_label = QLabel()
        self.count_label.setObjectName("camera-count")
        # two short rows rather than one long one: the view also sits in a narrow pane
        record = QGridLayout()
        for column, widget in enumerate((self.hold_button, self.rate_box)):
            record.addWidget(widget, 0, column)
        record.addWidget(self.count_label, 0, 2)
        for column, widget in enumerate((self.countdown_button, self.countdown_box,
                                         self.duration_box)):
            record.addWidget(widget, 1, column)
        record.setColumnStretch(3, 1)
        self.record_controls = QWidget()
        self.record_controls.setLayout(record)
        record.setContentsMargins(0, 0, 0, 0)
        self.record_controls.setVisible(recording)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.record_controls)
        self.set_source(source if source is not None else QtCamera(self))

    def set_source(self, source: FrameSource) -> None:
        """Show ``source``'s frames from now on (the one before is stopped)."""
        if self.source is not None:
            self.stop()
            for signal, slot in self._wiring(self.source):
                signal.disconnect(slot)
        self.source = source
        for signal, slot in self._wiring(source):
            signal.connect(slot)
        if self.isVisible():  # else once shown: looking for a camera loads Qt Multimedia
            self.refresh()

    def _wiring(self, source: FrameSource) -> list[tuple]:
        return [(source.frame, self._frame), (source.failed, self._failed),
                (source.running_changed, self._running_changed)]

    def refresh(self) -> None:
        """Look again whether the camera can run (one may have been plugged in), and enable
        the controls, or disable them and say why."""
        why = self.source.why_unavailable()
        self.camera_button.setEnabled(not why)
        self.camera_button.setToolTip(why or START_TIP)
        if why or not self.source.is_running():
            self.preview.show_text(why or OFF_TEXT)
        self._enable_recording()

    def start(self) -> None:
        """Start the camera (as pressing “Start camera” does)."""
        self.camera_button.setChecked(True)

    def stop(self) -> None:
        """Stop the camera; a recording under way ends, keeping what it recorded."""
        self.recorder.finish()
        self.camera_button.setChecked(False)
        self.source.stop()

    def is_running(self) -> bool:
        """Whether the camera sends frames."""
        return self.source is not None and self.source.is_running()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not event.spontaneous():
            self.refresh()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt's name
        """Leaving the view (or closing the window) stops the camera."""
        super().hideEvent(event)
        if not event.spontaneous():  # not when the window is only minimised
            self.stop()

    @Slot(bool)
    def _switch(self, on: bool) -> None:
        if not on:
            self.source.stop()
        elif not self.source.is_running():
            self.preview.show_text("Starting the camera…")
            self.source.start()

    @Slot(bool)
    def _running_changed(self, running: bool) -> None:
        self.camera_button.setChecked(running)
        self.camera_button.setText("Stop camera" if running else "Start camera")
        if not running:
            self.recorder.finish()
            self.preview.show_text(OFF_TEXT)
        self._enable_recording()

    @Slot(str)
    def _failed(self, text: str) -> None:
        self.camera_button.setChecked(False)
        self.preview.show_text(text)
        self._enable_recording()

    @Slot(object)
    def _frame(self, frame: np.ndarray) -> None:
        self.preview.show_frame(frame)
        self.recorder.offer(frame)
        self.frame.emit(frame)

    def refuse_recording(self, why: str) -> None:
        """Keep the recording buttons off, saying ``why`` (nowhere to keep the frames, say);
        empty: record whenever the camera runs."""
        self._refusal = why
        self._enable_recording()

    def _enable_recording(self) -> None:
        running = self.is_running()
        for widget in (self.hold_button, self.countdown_button):
            widget.setEnabled(running and not self._refusal)
        if running and self._refusal:
            self.count_label.setText(self._refusal)
        elif running and self.recorder.state is State.IDLE:
            self.count_label.clear()
        if not running:
            self.count_label.setText("Start the camera to record." if
                                     self.camera_button.isEnabled() else "")

    def _count_down_or_stop(self) -> None:
        if self.recorder.state is State.IDLE:
            self.recorder.count_down(self.countdown_box.value(), self.duration_box.value())
        else:
            self.recorder.finish()

    @Slot(object)
    def _recorder_state(self, state: State) -> None:
        busy = state is not State.IDLE
        self.countdown_button.setText("Stop recording" if busy else "Record hands-free")
        if busy:
            self.ticker.start()
        else:
            self.ticker.stop()

    @Slot(int)
    def _recorded(self, count: int) -> None:
        full = f" (at most {MAX_FRAMES})" if count >= MAX_FRAMES else ""
        self.count_label.setText(f"Recording: {count_of(count, 'frame')}{full}")
        self.recorded.emit(count)

    @Slot(list)
    def _captured(self, frames: list) -> None:
        self.count_label.setText(f"{count_of(len(frames), 'frame')} recorded")
        self.captured.emit(frames)


def _seconds_box(prefix: str, low: int, high: int, value: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setPrefix(prefix)
    box.setSuffix(" s")
    box.setToolTip(tip)
    return box
