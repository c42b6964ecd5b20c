"""The Data view's dataset editor, driven as a person would: a new dataset, classes added,
renamed, merged and deleted, images dropped, pasted, moved by key and by drag, flagged,
deleted and restored, each step undone and redone, with the files on disk checked."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
from PIL import Image
from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QApplication,
    QDialogButtonBox,
    QFileDialog,
    QLineEdit,
    QMessageBox,
)

from studio.core.base.preferences import MAX_SIDE
from studio.core.data.editable import adding
from studio.core.project.templates import demo_project
from studio.gui.camera.fake import FakeCamera
from studio.gui.dataset_editor import thumbnails
from studio.gui.dataset_editor.class_list import NAME
from studio.gui.shell.main_window import MainWindow
from studio.gui.shell.recent_projects import preferences_path
from tests.core.dataset_support import read_only
from tests.gate import Gate
from tests.gui.support import drop_on, show_tab, type_into
from tests.gui.test_camera import FRAMES, Clock, send
from tests.gui.test_data_gui import image_folder, show_data_tab

LOAD_MS = 20_000
LEFT = Qt.MouseButton.LeftButton


def pngs(folder: Path, n: int, start: int = 0, size=(10, 8)) -> list[Path]:
    """``n`` small PNGs, each different."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(start, start + n):
        pixels = np.full((*size, 3), i % 256, np.uint8)
        pixels[0, 0] = (i // 256, 7, 9)
        path = folder / f"picture_{i}.png"
        Image.fromarray(pixels).save(path)
        paths.append(path)
    return paths


def on_disk(root: Path) -> dict[str, int]:
    """Each class folder's file count."""
    return {p.name: len(list(p.iterdir())) for p in sorted(root.iterdir())
            if p.is_dir() and not p.name.startswith(".")}


def open_editor(qtbot, window, folder: Path):
    """Choose ``folder`` as the data, show the Data view's Edit tab and wait for the read."""
    panel = window.data_panel
    panel.source.pick(folder)
    show_tab(qtbot, window, "Data")
    qtbot.waitUntil(lambda: not (panel.loader.busy() or panel.timer.isActive()),
                    timeout=LOAD_MS)
    show_data_tab(qtbot, panel, panel.editor)
    return panel.editor


def wait_added(qtbot, editor) -> None:
    qtbot.waitUntil(lambda: not editor.adder.busy(), timeout=LOAD_MS)


def click_class(qtbot, editor, name: str, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    tree = editor.classes
    rect = tree.visualItemRect(tree.item(name))
    qtbot.mouseClick(tree.viewport(), LEFT, modifier, rect.center())


def select_images(qtbot, editor, rows: list[int]) -> None:
    grid = editor.grid
    for k, row in enumerate(rows):
        rect = grid.visualRect(editor.model.index(row))
        qtbot.mouseClick(grid.viewport(), LEFT, Qt.KeyboardModifier.NoModifier if k == 0
                         else Qt.KeyboardModifier.ControlModifier, rect.center())
    assert len(grid.selected_paths()) == len(rows)


def type_name(qtbot, tree, text: str) -> None:
    """Type ``text`` over the name being edited in the class list, and press Return."""
    line = next(w for w in tree.viewport().findChildren(QLineEdit) if w.isVisible())
    line.selectAll()
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key.Key_Return)


def answer(monkeypatch, button) -> list[str]:
    asked: list[str] = []

    def question(parent, title, text, *args):
        asked.append(text)
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def test_a_new_dataset_is_made_and_chosen_and_undo_puts_the_old_one_back(window, qtbot,
                                                                          tmp_path):
    panel = window.data_panel
    show_tab(qtbot, window, "Data")
    panel.source.source.setFocus()
    qtbot.keyClicks(panel.source.source, "New")  # the entry opens the dialog
    dialog = panel.source.new_dialog
    assert dialog.isVisible() and panel.source.source.currentText().startswith("MNIST")
    assert dialog.class_names() == ["class 1", "class 2"]
    assert dialog.root().parent == Path(os.environ["LAYER_STUDIO_HOME"]) / "datasets"
    dialog.classes.item(1).setText("CLASS 1")
    create = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(create, LEFT)
    assert "differ in more than case" in dialog.error.text() and dialog.isVisible()
    dialog.classes.item(1).setText("dogs")
    type_into(qtbot, dialog.name, "Pets")
    qtbot.mouseClick(create, LEFT)

    root = Path(os.environ["LAYER_STUDIO_HOME"]) / "datasets" / "Pets"
    assert not dialog.isVisible() and on_disk(root) == {"class 1": 0, "dogs": 0}
    choice = window.doc.project.dataset
    assert (choice.source, choice.path) == ("folder", str(root))
    assert window.doc.undo_stack.undoText() == "New image dataset Pets"
    assert panel.tabs.currentWidget() is panel.editor
    assert panel.editor.classes.names() == ["class 1", "dogs"]
    assert panel.editor.selected_class() == "class 1"

    window.undo_action.trigger()
    assert window.doc.project.dataset.source == "bundled"
    assert not panel.tabs.isTabVisible(panel.tabs.indexOf(panel.editor))
    assert root.is_dir()  # the folder stays: undo chooses the old data, deletes nothing


def test_classes_are_added_renamed_merged_and_deleted_in_undoable_steps(window, qtbot,
                                                                       tmp_path, monkeypatch):
    root = image_folder(tmp_path / "pets", {"cat": 3, "dog": 2})
    editor = open_editor(qtbot, window, root)
    stack = window.doc.undo_stack
    tree = editor.classes
    assert [(tree.topLevelItem(i).text(0), tree.topLevelItem(i).text(NAME),
             tree.topLevelItem(i).text(2)) for i in range(2)] == [("1", "cat", "3"),
                                                                  ("2", "dog", "2")]

    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_Insert)
    assert on_disk(root) == {"cat": 3, "class 3": 0, "dog": 2}
    type_name(qtbot, tree, "bird")
    qtbot.waitUntil(lambda: on_disk(root) == {"bird": 0, "cat": 3, "dog": 2})
    assert editor.selected_class() == "bird"
    assert stack.undoText() == "Rename class 'class 3' to 'bird'"

    click_class(qtbot, editor, "cat")
    qtbot.keyClick(tree, Qt.Key.Key_F2)
    type_name(qtbot, tree, "Dog")
    qtbot.waitUntil(lambda: "differ in more than case" in editor.notice.text())
    assert tree.item("cat") is not None and on_disk(root)["cat"] == 3

    click_class(qtbot, editor, "dog", Qt.KeyboardModifier.ControlModifier)
    monkeypatch.setattr("PySide6.QtWidgets.QInputDialog.getItem",
                        lambda *args, **kwargs: ("cat", True))
    qtbot.mouseClick(editor.merge_button, LEFT)
    assert on_disk(root) == {"bird": 0, "cat": 5}
    assert tree.item("cat").text(2) == "5" and editor.selected_class() == "cat"
    qtbot.waitUntil(lambda: panel_classes(window) == ("bird", "cat"), timeout=LOAD_MS)

    asked = answer(monkeypatch, QMessageBox.StandardButton.Yes)
    click_class(qtbot, editor, "cat")
    qtbot.keyClick(tree, Qt.Key.Key_Delete)
    assert "with 5 images" in asked[0]
    assert on_disk(root) == {"bird": 0}
    assert editor.trash_button.text() == "Trash (1)"

    for expected in ({"bird": 0, "cat": 5}, {"bird": 0, "cat": 3, "dog": 2},
                     {"cat": 3, "class 3": 0, "dog": 2}, {"cat": 3, "dog": 2}):
        window.undo_action.trigger()
        assert on_disk(root) == expected
    assert tree.names() == ["cat", "dog"]
    for expected in ({"cat": 3, "class 3": 0, "dog": 2}, {"bird": 0, "cat": 3, "dog": 2},
                     {"bird": 0, "cat": 5}, {"bird": 0}):
        window.redo_action.trigger()
        assert on_disk(root) == expected
    panel = window.data_panel
    qtbot.waitUntil(lambda: not (panel.loader.busy() or panel.timer.isActive()),
                    timeout=LOAD_MS)
    assert panel.loaded is None and "bird" in panel.source.facts.text()  # one empty class

    editor.show_trash()
    qtbot.mouseClick(editor.trash_view.empty_button, LEFT)  # the class deleted goes for good
    assert not (root / ".trash").exists()
    assert stack.undoText() == "Merge 'dog' into 'cat'"  # its deletion can no longer be undone
    window.undo_action.trigger()  # 'cat' went for good: the merge cannot be undone
    assert on_disk(root) == {"bird": 0}
    assert editor.notice.text().startswith("“Merge 'dog' into 'cat'” could not be undone:")
    window.undo_action.trigger()
    assert on_disk(root) == {"class 3": 0}


