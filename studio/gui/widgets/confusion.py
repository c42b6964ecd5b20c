"""A confusion matrix as a table: true classes as rows, answers as columns, each cell coloured
by its share of the row (blue on the diagonal, red off it), for the Evaluate tab's classifier
and segmentation scores."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QTableView,
)

COUNT_ROLE = Qt.ItemDataRole.UserRole
"""The confusion matrix's count in a cell, as an int."""
MISTAKE_WEIGHT = 3.0
"""A wrong cell is as red as a right cell three times its share is blue."""
RIGHT = QColor("#1a73e8")
WRONG = QColor("#d93025")
INK = QColor("#202124")
_TOP = QModelIndex()
MAX_NAMED = 20
"""The most classes whose columns are headed by their names (cut short); more are numbered."""
SHORT_NAME = 5
"""The most characters of a class name a column's heading shows."""
CLICK_TIP = ("Rows: the true class. Columns: the model's answer. Colour: the cell's share of its "
             "row (blue: right, red: wrong). Click a cell to see its images.")


class Confusion(Protocol):
    """What a confusion matrix is drawn from (a classifier's or a segmentation's evaluation)."""

    confusion: np.ndarray
    class_names: Sequence[str]


def short_name(name: str) -> str:
    """A class name cut to fit a column's heading (its tooltip gives it whole)."""
    return name if len(name) <= SHORT_NAME else name[:SHORT_NAME - 1] + "…"


def share_text(share: float) -> str:
    """A cell's share of its row in whole percent, ``<1%`` for a few."""
    return "<1%" if 0 < share < 0.005 else f"{share:.0%}"


def heat(colour: QColor, strength: float) -> QColor:
    """White blended towards ``colour`` by ``strength`` (0..1)."""
    t = min(max(strength, 0.0), 1.0)
    return QColor.fromRgbF(*(1.0 - t * (1.0 - c) for c in colour.getRgbF()[:3]))


class ConfusionModel(QAbstractTableModel):
    """An evaluation's confusion matrix: true classes as rows, answers as columns, each cell
    coloured by its share of the row (blue on the diagonal, red off it). ``unit`` names what
    is counted in tooltips (`` pixels``); with ``shares`` the cells show their share of the
    row rather than their count, and are not clicked for images."""

    def __init__(self, unit: str = "", shares: bool = False) -> None:
        super().__init__()
        self.unit, self.shares = unit, shares
        self.counts = np.zeros((0, 0), np.int64)
        self.names: list[str] = []
        self.totals = np.zeros(0, np.int64)
        self.numbered = False
        """Columns show class numbers (there are many classes); rows show both."""

    def set_evaluation(self, evaluation: Confusion) -> None:
        """Show ``evaluation``'s matrix."""
        self.beginResetModel()
        self.counts = np.asarray(evaluation.confusion, np.int64)
        self.names = [str(n) for n in evaluation.class_names]
        self.totals = self.counts.sum(axis=1)
        self.numbered = len(self.names) > MAX_NAMED
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _TOP) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.names)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _TOP) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.names)

    def share(self, row: int, column: int) -> float:
        """The cell's count as a share of its row (its true class)."""
        total = int(self.totals[row])
        return int(self.counts[row, column]) / total if total else 0.0

    def strength(self, row: int, column: int) -> float:
        """How strongly the cell is coloured: the square root of its share, so that a few
        percent still shows; mistakes count MISTAKE_WEIGHT times, to stand out."""
        weight = 1.0 if row == column else MISTAKE_WEIGHT
        return math.sqrt(min(1.0, weight * self.share(row, column)))

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole):
        row, column = index.row(), index.column()
        count = int(self.counts[row, column])
        if role == COUNT_ROLE:
            return count
        if role == Qt.ItemDataRole.DisplayRole:
            if not count:
                return ""
            return share_text(self.share(row, column)) if self.shares else f"{count:,}"
        if role == Qt.ItemDataRole.BackgroundRole:
            return heat(RIGHT if row == column else WRONG, self.strength(row, column))
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor("white") if self.strength(row, column) > 0.6 else INK
        if role == Qt.ItemDataRole.ToolTipRole:
            true, answer = self.names[row], self.names[column]
            what = ("answered right" if row == column
                    else f"answered “{answer}”")
            text = (f"True class “{true}”, {what}: {count:,} of {int(self.totals[row]):,}"
                    f"{self.unit} ({self.share(row, column):.1%})")
            return text + ("\nClick to see them." if count and not self.shares else "")
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole):
        name = self.names[section]
        if role == Qt.ItemDataRole.DisplayRole:
            if orientation == Qt.Orientation.Vertical:
                return f"{section}  {name}" if self.numbered else name
            return str(section) if self.numbered else short_name(name)
        if role == Qt.ItemDataRole.ToolTipRole:
            side = "True class" if orientation == Qt.Orientation.Vertical else "Answered"
            return f"{side}: {name} (class {section})"
        return None


