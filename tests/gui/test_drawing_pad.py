"""The Try view's drawing pad: what a person draws with the mouse is answered as they draw, at
the model's input size, with Clear, a brush width and Explain."""

from __future__ import annotations

import json
from pathlib import Path

import keras
import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from studio.core.inference.predictor import Predictor
from studio.gui.inference.drawing_pad import EMPTY_TEXT, NO_MODEL_TEXT, DrawingPad, PadCanvas
from tests.gui.support import RUN_TIMEOUT_MS, copied_run, runs_of, try_tab

LEFT = Qt.MouseButton.LeftButton
SEVEN = [(0.25, 0.2), (0.75, 0.2), (0.45, 0.85)]
"""A stroke like a 7, as fractions of the pad's side."""
BAR = [(0.3, 0.5), (0.7, 0.5)]


@pytest.fixture
def pad(window, qtbot, cnn_run, private_workspace):
    """The drawing pad of the Try view, shown, with the small CNN's run loaded."""
    return try_tab(qtbot, window, cnn_run, window.try_panel.pad)


def draw(qtbot, canvas, stroke: list[tuple[float, float]]) -> None:
    """Press, move through ``stroke`` (fractions of the canvas's width and height, in steps)
    and let go, as a person drawing with the mouse."""
    points = [QPoint(round(x * canvas.width()), round(y * canvas.height())) for x, y in stroke]
    qtbot.mousePress(canvas, LEFT, pos=points[0])
    for start, end in zip(points, points[1:], strict=False):
        for step in range(1, 5):
            qtbot.mouseMove(canvas, start + (end - start) * step / 4)
    qtbot.mouseRelease(canvas, LEFT, pos=points[-1])


def pad_of(qtbot, predictor: Predictor) -> DrawingPad:
    """A drawing pad on its own, shown, answering with ``predictor``."""
    pad = DrawingPad(lambda: predictor, lambda: 5)
    qtbot.addWidget(pad)
    pad.resize(700, 400)
    pad.show()
    qtbot.waitExposed(pad)
    pad.set_predictor(predictor)
    return pad


def draw_answered(qtbot, pad, stroke) -> None:
    """Draw ``stroke`` and wait until the bars show the answer to the finished drawing."""
    draw(qtbot, pad.canvas, stroke)
    qtbot.waitUntil(lambda: pad.prediction is not None and pad.answered_version == pad.version,
                    timeout=RUN_TIMEOUT_MS)


def keras_probabilities(run_dir: Path, pixels: np.ndarray) -> np.ndarray:
    """The oracle: the saved model, loaded by Keras itself, on the pad's image."""
    prep = json.loads((run_dir / "preprocessing.json").read_text())
    x = pixels[None].astype(np.float32) * prep["scale"] + prep["offset"]
    return np.asarray(keras.saving.load_model(run_dir / "model.keras")(x))[0]


def test_drawing_with_the_mouse_shows_bars_that_change_as_it_grows(pad, qtbot, cnn_run):
    predictor = pad.predictor()
    assert predictor._call.experimental_get_tracing_count() == 1  # warmed up when loaded
    with qtbot.waitSignal(pad.answered, timeout=RUN_TIMEOUT_MS):
        draw(qtbot, pad.canvas, SEVEN)
    assert pad.canvas.pixels().shape == (28, 28, 1)
    qtbot.waitUntil(lambda: pad.answered_version == pad.version, timeout=RUN_TIMEOUT_MS)
    first = pad.answer.probabilities, pad.answer.labels
    expected = keras_probabilities(cnn_run, pad.canvas.pixels())
    assert pad.answer.labels[0] == str(expected.argmax())
    assert pad.answer.probabilities[0] == pytest.approx(expected.max(), abs=1e-5)
    assert len(pad.answer.labels) == 5 and pad.answer.isVisible()
    draw_answered(qtbot, pad, BAR)
    assert (pad.answer.probabilities, pad.answer.labels) != first
    assert pad.explain_button.isEnabled()
    assert predictor._call.experimental_get_tracing_count() == 1  # never traced again


def test_strokes_while_an_answer_works_are_coalesced_into_the_newest(pad, qtbot, gate):
    calls = gate.before(Predictor, "predict_images")  # until every stroke event has come
    draw(qtbot, pad.canvas, SEVEN)
    qtbot.waitUntil(gate.reached.is_set, timeout=RUN_TIMEOUT_MS)
    assert pad.version > 5  # many stroke events came while the first answer was held
    gate.open()
    qtbot.waitUntil(lambda: pad.answered_version == pad.version and not pad.job.busy(),
                    timeout=RUN_TIMEOUT_MS)
    assert len(calls) == 2  # the first drawing's, then the newest; those between dropped
    assert np.array_equal(calls[-1][1][0], pad.canvas.pixels())


