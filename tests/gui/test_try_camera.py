"""The Try view's Camera mode: a fake camera's frames are answered by the loaded model with
bars, only the newest frame waits while the model works (never a queue), and leaving the
mode stops the camera."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from studio.core.inference.predictor import Predictor
from studio.gui.camera.fake import FakeCamera
from studio.gui.tasks.classification import ProbabilityBars
from tests.gui.support import RUN_TIMEOUT_MS, try_tab

LEFT = Qt.MouseButton.LeftButton
FRAMES = [np.full((28, 28), 20 * i, np.uint8) for i in range(12)]
"""Frames told apart by their value (the i-th is all 20 × i)."""


@pytest.fixture
def camera():
    """A fake camera that sends a frame each time the test asks."""
    return FakeCamera(FRAMES, fps=0)


@pytest.fixture
def mode(window, qtbot, cnn_run, camera):
    """The Try view's Camera mode on the fake camera, started, the small CNN's run loaded."""
    window.try_panel.camera.view.set_source(camera)
    mode = try_tab(qtbot, window, cnn_run, window.try_panel.camera)
    qtbot.mouseClick(mode.view.camera_button, LEFT)
    assert camera.is_running()
    return mode


def test_camera_frames_are_answered_with_bars(mode, qtbot, camera):
    with qtbot.waitSignal(mode.answered, timeout=RUN_TIMEOUT_MS) as got:
        camera.send()
    assert isinstance(mode.answer, ProbabilityBars) and mode.answer.isVisible()
    assert len(mode.answer.labels) == 5 and got.args[0].labels == mode.answer.labels
    first = mode.answer
    with qtbot.waitSignal(mode.answered, timeout=RUN_TIMEOUT_MS):
        camera.send()
    assert mode.answer is not first and np.array_equal(mode.answered_frame[..., 0], FRAMES[1])
    assert mode.answer_box.indexOf(mode.answer) == 1  # in the first answer's place


def test_frames_are_dropped_while_the_model_works(mode, qtbot, camera, gate):
    calls = gate.before(Predictor, "predict_images")  # until ten more frames have come
    camera.send()
    qtbot.waitUntil(gate.reached.is_set, timeout=RUN_TIMEOUT_MS)
    for _ in range(10):
        camera.send()
    answered = []
    mode.answered.connect(answered.append)
    gate.open()
    qtbot.waitUntil(lambda: len(answered) == 2 and not mode.job.busy(), timeout=RUN_TIMEOUT_MS)
    asked = [images[0] for _, images, *_ in calls]
    assert [int(frame[0, 0, 0]) // 20 for frame in asked] == [0, 10]  # the newest, not 1..10
    assert np.array_equal(mode.answered_frame[..., 0], FRAMES[10])


def test_leaving_the_camera_mode_stops_the_camera(mode, qtbot, camera, window):
    panel = window.try_panel
    bar = panel.tabs.tabBar()
    qtbot.mouseClick(bar, LEFT, pos=bar.tabRect(panel.tabs.indexOf(panel.pad)).center())
    assert not camera.is_running() and not camera.send()
    qtbot.mouseClick(bar, LEFT, pos=bar.tabRect(panel.tabs.indexOf(panel.camera)).center())
    qtbot.mouseClick(mode.view.camera_button, LEFT)
    assert camera.is_running()
    window.views.setCurrentIndex(0)  # another view: the camera stops too
    assert not camera.is_running()
