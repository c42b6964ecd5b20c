"""A read-only table of scores, one row per class (or trial), sorted by clicking a heading:
numbers sort as numbers."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
"""What a score table sorts a column by."""


def score_cell(text: str, key: str | float, tip: str = "", number: bool = False
               ) -> QStandardItem:
    """A read-only cell showing ``text`` and sorting by ``key``; numbers align right."""
    item = QStandardItem(text)
    item.setData(key, SORT_ROLE)
    item.setEditable(False)
    item.setToolTip(tip)
    if number:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def number_cell(text: str, value: float | None) -> QStandardItem:
    """A right-aligned cell showing ``text`` and sorting by ``value``; None (no score) sorts
    below every score in [0, 1] and every count."""
    return score_cell(text, -1.0 if value is None else value, number=True)


def class_row(name: str, index: int, scores: Sequence[tuple[str, float | None]], role: int,
              unscored: str) -> list[QStandardItem]:
    """A class's row: its ``name`` (sorting by ``index``) and its ``scores`` (each a text and
    the value it sorts by) as number cells, every cell holding ``index`` in ``role``; the
    first score, when it is None, tells why in the tooltip ``unscored``."""
    cells = [score_cell(name, index), *(number_cell(text, value) for text, value in scores)]
    for cell in cells:
        cell.setData(index, role)
    if scores[0][1] is None:
        cells[1].setToolTip(unscored)
    return cells


def headed_model(columns: Sequence[tuple[str, str]]) -> QStandardItemModel:
    """An empty table of ``columns``, each a heading and its tooltip."""
    model = QStandardItemModel(0, len(columns))
    for column, (title, tip) in enumerate(columns):
        header = QStandardItem(title)
        header.setToolTip(tip)
        model.setHorizontalHeaderItem(column, header)
    return model


def score_table(owner: QObject) -> tuple[QTableView, QSortFilterProxyModel]:
    """A table of whole rows, read-only, with alternating colours, no row numbers, and its
    columns as wide as their contents but the first (the names), which takes the spare
    width; it shows a proxy (owned by ``owner``) that sorts by SORT_ROLE: set the rows with
    ``proxy.setSourceModel``."""
    table = QTableView()
    proxy = QSortFilterProxyModel(owner)
    proxy.setSortRole(SORT_ROLE)
    table.setModel(proxy)
    table.setSortingEnabled(True)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.verticalHeader().hide()
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)

    def stretch_names(_old: int, new: int) -> None:
        # The names take the spare width, so the scores sit beside them, not far right; a
        # new source model makes new sections, each in the default mode.
        if new:
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)

    header.sectionCountChanged.connect(stretch_names)
    return table, proxy
