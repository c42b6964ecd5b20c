"""The live table of a search's trials: number, status, each searched value, the best metric,
each extra objective's measure and the duration, sortable, with the best trial (or, for
several objectives, the trials on the Pareto front) highlighted."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QComboBox, QHeaderView, QTableView

from studio.core.base.messages import format_duration
from studio.core.search.space import OBJECTIVE_NAMES, target_label
from studio.core.search.state import TrialRecord, front_of
from studio.gui.widgets.dimension_dialog import format_value

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
"""A cell's value for sorting (numbers as numbers, text as text, missing last)."""
BEST_BRUSH = QBrush(QColor("#e6f4ea"))
FAILED_BRUSH = QBrush(QColor("#b3261e"))
QUIET_BRUSH = QBrush(QColor("#5f6368"))
STATUS_WORDS = {"running": "running…", "finished": "finished", "failed": "failed",
                "pruned": "stopped early", "stopped": "stopped"}


_NAMES = {"map50": "mAP@0.5", "map": "mAP@[0.5:0.95]", "mae": "mean absolute error",
          "mean_iou": "mean IoU"}
"""Logged names people read otherwise."""


def metric_words(metric: str) -> str:
    """``val_accuracy`` as ``validation accuracy``, ``val_map50`` as ``validation mAP@0.5``."""
    name = metric.removeprefix("val_")
    words = _NAMES.get(name, name.replace("_", " "))
    return f"validation {words}" if metric.startswith("val_") else words


def metric_title(metric: str) -> str:
    """``metric_words`` starting with a capital: ``Validation mAP@0.5``."""
    words = metric_words(metric)
    return words[:1].upper() + words[1:]


def offer_metrics(box: QComboBox, choices: Sequence[str]) -> None:
    """List the metrics ``choices`` by their titles in ``box``, unless it lists them already;
    the box does not signal the change."""
    if [box.itemData(i) for i in range(box.count())] == list(choices):
        return
    box.blockSignals(True)
    box.clear()
    for name in choices:
        box.addItem(metric_title(name), name)
    box.blockSignals(False)


def best_of(values: list[float], minimize: bool) -> float | None:
    """The best of ``values`` by the metric's direction (NaN ignored), or None."""
    usable = [v for v in values if v is not None and math.isfinite(v)]
    if not usable:
        return None
    return min(usable) if minimize else max(usable)


