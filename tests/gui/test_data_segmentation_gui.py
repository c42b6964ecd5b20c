"""The Data view on a segmentation dataset, driven as a person would: pick a folder of images
and masks, see its samples with their masks laid over them, its health report with an image
left out for want of a mask, its pixels per class charted; choose the masks from a folder of
their own and undo it; see bad masks said in one line; preview a flip that moves the masks;
draw the demo set and cancel it."""

from __future__ import annotations

import shutil
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from studio.core.data import digit_canvas
from studio.core.data.segmentation import demo
from studio.core.data.segmentation.source import FileMasks
from studio.core.inference.mask_files import class_colors
from studio.core.tasks.segmentation.masks import IGNORE
from studio.gui.data.charts import balance_text
from studio.gui.data.images import ImageGrid, framed, pixmap
from studio.gui.widgets.errors import last_error
from tests.core.test_segmentation_bad_input import (
    BANDS,
    BLOCKED,
    COUNTED,
    NOT_MASKS,
    RGB_WITHOUT_TABLE,
    coloured,
    every_mask,
    mask_set,
)
from tests.gui.support import show_tab
from tests.gui.test_canvas import click_node
from tests.gui.test_data_detection_gui import LEFT, choose_in_popup, pick_folder
from tests.gui.test_data_gui import LOAD_MS, PREVIEW_MS, open_data_view, show_data_tab
from tests.gui.test_template_gallery import open_gallery, pick
from tests.helpers import digit_folder

OPACITY = 0.6
"""How strongly a mask's colour covers its image on a card and in the preview."""


@pytest.fixture(scope="module")
def demo_images():
    """Twelve demo images with their masks (8 training, 4 validation), drawn once."""
    return demo.generate(train=8, validation=4)


@pytest.fixture
def digits(tmp_path, demo_images) -> Path:
    """The demo images as images/ and masks/ folders, one more image without a mask."""
    root = tmp_path / "digits"
    demo.write_demo(root, demo_images)
    shutil.copy(root / "images" / "train" / "000000.png", root / "images" / "train" / "lone.png")
    return root


def pick_segmentation_folder(qtbot, window, monkeypatch, folder: Path):
    """Choose ``folder`` with "Segmentation folder…" and wait for its sample pictures."""
    panel = pick_folder(qtbot, window, monkeypatch, folder, "segmentation")
    assert isinstance(panel.loaded.labels, FileMasks)
    return panel


def uniform(values: np.ndarray) -> np.ndarray:
    """Where each pixel of ``values`` (H × W) inside its edges equals its eight neighbours: a
    smooth scaling draws it in its own value."""
    padded = np.pad(values.astype(np.int64), 1, constant_values=-1)
    height, width = values.shape
    return np.all([padded[1 + dy:1 + dy + height, 1 + dx:1 + dx + width] == values
                   for dy in (-1, 0, 1) for dx in (-1, 0, 1)], axis=0)


def rgb(picture: QImage) -> np.ndarray:
    """A QImage's pixels as uint8 H × W × 3."""
    picture = picture.convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(picture.constBits(), np.uint8).reshape(picture.height(), -1)
    # a copy: the converted image, whose memory the rows are, is freed on return
    return rows[:, :picture.width() * 3].reshape(picture.height(), picture.width(), 3).copy()


def assert_masked(picture: QImage, under: QImage, left: int, top: int, scale: float,
                  mask: np.ndarray, colours: np.ndarray) -> None:
    """``picture`` shows ``under`` (the same drawn without masks) with ``mask`` drawn ``scale``
    times larger from ``left``, ``top`` laid over it: each class's colour blended in,
    background clear. Checked inside areas of one class, where no edge blurs."""
    ys, xs = np.nonzero(uniform(mask))
    rows = np.rint(top + (ys + 0.5) * scale).astype(int)
    columns = np.rint(left + (xs + 0.5) * scale).astype(int)
    classes = mask[ys, xs]
    assert (classes == 0).any() and (classes > 0).any()  # both background and digits
    blend = OPACITY * (classes > 0)[:, None]
    expected = rgb(under)[rows, columns] * (1 - blend) + colours[classes] * blend
    np.testing.assert_allclose(rgb(picture)[rows, columns], expected, atol=2)


