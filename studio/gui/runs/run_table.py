"""The run history's table: one row per run with its status, time, scores and settings,
sortable by plain values and filtered by text and status."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from studio.core.base.messages import format_duration
from studio.core.runs.history import RunSummary, format_started
from studio.gui.widgets.filtering import refilter

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_TIPS = {
    "running": "Training now, in this app or another process.",
    "finished": "Ran every planned epoch (or early stopping ended it).",
    "stopped": "Stopped on request before its last epoch.",
    "failed": "Ended with an error.",
    "interrupted": "Its process ended without finishing: killed, crashed or the computer "
                   "stopped. Resume continues it from its last checkpoint.",
}
STATUS_COLORS = {"running": "#1a73e8", "failed": "#b3261e", "interrupted": "#b06000"}


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    tip: str
    width: int
    text: Callable[[RunSummary], str]
    sort: Callable[[RunSummary], Any]


def _score(key: str) -> Callable[[RunSummary], str]:
    return lambda run: f"{run.best[key]:.4f}" if key in run.best else ""


def _headline_value(run: RunSummary) -> float | None:
    name = run.headline_metric()
    return run.best[name] if name else None


def _status_text(run: RunSummary) -> str:
    return f"⚠ {run.status}" if run.status == "interrupted" else run.status


COLUMNS = (
    Column("id", "Run", "The run's folder: when it started and the project's name", 220,
           lambda run: run.id, lambda run: run.id),
    Column("status", "Status", "Running, finished, stopped, failed, or interrupted (its "
           "process ended without finishing)", 110, _status_text, lambda run: run.status),
    Column("started", "Started", "When the run began", 120,
           lambda run: format_started(run.started), lambda run: run.started),
    Column("seconds", "Duration", "Time spent training, over every session of the run", 75,
           lambda run: format_duration(run.seconds), lambda run: run.seconds),
    Column("epochs", "Epochs", "Epochs done of those planned", 60,
           lambda run: f"{run.epochs}/{run.epochs_planned or run.epochs}",
           lambda run: run.epochs),
    Column("score", "Best score", "The best of any epoch in the score its task values most: "
           "validation accuracy, mean IoU, mAP@0.5 or mean absolute error", 140,
           lambda run: run.headline(), _headline_value),
    Column("val_loss", "Val loss", "Lowest validation loss of any epoch", 75,
           _score("val_loss"), lambda run: run.best.get("val_loss")),
    Column("optimizer", "Optimizer", "The optimizer the run used", 75,
           lambda run: run.optimizer, lambda run: run.optimizer),
    Column("learning_rate", "Learning rate", "The initial learning rate", 90,
           lambda run: "" if run.learning_rate is None else f"{run.learning_rate:g}",
           lambda run: run.learning_rate),
    Column("batch_size", "Batch", "Samples per training step", 50,
           lambda run: "" if run.batch_size is None else str(run.batch_size),
           lambda run: run.batch_size),
)
_TOP = QModelIndex()
_NUMERIC = {"seconds", "epochs", "score", "val_loss", "learning_rate", "batch_size"}


class RunTableModel(QAbstractTableModel):
    """The runs as table rows; sorting reads plain values (SORT_ROLE), not the text."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[RunSummary] = []
        self._search: list[str] = []

    def set_runs(self, runs: list[RunSummary]) -> None:
        """Show ``runs`` instead of the rows shown."""
        self.beginResetModel()
        self.runs = list(runs)
        self._search = [" ".join((r.id, r.name, r.status, r.optimizer, r.error or "")).lower()
                        for r in self.runs]
        self.endResetModel()

    def search_text(self, row: int) -> str:
        """The lower-case text the filter looks in."""
        return self._search[row]

    def sort_value(self, row: int, column: int) -> Any:
        """The value column ``column`` sorts row ``row`` by (None when it has none)."""
        return COLUMNS[column].sort(self.runs[row])

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _TOP) -> int:
        return 0 if parent.isValid() else len(self.runs)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _TOP) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMNS[section].tip
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        run, column = self.runs[index.row()], COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(run)
        if role == SORT_ROLE:
            return column.sort(run)
        if role == Qt.ItemDataRole.TextAlignmentRole and column.key in _NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if column.key == "status":
            return self._status_data(run, role)
        if role == Qt.ItemDataRole.ToolTipRole and column.key == "id":
            return f"{run.name}\n{run.path}"
        return None

    @staticmethod
    def _status_data(run: RunSummary, role: int) -> Any:
        if role == Qt.ItemDataRole.ForegroundRole and run.status in STATUS_COLORS:
            return QColor(STATUS_COLORS[run.status])
        if role == Qt.ItemDataRole.FontRole and run.status == "interrupted":
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = STATUS_TIPS.get(run.status, "")
            return f"{tip}\n{run.error}" if run.error else tip
        return None


