"""Trying a detector: an image dropped on the Try tab is drawn once, with its boxes, class
names and scores, and no heat map; the card's sliders decode the boxes again without running
the model; the drawing pad and the camera answer with boxes too."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSlider

from studio.core.inference.batch import image_files
from studio.core.inference.predictor import Prediction, Predictor, redecoded
from studio.core.project.document import load_project
from studio.core.runs import folders as runs
from studio.gui.camera.fake import FakeCamera
from studio.gui.inference.camera_try import CameraTry
from studio.gui.inference.drawing_pad import EXPLAIN_TEXT
from studio.gui.inference.explain_view import CLICK_TEXT
from studio.gui.inference.result_card import SELECTED_STYLE, ResultCard
from studio.gui.shell.app import create_application
from studio.gui.shell.main_window import MainWindow
from studio.gui.tasks.detection import NOT_EXPLAINED, BoxPicture, DetectionAnswer
from studio.gui.tasks.registry import views_for
from tests.gui.support import RUN_TIMEOUT_MS, copied_run, drop_on, runs_of
from tests.gui.test_drawing_pad import BAR, SEVEN, draw, pad_of

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def window(qtbot, dialogs, detection_run):
    """The main window on the detection run's project, with the run among its runs."""
    create_application()
    win = MainWindow(load_project(detection_run / runs.PROJECT_FILE))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    copied_run(detection_run, runs_of(win))
    return win


@pytest.fixture(scope="module")
def image(detection_run):
    """A demo image of the run's dataset."""
    return image_files(detection_run.parent.parent / "digits")[0]


@pytest.fixture(scope="module")
def predictor(detection_run) -> Predictor:
    """The detection run, loaded once for the tests that need no window."""
    loaded = Predictor.load(detection_run)
    loaded.warm_up()
    return loaded


@pytest.fixture
def model_calls(monkeypatch) -> list[int]:
    """The sizes of the batches any predictor runs its model on from now on."""
    calls: list[int] = []
    outputs = Predictor.outputs
    monkeypatch.setattr(Predictor, "outputs",
                        lambda self, x: calls.append(len(x)) or outputs(self, x))
    return calls


def pictures_on(widget) -> int:
    """How many times ``widget`` shows an image: labels with a picture, and box pictures."""
    labels = [label for label in widget.findChildren(QLabel)
              if label.pixmap() is not None and not label.pixmap().isNull()]
    return len(labels) + len(widget.findChildren(BoxPicture))


def test_a_dropped_image_is_drawn_once_with_its_boxes_and_no_heat_map(
        window, qtbot, image, model_calls):
    panel = window.try_panel
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        assert drop_on(panel, [image])
    (prediction,) = answered.args[0]
    (card,) = panel.cards
    answer = card.answer
    assert isinstance(answer, DetectionAnswer)
    found = len(prediction.boxes)
    assert found >= 2
    assert answer.summary.text() == f"{found} boxes"
    assert answer.picture.boxes == prediction.boxes
    assert answer.picture.labels == prediction.labels
    assert not answer.picture.picture.isNull()
    # The boxes are drawn on the image: the card shows no thumbnail beside it
    assert card.thumbnail is None and pictures_on(card) == 1
    # A heat map says nothing of a detector's boxes: the explanation says so, and none is
    # worked out, now or when the card is clicked
    explain, calls = panel.explain, len(model_calls)
    assert explain.note.text() == NOT_EXPLAINED
    qtbot.mouseClick(card.title, LEFT)
    assert card.styleSheet() == SELECTED_STYLE
    assert explain.note.text() == NOT_EXPLAINED
    assert explain.prediction is None and not explain.job.busy()
    assert explain.heat.pixmap().isNull() and explain.body.isHidden()
    assert len(model_calls) == calls
    cells = views_for("detection").table_cells(prediction)
    first = ", ".join(f"{label} ({p:.2f})" for label, p in
                      zip(prediction.labels[:3], prediction.probabilities[:3], strict=True))
    assert cells.answer == f"{found} boxes: {first}, …"
    assert cells.sort_confidence == prediction.probabilities[0]