class TrialModel(QAbstractTableModel):
    """One row per trial, from the runner's events. A trial is a TrialRecord dict (number,
    params, status, value, reason, seconds, run_dir, epochs, measures)."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.metric = "val_accuracy"
        self.minimize = False
        self.objectives: list[str] = []
        self.trials: list[dict[str, Any]] = []
        self.best: int | None = None
        """The number of the best finished trial, or None."""
        self.front: list[int] = []
        """The numbers of the trials on the Pareto front (the best alone for one objective)."""

    def start(self, targets: list[str], metric: str, minimize: bool,
              trials: list[dict[str, Any]] = (), objectives: Sequence[str] = ()) -> None:
        """Show a new search over ``targets`` optimising ``metric`` and the extra
        ``objectives`` (with the trials it kept, on a resume)."""
        self.beginResetModel()
        self.targets = list(targets)
        self.metric = metric
        self.minimize = minimize
        self.objectives = list(objectives)
        self.trials = [dict(t) for t in trials]
        self._find_best()
        self.endResetModel()

    def row_of(self, number: int) -> int:
        """The row of trial ``number``, or -1."""
        return next((i for i, t in enumerate(self.trials) if t["number"] == number), -1)

    def trial(self, number: int) -> dict[str, Any] | None:
        """Trial ``number``'s record, or None."""
        row = self.row_of(number)
        return self.trials[row] if row >= 0 else None

    def update(self, record: dict[str, Any]) -> None:
        """Add trial ``record["number"]`` or merge ``record`` into it."""
        row = self.row_of(record["number"])
        if row < 0:
            row = len(self.trials)
            self.beginInsertRows(QModelIndex(), row, row)
            self.trials.append({"status": "running", "value": None, "reason": "",
                                "seconds": None, "epochs": [], **record})
            self.endInsertRows()
        else:
            self.trials[row].update(record)
            self._row_changed(row)
        self._find_best()

    def add_epoch(self, number: int, epoch: int, metrics: dict[str, float],
                  seconds: float | None = None) -> None:
        """Record an epoch of a running trial (its best metric so far shows at once)."""
        row = self.row_of(number)
        if row < 0:
            return
        trial = self.trials[row]
        trial["epochs"] = [*(trial.get("epochs") or []), {"epoch": epoch, **metrics}]
        if seconds is not None:
            trial["seconds"] = seconds
        self._row_changed(row)

    def best_metric(self, trial: dict[str, Any]) -> float | None:
        """The trial's value, or while it runs the best metric of its epochs so far."""
        if trial.get("value") is not None:
            return trial["value"]
        return best_of([e.get(self.metric) for e in trial.get("epochs") or []], self.minimize)

    def _find_best(self) -> None:
        finished = [t for t in self.trials if t["status"] == "finished"
                    and t.get("value") is not None and math.isfinite(t["value"])]
        best = None
        if finished:
            pick = min if self.minimize else max
            best = pick(finished, key=lambda t: t["value"])["number"]
        front = front_of([TrialRecord.from_dict(t) for t in self.trials], self.minimize,
                         self.objectives)
        if best != self.best or front != self.front:
            changed = {self.best, best, *self.front, *front}
            self.best, self.front = best, front
            for number in changed:
                if number is not None and self.row_of(number) >= 0:
                    self._row_changed(self.row_of(number))

    def _row_changed(self, row: int) -> None:
        self.dataChanged.emit(self.index(row, 0), self.index(row, self.columnCount() - 1))

    def headers(self) -> list[str]:
        """The column titles."""
        return ["#", "Status", *(target_label(t) for t in self.targets),
                f"Best {metric_words(self.metric)}",
                *(OBJECTIVE_NAMES[name] for name in self.objectives), "Duration"]

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.trials)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.targets) + len(self.objectives) + 4

    def _objective(self, column: int) -> str | None:
        """The extra objective shown in ``column``, if it shows one."""
        index = column - len(self.targets) - 3
        return self.objectives[index] if 0 <= index < len(self.objectives) else None

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers()[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            if section == len(self.targets) + 2:
                direction = "lowest" if self.minimize else "highest"
                return f"The trial's {direction} {metric_words(self.metric)} over its epochs"
        return None

    def raw(self, trial: dict[str, Any], column: int) -> Any:
        """The value of a cell, before it is written as text."""
        if column == 0:
            return trial["number"]
        if column == 1:
            return trial["status"]
        if column < len(self.targets) + 2:
            return trial.get("params", {}).get(self.targets[column - 2])
        if column == len(self.targets) + 2:
            return self.best_metric(trial)
        if (name := self._objective(column)) is not None:
            return (trial.get("measures") or {}).get(name)
        return trial.get("seconds")

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        trial = self.trials[index.row()]
        column = index.column()
        value = self.raw(trial, column)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(column, value)
        if role == SORT_ROLE:
            if value is None:
                return float("inf")
            return value if isinstance(value, int | float) else str(value)
        if role == Qt.ItemDataRole.TextAlignmentRole and column != 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        best = trial["number"] == self.best
        if role == Qt.ItemDataRole.BackgroundRole and trial["number"] in self.front:
            return BEST_BRUSH
        if role == Qt.ItemDataRole.FontRole and best:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and column == 1:
            if trial["status"] == "failed":
                return FAILED_BRUSH
            if trial["status"] in ("pruned", "stopped"):
                return QUIET_BRUSH
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(trial, best)
        return None

    def _text(self, column: int, value: Any) -> str:
        if column == 1:
            return STATUS_WORDS.get(value, str(value))
        if value is None:
            return ""
        if column == self.columnCount() - 1:
            return format_duration(value)
        if column == len(self.targets) + 2:
            return f"{value:.4f}"
        if (name := self._objective(column)) is not None:
            return f"{value:.3f}" if name == "latency" else f"{int(value):,}"
        return format_value(value)

    def _tooltip(self, trial: dict[str, Any], best: bool) -> str:
        lines = [f"Trial {trial['number']}: {STATUS_WORDS.get(trial['status'], '')}"]
        if best:
            lines[0] += " — the best so far"
        if self.objectives and trial["number"] in self.front:
            lines.append("On the Pareto front: no other trial is better in every objective.")
        if trial.get("reason"):
            lines.append(trial["reason"])
        if trial.get("run_dir"):
            lines.append(f"Run: {trial['run_dir']}")
        return "\n".join(lines)


class TrialTable(QTableView):
    """The trials, sortable by any column (click a header)."""

    def __init__(self) -> None:
        super().__init__()
        self.trials = TrialModel()
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.trials)
        self.proxy.setSortRole(SORT_ROLE)
        self.setModel(self.proxy)
        self.setObjectName("trial-table")
        self.setSortingEnabled(True)
        self.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)

    def trial_at(self, index) -> dict[str, Any]:
        """The trial of a row of the view (an index of the sorted model)."""
        return self.trials.trials[self.proxy.mapToSource(index).row()]

    def selected(self) -> dict[str, Any] | None:
        """The trial of the selected row, if one is."""
        rows = self.selectionModel().selectedRows()
        return self.trial_at(rows[0]) if rows else None

    def row_texts(self) -> list[list[str]]:
        """Every row as shown, top to bottom (in the current sort order)."""
        model = self.proxy
        return [[model.index(r, c).data() for c in range(model.columnCount())]
                for r in range(model.rowCount())]