def panel_classes(window) -> tuple[str, ...] | None:
    loaded = window.data_panel.loaded
    return None if loaded is None else loaded.info.class_names


def test_files_dropped_on_a_class_are_added_and_a_corrupt_one_is_refused(window, qtbot,
                                                                        tmp_path):
    root = image_folder(tmp_path / "pets", {"cat": 1, "dog": 1})
    editor = open_editor(qtbot, window, root)
    files = pngs(tmp_path / "new", 3)
    broken = tmp_path / "new" / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    tree = editor.classes
    item_rect = tree.visualItemRect(tree.item("dog"))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in [*files, broken, files[0]]])
    assert drop_at(tree.viewport(), mime, item_rect.center())
    wait_added(qtbot, editor)
    assert on_disk(root) == {"cat": 1, "dog": 4}
    text = editor.notice.text()
    assert text.startswith("3 images added to 'dog'; 1 copy of images already there skipped")
    assert "First refused: broken.png:" in text
    assert window.doc.undo_stack.undoText() == "Add 3 images to 'dog'"
    qtbot.waitUntil(lambda: len(window.data_panel.loaded.labels) == 5, timeout=LOAD_MS)

    window.undo_action.trigger()
    assert on_disk(root) == {"cat": 1, "dog": 1}
    window.redo_action.trigger()
    assert on_disk(root) == {"cat": 1, "dog": 4}

    click_class(qtbot, editor, "cat")  # a folder dropped on the grid: to the class shown
    pngs(tmp_path / "more" / "inside", 2, start=10)
    assert drop_on(editor.grid.viewport(), [tmp_path / "more"])
    wait_added(qtbot, editor)
    assert on_disk(root) == {"cat": 3, "dog": 4}
    assert editor.model.rowCount() == 3
    assert window.doc.project.dataset.path == str(root)  # not taken as another dataset


