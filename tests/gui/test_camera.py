"""The camera view: a fake camera's frames reach the preview, holding the button records at
the chosen rate, a countdown records hands-free, and with no camera the controls are
disabled and say why. Time is a clock the test steps, and frames come when the test sends
them: nothing races the real clock."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import Qt

from studio.gui.camera import qt_camera
from studio.gui.camera.fake import FakeCamera
from studio.gui.camera.qt_camera import NEEDS_MULTIMEDIA, NO_CAMERA, QtCamera
from studio.gui.camera.view import CameraView

LEFT = Qt.MouseButton.LeftButton
FRAMES = [np.full((24, 32, 3), 10 * i, np.uint8) for i in range(20)]
"""Frames told apart by their value (the i-th is all 10 × i)."""


class Clock:
    """A clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def shown(qtbot, view: CameraView) -> CameraView:
    qtbot.addWidget(view)
    view.resize(640, 480)
    view.show()
    qtbot.waitExposed(view)
    return view


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def camera():
    """A fake camera that sends a frame each time the test asks."""
    return FakeCamera(FRAMES, fps=0)


@pytest.fixture
def view(qtbot, camera, clock):
    """A camera view on the fake camera, started, recording 4 frames a second."""
    view = shown(qtbot, CameraView(camera, clock=clock))
    assert not view.hold_button.isEnabled()  # nothing to record before the camera starts
    qtbot.mouseClick(view.camera_button, LEFT)
    assert camera.is_running() and view.hold_button.isEnabled()
    view.rate_box.setValue(4)
    return view


def send(camera: FakeCamera, clock: Clock, count: int, step: float) -> None:
    """Send ``count`` frames, ``step`` seconds apart."""
    for _ in range(count):
        assert camera.send()
        clock.now += step


def values(frames: list[np.ndarray]) -> list[int]:
    return [int(frame[0, 0, 0]) // 10 for frame in frames]


def test_the_fake_cameras_frames_reach_the_preview(qtbot):
    camera = FakeCamera([np.full((6, 8), 77, np.uint8)], fps=100)  # grey: sent as RGB
    view = shown(qtbot, CameraView(camera))
    assert view.camera_button.isEnabled() and not view.is_running()
    with qtbot.waitSignal(view.frame, timeout=2000) as got:
        qtbot.mouseClick(view.camera_button, LEFT)
    assert got.args[0].shape == (6, 8, 3) and (got.args[0] == 77).all()
    assert np.array_equal(view.preview.frame, got.args[0])
    target = view.preview.target()  # scaled up, proportions kept, centred
    assert target.width() / target.height() == pytest.approx(8 / 6)
    assert target.width() == view.preview.width() or target.height() == view.preview.height()
    qtbot.mouseClick(view.camera_button, LEFT)
    assert not camera.is_running() and not camera.timer.isActive()
    assert view.preview.frame is None and view.camera_button.text() == "Start camera"


def test_holding_the_button_records_at_the_chosen_rate(view, qtbot, camera, clock):
    counts = []
    view.recorded.connect(counts.append)
    qtbot.mousePress(view.hold_button, LEFT)
    send(camera, clock, 8, 0.125)  # 8 frames a second for one second, kept 4 a second
    assert counts == [0, 1, 2, 3, 4]
    assert view.count_label.text() == "Recording: 4 frames"
    with qtbot.waitSignal(view.captured, timeout=1000) as got:
        qtbot.mouseRelease(view.hold_button, LEFT)
    assert values(got.args[0]) == [0, 2, 4, 6]
    assert view.count_label.text() == "4 frames recorded"
    send(camera, clock, 4, 0.125)  # let go: nothing more is kept
    assert counts[-1] == 4


def test_a_countdown_then_records_for_the_time_set(view, qtbot, camera, clock):
    view.countdown_box.setValue(2)
    view.duration_box.setValue(1)
    qtbot.mouseClick(view.countdown_button, LEFT)
    assert view.count_label.text() == "Recording in 2…"
    assert view.countdown_button.text() == "Stop recording"
    send(camera, clock, 4, 0.25)  # frames come while counting down: none is kept
    assert view.count_label.text() == "Recording in 2…" and view.recorder.frames == []
    send(camera, clock, 4, 0.25)
    assert view.count_label.text() == "Recording in 1…" and view.recorder.frames == []
    with qtbot.waitSignal(view.captured, timeout=1000) as got:
        send(camera, clock, 5, 0.25)  # from 2 s on, 4 a second for a second, then it ends
    assert values(got.args[0]) == [8, 9, 10, 11]
    assert view.countdown_button.text() == "Record hands-free"
    clock.now += 10
    view.recorder.tick()  # the ticker, once idle, starts nothing
    assert view.recorder.frames == [] and not view.ticker.isActive()


def test_hiding_the_view_stops_the_camera_and_keeps_the_recording(view, qtbot, camera, clock):
    qtbot.mousePress(view.hold_button, LEFT)
    send(camera, clock, 3, 0.25)
    with qtbot.waitSignal(view.captured, timeout=1000) as got:
        view.hide()
    assert values(got.args[0]) == [0, 1, 2]
    assert not camera.is_running() and not camera.send()
    view.show()
    assert not view.is_running() and not view.camera_button.isChecked()


def test_without_qt_multimedia_the_camera_controls_say_why(qtbot, monkeypatch):
    monkeypatch.setitem(sys.modules, qt_camera.MULTIMEDIA, None)  # as if not installed
    view = shown(qtbot, CameraView(QtCamera()))
    assert not view.camera_button.isEnabled() and not view.hold_button.isEnabled()
    assert view.camera_button.toolTip() == NEEDS_MULTIMEDIA
    assert view.preview.text == NEEDS_MULTIMEDIA
    assert not view.countdown_button.isEnabled()


def test_without_a_camera_the_controls_say_none_was_found(qtbot, monkeypatch):
    no_devices = SimpleNamespace(QMediaDevices=SimpleNamespace(videoInputs=list))
    monkeypatch.setitem(sys.modules, qt_camera.MULTIMEDIA, no_devices)
    view = shown(qtbot, CameraView(QtCamera()))
    assert not view.camera_button.isEnabled()
    assert view.camera_button.toolTip() == NO_CAMERA == view.preview.text
    failures = []
    view.source.failed.connect(failures.append)
    view.source.start()  # asked anyway: it says why, and nothing runs
    assert failures == [NO_CAMERA] and not view.is_running()
