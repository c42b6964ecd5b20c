"""The Data view on a detection dataset, driven as a person would: pick a YOLO folder, see its
format found, its health report, its samples with their boxes drawn, switch the label format
and undo it, and preview a flip that moves the boxes."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFileDialog

from studio.core.data.detection import demo
from studio.core.tasks.detection.labels import BoxLabels
from studio.gui.data.boxes import box_colour
from studio.gui.data.charts import balance_text
from tests.gui.support import show_tab
from tests.gui.test_data_gui import LOAD_MS, PREVIEW_MS, open_data_view, show_data_tab

LEFT = Qt.MouseButton.LeftButton
BROKEN_CLASS = 42


@pytest.fixture(scope="module")
def demo_images():
    """Twelve demo images with their boxes (8 training, 4 validation), drawn once."""
    return demo.generate(train=8, validation=4)


@pytest.fixture
def yolo_folder(tmp_path, demo_images) -> Path:
    """The demo images as a YOLO dataset, one label line naming a class beyond classes.txt."""
    root = tmp_path / "digits"
    demo.write_demo(root, "yolo", demo_images)
    with (root / "labels" / "train" / "000000.txt").open("a") as label:
        label.write(f"{BROKEN_CLASS} 0.5 0.5 0.2 0.2\n")
    return root


def pick_folder(qtbot, window, monkeypatch, folder: Path, source: str,
                read_first: bool = True):
    """Open the Data tab, and once the project's data shows (without ``read_first``: at once,
    while it is read, which the new choice replaces), choose ``folder`` with the Dataset entry
    of ``source`` ("Detection folder…"); wait for its sample pictures to be drawn."""
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    if read_first:
        panel = open_data_view(qtbot, window)
    else:
        show_tab(qtbot, window, "Data")
        panel = window.data_panel
    with qtbot.waitSignal(panel.samples.thumbnails_shown, timeout=LOAD_MS):
        choose_in_popup(qtbot, panel.source.source, source)
    return panel


def pick_detection_folder(qtbot, window, monkeypatch, folder: Path, read_first: bool = True):
    """Choose ``folder`` with "Detection folder…" (see ``pick_folder``)."""
    panel = pick_folder(qtbot, window, monkeypatch, folder, "detection", read_first)
    assert isinstance(panel.loaded.labels, BoxLabels)
    return panel


def choose_in_popup(qtbot, box, value: str) -> None:
    """Open ``box``'s list and click the entry storing ``value``."""
    box.showPopup()
    view = box.view()
    qtbot.waitUntil(view.isVisible)
    rect = view.visualRect(box.model().index(box.findData(value), 0))
    qtbot.mouseClick(view.viewport(), LEFT, pos=rect.center())
    qtbot.waitUntil(lambda: not view.isVisible())


def colour_near_edges(image, rect, colour: QColor) -> bool:
    """Whether the box colour is drawn at the middle of any of ``rect``'s four edges (one
    pixel either way: the pen is two pixels wide)."""
    middle_x, middle_y = round(rect.center().x()), round(rect.center().y())
    points = [(x, middle_y) for x in (rect.left(), rect.right())]
    points += [(middle_x, y) for y in (rect.top(), rect.bottom())]
    for x, y in points:
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                px, py = round(x) + dx, round(y) + dy
                if image.valid(px, py) and image.pixelColor(px, py).rgb() == colour.rgb():
                    return True
    return False


