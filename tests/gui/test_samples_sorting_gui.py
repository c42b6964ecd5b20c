"""The Samples grid sorts an image folder as the Edit tab does, driven as a person would:
cards selected with Ctrl+click, keys 1–9 moving their files to a class, F flagging, Delete
sending them to the trash and the right-click menu, each one step that Ctrl+Z undoes; other
data refuses, saying why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu

from studio.core.data.types import FileSamples
from studio.gui.data.sorting import FLAG_MARK
from studio.gui.shell.shortcuts_dialog import shortcut_rows
from studio.gui.widgets.dataset_edits import NOT_A_FOLDER
from tests.gui.support import show_tab
from tests.gui.test_data_gui import image_folder, open_data_view, show_data_tab
from tests.gui.test_dataset_editor_gui import on_disk

LOAD_MS = 20_000
LEFT = Qt.MouseButton.LeftButton
CTRL = Qt.KeyboardModifier.ControlModifier


def read(qtbot, panel) -> None:
    """Wait for the data to be read (again)."""
    qtbot.waitUntil(lambda: panel.loaded is not None and not (
        panel.loader.busy() or panel.timer.isActive()), timeout=LOAD_MS)


def open_samples(qtbot, window, folder: Path):
    """Choose ``folder`` as the data and show the Samples tab once it is read."""
    panel = window.data_panel
    panel.source.pick(folder)
    show_tab(qtbot, window, "Data")
    read(qtbot, panel)
    show_data_tab(qtbot, panel, panel.samples)
    return panel


def click_cards(qtbot, samples, rows: list[int]) -> list[Path]:
    """Click the cards of ``rows``, the later ones with Ctrl; their files (if they are)."""
    grid = samples.grid
    for k, row in enumerate(rows):
        rect = grid.visualItemRect(grid.item(row))
        qtbot.mouseClick(grid.viewport(), LEFT, CTRL if k else Qt.KeyboardModifier.NoModifier,
                         rect.center())
    assert len(grid.selectedItems()) == len(rows)
    files = samples.loaded.samples
    return ([files.paths[i] for i in samples.selected_samples()]
            if isinstance(files, FileSamples) else [])


def right_click(grid, row: int, choose) -> None:
    """Right-click the card of ``row``; ``choose`` is called with the menu shown, and
    closes it."""
    QTimer.singleShot(0, lambda: choose(QApplication.activePopupWidget()))
    at = grid.visualItemRect(grid.item(row)).center()
    QApplication.sendEvent(grid.viewport(), QContextMenuEvent(
        QContextMenuEvent.Reason.Mouse, at, grid.viewport().mapToGlobal(at)))


def offered(menu: QMenu) -> list[tuple[str, bool, str]]:
    """Each item of ``menu`` (and of its submenus, after it): text, enabled, tooltip."""
    items = [(a.text(), a.isEnabled(), a.toolTip()) for a in menu.actions()]
    for action in menu.actions():
        if action.menu() is not None:
            items += offered(action.menu())
    return items


def cards_of(samples, label: str) -> list[int]:
    grid = samples.grid
    return [row for row in range(grid.count()) if grid.item(row).text() == label]


def reread_after(qtbot, panel, change) -> None:
    """Do ``change`` (to the folder's files) and wait for the Data view to read them again."""
    before = panel.loaded
    change()
    qtbot.waitUntil(lambda: panel.loaded is not before, timeout=LOAD_MS)
    read(qtbot, panel)


def class_counts(panel) -> dict[str, int]:
    loaded = panel.loaded
    return {name: int(np.count_nonzero(loaded.labels == k))
            for k, name in enumerate(loaded.info.class_names)}


def test_a_number_key_moves_the_selected_samples_files_and_ctrl_z_moves_them_back(
        window, qtbot, tmp_path):
    root = image_folder(tmp_path / "pets", {"cat": 5, "dog": 3})
    panel = open_samples(qtbot, window, root)
    samples, grid = panel.samples, panel.samples.grid
    chosen = click_cards(qtbot, samples, cards_of(samples, "cat")[:2])
    reread_after(qtbot, panel, lambda: qtbot.keyClick(grid, Qt.Key.Key_2))
    assert on_disk(root) == {"cat": 3, "dog": 5}
    assert all((root / "dog" / path.name).is_file() for path in chosen)
    assert window.doc.undo_stack.undoText() == "Move 2 images to 'dog'"
    assert samples.notice.text() == "Move 2 images to 'dog'. Undo with Ctrl+Z."
    assert class_counts(panel) == {"cat": 3, "dog": 5}  # the Data view read it again

    assert not grid.selectedItems()
    click_cards(qtbot, samples, [0])
    qtbot.keyClick(grid, Qt.Key.Key_3)
    assert samples.notice.text() == "The dataset has 2 classes: there is no class 3."
    reread_after(qtbot, panel, lambda: qtbot.keyClick(grid, Qt.Key.Key_Z, CTRL))
    assert on_disk(root) == {"cat": 5, "dog": 3}
    assert all(path.is_file() for path in chosen)
    assert samples.notice.text() == "Undone: Move 2 images to 'dog'."
    assert class_counts(panel) == {"cat": 5, "dog": 3}


def test_delete_sends_the_selected_samples_to_the_trash_and_undo_restores_them(
        window, qtbot, tmp_path):
    root = image_folder(tmp_path / "pets", {"cat": 4, "dog": 3})
    panel = open_samples(qtbot, window, root)
    samples, grid = panel.samples, panel.samples.grid
    chosen = click_cards(qtbot, samples, [*cards_of(samples, "cat")[:1],
                                          *cards_of(samples, "dog")[:1]])
    reread_after(qtbot, panel, lambda: qtbot.keyClick(grid, Qt.Key.Key_Delete))
    assert on_disk(root) == {"cat": 3, "dog": 2}
    assert not any(path.exists() for path in chosen)
    assert len(list((root / ".trash").rglob("*.png"))) == 2
    assert window.doc.undo_stack.undoText() == "Delete 2 images"
    assert class_counts(panel) == {"cat": 3, "dog": 2}
    reread_after(qtbot, panel, lambda: qtbot.keyClick(grid, Qt.Key.Key_Z, CTRL))
    assert on_disk(root) == {"cat": 4, "dog": 3}
    assert all(path.is_file() for path in chosen)

    click_cards(qtbot, samples, [*cards_of(samples, "cat")[:1], *cards_of(samples, "dog")[:1]])
    menus = []

    def look(menu: QMenu) -> None:
        menus.append([item[:2] for item in offered(menu)])
        menu.close()

    right_click(grid, cards_of(samples, "cat")[0], look)
    assert menus == [[("Move to", True), ("Flag or Unflag Images", True),
                      ("Delete Images", True), ("cat", True), ("dog", True)]]
    assert len(grid.selectedItems()) == 2  # the right-click kept the selection

    def move_to_dog(menu: QMenu) -> None:
        (dog,) = [a for a in menu.actions()[0].menu().actions() if a.text() == "dog"]
        dog.trigger()
        menu.close()

    chosen = click_cards(qtbot, samples, cards_of(samples, "cat")[:1])
    reread_after(qtbot, panel, lambda: right_click(grid, cards_of(samples, "cat")[0],
                                                   move_to_dog))
    assert on_disk(root) == {"cat": 3, "dog": 4} and (root / "dog" / chosen[0].name).is_file()
    assert window.doc.undo_stack.undoText() == "Move 1 image to 'dog'"


def test_f_flags_the_selected_samples_and_again_unflags_them(window, qtbot, tmp_path):
    root = image_folder(tmp_path / "pets", {"cat": 4, "dog": 3})
    panel = open_samples(qtbot, window, root)
    samples, grid = panel.samples, panel.samples.grid
    rows = cards_of(samples, "dog")[:2]
    chosen = click_cards(qtbot, samples, rows)
    qtbot.keyClick(grid, Qt.Key.Key_F)
    dataset = panel.sorting.dataset.dataset()
    assert dataset.flagged() == {path.name for path in chosen}
    assert window.doc.undo_stack.undoText() == "Flag 2 images"
    assert [grid.item(row).text() for row in rows] == [FLAG_MARK + "dog"] * 2
    read(qtbot, panel)  # read again: the marks are written on the new cards too
    assert sum(grid.item(row).text() == FLAG_MARK + "dog" for row in range(grid.count())) == 2

    chosen = click_cards(qtbot, samples, [row for row in range(grid.count())
                                          if grid.item(row).text().startswith(FLAG_MARK)])
    qtbot.keyClick(grid, Qt.Key.Key_F)  # all flagged: F unflags them
    assert dataset.flagged() == set()
    assert window.doc.undo_stack.undoText() == "Unflag 2 images"
    window.undo_action.trigger()
    assert dataset.flagged() == {path.name for path in chosen}


def test_the_bundled_mnist_cannot_be_sorted_and_says_why(window, qtbot):
    panel = open_data_view(qtbot, window)
    samples, grid, stack = panel.samples, panel.samples.grid, window.doc.undo_stack
    qtbot.waitUntil(lambda: grid.count() > 0)
    click_cards(qtbot, samples, [0, 1])
    before = stack.count()
    for key in (Qt.Key.Key_1, Qt.Key.Key_F, Qt.Key.Key_Delete):
        samples.notice.clear()
        qtbot.keyClick(grid, key)
        assert samples.notice.text() == NOT_A_FOLDER
    assert stack.count() == before and len(grid.selectedItems()) == 2

    menus = []

    def look(menu: QMenu) -> None:
        menus.append(offered(menu))
        menu.close()

    right_click(grid, 0, look)
    assert menus == [[("Move to", False, NOT_A_FOLDER),
                      ("Flag or Unflag Images", False, NOT_A_FOLDER),
                      ("Delete Images", False, NOT_A_FOLDER)]]


def test_help_lists_the_samples_grids_keys_as_the_editors(window):
    rows = shortcut_rows(window)
    sorting, editor = window.data_panel.sorting, window.data_panel.editor
    assert [a.text() for a in (sorting.flag_action, sorting.delete_action)] == [
        editor.flag_action.text(), editor.delete_action.text()]
    keys = [(a.text(), a.shortcut().toString(QKeySequence.SequenceFormat.NativeText), "Data tab")
            for a in (sorting.flag_action, sorting.delete_action, *sorting.move_actions)]
    assert keys[0] == ("Flag or Unflag Images", "F", "Data tab")
    assert keys[-1] == ("Move Images to Class 9", "9", "Data tab")
    assert set(keys) <= set(rows)  # one row each, for both grids of the Data tab