def test_a_folder_shows_masked_samples_its_health_and_pixels_per_class(window, qtbot,
                                                                       monkeypatch, digits):
    panel = pick_segmentation_folder(qtbot, window, monkeypatch, digits)
    choice = window.doc.project.dataset
    assert (choice.source, choice.path, choice.mask_path, choice.task) == (
        "segmentation", str(digits), "", "segmentation")
    assert window.doc.undo_stack.undoText() == "Use segmentation folder digits"
    assert panel.source.mask_path.isVisibleTo(panel)
    assert panel.options.native.isChecked() and panel.options.height.value() == demo.SIDE
    assert panel.options.class_weights.isVisibleTo(panel)  # weighed in the loss
    assert panel.status.text().startswith(
        "Read 12 images with 12 masks in 11 classes (images and masks folders). Please note:")
    assert "1 image has no mask (e.g. 'images/train/lone.png'): left out." in panel.status.text()

    samples, loaded = panel.samples, panel.loaded
    names = loaded.info.class_names
    colours = class_colors(names).astype(float)
    for row, index in enumerate(samples.indices[:4]):
        mask = loaded.labels.mask(index)
        digits_in = [names[k] for k in np.unique(mask) if 0 < k < IGNORE]
        assert samples.grid.item(row).text() == ", ".join(digits_in)
        assert "(stored 64×64)" in samples.grid.item(row).toolTip()
        picture = samples.grid.item(row).icon().pixmap(samples.icon_size()).toImage()
        image = np.asarray(Image.open(loaded.samples.paths[index]))[..., np.newaxis]
        under = framed(pixmap(image), samples.icon_size()).toImage()
        assert_masked(picture, under, 0, 0, samples.icon_size().width() / demo.SIDE, mask,
                      colours)

    show_data_tab(qtbot, panel, panel.health)
    text = panel.health.text.toPlainText()
    assert "1 image has no mask (e.g. 'images/train/lone.png'): left out." in text
    assert "Images without a mask\n1\nleft out" in text
    assert "Masks of another size than their image\n✔ none" in text
    report = loaded.report
    charts = panel.health.charts_of("masks")
    assert charts.isVisible() and not panel.health.box_charts.isVisible()
    pixels = [c["pixels"] for c in report["classes"]]
    assert sum(pixels) == 12 * demo.SIDE * demo.SIDE
    digits_only = report["classes"][1:]  # the background's bar would flatten the others
    assert charts.pixels.heights["pixels"] == [c["pixels"] for c in digits_only]
    assert charts.images.heights["images"] == [c["images"] for c in digits_only]
    assert charts.pixels.categories == demo.CLASS_NAMES[1:]
    share = round(100 * pixels[0] / sum(pixels))
    assert "(background left out)" in charts.pixels.plotItem.titleLabel.text
    assert f"{share} % of the pixels" in charts.pixels.toolTip()

    show_data_tab(qtbot, panel, panel.classes)
    chart = panel.classes.chart
    assert chart.getAxis("left").labelText == "pixels"
    assert panel.classes.summary.text().endswith(  # background has 100 times the pixels of 1
        "The classes are imbalanced: consider “Balance classes with weights”.")
    assert np.sum(list(chart.heights.values()), axis=0).tolist() == pixels[1:]
    assert chart.categories == demo.CLASS_NAMES[1:]  # the background's bar would dwarf them
    assert chart.getAxis("bottom").labelText == "class (background left out: see the table)"
    table = panel.classes.table
    assert [int(table.item(row, 4).text()) for row in range(table.rowCount())] == pixels

    window.undo_action.trigger()
    assert window.doc.project.dataset.source == "bundled"
    qtbot.waitUntil(lambda: panel.loaded is not None and not panel.loader.busy(),
                    timeout=LOAD_MS)
    assert not panel.source.mask_path.isVisibleTo(panel)


def test_a_folder_naming_only_its_test_split_leaves_validation_to_its_percentage(
        window, qtbot, monkeypatch, demo_images, tmp_path):
    tests = ["test" if split == "validation" else split for split in demo_images.splits]
    folder = tmp_path / "tested"
    demo.write_demo(folder, replace(demo_images, splits=tests))
    options = pick_segmentation_folder(qtbot, window, monkeypatch, folder).options
    note = ("The dataset names its test split (4 samples); validation is split off the other "
            "samples by its percentage.")
    assert options.split_note.text() == note and options.split_note.isVisibleTo(options)
    assert not options.test.isEnabled() and options.test.toolTip() == note
    assert options.validation.isEnabled() and options.seed.isEnabled()
    assert options.split.title() == "Split (at random, seeded)"
    assert options.counts["test"].text() == "4 samples"