def test_choosing_a_detector_says_at_once_that_it_draws_no_heat_map(window, qtbot):
    """Before any image is answered, the Why pane of a detector run shows only why there is
    no explanation, not empty heat-map frames."""
    panel = window.try_panel
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        window.views.setCurrentWidget(panel)
    assert panel.explain.note.text() == NOT_EXPLAINED and panel.explain.body.isHidden()
    panel.explain.expect("classification")  # a classifier's run chosen next
    assert panel.explain.note.text() == CLICK_TEXT and not panel.explain.body.isHidden()


def test_a_detectors_cards_take_the_width_and_a_classifier_brings_the_why_pane_back(
        window, qtbot, detection_run, cnn_run):
    """A detector's answers get no explanation: its pane is put away, a line says why, and
    the cards flow in columns across the tab; a classifier answering next has its pane back."""
    panel, images = window.try_panel, window.try_panel.images
    window.resize(1600, 1000)
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        window.views.setCurrentWidget(panel)
    assert not images.why.isVisible()
    assert images.not_explained.isVisible() and images.not_explained.text() == NOT_EXPLAINED
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS):
        assert drop_on(panel, image_files(detection_run.parent.parent / "digits")[:3])
    qtbot.waitUntil(lambda: images.card_layout.columns() > 1)
    first, second = panel.cards[:2]
    assert images.card_area.width() > 0.95 * images.width()
    assert first.y() == second.y() and second.x() >= first.x() + first.width()
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        panel.choose(cnn_run / "model.keras")
    assert images.why.isVisible() and not images.not_explained.isVisible()
    qtbot.waitUntil(lambda: images.why.width() > 0)
    assert images.why.width() > 0.25 * images.width()
    assert panel.explain.note.text() == CLICK_TEXT


def slide(qtbot, slider: QSlider, value: int) -> None:
    """Move ``slider`` to ``value`` with the arrow keys, as a person would."""
    key = Qt.Key.Key_Right if value > slider.value() else Qt.Key.Key_Left
    for _ in range(abs(value - slider.value())):
        qtbot.keyClick(slider, key)
    assert slider.value() == value


def assert_drawn_as_decoded(answer: DetectionAnswer, original: Prediction) -> int:
    """The card draws exactly the boxes ``original`` decodes to at its sliders' settings (the
    oracle); how many."""
    threshold, iou = answer.score_slider.value() / 100, answer.iou_slider.value() / 100
    assert answer.score_value.text() == f"{threshold:.2f}"
    assert answer.iou_value.text() == f"{iou:.2f}"
    expected = redecoded(original, score_threshold=threshold, nms_iou=iou)
    assert answer.picture.boxes == expected.boxes
    assert answer.picture.labels == expected.labels
    assert answer.picture.scores == expected.probabilities
    assert answer.summary.text() == f"{len(expected.boxes)} boxes"
    return len(expected.boxes)