def test_a_yolo_folder_shows_its_format_health_and_boxed_samples(window, qtbot, monkeypatch,
                                                                 yolo_folder):
    panel = pick_detection_folder(qtbot, window, monkeypatch, yolo_folder)
    choice = window.doc.project.dataset
    assert (choice.source, choice.path, choice.task) == ("detection", str(yolo_folder),
                                                         "detection")
    assert window.doc.undo_stack.undoText() == "Use detection folder digits"
    assert panel.options.split.title() == "Split (as the dataset names it)"
    assert panel.source.label_format.currentText() == "Auto: YOLO found"
    assert panel.source.label_format.isVisibleTo(panel)
    assert panel.options.native.isChecked() and panel.options.height.value() == 128
    formats = panel.source.label_format
    assert [formats.itemData(i) for i in range(formats.count())] == [
        "auto", "voc", "coco", "yolo", "kitti"]
    assert all(formats.itemData(i, Qt.ItemDataRole.ToolTipRole)
               for i in range(formats.count()))
    report = panel.loaded.report
    boxes = report["total_boxes"]
    assert f"Read 12 images with {boxes} boxes in 10 classes (YOLO labels)" in (
        panel.status.text())

    show_data_tab(qtbot, panel, panel.health)
    text = panel.health.text.toPlainText()
    assert "1 box has a class that is not among the class names" in text
    assert "Boxes of an unknown class id\n1\ndropped" in text
    assert "Boxes of zero or negative area\n✔ none" in text
    charts = panel.health.box_charts
    assert charts.isVisible() and not panel.health.charts.isVisible()
    assert charts.classes.heights["boxes"] == [c["boxes"] for c in report["classes"]]
    assert sum(charts.per_image.heights["images"]) == 12
    assert sum(charts.sizes.heights["boxes"]) == boxes

    samples = panel.samples
    size = samples.icon_size()
    for row, index in enumerate(samples.indices[:3]):
        label = panel.loaded.labels.image(index)
        assert samples.grid.item(row).text() == f"{len(label)} boxes"
        picture = samples.grid.item(row).icon().pixmap(size).toImage()
        height, width = panel.loaded.labels.sizes[index]
        scale = size.width() / width  # the square 128-pixel images fill the square icon
        for (x0, y0, x1, y1), cls in zip(label.boxes, label.classes, strict=True):
            rect = QRectF(x0 * scale, y0 * scale, (x1 - x0) * scale, (y1 - y0) * scale)
            assert colour_near_edges(picture, rect, box_colour(cls)), (row, cls)
    clean = picture.pixelColor(1, size.height() - 2)  # noise in a corner: no box colour
    assert clean.red() == clean.green() == clean.blue()

    box = panel.source.label_format
    choose_in_popup(qtbot, box, "voc")
    assert window.doc.project.dataset.label_format == "voc"
    assert window.doc.undo_stack.undoText() == "Read labels as Pascal VOC"
    qtbot.waitUntil(lambda: panel.loaded is None and "Pascal VOC" in panel.status.text()
                    and not panel.loader.busy(), timeout=LOAD_MS)
    window.undo_action.trigger()
    assert window.doc.project.dataset.label_format == "auto"
    qtbot.waitUntil(lambda: panel.loaded is not None, timeout=LOAD_MS)
    assert box.currentText() == "Auto: YOLO found"


def test_the_split_box_holds_its_percentages_while_the_folder_names_its_splits(
        window, qtbot, monkeypatch, yolo_folder, demo_images, tmp_path):
    options = pick_detection_folder(qtbot, window, monkeypatch, yolo_folder).options
    note = ("The dataset names its splits: train 8, validation 4 (and no test split). The "
            "percentages and seed do not apply.")
    assert options.split_note.text() == note and options.split_note.isVisibleTo(options)
    for spin in (options.validation, options.test, options.seed):
        assert not spin.isEnabled() and spin.toolTip() == note
    assert [label.text() for label in options.counts.values()] == [
        "8 samples", "4 samples", "0 samples"]

    flat = tmp_path / "flat"  # images/ and labels/ with no split folders
    demo.write_demo(flat, "yolo", replace(demo_images, splits=[None] * len(demo_images)))
    pick_detection_folder(qtbot, window, monkeypatch, flat, read_first=False)
    assert options.split.title() == "Split (at random, seeded)"  # boxes: not stratified
    assert not options.split_note.isVisibleTo(options)
    for spin in (options.validation, options.test, options.seed):
        assert spin.isEnabled() and spin.toolTip() != note
    assert options.validation.value() == round(window.doc.project.dataset.validation_split * 100)


