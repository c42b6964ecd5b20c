"""The run history: every run of the project in a sortable, filterable table, with curves of
several runs overlaid, the config differences of two, and opening, resuming and deleting
runs. Listing runs goes through the run index on a worker thread, so a thousand runs never
block the window."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QAction, QColor, QFont, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.messages import format_duration
from studio.core.runs.history import (
    RunInUseError,
    RunSummary,
    config_diff,
    format_started,
    read_metrics,
)
from studio.core.runs.index import RunIndex
from studio.gui.runs.export_dialog import ExportDialog
from studio.gui.widgets.plot_style import epoch_plot
from studio.gui.widgets.worker import Worker

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
MAX_OVERLAID = 12
"""Curves of at most this many runs are overlaid at once."""
RESUMABLE = ("interrupted", "stopped", "failed")
STATUS_TIPS = {
    "running": "Training now, in this app or another process.",
    "finished": "Ran every planned epoch (or early stopping ended it).",
    "stopped": "Stopped on request before its last epoch.",
    "failed": "Ended with an error.",
    "interrupted": "Its process ended without finishing: killed, crashed or the computer "
                   "stopped. Resume continues it from its last checkpoint.",
}
STATUS_COLORS = {"running": "#1a73e8", "failed": "#b3261e", "interrupted": "#b06000"}
CURVE_COLORS = ("#1a73e8", "#e8710a", "#188038", "#d93025", "#9334e6", "#12b5cb",
                "#e52592", "#795548", "#5f6368", "#f9ab00")


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
    Column("val_accuracy", "Val accuracy", "Best validation accuracy of any epoch", 90,
           _score("val_accuracy"), lambda run: run.best.get("val_accuracy")),
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
_NUMERIC = {"seconds", "epochs", "val_accuracy", "val_loss", "learning_rate", "batch_size"}


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
        announced = hasattr(self, "beginFilterChange")  # Qt 6.10 and later
        if announced:
            self.beginFilterChange()
        self.text = self.text if text is None else text.strip().lower()
        self.status = self.status if status is None else status
        if announced:
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()

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


@dataclass
class Listing:
    """What a refresh found, sent from the worker thread."""

    runs: list[RunSummary]
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Why runs asked to be deleted were kept."""


def list_runs(index: RunIndex, delete: Sequence[str] = ()) -> Listing:
    """Delete the runs ``delete`` names (keeping those that cannot be), sync the index and
    list its runs, newest first. Runs on a worker thread."""
    problems = []
    for run_id in delete:
        try:
            index.delete(run_id)
        except (RunInUseError, ValueError, OSError) as exc:
            problems.append(str(exc))
    seen = len(index.notes)
    index.sync()
    return Listing(index.runs(), index.notes[seen:], problems)


def _value_text(value: Any) -> str:
    if value is None:
        return "—"
    return value if isinstance(value, str) else json.dumps(value)


