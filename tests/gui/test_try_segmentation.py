"""Trying a segmentation model: a dropped image is drawn with its mask over it, the opacity
slider and the overlay / mask / image choice redraw what is painted, the legend names each
class with its colour and area, a dropped folder's table shows the main classes' areas and
saves its masks, and the drawing pad answers with masks."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QRadioButton

from studio.core.inference.mask_files import MASKS_CSV, class_colors
from studio.core.inference.predictor import Predictor
from studio.gui.tasks.segmentation import DEFAULT_OPACITY, SegmentationAnswer
from tests.gui.support import RUN_TIMEOUT_MS, drop_on
from tests.gui.test_drawing_pad import BAR, SEVEN, draw, pad_of
from tests.gui.test_try_detection import slide
from tests.segmentation_runs import CLASSES, segmentation_run, stripes

COLORS = class_colors(CLASSES)


@pytest.fixture
def panel(window, qtbot, tmp_path, monkeypatch):
    """The window's Try panel answering with the hand-made segmentation run's model, opened
    as a model file."""
    panel = window.try_panel
    window.views.setCurrentWidget(panel)
    model = segmentation_run(tmp_path) / "model.keras"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(model), ""))
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    return panel


def band_pixels(answer: SegmentationAnswer) -> list[np.ndarray]:
    """The colour painted at the middle of each of the three bands (background, cat, dog)."""
    picture = answer.picture
    shot = picture.grab().toImage()
    area = picture.picture_area()
    y = int(area.height() / 2)
    return [np.array(shot.pixelColor(int(area.width() * f), y).getRgb()[:3])
            for f in (1 / 6, 1 / 2, 5 / 6)]


def over(color: np.ndarray, grey: int, opacity: float) -> np.ndarray:
    return opacity * color + (1 - opacity) * grey


def test_a_dropped_image_shows_its_mask_over_it_with_opacity_modes_and_legend(
        window, panel, qtbot, tmp_path):
    path = tmp_path / "bands.png"
    Image.fromarray(stripes(32, 48)).save(path)
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        assert drop_on(window, [path])
    (prediction,) = answered.args[0]
    (card,) = panel.cards
    answer = card.answer
    assert isinstance(answer, SegmentationAnswer) and card.thumbnail is None
    assert answer.picture.image_size == (32, 48)
    background, cat, dog = band_pixels(answer)
    opacity = DEFAULT_OPACITY / 100
    assert np.abs(background - 0).max() <= 2  # background is clear: the black image shows
    assert np.abs(cat - over(COLORS[1], 128, opacity)).max() <= 3
    assert np.abs(dog - over(COLORS[2], 255, opacity)).max() <= 3
    # the legend: each class in the mask, its colour and its area
    total = 32 * 48
    assert answer.legend.rows == [(label, f"{pixels / total * 100:.1f}% ({pixels:,} px)")
                                  for label, pixels in zip(prediction.labels, prediction.areas,
                                                           strict=True)]
    # the opacity slider, moved with the keyboard, redraws the overlay
    answer.opacity.setFocus()
    slide(qtbot, answer.opacity, DEFAULT_OPACITY + 20)
    assert answer.opacity_value.text() == f"{DEFAULT_OPACITY + 20}%"
    _, cat, dog = band_pixels(answer)
    assert np.abs(cat - over(COLORS[1], 128, opacity + 0.2)).max() <= 3
    assert np.abs(dog - over(COLORS[2], 255, opacity + 0.2)).max() <= 3
    # the mask alone (a click), then the image alone (the keyboard)
    mask_button = answer.findChild(QRadioButton, "mask")
    qtbot.mouseClick(mask_button, Qt.MouseButton.LeftButton)
    assert answer.mode == "mask" and not answer.opacity.isEnabled()
    assert [tuple(c) for c in band_pixels(answer)] == [tuple(COLORS[k]) for k in range(3)]
    image_button = answer.findChild(QRadioButton, "image")
    image_button.setFocus()
    qtbot.keyClick(image_button, Qt.Key.Key_Space)
    assert answer.mode == "image"
    assert [int(c[0]) for c in band_pixels(answer)] == [0, 128, 255]


def test_a_dropped_folders_table_shows_areas_and_saves_masks(window, panel, qtbot, tmp_path,
                                                            monkeypatch):
    folder = tmp_path / "images"
    folder.mkdir()
    Image.fromarray(stripes(16, 16)).save(folder / "a.png")  # bands of 5, 5 and 6 columns
    Image.fromarray(np.full((10, 10), 255, np.uint8)).save(folder / "b.png")
    with qtbot.waitSignal(panel.folder_done, timeout=RUN_TIMEOUT_MS):
        assert drop_on(window, [folder])
    table = panel.table_model
    cells = [[table.data(table.index(r, c)) for c in (1, 3)] for r in range(2)]
    assert cells == [["dog 37.5%", "background 31.2%, cat 31.2%"], ["dog 100.0%", ""]]
    assert panel.folder.masks_button.isVisibleTo(panel)
    out = tmp_path / "masks"
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(out))
    with qtbot.waitSignal(panel.folder.message, timeout=RUN_TIMEOUT_MS) as said:
        qtbot.mouseClick(panel.folder.masks_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.folder.saving.busy())
    assert said.args[0] == "Saved 2 masks and their areas"
    assert panel.folder.masks_button.isEnabled()
    assert (np.asarray(Image.open(out / "b.png")) == 2).all() and (out / MASKS_CSV).is_file()
    # a folder that cannot be written: one line saying so, and the button back
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder would be")
    out = blocked / "masks"
    with qtbot.waitSignal(panel.folder.problem, timeout=RUN_TIMEOUT_MS) as said:
        qtbot.mouseClick(panel.folder.masks_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.folder.saving.busy())
    assert str(out) in said.args[0] and "\n" not in said.args[0]
    assert panel.folder.masks_button.isEnabled()


def test_the_drawing_pad_answers_with_a_mask_and_keeps_how_it_is_drawn(qtbot, tmp_path):
    predictor = Predictor.load(segmentation_run(tmp_path))
    pad = pad_of(qtbot, predictor)
    draw(qtbot, pad.canvas, SEVEN)
    qtbot.waitUntil(lambda: pad.answered_version == pad.version, timeout=RUN_TIMEOUT_MS)
    answer = pad.answer
    assert isinstance(answer, SegmentationAnswer) and answer.isVisible()
    (expected,) = predictor.predict_images([pad.canvas.pixels()], ["expected"])
    assert (answer.prediction.mask == expected.mask).all()
    assert answer.picture.image_size == expected.mask.shape
    assert not pad.explain_button.isEnabled()
    # the opacity and the mode the person chose hold for the answers to the next strokes
    answer.opacity.setFocus()
    slide(qtbot, answer.opacity, DEFAULT_OPACITY - 10)
    qtbot.mouseClick(answer.findChild(QRadioButton, "mask"), Qt.MouseButton.LeftButton)
    draw(qtbot, pad.canvas, BAR)
    qtbot.waitUntil(lambda: pad.answer is not answer and pad.answered_version == pad.version,
                    timeout=RUN_TIMEOUT_MS)
    assert pad.answer.opacity.value() == DEFAULT_OPACITY - 10 and pad.answer.mode == "mask"