def test_masks_chosen_from_a_folder_of_their_own_can_be_undone(window, qtbot, monkeypatch,
                                                                digits):
    chosen = [digits / "images"]
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(chosen[0]))
    panel = open_data_view(qtbot, window)
    choose_in_popup(qtbot, panel.source.source, "segmentation")
    qtbot.waitUntil(lambda: not panel.loader.busy() and panel.loaded is None, timeout=LOAD_MS)
    chosen[0] = digits / "masks"
    qtbot.mouseClick(panel.source.mask_browse, LEFT)
    assert window.doc.project.dataset.mask_path == str(digits / "masks")
    assert window.doc.undo_stack.undoText() == "Read masks from masks"
    assert panel.source.mask_path.text() == str(digits / "masks")
    qtbot.waitUntil(lambda: panel.loaded is not None, timeout=LOAD_MS)
    assert "12 masks in 11 classes (a folder of masks)" in panel.status.text()
    window.undo_action.trigger()
    assert window.doc.project.dataset.mask_path == ""
    assert panel.source.mask_path.text() == "" and not panel.source.mask_clear.isEnabled()


def test_bad_masks_are_said_in_the_status_line_and_health_report(window, qtbot, monkeypatch,
                                                                 tmp_path):
    """Issue 24's bad masks picked in the Data tab: JPEG masks are read with their warning
    (in the status line and the Health tab); 16-bit masks past 8 bits, masks of 300 values,
    RGB masks without a colour table and class folders each stop the reading with one line
    saying why."""
    jpeg = mask_set(tmp_path / "jpeg", {"a": BANDS, "b": BANDS}, suffix=".jpg")
    panel = pick_segmentation_folder(qtbot, window, monkeypatch, jpeg)
    warning = COUNTED["jpeg masks"].sentence
    assert f"Please note:\n• {warning}" in panel.status.text()
    show_data_tab(qtbot, panel, panel.health)
    text = panel.health.text.toPlainText()
    assert warning in text and "JPEG masks (edges change classes)\n2\n" in text

    chosen = [jpeg]
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(chosen[0]))
    for name, (make, words) in {
            "wide": BLOCKED["16-bit masks past 8 bits"],
            "values": BLOCKED["masks of 300 distinct values"],
            "colours": (every_mask(coloured(BANDS), names=None), RGB_WITHOUT_TABLE),
            "digits": (lambda root: digit_folder(root, per_class=2), NOT_MASKS)}.items():
        chosen[0] = make(tmp_path / name)
        qtbot.mouseClick(panel.source.browse, LEFT)
        assert window.doc.project.dataset.path == str(chosen[0])
        qtbot.waitUntil(lambda words=words: words in panel.status.text(), timeout=LOAD_MS)
        assert "\n" not in panel.status.text() and panel.loaded is None
        assert words in last_error()