def drop_at(widget, mime: QMimeData, point) -> bool:
    """Drag ``mime`` over ``point`` of ``widget`` and let go; True if the drop was taken."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent

    buttons, keys = LEFT, Qt.KeyboardModifier.NoModifier
    action = Qt.DropAction.CopyAction | Qt.DropAction.MoveAction
    enter = QDragEnterEvent(point, action, mime, buttons, keys)
    QApplication.sendEvent(widget, enter)
    move = QDragMoveEvent(point, action, mime, buttons, keys)
    QApplication.sendEvent(widget, move)
    if not move.isAccepted():
        return False
    drop = QDropEvent(QPointF(point), action, mime, buttons, keys)
    QApplication.sendEvent(widget, drop)
    return drop.isAccepted()


def test_pasting_files_or_a_picture_adds_them(window, qtbot, tmp_path):
    root = image_folder(tmp_path / "pets", {"cat": 1, "dog": 1})
    editor = open_editor(qtbot, window, root)
    click_class(qtbot, editor, "dog")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in pngs(tmp_path / "copied", 2)])
    QApplication.clipboard().setMimeData(mime)
    qtbot.keyClick(editor.grid, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    wait_added(qtbot, editor)
    assert on_disk(root) == {"cat": 1, "dog": 3}

    picture = QImage(30, 20, QImage.Format.Format_RGB32)
    picture.fill(Qt.GlobalColor.darkCyan)
    QApplication.clipboard().setImage(picture)
    qtbot.keyClick(editor.grid, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    wait_added(qtbot, editor)
    assert on_disk(root) == {"cat": 1, "dog": 4}
    added = [p for p in (root / "dog").iterdir() if not p.name.startswith("dog_")]
    assert sorted(Image.open(p).size for p in added) == [(8, 10), (8, 10), (30, 20)]
    assert window.doc.undo_stack.undoText() == "Add 1 image to 'dog'"


def test_add_images_shrinks_large_ones_and_keeps_their_originals_if_asked(
        window, qtbot, tmp_path, monkeypatch):
    root = image_folder(tmp_path / "pets", {"cat": 1, "dog": 1})
    editor = open_editor(qtbot, window, root)
    big = pngs(tmp_path / "big", 2, size=(40, 30))
    monkeypatch.setattr(QFileDialog, "getOpenFileNames",
                        lambda *args, **kwargs: ([str(p) for p in big], ""))
    type_into(qtbot, editor.max_side, "20")
    qtbot.mouseClick(editor.keep_originals, LEFT)
    qtbot.mouseClick(editor.add_button, LEFT)
    wait_added(qtbot, editor)
    added = [p for p in (root / "cat").iterdir() if not p.name.startswith("cat_")]
    assert sorted(Image.open(p).size for p in added) == [(15, 20), (15, 20)]
    assert sorted(p.name for p in (root / ".originals").iterdir()) == sorted(
        p.name for p in added)


def test_the_size_images_are_added_at_is_remembered_for_the_next_session(window, qtbot,
                                                                          tmp_path):
    editor = open_editor(qtbot, window, image_folder(tmp_path / "pets", {"cat": 1}))
    type_into(qtbot, editor.max_side, "640")
    qtbot.keyClick(editor.max_side, Qt.Key.Key_Return)
    qtbot.mouseClick(editor.keep_originals, LEFT)
    again = next_session(qtbot).data_panel.editor  # the same (test's own) preferences
    assert (again.max_side.value(), again.keep_originals.isChecked()) == (640, True)
    saved = json.loads(preferences_path().read_text())
    preferences_path().write_text(json.dumps({**saved, "max_side": "huge"}))
    odd = next_session(qtbot).data_panel.editor
    assert (odd.max_side.value(), odd.keep_originals.isChecked()) == (MAX_SIDE, True)


def next_session(qtbot) -> MainWindow:
    """A new window, as the app opens in a later session."""
    window = MainWindow(demo_project())
    qtbot.addWidget(window)
    return window


def test_a_large_add_can_be_cancelled_and_keeps_what_it_added(window, qtbot, tmp_path,
                                                             monkeypatch):
    root = image_folder(tmp_path / "pets", {"cat": 1})
    editor = open_editor(qtbot, window, root)
    gate = Gate(monkeypatch)
    gate.after(adding, "inspect_image")
    files = pngs(tmp_path / "many", 40)
    try:
        assert drop_on(editor.grid.viewport(), files)
        assert gate.reached.wait(5)
        qtbot.waitUntil(editor.cancel.isVisible)
        assert not editor.rename_button.isEnabled()  # the class being added to stays put
        click_class(qtbot, editor, "cat")
        qtbot.keyClick(editor.classes, Qt.Key.Key_F2)
        type_name(qtbot, editor.classes, "kitten")
        qtbot.waitUntil(lambda: "Images are being added" in editor.notice.text())
        qtbot.mouseClick(editor.cancel, LEFT)
    finally:
        gate.open()
    wait_added(qtbot, editor)
    assert on_disk(root) == {"cat": 2}
    assert "Stopped after 1 of 40 files" in editor.notice.text()
    assert not editor.cancel.isVisible()
    assert editor.rename_button.isEnabled() and on_disk(root) == {"cat": 2}
    window.undo_action.trigger()
    assert on_disk(root) == {"cat": 1}


def test_keys_and_drags_move_images_and_flags_follow_them(window, qtbot, tmp_path):
    root = image_folder(tmp_path / "pets", {"cat": 4, "dog": 1, "owl": 0})
    editor = open_editor(qtbot, window, root)
    grid = editor.grid
    select_images(qtbot, editor, [0, 2])
    moved = grid.selected_paths()
    qtbot.keyClick(grid, Qt.Key.Key_F)
    assert editor.dataset.flagged() == {Path(p).name for p in moved}
    assert "2 flagged" in editor.caption.text()
    qtbot.keyClick(grid, Qt.Key.Key_2)
    assert on_disk(root) == {"cat": 2, "dog": 3, "owl": 0}
    assert window.doc.undo_stack.undoText() == "Move 2 images to 'dog'"
    assert grid.selected_paths() == [editor.model.paths[0]]  # the next one, to go on
    click_class(qtbot, editor, "dog")
    flagged = [editor.model.index(r).data(Qt.ItemDataRole.UserRole + 1)
               for r in range(editor.model.rowCount())]
    assert sorted(flagged) == [False, True, True]

    select_images(qtbot, editor, [flagged.index(True)])
    mime = editor.model.mimeData(grid.selectionModel().selectedIndexes())
    tree = editor.classes
    assert drop_at(tree.viewport(), mime, tree.visualItemRect(tree.item("owl")).center())
    qtbot.waitUntil(lambda: on_disk(root) == {"cat": 2, "dog": 2, "owl": 1})
    owl = next((root / "owl").iterdir()).name
    assert owl in editor.dataset.flagged()
    window.undo_action.trigger()
    window.undo_action.trigger()
    assert on_disk(root) == {"cat": 4, "dog": 1, "owl": 0}
    assert owl in editor.dataset.flagged()  # the flag stayed with the file

    (root / "cat" / owl).unlink()  # gone outside the app: its move cannot be redone
    stack = window.doc.undo_stack
    window.redo_action.trigger()
    assert on_disk(root) == {"cat": 3, "dog": 1, "owl": 0}  # nothing changed
    assert editor.notice.text().startswith("“Move 2 images to 'dog'” could not be redone:")
    assert stack.undoText() == "Flag 2 images"  # the move left the history
    assert stack.redoText() == "Move 1 image to 'owl'"


def test_a_correction_is_undone_on_the_one_stack_yet_leaves_nothing_to_save(
        window, qtbot, tmp_path, monkeypatch):
    root = image_folder(tmp_path / "pets", {"cat": 2, "dog": 1})
    editor = open_editor(qtbot, window, root)
    assert window.isWindowModified()  # choosing the folder changed the project
    path = tmp_path / "pets.studio.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    qtbot.keyClick(window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.doc.path == path and not window.isWindowModified())

    select_images(qtbot, editor, [0])
    qtbot.keyClick(editor.grid, Qt.Key.Key_2)  # the dataset's files change, not the project
    assert on_disk(root) == {"cat": 1, "dog": 2}
    assert not window.isWindowModified() and not window.doc.modified()
    window.training.epochs.setValue(window.training.epochs.value() + 1)
    assert window.isWindowModified()
    window.undo_action.trigger()  # the epochs: the project is as saved again
    assert not window.isWindowModified()
    window.undo_action.trigger()  # the move, on the same stack
    assert on_disk(root) == {"cat": 2, "dog": 1} and not window.isWindowModified()
    window.redo_action.trigger()
    window.redo_action.trigger()
    assert on_disk(root) == {"cat": 1, "dog": 2} and window.isWindowModified()
    qtbot.keyClick(window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.isWindowModified())
    window.undo_action.trigger()  # the epochs saved: undoing them is a change to save
    assert window.isWindowModified()


def test_deleted_images_wait_in_the_trash_until_it_is_emptied(window, qtbot, tmp_path,
                                                              monkeypatch):
    root = image_folder(tmp_path / "pets", {"cat": 3})
    editor = open_editor(qtbot, window, root)
    stack = window.doc.undo_stack
    select_images(qtbot, editor, [0, 1])
    qtbot.keyClick(editor.grid, Qt.Key.Key_Delete)
    assert on_disk(root) == {"cat": 1} and editor.model.rowCount() == 1
    assert editor.trash_button.text() == "Trash (1)"
    qtbot.mouseClick(editor.trash_button, LEFT)
    view = editor.trash_view
    assert view.list.count() == 1 and view.list.item(0).text().startswith(
        "2 images from 'cat', deleted")
    view.list.setCurrentRow(0)
    qtbot.mouseClick(view.restore_button, LEFT)
    assert on_disk(root) == {"cat": 3} and view.list.count() == 0
    assert stack.undoText() == "Restore from the trash"
    window.undo_action.trigger()
    assert on_disk(root) == {"cat": 1} and view.list.count() == 1

    before = stack.count()
    asked = answer(monkeypatch, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(view.empty_button, LEFT)
    assert "2 files in the trash" in asked[0]
    assert not (root / ".trash").exists() and view.list.count() == 0
    assert "2 files deleted for good" in editor.notice.text()
    # the restore (undone) and the delete would take files from the emptied trash
    assert stack.count() == before - 2
    assert all("Restore" not in stack.text(i) and "Delete" not in stack.text(i)
               for i in range(stack.count()))


def test_frames_from_the_camera_are_added_to_the_selected_class_in_one_step(window, qtbot,
                                                                           tmp_path):
    root = image_folder(tmp_path / "pets", {"cat": 0, "dog": 0})
    editor = open_editor(qtbot, window, root)
    click_class(qtbot, editor, "dog")
    assert editor.selected_class() == "dog"
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (12, 16, 3), dtype=np.uint8) for _ in range(4)]
    editor.add_frames(frames)
    wait_added(qtbot, editor)
    assert on_disk(root) == {"cat": 0, "dog": 4}
    assert window.doc.undo_stack.undoText() == "Add 4 images to 'dog'"
    stored = sorted(np.asarray(Image.open(p)).tobytes() for p in (root / "dog").iterdir())
    assert stored == sorted(frame.tobytes() for frame in frames)


def test_the_camera_beside_the_images_records_into_the_chosen_class(window, qtbot,
                                                                   tmp_path):
    root = image_folder(tmp_path / "pets", {"cat": 0, "dog": 0})
    editor = open_editor(qtbot, window, root)
    qtbot.mouseClick(editor.camera_toggle, Qt.MouseButton.LeftButton)
    camera_view, clock = editor.camera, Clock()
    assert camera_view.isVisible()
    camera = FakeCamera(FRAMES, fps=0)
    camera_view.set_source(camera)
    camera_view.recorder.clock = clock
    qtbot.mouseClick(camera_view.camera_button, Qt.MouseButton.LeftButton)
    click_class(qtbot, editor, "cat")
    assert camera_view.hold_button.isEnabled() and "'cat'" in camera_view.hold_button.toolTip()
    camera_view.rate_box.setValue(4)
    qtbot.mousePress(camera_view.hold_button, Qt.MouseButton.LeftButton)
    send(camera, clock, 8, 0.125)  # a second at 8 frames a second, kept 4 a second
    qtbot.mouseRelease(camera_view.hold_button, Qt.MouseButton.LeftButton)
    wait_added(qtbot, editor)
    assert on_disk(root) == {"cat": 4, "dog": 0}
    assert window.doc.undo_stack.undoText() == "Add 4 images to 'cat'"
    qtbot.mouseClick(editor.camera_toggle, Qt.MouseButton.LeftButton)
    assert not camera_view.isVisible() and not camera.is_running()  # hidden, it stops


def test_thumbnails_are_decoded_off_the_window_thread(window, qtbot, tmp_path, monkeypatch):
    decoded_on: set[str] = set()
    real = thumbnails.read_thumbnail

    def read(path, side):
        decoded_on.add(threading.current_thread().name)
        return real(path, side)

    monkeypatch.setattr(thumbnails, "read_thumbnail", read)
    root = image_folder(tmp_path / "pets", {"cat": 30})
    editor = open_editor(qtbot, window, root)
    model = editor.model
    assert model.rowCount() == 30
    qtbot.waitUntil(lambda: model.index(0).data(Qt.ItemDataRole.DecorationRole) is not None,
                    timeout=LOAD_MS)
    assert decoded_on and threading.main_thread().name not in decoded_on


def test_a_read_only_dataset_says_so_and_cannot_be_changed(window, qtbot, tmp_path,
                                                           monkeypatch):
    root = image_folder(tmp_path / "pets", {"cat": 2})
    with read_only(root / "cat", monkeypatch):
        editor = open_editor(qtbot, window, root)
        assert "read-only" in editor.notice.text()
        assert not editor.add_button.isEnabled() and not editor.rename_button.isEnabled()
        select_images(qtbot, editor, [0])
        qtbot.keyClick(editor.grid, Qt.Key.Key_Delete)
        assert on_disk(root) == {"cat": 2}
