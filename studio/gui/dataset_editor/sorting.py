"""The keys and menu that sort selected images of an image folder, shared by the dataset
editor's grid and the Samples grid: 1–9 move them to that class (the dataset's classes in
their order, as the class list numbers them), F flags or unflags them, Delete sends them to
the trash."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from studio.gui.dataset_editor.class_list import KEYS


def key_action(text: str, keys, slot: Callable[[], object], widget: QWidget,
               context: Qt.ShortcutContext = Qt.ShortcutContext.WidgetShortcut) -> QAction:
    """An action of ``widget`` whose keys work while it (or, by ``context``, a widget inside
    it) has the focus; Help > Keyboard Shortcuts lists it."""
    action = QAction(text, widget)
    action.setShortcut(QKeySequence(keys))
    action.setShortcutContext(context)
    action.triggered.connect(lambda _=False: slot())
    widget.addAction(action)
    return action


def sorting_actions(grid: QWidget, move_to_number: Callable[[int], object],
                    toggle_flags: Callable[[], object],
                    delete: Callable[[], object]) -> tuple[QAction, QAction, list[QAction]]:
    """The flag, delete and move-to-class-N actions of ``grid``, working while it has the
    focus (the same texts wherever they are, so Help lists each once)."""
    flag = key_action("Flag or Unflag Images", "F", toggle_flags, grid)
    remove = key_action("Delete Images", "Delete", delete, grid)
    moves = [key_action(f"Move Images to Class {number}", str(number),
                        lambda n=number: move_to_number(n), grid)
             for number in range(1, KEYS + 1)]
    return flag, remove, moves


def sorting_menu(parent: QWidget, classes: Sequence[str], move: Callable[[str], object],
                 actions: Sequence[QAction], why_not: str | None = None) -> QMenu:
    """A menu to move the selected images to one of ``classes`` (with their keys), then
    ``actions`` (flag, delete); with ``why_not``, every item is disabled and says why."""
    menu = QMenu(parent)
    menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one is made per right-click
    menu.setToolTipsVisible(True)
    moves = menu.addMenu("Move to")
    for number, name in enumerate(classes, 1):
        action = moves.addAction(name.replace("&", "&&"), lambda name=name: move(name))
        if number <= KEYS:
            action.setShortcut(str(number))
    if why_not is None:
        moves.setEnabled(bool(classes))
        menu.addActions(list(actions))
        return menu
    for action in [moves.menuAction()] + [menu.addAction(a.text()) for a in actions]:
        action.setEnabled(False)  # the grid's own actions stay: their keys say why too
        action.setToolTip(why_not)
    return menu