def test_the_sliders_redraw_the_boxes_as_decoding_again_gives_without_the_model(
        qtbot, predictor, image, model_calls):
    (prediction,) = predictor.predict_files([image])
    del model_calls[:]
    card = ResultCard(prediction)
    qtbot.addWidget(card)
    card.show()
    answer = card.answer
    found = assert_drawn_as_decoded(answer, prediction)
    assert found == len(prediction.boxes) >= 2
    scores = answer.picture.scores
    low, high = min(scores), max(scores)
    # A threshold between two scores the card shows keeps some boxes and drops others; a
    # one-epoch detector's scores may all lie within one step of the slider (about 0.1,
    # the head's prior), so one is tried where the steps allow
    between = [step for step in range(101) if low < step / 100 <= high]
    if between:
        slide(qtbot, answer.score_slider, between[len(between) // 2])
        assert 0 < assert_drawn_as_decoded(answer, prediction) < found
    slide(qtbot, answer.score_slider, math.floor(high * 100) + 1)  # above every score
    assert assert_drawn_as_decoded(answer, prediction) == 0
    start = round(prediction.decoding["score_threshold"] * 100)
    slide(qtbot, answer.score_slider, start)
    assert assert_drawn_as_decoded(answer, prediction) == found
    slide(qtbot, answer.iou_slider, 10)
    assert assert_drawn_as_decoded(answer, prediction) <= found
    assert model_calls == []


def test_the_drawing_pad_answers_a_detector_with_boxes(qtbot, predictor):
    pad = pad_of(qtbot, predictor)
    qtbot.mouseClick(pad.dark_box, LEFT)  # the demo set's digits are dark on light paper
    draw(qtbot, pad.canvas, SEVEN)
    qtbot.waitUntil(lambda: pad.answered_version == pad.version, timeout=RUN_TIMEOUT_MS)
    pixels = pad.canvas.pixels()
    assert pixels.shape == (64, 64, 3)
    answer = pad.answer
    assert isinstance(answer, DetectionAnswer) and answer.isVisible()
    (expected,) = predictor.predict_images([pixels], ["expected"])
    assert len(expected.boxes) > 0
    np.testing.assert_allclose(answer.picture.boxes, expected.boxes, rtol=1e-5, atol=1e-4)
    assert answer.picture.labels == expected.labels
    assert answer.summary.text() == f"{len(expected.boxes)} boxes"
    assert answer.picture.image_size == (64, 64) and not answer.picture.picture.isNull()
    # The pad's Explain is off for a detector, and says why
    assert not pad.explain_button.isEnabled()
    assert pad.explain_button.toolTip() == NOT_EXPLAINED
    assert pad.explain_view.note.text() == NOT_EXPLAINED
    assert pad.explain_view.body.isHidden()
    # A score threshold the person chose holds for the answers to the strokes that follow
    above = math.floor(max(answer.picture.scores) * 100) + 1
    slide(qtbot, answer.score_slider, above)
    assert answer.summary.text() == "0 boxes"
    draw(qtbot, pad.canvas, BAR)
    qtbot.waitUntil(lambda: pad.answer is not answer and pad.answered_version == pad.version,
                    timeout=RUN_TIMEOUT_MS)
    assert pad.answer.score_slider.value() == above
    assert len(pad.prediction.boxes) > 0  # at the run's threshold
    assert_drawn_as_decoded(pad.answer, pad.prediction)
    qtbot.mouseClick(pad.clear_button, LEFT)
    assert pad.explain_view.note.text() == EXPLAIN_TEXT
    assert not pad.explain_view.body.isHidden()


def test_the_camera_mode_answers_a_detector_with_boxes_that_keep_their_settings(
        qtbot, predictor, image):
    camera = FakeCamera([np.asarray(Image.open(image).convert("RGB"))], fps=0)
    mode = CameraTry(lambda: predictor, lambda: 5, camera)
    qtbot.addWidget(mode)
    mode.show()
    qtbot.mouseClick(mode.view.camera_button, LEFT)
    with qtbot.waitSignal(mode.answered, timeout=RUN_TIMEOUT_MS) as got:
        camera.send()
    answer = mode.answer
    assert isinstance(answer, DetectionAnswer) and answer.isVisible()
    assert len(got.args[0].boxes) > 0 and answer.summary.text() == f"{len(got.args[0].boxes)} boxes"
    above = math.floor(max(answer.picture.scores) * 100) + 1
    slide(qtbot, answer.score_slider, above)
    with qtbot.waitSignal(mode.answered, timeout=RUN_TIMEOUT_MS):
        camera.send()
    assert mode.answer is not answer and mode.answer.score_slider.value() == above
    assert mode.answer.summary.text() == "0 boxes"
    # the answer is shown before its job has said it ended: the widget goes once it has
    qtbot.waitUntil(lambda: not mode.job.busy())