def test_clear_empties_the_pad_and_its_answer(pad, qtbot):
    draw_answered(qtbot, pad, SEVEN)
    assert pad.canvas.pixels().any()
    qtbot.mouseClick(pad.clear_button, LEFT)
    assert not pad.canvas.pixels().any() and not pad.canvas.drawn
    assert pad.answer is None and pad.prediction is None
    assert pad.note.text() == EMPTY_TEXT and not pad.explain_button.isEnabled()


def test_a_wider_brush_draws_a_wider_stroke(pad, qtbot):
    widths = {}
    for width in (1, 5):
        qtbot.mouseClick(pad.clear_button, LEFT)
        pad.brush_box.selectAll()
        qtbot.keyClicks(pad.brush_box, str(width))
        assert pad.canvas.brush == width
        draw(qtbot, pad.canvas, BAR)
        column = pad.canvas.pixels()[:, 14, 0].astype(float)  # across the horizontal bar
        # The ink in the column, in full pixels: smoothing may spread a 1-pixel stroke over
        # two half-lit rows, depending on where the pad's rows fall on the screen.
        widths[width] = column.sum() / 255
    assert 0.5 <= widths[1] <= 2 and 4 <= widths[5] <= 6.5, widths


def test_dark_ink_inverts_the_drawing(pad, qtbot):
    draw_answered(qtbot, pad, BAR)
    light = pad.canvas.pixels()
    with qtbot.waitSignal(pad.answered, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(pad.dark_box, LEFT)
    dark = pad.canvas.pixels().astype(int)
    assert np.abs(dark - (255 - light.astype(int))).max() <= 2  # scaling down rounds
    assert dark[0, 0, 0] == 255 and dark[14, 14, 0] == 0  # white paper, a black stroke


def test_explain_shows_a_heat_map_of_the_drawing_and_follows_new_strokes(pad, qtbot):
    view = pad.explain_view
    draw_answered(qtbot, pad, SEVEN)
    assert view.heat.pixmap().isNull()
    with qtbot.waitSignal(view.explained, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(pad.explain_button, LEFT)
    assert view.prediction is pad.prediction
    assert view.explanation.overlay.shape == (28, 28, 3)
    assert not view.heat.pixmap().isNull() and view.heat.pixmap().width() > 1
    assert view.heat_caption.text() in ("Grad-CAM", "HiResCAM")
    with qtbot.waitSignal(view.explained, timeout=RUN_TIMEOUT_MS):
        draw(qtbot, pad.canvas, BAR)
    assert view.prediction is pad.prediction and pad.answered_version == pad.version
    qtbot.mouseClick(pad.clear_button, LEFT)
    assert view.heat.pixmap().isNull() and view.explanation is None


def test_a_drawing_made_while_the_model_loads_is_answered_once_it_has(
    window, qtbot, cnn_run, private_workspace, gate
):
    copied_run(cnn_run, runs_of(window))
    gate.after(Predictor, "load")  # the model loads, then waits until the test has drawn
    panel = window.try_panel
    window.views.setCurrentWidget(panel)
    panel.tabs.setCurrentWidget(panel.pad)
    qtbot.waitUntil(gate.reached.is_set, timeout=RUN_TIMEOUT_MS)
    draw(qtbot, panel.pad.canvas, SEVEN)
    assert panel.pad.note.text() == NO_MODEL_TEXT and panel.pad.answer is None
    with qtbot.waitSignal(panel.pad.answered, timeout=RUN_TIMEOUT_MS):
        gate.open()
    assert panel.pad.answer.labels == panel.pad.prediction.labels


def test_the_pad_draws_at_the_size_and_colour_mode_of_the_models_input(qtbot):
    canvas = PadCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(300, 200)
    canvas.show()
    canvas.set_form(32, 48, 3)  # an RGB model taking 32 × 48 images
    draw(qtbot, canvas, BAR)
    pixels = canvas.pixels()
    assert pixels.shape == (32, 48, 3) and pixels.dtype == np.uint8
    assert (pixels[..., 0] == pixels[..., 2]).all() and pixels[16, 24, 0] == 255
    assert canvas.ink.width() == 48 * 6 and canvas.ink.height() == 32 * 6  # smooth strokes
