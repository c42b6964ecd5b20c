"""The Data view, driven as a person would: pick data, see it, augment it, cancel a slow read."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QPoint, QSize, Qt
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QFileDialog

from studio.core.data import sources as data
from studio.core.data.types import DataError
from studio.gui.data import sample_views
from studio.gui.data import samples as data_samples
from studio.gui.data.augmentation import REPEATS
from studio.gui.data.images import framed, pixmap
from tests.gui.support import (
    RUN_TIMEOUT_MS,
    click_row,
    drop_on,
    isolate_settings,
    run_status,
    show_tab,
    type_into,
)

LOAD_MS = 20_000
PREVIEW_MS = 90_000
"""The first augmented preview imports TensorFlow."""
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


def image_folder(root: Path, counts: dict[str, int], size=(12, 16)) -> Path:
    """Class subfolders of small PNGs, each class a different colour with some noise."""
    rng = np.random.default_rng(0)
    for k, (name, n) in enumerate(counts.items()):
        (root / name).mkdir(parents=True)
        for i in range(n):
            pixels = np.full((*size, 3), 40 + 90 * k, np.uint8) + rng.integers(0, 30, (*size, 3),
                                                                                dtype=np.uint8)
            Image.fromarray(pixels).save(root / name / f"{name}_{i}.png")
    return root


def grey_array(picture: QPixmap) -> np.ndarray:
    """The pixels of a grey picture as a uint8 H × W array."""
    image = picture.toImage().convertToFormat(QImage.Format.Format_Grayscale8)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1)
    return rows[:, :image.width()].copy()


def open_data_view(qtbot, window):
    """Click the Data tab and wait for the bundled MNIST-10k to be read."""
    show_tab(qtbot, window, "Data")
    panel = window.data_panel
    qtbot.waitUntil(lambda: panel.loaded is not None, timeout=LOAD_MS)
    return panel


def show_data_tab(qtbot, panel, view) -> None:
    """Click the tab of ``view`` (Samples, Classes, Health or Augmentation)."""
    bar = panel.tabs.tabBar()
    qtbot.mouseClick(bar, LEFT, pos=bar.tabRect(panel.tabs.indexOf(view)).center())
    assert panel.tabs.currentWidget() is view


def choose_source(qtbot, panel, text: str) -> None:
    """Pick an entry of the Dataset box by typing its first letters, as with the keyboard."""
    box = panel.source.source
    box.setFocus()
    qtbot.keyClicks(box, text)
    assert box.currentText().startswith(text)


def wait_read(qtbot, panel, check):
    qtbot.waitUntil(lambda: panel.loaded is not None and check(panel.loaded), timeout=LOAD_MS)


def test_picking_a_folder_shows_its_samples_and_classes(window, qtbot, tmp_path, monkeypatch):
    folder = image_folder(tmp_path / "pets", {"cat": 8, "dog": 6})
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    decoded_on: set[str] = set()
    real_thumbnail = sample_views.thumbnail

    def thumbnail(path, *args):
        decoded_on.add(threading.current_thread().name)
        return real_thumbnail(path, *args)

    monkeypatch.setattr(sample_views, "thumbnail", thumbnail)
    panel = open_data_view(qtbot, window)
    assert len(panel.samples.indices) == data_samples.SAMPLES
    assert panel.classes.chart.heights["Training"] == panel.loaded.class_counts("train")

    with qtbot.waitSignal(panel.samples.thumbnails_shown, timeout=LOAD_MS):
        choose_source(qtbot, panel, "Image")
        wait_read(qtbot, panel, lambda loaded: loaded.info.class_names == ("cat", "dog"))
    choice = window.doc.project.dataset
    assert (choice.source, choice.path) == ("folder", str(folder))
    assert window.doc.undo_stack.undoText() == "Use image folder pets"
    assert "Read 14 images in 2 classes" in panel.status.text()

    grid = panel.samples.grid
    train = panel.loaded.size("train")
    assert grid.count() == train == 11
    labels = [grid.item(i).text() for i in range(grid.count())]
    assert sorted(labels) == ["cat"] * 6 + ["dog"] * 5
    assert labels[:2] in (["cat", "dog"], ["dog", "cat"])  # every class shows among the first
    assert not grid.item(0).icon().isNull()
    assert grid.item(0).toolTip().split("\n")[1].endswith(".png")
    assert threading.main_thread().name not in decoded_on and decoded_on

    qtbot.mouseClick(panel.samples.buttons.buttons()[1], LEFT)  # the validation split
    qtbot.waitUntil(lambda: grid.count() == panel.loaded.size("validation") == 3)
    assert panel.classes.chart.heights == {"Training": [6.0, 5.0], "Validation": [2.0, 1.0]}
    table = panel.classes.table
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["cat", "dog"]
    assert "Images of 64 × 64 × 3 in 2 classes: cat, dog." == panel.source.facts.text()
    assert f"{folder}: 14 images in 2 classes" in panel.health.text.toPlainText()

    started = []
    monkeypatch.setattr(panel.loader, "start", started.append)
    type_into(qtbot, panel.options.test, "30")  # a new split needs no second reading
    assert panel.loaded.size("test") == 4 and not started
    assert panel.classes.chart.heights["Training"] == [4.0, 3.0]
    window.undo_action.trigger()
    assert panel.loaded.size("test") == 0 and not started
    monkeypatch.undo()

    window.undo_action.trigger()
    assert window.doc.project.dataset.source == "bundled"
    wait_read(qtbot, panel, lambda loaded: loaded.info.num_samples == 10_000)


def test_small_thumbnails_grow_by_whole_steps_and_line_up(qtbot):
    digit = np.random.default_rng(0).integers(0, 256, (28, 28, 1), dtype=np.uint8)
    icon = framed(pixmap(digit), QSize(88, 88))
    assert (icon.width(), icon.height()) == (88, 88)
    pixels = grey_array(icon)
    assert np.array_equal(pixels[2:86, 2:86], np.kron(digit[..., 0], np.ones((3, 3))))
    assert icon.toImage().pixelColor(0, 0).alpha() == 0  # the frame is transparent
    wide = framed(pixmap(np.zeros((60, 120, 3), np.uint8)), QSize(88, 88)).toImage()
    assert (wide.width(), wide.height()) == (88, 88)  # shrunk into the same square, centred
    assert [wide.pixelColor(44, y).alpha() for y in (0, 21, 22, 65, 66, 87)] == [
        0, 0, 255, 255, 0, 0]


def test_dropping_a_folder_or_csv_file_picks_it(window, qtbot, tmp_path):
    folder = image_folder(tmp_path / "shapes", {"round": 3, "square": 3})
    table = tmp_path / "table.csv"
    table.write_text("\nwidth,width,kind\n1,2,a\n2,3,b\n3,4,a\n4,5,b\n", encoding="utf-8")
    picture = folder / "round" / "round_0.png"
    panel = open_data_view(qtbot, window)

    assert drop_on(panel, [folder])
    assert window.doc.project.dataset.path == str(folder)
    wait_read(qtbot, panel, lambda loaded: loaded.info.class_names == ("round", "square"))
    assert drop_on(panel, [table])
    choice = window.doc.project.dataset
    assert (choice.source, choice.path, choice.label_column) == ("csv", str(table), "")
    wait_read(qtbot, panel, lambda loaded: loaded.info.kind == "table")
    header = panel.samples.table.horizontalHeaderItem
    assert [header(0).text(), header(1).text()] == ["width", "width (2)"]
    box = panel.source.label_column  # named as reading names them
    assert [box.itemText(i) for i in range(box.count())] == ["width", "width (2)", "kind"]

    assert drop_on(panel, [picture])  # not a dataset: the window shows it to a model
    assert window.views.currentWidget() is window.try_panel
    assert window.doc.project.dataset.path == str(table)


def test_a_folder_with_one_class_or_none_explains_itself(window, qtbot, tmp_path, monkeypatch):
    one = image_folder(tmp_path / "one", {"cats": 3})
    empty = tmp_path / "empty"
    empty.mkdir()
    picked = [one]
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(picked[0]))
    panel = open_data_view(qtbot, window)

    choose_source(qtbot, panel, "Image")
    qtbot.waitUntil(lambda: "one class folder ('cats')" in panel.status.text(), timeout=LOAD_MS)
    assert "a classifier needs at least two classes" in panel.status.text()
    assert panel.loaded is None and panel.retry.isVisible()
    assert panel.samples.empty.text() == "Nothing to show: the data could not be read."
    assert not panel.samples.buttons.buttons()[0].isEnabled()

    picked[0] = empty
    qtbot.mouseClick(panel.source.browse, LEFT)
    assert window.doc.project.dataset.path == str(empty)
    qtbot.waitUntil(lambda: "holds no class folders" in panel.status.text(), timeout=LOAD_MS)
    assert panel.classes.empty.text() == "Nothing to show: the data could not be read."

    empty.rmdir()  # the folder disappears: reading it again says so
    qtbot.mouseClick(panel.retry, LEFT)
    qtbot.waitUntil(lambda: "does not exist" in panel.status.text(), timeout=LOAD_MS)
    window.undo_action.trigger()
    window.undo_action.trigger()
    assert window.doc.project.dataset.source == "bundled"
    wait_read(qtbot, panel, lambda loaded: loaded.info.num_samples == 10_000)
    assert panel.status.text() == "Read 10,000 images in 10 classes."


def test_picking_a_csv_lists_its_columns_for_the_label(window, qtbot, tmp_path, monkeypatch):
    table = tmp_path / "flowers.csv"
    rows = [f"{i % 7 + 1},{i % 5 + 0.5},{i * 1.5},{'ab'[i % 2]}" for i in range(30)]
    table.write_text("petal,sepal,size,kind\n" + "\n".join(rows) + "\n", encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(table), ""))
    panel = open_data_view(qtbot, window)

    choose_source(qtbot, panel, "CSV")
    source = panel.source
    assert [source.label_column.itemText(i) for i in range(source.label_column.count())] == [
        "petal", "sepal", "size", "kind"]
    assert source.label_column.currentText() == "kind"  # the last column, by default
    assert source.text_column.itemText(0) == "None (numeric table)"
    assert not panel.options.images.isVisibleTo(panel)
    assert not panel.tabs.isTabVisible(panel.tabs.indexOf(panel.augmentation))
    wait_read(qtbot, panel, lambda loaded: loaded.info.class_names == ("a", "b"))
    assert panel.samples.table.columnCount() == 4  # three features and the label

    source.label_column.setFocus()
    qtbot.keyClicks(source.label_column, "size")
    assert window.doc.project.dataset.label_column == "size"
    assert window.doc.undo_stack.undoText() == "Set label column"
    source.task.setFocus()
    qtbot.keyClicks(source.task, "Regression")
    assert window.doc.project.dataset.task == "regression"
    wait_read(qtbot, panel, lambda loaded: loaded.info.task == "regression")
    assert not panel.options.class_weights.isVisibleTo(panel)
    assert "label values spread" in panel.classes.summary.text()
    assert sum(panel.classes.chart.heights["Training"]) == panel.loaded.size("train")


def test_a_slow_read_can_be_cancelled_and_a_new_choice_replaces_it(window, qtbot, monkeypatch):
    stops: list[threading.Event] = []
    real_load = data.load

    def slow_load(choice, on_progress, stop):
        if len(stops) == 2:
            return real_load(choice, on_progress, stop)
        stops.append(stop)
        on_progress("Checking training images", 3, 10)
        stop.wait(LOAD_MS / 1000)
        raise DataError("Reading the image folder was cancelled.")

    monkeypatch.setattr(data, "load", slow_load)
    show_tab(qtbot, window, "Data")
    panel = window.data_panel
    qtbot.waitUntil(lambda: panel.progress.format() == "Checking training images: 3 of 10")
    assert panel.cancel.isVisible() and panel.progress.value() == 300  # of 1,000 steps
    assert panel.samples.empty.text() == "Reading the data…"

    panel.options.seed.setFocus()
    qtbot.keyClick(panel.options.seed, Qt.Key.Key_Up)  # a new choice replaces the reading
    qtbot.waitUntil(lambda: len(stops) == 2)
    assert stops[0].is_set() and not stops[1].is_set()

    qtbot.mouseClick(panel.cancel, LEFT)
    assert stops[1].is_set()
    assert "cancelled" in panel.status.text()
    assert not panel.progress.isVisible() and panel.retry.isVisible()
    assert panel.classes.empty.text() == "Nothing to show: reading was cancelled."

    qtbot.mouseClick(panel.retry, LEFT)
    wait_read(qtbot, panel, lambda loaded: loaded.info.num_samples == 10_000)
    assert not panel.cancel.isVisible()


def test_moving_an_augmentation_slider_changes_the_preview_in_one_undo_step(window, qtbot):
    panel = open_data_view(qtbot, window)
    view = panel.augmentation
    with qtbot.waitSignal(view.preview_shown, timeout=LOAD_MS):
        show_data_tab(qtbot, panel, view)
    originals = view.preview
    assert originals.shape[:2] == (1, 6)  # augmentation is off: the samples as they are
    assert "applies to training only" in view.note.text()

    slider = view.sliders["rotation"]
    handle = QPoint(4, slider.height() // 2)
    with qtbot.waitSignal(view.preview_shown, timeout=PREVIEW_MS):
        qtbot.mousePress(slider, LEFT, pos=handle)
        for x in range(10, slider.width() // 3, 10):
            qtbot.mouseMove(slider, QPoint(x, slider.height() // 2))
        qtbot.mouseRelease(slider, LEFT, pos=QPoint(slider.width() // 3, slider.height() // 2))
    rotation = window.doc.project.dataset.augmentation.rotation
    assert rotation > 20
    assert view.values["rotation"].text() == f"±{rotation:.0f}°"
    assert window.doc.undo_stack.count() == 1  # the whole drag is one step
    first = view.preview
    assert first.shape[:2] == (1 + REPEATS, 6)
    assert np.array_equal(first[0], originals[0])
    assert not np.array_equal(first[1:], np.broadcast_to(originals[0], first[1:].shape))

    grid = view.picture  # drawn as large as fits, each pixel a whole number of screen pixels
    zoom = grid.zoom()
    assert zoom >= 2 and zoom.is_integer()
    drawn = grey_array(grid.grab(grid.image_rect(1, 2)))
    assert np.array_equal(drawn, np.kron(first[1, 2, ..., 0], np.ones((int(zoom),) * 2)))
    window.resize(window.width() + 500, window.height() + 300)
    qtbot.waitUntil(lambda: grid.zoom() > zoom)
    assert grid.rect().contains(grid.image_rect(REPEATS, 5))

    with qtbot.waitSignal(view.preview_shown, timeout=PREVIEW_MS):
        qtbot.keyClick(slider, Qt.Key.Key_PageUp)
    assert window.doc.project.dataset.augmentation.rotation > rotation
    assert not np.array_equal(view.preview[1:], first[1:])

    assert window.doc.undo_stack.count() == 1  # a key press after the drag joins it
    with qtbot.waitSignal(view.preview_shown, timeout=PREVIEW_MS):
        window.undo_action.trigger()
    assert window.doc.project.dataset.augmentation.rotation == 0
    assert slider.value() == 0 and view.values["rotation"].text() == "off"
    assert view.preview.shape[0] == 1


def test_training_one_epoch_on_a_picked_folder(window, qtbot, tmp_path, monkeypatch,
                                               private_workspace):
    folder = image_folder(tmp_path / "marks", {"dark": 12, "light": 12}, size=(20, 24))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    panel = open_data_view(qtbot, window)
    choose_source(qtbot, panel, "Image")
    wait_read(qtbot, panel, lambda loaded: loaded.info.class_names == ("dark", "light"))
    assert not window.training.start_button.isEnabled()  # the demo model reads 28 × 28 × 1

    options = panel.options
    type_into(qtbot, options.height, "28")
    type_into(qtbot, options.width, "28")
    options.color.setFocus()
    qtbot.keyClicks(options.color, "Grayscale")
    assert window.doc.project.dataset.image_size == [28, 28]
    assert window.doc.project.dataset.color == "grayscale"
    click_row(qtbot, window, "dense_2")  # the classifier has 10 outputs for 2 classes
    (fix,) = window.inspector.fix_buttons
    qtbot.mouseClick(fix, LEFT)
    assert window.training.start_button.isEnabled()
    type_into(qtbot, window.training.epochs, "1")

    with qtbot.waitSignal(window.training.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(window.training.start_button, LEFT)
    assert finished.args == ["finished"], window.training.last_error
    run_dir = Path(window.training.run_dir)
    assert run_status(run_dir)["status"] == "finished"
    prep = json.loads((run_dir / "preprocessing.json").read_text(encoding="utf-8"))
    assert prep["class_names"] == ["dark", "light"]
    assert (prep["image_size"], prep["color"]) == ([28, 28], "grayscale")


def test_the_data_tab_puts_the_inspector_away_unless_the_person_closed_it(window, qtbot):
    inspector, toggle = window.inspector_dock, window.inspector_dock.toggleViewAction()
    width = inspector.width()
    panel = open_data_view(qtbot, window)
    assert not inspector.isVisible()  # nothing to inspect: the data gets the room
    with qtbot.waitSignal(panel.augmentation.preview_shown, timeout=LOAD_MS):
        show_data_tab(qtbot, panel, panel.augmentation)
    show_tab(qtbot, window, "List")
    assert inspector.isVisible()
    # The data view, filled, does not crowd it out (the Data tab, built as it first shows, may
    # give it back the width the window saved for it).
    assert inspector.width() >= width

    show_tab(qtbot, window, "Data")
    toggle.trigger()  # the person opens it on the Data tab (View menu), then closes it
    assert inspector.isVisible()
    toggle.trigger()
    show_tab(qtbot, window, "Canvas")
    assert not inspector.isVisible() and not toggle.isChecked()
    show_tab(qtbot, window, "Data")
    show_tab(qtbot, window, "List")
    assert not inspector.isVisible()

    toggle.trigger()
    show_tab(qtbot, window, "Data")
    assert not inspector.isVisible()
    show_tab(qtbot, window, "Canvas")
    assert inspector.isVisible() and toggle.isChecked()


def test_the_fill_of_uncovered_corners_is_shown_and_wide_rotations_are_warned(window, qtbot):
    panel = open_data_view(qtbot, window)
    view = panel.augmentation
    show_data_tab(qtbot, panel, view)
    assert view.fill.currentText() == "Black" and not view.fill.isEnabled()
    assert "6 can look like a 9" in view.sliders["rotation"].toolTip()
    assert not view.rotation_note.isVisible()

    slider = view.sliders["rotation"]
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_PageUp)  # a tenth of the range: ±10°
    assert window.doc.project.dataset.augmentation.rotation == 10
    assert view.fill.isEnabled() and not view.rotation_note.isVisible()
    for _ in range(4):
        qtbot.keyClick(slider, Qt.Key.Key_PageUp)
    assert window.doc.project.dataset.augmentation.rotation == 50
    assert view.rotation_note.isVisible() and "a 6 becomes a 9" in view.rotation_note.text()

    view.fill.setFocus()
    qtbot.keyClick(view.fill, Qt.Key.Key_Down)
    qtbot.keyClick(view.fill, Qt.Key.Key_Down)
    assert view.fill.currentText() == "Mirrored edges"
    assert window.doc.project.dataset.augmentation.fill_mode == "reflect"
    assert window.doc.undo_stack.undoText() == "Set augmentation fill"
    window.undo_action.trigger()
    assert view.fill.currentText() == "Nearest edge pixel"
    assert window.doc.project.dataset.augmentation.fill_mode == "nearest"