def test_a_flip_moves_the_boxes_of_the_augmentation_preview(window, qtbot, monkeypatch,
                                                           yolo_folder):
    panel = pick_detection_folder(qtbot, window, monkeypatch, yolo_folder)
    view = panel.augmentation
    show_data_tab(qtbot, panel, view)
    qtbot.waitUntil(lambda: view.preview is not None, timeout=LOAD_MS)
    flip = view.flip_horizontal
    with qtbot.waitSignal(view.preview_shown, timeout=PREVIEW_MS):
        qtbot.mouseClick(flip, LEFT, pos=QPoint(8, flip.height() // 2))  # on its box
        assert window.doc.project.dataset.augmentation.flip_horizontal
    assert window.doc.undo_stack.undoText() == "Set flip left–right"
    preview, grid = view.preview, view.picture
    width = preview.shape[3]
    flips = []
    for row in range(1, len(preview)):
        for column in range(preview.shape[1]):
            original, shown = preview[0][column], preview[row][column]
            flipped = np.array_equal(shown, original[:, ::-1])
            assert flipped or np.array_equal(shown, original)
            flips.append(flipped)
            before = view.boxes[0][column].boxes
            expected = (np.stack([width - before[:, 2], before[:, 1], width - before[:, 0],
                                  before[:, 3]], axis=1) if flipped else before)
            np.testing.assert_allclose(view.boxes[row][column].boxes, expected, atol=1e-3)
            cell = grid.image_rect(row, column)  # where the image is drawn, on screen
            on_screen = expected * cell.width() / width + [cell.left(), cell.top()] * 2
            drawn = [(r.left(), r.top(), r.right(), r.bottom())
                     for r in grid.drawn_boxes(row, column)]
            np.testing.assert_allclose(drawn, on_screen.reshape(-1, 4), atol=1e-3)
    assert any(flips) and not all(flips)


def test_drawing_the_detection_demo_set_shows_progress_and_can_be_cancelled(
        window, qtbot, monkeypatch):
    gate = threading.Event()
    real_progress = demo._progress

    def held(on_progress, stop, done, total):
        real_progress(on_progress, stop, done, total)
        if done:  # the first images are drawn: hold the drawing until Cancel is pressed
            gate.wait(LOAD_MS / 1000)

    monkeypatch.setattr(demo, "_progress", held)
    panel = open_data_view(qtbot, window)
    box = panel.source.source
    tip = box.itemData(box.findData("detection:demo"), Qt.ItemDataRole.ToolTipRole)
    assert "works offline" in tip
    choose_in_popup(qtbot, box, "detection:demo")
    choice = window.doc.project.dataset
    assert (choice.source, choice.path, choice.task) == ("detection", "", "detection")
    assert not panel.source.label_format.isVisibleTo(panel)  # the demo set has one format
    qtbot.waitUntil(lambda: panel.progress.format().startswith(
        "Drawing the detection demo set: 200 of 4,500"), timeout=LOAD_MS)
    assert panel.cancel.isVisible()
    qtbot.mouseClick(panel.cancel, LEFT)
    gate.set()
    qtbot.waitUntil(lambda: not panel.loader.busy(), timeout=LOAD_MS)
    assert "cancelled" in panel.status.text() and panel.retry.isVisible()
    window.undo_action.trigger()
    assert window.doc.project.dataset.source == "bundled"


def test_imbalanced_boxes_suggest_no_class_weights():
    """Class weights balance samples; a detection dataset (no such option) is only told."""
    assert balance_text(["a", "b"], [10, 1]).endswith("consider “Balance classes with weights”.")
    assert balance_text(["a", "b"], [10, 1], "boxes") == (
        "Largest class 'a': 10 boxes; smallest 'b': 1 (10.0 : 1). The classes are imbalanced.")
