"""The Try view's Folder tab: a folder's images answered as a batch into a sortable table,
with its progress, Cancel, the answers below a confidence picked out, and the table saved
as CSV."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import ProgressEvent
from studio.core.base.messages import count, unwritable
from studio.core.inference.batch import BatchResult, write_predictions_csv
from studio.core.inference.mask_files import write_masks
from studio.core.inference.predictor import Prediction
from studio.gui.inference.prediction_table import ConfidenceFilter, PredictionTableModel
from studio.gui.widgets.jobs import JobSlot

LOW_CONFIDENCE = 60
"""The confidence, in percent, below which answers show at first when filtered."""


class FolderBatch(QWidget):
    """Shows a batch as it goes and what it answered; the view runs it."""

    message = Signal(str)
    """A short note for the status bar."""
    problem = Signal(str)
    """Something went wrong, in words for the view's status line."""

    def __init__(self) -> None:
        super().__init__()
        self.table_model = PredictionTableModel()
        self.proxy = ConfidenceFilter(self)
        self.proxy.setSourceModel(self.table_model)
        self.table = QTableView()
        self.table.setObjectName("try-table")
        self.table.setModel(self.proxy)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)  # in file order until a header is clicked
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        for column, width in enumerate((200, 110, 90, 200, 80)):
            self.table.setColumnWidth(column, width)
        self.progress = QProgressBar()
        self.progress.setObjectName("try-progress")
        self.progress.setTextVisible(True)
        self.progress.setFormat("No folder yet")
        self.progress.setValue(0)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop answering the folder; the answers so far are kept")
        self.cancel_button.setEnabled(False)
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setToolTip("Save the table as a CSV file")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export_dialog)
        self.masks_button = QPushButton("Save masks…")
        self.masks_button.setToolTip("Save each image's mask as a PNG (class indices, a colour "
                                     "per class) in a folder, with the class areas as CSV")
        self.masks_button.hide()  # shown for a segmentation's answers
        self.masks_button.clicked.connect(self.masks_dialog)
        self.saving = JobSlot(self)
        self.saving.succeeded.connect(self._masks_saved)
        self.saving.failed.connect(self.problem)
        self.saving.finished.connect(lambda: self.masks_button.setEnabled(True))
        self.low_only = QCheckBox("Show answers below")
        self.low_only.setObjectName("try-low-only")
        self.low_only.setToolTip("Show only the answers the model was less sure of than this: "
                                 "the likeliest mistakes")
        self.threshold = QSpinBox()
        self.threshold.setObjectName("try-threshold")
        self.threshold.setRange(1, 100)
        self.threshold.setValue(LOW_CONFIDENCE)
        self.threshold.setSuffix("% confidence")
        self.threshold.setToolTip("The confidence below which answers show")
        self.shown = QLabel()
        self.shown.setObjectName("try-shown")
        for changed in (self.low_only.toggled, self.threshold.valueChanged):
            changed.connect(self._filter)
        batch_bar = QHBoxLayout()
        batch_bar.addWidget(self.progress, 1)
        batch_bar.addWidget(self.cancel_button)
        batch_bar.addWidget(self.export_button)
        batch_bar.addWidget(self.masks_button)
        self.tools = QHBoxLayout()
        """The filter, and what acts on the rows shown (``add_tool``)."""
        self.tools.addWidget(self.low_only)
        self.tools.addWidget(self.threshold)
        self.tools.addWidget(self.shown)
        self.tools.addStretch(1)
        folder_layout = QVBoxLayout(self)
        folder_layout.addLayout(batch_bar)
        folder_layout.addLayout(self.tools)
        folder_layout.addWidget(self.table, 1)

    def add_tool(self, widget: QWidget) -> None:
        """Put ``widget`` (something acting on the rows shown) right of the filter."""
        self.tools.addWidget(widget)

    def shown_rows(self) -> list[Prediction]:
        """The answers the table shows (those the filter lets through), top to bottom."""
        return self.proxy.shown_rows()

    @Slot()
    def _filter(self) -> None:
        """Show only the answers below the confidence chosen, or all of them."""
        low = self.low_only.isChecked()
        self.proxy.set_below(self.threshold.value() / 100 if low else None)
        total, shown = self.table_model.rowCount(), self.proxy.rowCount()
        self.shown.setText(f"{shown:,} of {count(total, 'answer')} shown" if low else "")

    def begin(self) -> None:
        """A batch starts: an empty table, and Cancel."""
        self.clear()
        self.cancel_button.setEnabled(True)
        self.progress.setRange(0, 0)
        self.progress.setFormat("Looking for images…")

    @Slot(object)
    def show_progress(self, event: ProgressEvent) -> None:
        """Show how far the batch is."""
        total = max(event["total"], 1)
        self.progress.setRange(0, total)
        self.progress.setValue(event["done"])
        self.progress.setFormat(f"{event['what']}: {event['done']:,} of {event['total']:,}")

    def show_result(self, result: BatchResult) -> str:
        """Show what the batch answered; how it went, in words."""
        self.table_model.set_rows(result.predictions)
        self._filter()
        self.export_button.setEnabled(bool(result.predictions))
        self.masks_button.setVisible(any(p.mask is not None for p in result.predictions))
        count = len(result.predictions)
        failed = sum(1 for p in result.predictions if p.error)
        rate = count / result.seconds if result.seconds > 0 else 0.0
        done = "Stopped after" if result.stopped else "Answered"
        text = f"{done} {count:,} images in {result.seconds:.1f} s ({rate:,.0f} per second)"
        if failed:
            text += f"; {failed:,} could not be read (see Problem)"
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress.setFormat(text)
        return text

    def show_failure(self) -> None:
        """The batch failed (the view says why)."""
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("The folder was not answered")

    def clear(self) -> None:
        """Empty the table."""
        self.table_model.set_rows([])
        self._filter()
        self.export_button.setEnabled(False)
        self.masks_button.hide()

    def export_dialog(self) -> None:
        """Save the table as CSV."""
        name, _ = QFileDialog.getSaveFileName(self, "Save the answers", "answers.csv",
                                              "CSV files (*.csv)")
        if name:
            try:
                write_predictions_csv(self.table_model.rows, Path(name))
            except OSError as exc:
                self.problem.emit(f"Could not save {name}: {exc.strerror or exc}")
            else:
                self.message.emit(f"Saved {len(self.table_model.rows):,} answers in {name}")

    def masks_dialog(self) -> None:
        """Save the answered masks, and their areas as CSV, in a folder the person picks
        (in the background: a large folder's masks take a while to write)."""
        name = QFileDialog.getExistingDirectory(self, "A folder for the masks")
        if not name:
            return
        folder, rows = Path(name), list(self.table_model.rows)
        names = next((p.class_names for p in rows if p.class_names), None) or []

        def save(on_event, stop) -> list[Path]:
            try:
                return write_masks(rows, folder, names)
            except OSError as exc:
                raise RuntimeError(unwritable(folder, exc)) from None

        self.masks_button.setEnabled(False)
        self.saving.start(save)

    def _masks_saved(self, written: list[Path]) -> None:
        self.message.emit(f"Saved {len(written):,} masks and their areas")