class RunFilterModel(QSortFilterProxyModel):
    """Keeps the runs whose text contains the filter (any case) and whose status matches;
    runs without a value sort last either way."""

    def __init__(self, source: RunTableModel) -> None:
        super().__init__()
        self.setSourceModel(source)
        self.setSortRole(SORT_ROLE)
        self.text = ""
        self.status = ""

    def set_filter(self, text: str | None = None, status: str | None = None) -> None:
        """Change the text and/or the status to keep ("" keeps all)."""
        def change() -> None:
            self.text = self.text if text is None else text.strip().lower()
            self.status = self.status if status is None else status

        refilter(self, change)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        model: RunTableModel = self.sourceModel()
        return ((not self.status or model.runs[row].status == self.status)
                and self.text in model.search_text(row))

    def lessThan(self, left: QModelIndex | QPersistentModelIndex,
                 right: QModelIndex | QPersistentModelIndex) -> bool:
        model: RunTableModel = self.sourceModel()
        a = model.sort_value(left.row(), left.column())
        b = model.sort_value(right.row(), right.column())
        if a is None or b is None:
            missing_last = self.sortOrder() == Qt.SortOrder.AscendingOrder
            return (b is None and a is not None) if missing_last else (a is None
                                                                        and b is not None)
        return a < b


class RunTable(QTableView):
    """The runs, sortable and filtered; the newest first until a header is clicked."""

    def __init__(self) -> None:
        super().__init__()
        self.runs_model = RunTableModel()
        self.proxy = RunFilterModel(self.runs_model)
        self.setObjectName("history-table")
        self.setModel(self.proxy)
        self.setSortingEnabled(True)
        self.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().hide()
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.horizontalHeader()
        header.setStretchLastSection(False)
        header.setHighlightSections(False)
        for i, column in enumerate(COLUMNS):
            header.resizeSection(i, column.width)
        self.fill_width(True)

    def fill_width(self, fill: bool) -> None:
        """Stretch the Run column over the width the others leave, or (in a narrow table,
        where that would leave it a sliver) keep it at its own width and scroll sideways."""
        header = self.horizontalHeader()
        if fill:
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        else:
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(0, COLUMNS[0].width)

    def selected_runs(self) -> list[RunSummary]:
        """The selected runs, top to bottom as shown."""
        rows = sorted(self.selectionModel().selectedRows(), key=lambda i: i.row())
        return [self.runs_model.runs[self.proxy.mapToSource(i).row()] for i in rows]

    def select_runs(self, run_ids: Sequence[str]) -> None:
        """Select the rows of these runs (those shown)."""
        wanted = set(run_ids)
        selection = QItemSelection()
        for row, run in enumerate(self.runs_model.runs):
            if run.id in wanted:
                index = self.proxy.mapFromSource(self.runs_model.index(row, 0))
                if index.isValid():
                    selection.select(index, index)
        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                 | QItemSelectionModel.SelectionFlag.Rows)
        self.selectionModel().select(selection, flags)
