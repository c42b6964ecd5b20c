"""The answers for a folder of images as a sortable table, which can show only the answers
the model was least sure of."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor

from studio.core.inference.predictor import Prediction
from studio.gui.tasks.registry import views_for
from studio.gui.tasks.views import AnswerCells
from studio.gui.widgets.filtering import refilter

COLUMNS = ("File", "Answer", "Probability", "Next best", "Time", "Problem")
TIPS = ("The image file", "The class the model finds most likely",
        "The model's probability for that class", "The classes that came next, with theirs",
        "Time to read, prepare and answer the image (its share of the batch)",
        "Why the file could not be answered")
SORT_ROLE = Qt.ItemDataRole.UserRole
_TOP = QModelIndex()
_ERROR = QColor("#b3261e")


class PredictionTableModel(QAbstractTableModel):
    """Rows of predictions; numbers sort as numbers (``SORT_ROLE``)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[Prediction] = []

    def set_rows(self, rows: Sequence[Prediction]) -> None:
        """Show ``rows`` instead of what was shown."""
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def add_rows(self, rows: Sequence[Prediction]) -> None:
        """Append ``rows``."""
        if not rows:
            return
        self.beginInsertRows(_TOP, len(self.rows), len(self.rows) + len(rows) - 1)
        self.rows.extend(rows)
        self.endInsertRows()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _TOP) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _TOP) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return TIPS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return _text(row, column)
        if role == SORT_ROLE:
            return _sort_value(row, column)
        if role == Qt.ItemDataRole.ForegroundRole and row.error:
            return _ERROR
        if role == Qt.ItemDataRole.ToolTipRole and column in (0, 5):
            return row.source if column == 0 else row.error
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (2, 4):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class ConfidenceFilter(QSortFilterProxyModel):
    """The table's rows, sorted as their numbers sort; while ``below`` is set, only the
    answers with a confidence under it (a fraction) show."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.below: float | None = None

    def set_below(self, below: float | None) -> None:
        """Show only answers less sure than ``below``, or (None) every row."""
        refilter(self, lambda: setattr(self, "below", below))

    def filterAcceptsRow(self, row: int,  # noqa: N802 - Qt's name
                         parent: QModelIndex | QPersistentModelIndex) -> bool:
        if self.below is None:
            return True
        confidence = _cells(self.sourceModel().rows[row]).sort_confidence
        return 0 <= confidence < self.below

    def shown_rows(self) -> list[Prediction]:
        """The rows shown, top to bottom."""
        rows = self.sourceModel().rows
        return [rows[self.mapToSource(self.index(row, 0)).row()]
                for row in range(self.rowCount())]


def _cells(row: Prediction) -> AnswerCells:
    """The answer's cells as the row's task draws them (none for a file not answered)."""
    if row.error or not row.task:
        return AnswerCells()
    return views_for(row.task).table_cells(row)


def _text(row: Prediction, column: int) -> str:
    if column == 0:
        return row.source.replace("\\", "/").rsplit("/", 1)[-1]
    if column in (1, 2, 3):
        cells = _cells(row)
        return (cells.answer, cells.confidence, cells.next_best)[column - 1]
    if column == 4:
        return f"{row.seconds * 1000:.1f} ms"
    return row.error or ""


def _sort_value(row: Prediction, column: int) -> Any:
    if column == 2:
        return _cells(row).sort_confidence
    if column == 4:
        return row.seconds
    return _text(row, column).lower()