class HistoryPanel(QWidget):
    """The runs of the project whose runs root ``root_provider`` returns."""

    open_model_requested = Signal(Path)
    """The user asked to open this ``model.keras``."""
    resume_requested = Signal(Path)
    """The user asked to resume the run in this folder."""
    refreshed = Signal()
    """The table shows the runs as they are now."""

    def __init__(self, root_provider: Callable[[], Path]) -> None:
        super().__init__()
        self._root_provider = root_provider
        self._index: RunIndex | None = None
        self._worker: Worker | None = None
        self.export_dialog: ExportDialog | None = None
        """The export dialog opened last."""
        self._again = False
        self._listed = False
        """A listing arrived from the worker under way."""
        self.model = RunTableModel()
        self.proxy = RunFilterModel(self.model)

        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("history-filter")
        self.filter_edit.setPlaceholderText("Filter runs…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setToolTip("Show only runs whose id, name, status, optimizer or error "
                                    "contains this text")
        self.filter_edit.textChanged.connect(lambda text: self._filter(text=text))
        self.status_combo = QComboBox()
        self.status_combo.setObjectName("history-status")
        self.status_combo.setToolTip("Show only runs with this status")
        self.status_combo.addItem("All statuses", "")
        for status in STATUS_TIPS:
            self.status_combo.addItem(status.capitalize(), status)
            self.status_combo.setItemData(self.status_combo.count() - 1, STATUS_TIPS[status],
                                          Qt.ItemDataRole.ToolTipRole)
        self.status_combo.currentIndexChanged.connect(
            lambda: self._filter(status=self.status_combo.currentData()))
        self.count_label = QLabel()
        self.count_label.setObjectName("history-count")

        self.table = QTableView()
        self.table.setObjectName("history-table")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(
            self.table.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setHighlightSections(False)
        for i, column in enumerate(COLUMNS):
            header.resizeSection(i, column.width)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().selectionChanged.connect(self._update_actions)
        self.table.doubleClicked.connect(self.overlay_curves)

        self.overlay_action = self._action(
            "Overlay curves", "history-overlay", self.overlay_curves,
            f"Draw the selected runs' validation accuracy and loss per epoch together "
            f"(up to {MAX_OVERLAID} runs)")
        self.compare_action = self._action(
            "Compare", "history-compare", self.compare,
            "With two runs selected: list the settings that differ between them")
        self.open_action = self._action(
            "Open model", "history-open", self.open_model,
            "Open the selected run's trained model (model.keras)")
        self.export_action = self._action(
            "Export…", "history-export", self.export_model,
            "Export the selected run's model (Keras, SavedModel, ONNX, TensorFlow Lite), "
            "verified against it")
        self.resume_action = self._action(
            "Resume", "history-resume", self.resume,
            "Continue the selected stopped, failed or interrupted run from its last "
            "checkpoint, with its epoch counter and optimizer state")
        self.delete_action = self._action(
            "Delete…", "history-delete", self.delete_selected,
            "Delete the selected runs with their models, checkpoints and logs (asks first)")
        self.delete_action.setShortcut(QKeySequence.StandardKey.Delete)
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.refresh_action = self._action(
            "Refresh", "history-refresh", self.refresh,
            "Read the run folders again (runs of other processes appear, deleted ones go)")
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for action in (self.overlay_action, self.compare_action, self.open_action,
                       self.export_action, self.resume_action, self.delete_action):
            self.table.addAction(action)

        self.accuracy_plot = epoch_plot("Validation accuracy", left="accuracy",
                                         legend_offset=(-10, -10))
        self.accuracy_plot.setYRange(0, 1, padding=0.02)
        self.loss_plot = epoch_plot("Loss (solid: validation, dashed: training)", left="loss",
                                     legend_offset=(-10, 10))
        curves = QWidget()
        curves_layout = QHBoxLayout(curves)
        curves_layout.setContentsMargins(0, 0, 0, 0)
        curves_layout.addWidget(self.accuracy_plot)
        curves_layout.addWidget(self.loss_plot)
        self.differences = QTableWidget(0, 3)
        self.differences.setObjectName("history-differences")
        self.differences.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.differences.verticalHeader().hide()
        self.differences.horizontalHeader().setStretchLastSection(True)
        self.differences.setHorizontalHeaderLabels(["Setting", "", ""])
        self.differences.setColumnWidth(0, 220)
        self.differences.setColumnWidth(1, 240)
        self.details = QTabWidget()
        self.details.setObjectName("history-details")
        self.details.addTab(curves, "Curves")
        self.details.addTab(self.differences, "Differences")
        self.message = QLabel("Select runs, then Overlay curves or Compare.")
        self.message.setObjectName("history-message")
        self.message.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.status_combo)
        top.addWidget(self.count_label)
        buttons = QHBoxLayout()
        for action in (self.overlay_action, self.compare_action, self.open_action,
                       self.export_action, self.resume_action, self.delete_action):
            buttons.addWidget(self._button(action))
        buttons.addStretch(1)
        buttons.addWidget(self._button(self.refresh_action))
        upper = QWidget()
        upper_layout = QVBoxLayout(upper)
        upper_layout.setContentsMargins(0, 0, 0, 0)
        upper_layout.addLayout(top)
        upper_layout.addWidget(self.table, 1)
        upper_layout.addLayout(buttons)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.details, 1)
        lower_layout.addWidget(self.message)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(upper)
        splitter.addWidget(lower)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self._update_actions()

    def _action(self, text: str, name: str, slot: Callable[[], None], tip: str) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        action.setToolTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    @staticmethod
    def _button(action: QAction) -> QToolButton:
        button = QToolButton()
        button.setObjectName(f"{action.objectName()}-button")
        button.setDefaultAction(action)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        return button

    def selected_runs(self) -> list[RunSummary]:
        """The selected runs, top to bottom as shown."""
        rows = sorted(self.table.selectionModel().selectedRows(), key=lambda i: i.row())
        return [self.model.runs[self.proxy.mapToSource(i).row()] for i in rows]

    def select_runs(self, run_ids: Sequence[str]) -> None:
        """Select the rows of these runs (those shown)."""
        wanted = set(run_ids)
        selection = QItemSelection()
        for row, run in enumerate(self.model.runs):
            if run.id in wanted:
                index = self.proxy.mapFromSource(self.model.index(row, 0))
                if index.isValid():
                    selection.select(index, index)
        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                 | QItemSelectionModel.SelectionFlag.Rows)
        self.table.selectionModel().select(selection, flags)

    def refresh(self) -> None:
        """Sync the run index with the folders on a worker thread and show the runs."""
        self._run(())

    def shutdown(self) -> None:
        """Drop any listing or export under way and wait for their threads (when the window
        closes)."""
        exporting = self.export_dialog.worker if self.export_dialog is not None else None
        for worker in (self._worker, exporting):
            if worker is not None:
                worker.discard()
                worker.wait()
        self._worker = None

    def showEvent(self, event) -> None:
        """Show runs other processes started or ended since the panel was last shown."""
        super().showEvent(event)
        self.refresh()

    def _run(self, delete: Sequence[str]) -> None:
        if self._worker is not None:
            self._again = True
            return
        root = Path(self._root_provider())
        if self._index is None or self._index.root != root:
            self._index = RunIndex(root)
        index = self._index
        self._worker = Worker(lambda on_event, stop: list_runs(index, delete))
        self._worker.succeeded.connect(self._show)
        self._worker.failed.connect(self._show_failure)
        self._worker.done.connect(self._finished)
        self.refresh_action.setEnabled(False)
        self._update_actions()
        self._worker.start()

    @Slot(object)
    def _show(self, listing: Listing) -> None:
        chosen = [run.id for run in self.selected_runs()]
        self.model.set_runs(listing.runs)
        self.select_runs(chosen)
        self._update_count()
        if listing.notes:
            self.message.setText(listing.notes[-1])
        self._listed = True
        if listing.problems:
            QMessageBox.warning(self, "Some runs were kept", "\n".join(listing.problems))

    @Slot(str)
    def _show_failure(self, text: str) -> None:
        self.message.setText(f"The runs could not be listed: {text}")

    @Slot()
    def _finished(self) -> None:
        self._worker = None
        self.refresh_action.setEnabled(True)
        self._update_actions()
        if self._listed:
            self._listed = False
            self.refreshed.emit()
        if self._again:
            self._again = False
            self.refresh()

    def _filter(self, text: str | None = None, status: str | None = None) -> None:
        self.proxy.set_filter(text, status)
        self._update_count()

    def _update_count(self) -> None:
        total, shown = len(self.model.runs), self.proxy.rowCount()
        interrupted = sum(run.status == "interrupted" for run in self.model.runs)
        text = f"{total:,} runs" if shown == total else f"{shown:,} of {total:,} runs"
        self.count_label.setText(text + (f" · {interrupted} interrupted" if interrupted else ""))

    @Slot()
    def _update_actions(self) -> None:
        chosen = self.selected_runs()
        one = chosen[0] if len(chosen) == 1 else None
        self.overlay_action.setEnabled(bool(chosen))
        self.compare_action.setEnabled(len(chosen) == 2)
        self.open_action.setEnabled(one is not None and one.has_model())
        self.export_action.setEnabled(one is not None and one.has_model())
        self.resume_action.setEnabled(one is not None and one.status in RESUMABLE
                                      and one.has_checkpoint())
        self.delete_action.setEnabled(bool(chosen) and self._worker is None)

    @Slot()
    def overlay_curves(self) -> None:
        """Draw the selected runs' curves together, one colour per run."""
        chosen = self.selected_runs()
        shown = chosen[:MAX_OVERLAID]
        for plot in (self.accuracy_plot, self.loss_plot):
            plot.clear()
        empty = 0
        for i, run in enumerate(shown):
            rows = read_metrics(run.path)
            empty += not rows
            color = CURVE_COLORS[i % len(CURVE_COLORS)]
            epochs = [row["epoch"] for row in rows]
            accuracy = "val_accuracy" if any("val_accuracy" in r for r in rows) else "accuracy"
            self._curve(self.accuracy_plot, rows, epochs, accuracy, run.id, color)
            self._curve(self.loss_plot, rows, epochs, "val_loss", run.id, color)
            self._curve(self.loss_plot, rows, epochs, "loss", None, color, dashed=True)
        self.details.setCurrentIndex(0)
        drawn, more = len(shown) - empty, len(chosen) - len(shown)
        notes = [f"Curves of {drawn} run{'s' * (drawn != 1)}."]
        if empty:
            notes.append(f"{empty} ended before its first epoch." if empty == 1 else
                         f"{empty} ended before their first epoch.")
        if more:
            notes.append(f"{more} more selected are left out (at most {MAX_OVERLAID}).")
        self.message.setText(" ".join(notes))

    @staticmethod
    def _curve(plot: pg.PlotWidget, rows: list[dict[str, float]], epochs: list[int],
               key: str, name: str | None, color: str, dashed: bool = False) -> None:
        points = [(x, row[key]) for x, row in zip(epochs, rows, strict=True) if key in row]
        if not points:
            return
        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
        xs, ys = zip(*points, strict=True)
        plot.plot(list(xs), list(ys), name=name, pen=pg.mkPen(color, width=2, style=style),
                  symbol=None if dashed else "o", symbolSize=5, symbolBrush=color,
                  symbolPen=None)

    @Slot()
    def compare(self) -> None:
        """List the settings that differ between the two selected runs."""
        chosen = self.selected_runs()
        if len(chosen) != 2:
            return
        a, b = chosen
        found = config_diff(a.path, b.path)
        self.differences.setHorizontalHeaderLabels(["Setting", a.id, b.id])
        self.differences.setRowCount(len(found))
        for row, values in enumerate(found):
            for column, value in enumerate(values):
                item = QTableWidgetItem(value if column == 0 else _value_text(value))
                item.setToolTip(item.text())
                self.differences.setItem(row, column, item)
        self.details.setCurrentIndex(1)
        self.message.setText(f"{len(found)} setting{'s' * (len(found) != 1)} differ."
                             if found else "The two runs have the same settings.")

    @Slot()
    def open_model(self) -> None:
        """Ask for the selected run's model to be opened."""
        chosen = self.selected_runs()
        if len(chosen) == 1 and chosen[0].has_model():
            self.open_model_requested.emit(chosen[0].model_path)

    def export_model(self) -> ExportDialog | None:
        """Open the export dialog for the selected run's model (it works in the
        background; the dialog stays usable while the panel is)."""
        chosen = self.selected_runs()
        if len(chosen) != 1 or not chosen[0].has_model():
            return None
        self.export_dialog = ExportDialog(chosen[0].path, self)
        self.export_dialog.show()
        return self.export_dialog

    @Slot()
    def resume(self) -> None:
        """Ask for the selected run to be resumed."""
        chosen = self.selected_runs()
        if len(chosen) == 1 and chosen[0].status in RESUMABLE:
            self.resume_requested.emit(chosen[0].path)

    @Slot()
    def delete_selected(self) -> None:
        """Ask, then delete the selected runs and their files on the worker thread."""
        chosen = self.selected_runs()
        if not chosen or self._worker is not None:
            return
        what = (f"{chosen[0].id} with its model," if len(chosen) == 1 else
                f"these {len(chosen)} runs with their models,")
        answer = QMessageBox.question(
            self, "Delete runs", f"Delete {what} checkpoints and logs? This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        if answer == QMessageBox.StandardButton.Yes:
            self._run([run.id for run in chosen])