class HeatDelegate(QStyledItemDelegate):
    """Paints a cell's heat colour and count, and a dark frame round the chosen cell (the
    style's selection colour would hide the heat)."""

    def paint(self, painter: QPainter, option, index: QModelIndex) -> None:
        painter.save()
        rect: QRect = option.rect
        painter.fillRect(rect, index.data(Qt.ItemDataRole.BackgroundRole))
        text = index.data(Qt.ItemDataRole.DisplayRole)
        if text:
            painter.setPen(index.data(Qt.ItemDataRole.ForegroundRole))
            painter.setFont(option.font)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.setPen(QPen(INK, 2))
            painter.drawRect(rect.adjusted(1, 1, -1, -1))
        painter.restore()


class ConfusionView(QTableView):
    """The confusion matrix as a grid of small square-ish cells that scrolls when there are
    many classes."""

    def __init__(self, unit: str = "", shares: bool = False, tip: str = CLICK_TIP) -> None:
        super().__init__()
        self.setObjectName("evaluation-confusion")
        self.matrix = ConfusionModel(unit, shares)
        self.setModel(self.matrix)
        self.setItemDelegate(HeatDelegate(self))
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setShowGrid(True)
        self.setGridStyle(Qt.PenStyle.SolidLine)
        self.setCornerButtonEnabled(False)
        self.setMouseTracking(True)
        self._row_height = 40
        """The rows' height where there is room (that of the cells' width, up to 40)."""
        for header in (self.horizontalHeader(), self.verticalHeader()):
            header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
            header.setHighlightSections(True)
        self.setToolTip(tip)

    def set_evaluation(self, evaluation: Confusion) -> None:
        """Show ``evaluation``'s matrix with cells sized to its number of classes."""
        self.matrix.set_evaluation(evaluation)
        count = max(1, len(self.matrix.names))
        font = self.font()
        font.setPointSizeF(self.font().pointSizeF() * (0.8 if count > 20 else 1.0))
        self.setFont(font)
        widest = "100%" if self.matrix.shares else f"{int(self.matrix.counts.max(initial=0)):,}"
        digits = self.fontMetrics().horizontalAdvance(widest)
        side = max(digits + 8, min(56, max(24, 560 // count)))
        self.horizontalHeader().setDefaultSectionSize(side)
        self._row_height = min(side, 40)
        self._fit_rows()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Keep every row in view where the rows can shrink to fit."""
        super().resizeEvent(event)
        self._fit_rows()

    def _fit_rows(self) -> None:
        """Rows as tall as the cells are wide, but low enough (down to one line of text)
        that all of them show without scrolling."""
        room = self.viewport().height() // max(1, self.model().rowCount())
        lowest = self.fontMetrics().height() + 4
        self.verticalHeader().setDefaultSectionSize(max(lowest, min(self._row_height, room)))

    def full_width(self) -> int:
        """The width that shows every column, with room for a vertical scroll bar."""
        return (self.verticalHeader().sizeHint().width() + self.horizontalHeader().length()
                + 2 * self.frameWidth() + self.style().pixelMetric(
                    QStyle.PixelMetric.PM_ScrollBarExtent))
