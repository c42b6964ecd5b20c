"""Small helpers that drive the main window the way a person would."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QHeaderView,
    QTableView,
    QTreeWidgetItem,
    QWidget,
)

from studio.core.runs import folders as runs
from studio.gui.editor.model_list import ID_ROLE

RUN_TIMEOUT_MS = 90_000
"""Generous upper bound for a short run (the first one also imports TensorFlow)."""


def isolate_settings(folder: Path) -> None:
    """Keep the window's QSettings (saved geometry) out of the user's real configuration."""
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.NativeFormat, scope, str(folder))
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(folder))


def row_ids(window) -> list[str]:
    """The layer ids as the model list shows them, top to bottom."""
    table = window.model_list.table
    return [table.topLevelItem(i).data(0, ID_ROLE) for i in range(table.topLevelItemCount())]


def row_item(window, node_id: str) -> QTreeWidgetItem:
    """The model-list row of ``node_id``."""
    table = window.model_list.table
    for i in range(table.topLevelItemCount()):
        item = table.topLevelItem(i)
        if item.data(0, ID_ROLE) == node_id:
            return item
    raise AssertionError(f"no row for {node_id!r} in {row_ids(window)}")


def show_tab(qtbot, window, title: str) -> None:
    """Click the "Canvas" or "List" tab above the model."""
    bar = window.views.tabBar()
    index = next(i for i in range(bar.count()) if bar.tabText(i) == title)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert window.views.currentIndex() == index


def click_row(qtbot, window, node_id: str) -> None:
    """Open the List tab if needed and click the row of ``node_id``."""
    if window.views.currentWidget() is not window.model_list:
        show_tab(qtbot, window, "List")
    table = window.model_list.table
    item = row_item(window, node_id)
    table.scrollToItem(item)
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualItemRect(item).center())
    assert window.model_list.selected_id() == node_id


def click_palette_entry(qtbot, window, layer_type: str, double: bool = False) -> None:
    """Click (or double-click) ``layer_type`` in the layer palette."""
    tree = window.palette.tree
    item = window.palette.item_for(layer_type)
    tree.scrollToItem(item)
    pos = tree.visualItemRect(item).center()
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    if double:
        qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def type_into(qtbot, widget: QWidget, text: str) -> None:
    """Click into an editor, select its whole text and type ``text``."""
    pos = (QPoint(6, widget.height() // 2) if isinstance(widget, QAbstractSpinBox)
           else widget.rect().center())
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=pos)
    qtbot.keyClick(widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(widget, text)


def run_status(run_dir: Path) -> dict:
    """The run.json of a run folder."""
    return json.loads((Path(run_dir) / runs.RUN_FILE).read_text(encoding="utf-8"))


def run_folders(root: Path) -> list[Path]:
    """Run folders under a runs root, oldest first."""
    if not root.exists():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir())


def drop_on(widget: QWidget, paths: list[Path]) -> bool:
    """Drag ``paths`` onto the middle of ``widget`` and let go, as the system would: the
    events go to the widget under the pointer and travel up until one takes them. True if
    the drop was taken."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    point = QPoint(widget.width() // 2, widget.height() // 2)
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(point, Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(widget, enter)
    if not enter.isAccepted():
        return False
    drop = QDropEvent(QPointF(point), Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(widget, drop)
    return drop.isAccepted()


def copied_run(run: Path, runs_folder: Path) -> Path:
    """A copy of the run folder ``run`` in ``runs_folder`` (shared runs stay untouched)."""
    target = runs_folder / run.name
    shutil.copytree(run, target)
    return target


def try_tab(qtbot, window, run: Path, tab: QWidget) -> QWidget:
    """Show the Try view answering with a copy of ``run`` and, once its model is loaded,
    click ``tab`` (one of its tabs: Draw, Camera…); the tab back."""
    copied_run(run, runs_of(window))
    panel = window.try_panel
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        window.views.setCurrentWidget(panel)
    bar = panel.tabs.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton,
                     pos=bar.tabRect(panel.tabs.indexOf(tab)).center())
    assert panel.tabs.currentWidget() is tab
    return tab


def runs_of(window) -> Path:
    """Where the window's project keeps its runs (an unsaved one: in its scratch folder)."""
    return runs.runs_root(window.doc.place)


def names_stretch(table: QTableView) -> bool:
    """Whether a score table's first column (the names) takes the spare width while the
    scores are as wide as their contents (not the last column stretched far right)."""
    header = table.horizontalHeader()
    modes = [header.sectionResizeMode(i) for i in range(header.count())]
    return (not header.stretchLastSection() and modes[:1] == [QHeaderView.ResizeMode.Stretch]
            and set(modes[1:]) <= {QHeaderView.ResizeMode.ResizeToContents})