def test_a_flip_moves_the_masks_of_the_augmentation_preview(window, qtbot, monkeypatch,
                                                           digits):
    panel = pick_segmentation_folder(qtbot, window, monkeypatch, digits)
    view = panel.augmentation
    show_data_tab(qtbot, panel, view)
    qtbot.waitUntil(lambda: view.preview is not None, timeout=LOAD_MS)
    flip = view.flip_horizontal
    with qtbot.waitSignal(view.preview_shown, timeout=PREVIEW_MS):
        qtbot.mouseClick(flip, LEFT, pos=QPoint(8, flip.height() // 2))  # on its box
    preview, masks, grid = view.preview, view.overlays, view.picture
    colours = class_colors(panel.loaded.info.class_names).astype(float)
    painted = grid.grab().toImage()
    plain = ImageGrid(grid.gap, grid.first_gap)  # the same images without their masks
    qtbot.addWidget(plain)
    plain.resize(grid.size())
    plain.set_images(preview)
    under = plain.grab().toImage()
    flips = []
    for column in range(preview.shape[1]):
        original, mask = preview[0][column], masks[0][column]
        assert mask.shape == original.shape[:2] and (mask > 0).any()
        for row in range(1, len(preview)):
            flipped = np.array_equal(preview[row][column], original[:, ::-1])
            assert flipped or np.array_equal(preview[row][column], original)
            np.testing.assert_array_equal(masks[row][column], mask[:, ::-1] if flipped else mask)
            flips.append(flipped)
            cell = grid.image_rect(row, column)
            scale = cell.width() / original.shape[1]
            assert_masked(painted, under, cell.left(), cell.top(), scale, masks[row][column],
                          colours)
    assert any(flips) and not all(flips)


def test_pixels_are_imbalanced_only_by_the_health_reports_measure():
    """A background covers most of every image: pixels are imbalanced past 100 : 1."""
    assert balance_text(["background", "cat"], [99, 1], "pixels") == (
        "Largest class 'background': 99 pixels; smallest 'cat': 1 (99.0 : 1).")
    assert balance_text(["background", "cat"], [100, 1], "pixels").endswith(
        "The classes are imbalanced: consider “Balance classes with weights”.")


def test_drawing_the_segmentation_demo_set_shows_progress_and_can_be_cancelled(
        window, qtbot, monkeypatch):
    gate = threading.Event()
    real_progress = digit_canvas.report_progress

    def held(on_progress, stop, what, done, total):
        real_progress(on_progress, stop, what, done, total)
        if done and what == demo.WHAT:  # the first images are drawn: hold until Cancel
            gate.wait(LOAD_MS / 1000)

    monkeypatch.setattr(digit_canvas, "report_progress", held)
    panel = open_data_view(qtbot, window)
    box = panel.source.source
    tip = box.itemData(box.findData("segmentation:demo"), Qt.ItemDataRole.ToolTipRole)
    assert "works offline" in tip and "every pixel labelled" in tip
    choose_in_popup(qtbot, box, "segmentation:demo")
    choice = window.doc.project.dataset
    assert (choice.source, choice.path, choice.task) == ("segmentation", "", "segmentation")
    assert window.doc.undo_stack.undoText() == "Use Segmentation demo (digits) (bundled, offline)"
    assert not panel.source.mask_path.isVisibleTo(panel)  # the demo set has its masks
    qtbot.waitUntil(lambda: panel.progress.format().startswith(
        "Drawing the segmentation demo set: 200 of 4,500"), timeout=LOAD_MS)
    assert panel.cancel.isVisible()
    qtbot.mouseClick(panel.cancel, LEFT)
    gate.set()
    qtbot.waitUntil(lambda: not panel.loader.busy(), timeout=LOAD_MS)
    assert "cancelled" in panel.status.text() and panel.retry.isVisible()
    window.undo_action.trigger()
    assert window.doc.project.dataset.source == "bundled"


def test_a_grey_template_on_a_colour_folder_reads_it_grey_in_one_undoable_click(
        window, qtbot, monkeypatch, digits):
    gallery = open_gallery(qtbot, window)
    pick(qtbot, gallery, "small_unet_segmenter", double=True)
    qtbot.waitUntil(lambda: window.doc.project.name == "Small U-Net (segmentation)")
    pick_folder(qtbot, window, monkeypatch, digits, "segmentation", read_first=False)
    assert window.doc.project.dataset.color == "auto"  # a folder is read as RGB
    problem = "input_1: The input shape 64 × 64 × 1 does not match digits"
    assert window.training.status.text().startswith(f"Cannot start: {problem}")
    assert not window.training.start_button.isEnabled()

    show_tab(qtbot, window, "Canvas")
    click_node(window, qtbot, "input_1")
    buttons = {button.text(): button for button in window.inspector.fix_buttons}
    assert list(buttons) == ["Set the input shape to 64 × 64 × 3",
                             "Read the images as grayscale"]
    steps = window.doc.undo_stack.count()
    qtbot.mouseClick(buttons["Read the images as grayscale"], LEFT)
    assert window.doc.undo_stack.count() == steps + 1
    assert window.doc.project.dataset.color == "grayscale"
    assert window.doc.project.graph.node("input_1").params["shape"] == [64, 64, 1]
    assert window.doc.analysis().ok and window.training.start_button.isEnabled()
    assert not window.scene.nodes["input_1"].look.problem and not window.inspector.fix_buttons
    assert window.data_panel.options.color.currentData() == "grayscale"

    window.activateWindow()  # offscreen, the Dataset list's popup stays the active window
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.doc.project.dataset.color == "auto"
    assert window.doc.analysis().reason.startswith(problem)
    assert window.scene.nodes["input_1"].look.problem and len(window.inspector.fix_buttons) == 2
    assert not window.training.start_button.isEnabled()
    assert window.data_panel.options.color.currentData() == "auto"
