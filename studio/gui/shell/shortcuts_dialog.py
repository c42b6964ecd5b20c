"""Help > Keyboard Shortcuts: every shortcut of the window's actions, with a filter."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QHeaderView,
    QLineEdit,
    QMainWindow,
    QMenu,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from studio.gui.widgets.deferred import build_all


def _plain(text: str) -> str:
    """A menu text as read: without its mnemonic marks and ellipsis."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…")


def _menu_of(window: QMainWindow) -> dict[QAction, str]:
    """The menu each action of the window's menu bar sits in (``Edit``, ``File > Open Recent``)."""
    where: dict[QAction, str] = {}

    def walk(menu: QMenu, path: str) -> None:
        for action in menu.actions():
            if action.menu() is not None:
                walk(action.menu(), f"{path} > {_plain(action.text())}")
            else:
                where.setdefault(action, path)

    for top in window.menuBar().actions():
        if top.menu() is not None:
            walk(top.menu(), _plain(top.text()))
    return where


def _place(action: QAction) -> str:
    """Where an action outside the menus works: the outermost tab or dock holding it
    (``Search tab``, ``Runs dock``)."""
    place = ""
    widget = action.parent()
    while widget is not None:
        holder = widget.parent()
        if isinstance(widget, QDockWidget):
            place = f"{widget.windowTitle()} dock"
        elif holder is not None and isinstance(holder.parent(), QTabWidget):
            tabs = holder.parent()
            if tabs.indexOf(widget) >= 0:
                place = f"{_plain(tabs.tabText(tabs.indexOf(widget)))} tab"
        widget = holder
    return place


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str, str]]:
    """(command, keys, where) for every action of ``window`` that has a shortcut: the menu
    actions in menu order, then the others with the tab or dock they work in; the keys as
    this platform writes them. The tabs and docks not built yet are built first (their
    actions are made with them)."""
    build_all(window)
    menus = _menu_of(window)
    actions = [*menus, *(a for a in window.findChildren(QAction) if a not in menus)]
    rows = []
    for action in actions:
        keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText)
                         for k in action.shortcuts())
        if keys and action.text():
            rows.append((_plain(action.text()), keys, menus.get(action) or _place(action)))
    return list(dict.fromkeys(rows))


class ShortcutsDialog(QDialog):
    """The shortcuts of ``window``'s actions as a table; typing filters it."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard Shortcuts")
        self.filter = QLineEdit()
        self.filter.setObjectName("shortcuts-filter")
        self.filter.setPlaceholderText("Filter by command, key or place")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        self.table = QTreeWidget()
        self.table.setHeaderLabels(["Command", "Shortcut", "Where"])
        self.table.setRootIsDecorated(False)
        self.table.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for row in shortcut_rows(window):
            QTreeWidgetItem(self.table, list(row))
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.table, 1)
        self.resize(520, 480)
        self.filter.setFocus(Qt.FocusReason.OtherFocusReason)

    def shown_rows(self) -> list[tuple[str, str, str]]:
        """The rows the filter lets through, top to bottom."""
        items = (self.table.topLevelItem(i) for i in range(self.table.topLevelItemCount()))
        return [tuple(item.text(c) for c in range(3)) for item in items if not item.isHidden()]

    @Slot(str)
    def _filter(self, text: str) -> None:
        words = text.casefold().split()
        for i in range(self.table.topLevelItemCount()):
            item = self.table.topLevelItem(i)
            line = " ".join(item.text(c) for c in range(3)).casefold()
            item.setHidden(not all(word in line for word in words))
