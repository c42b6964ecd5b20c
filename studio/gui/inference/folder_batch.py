"""The Try view's Folder tab: a folder's images answered as a batch into a sortable table,
with its progress, Cancel, and the table saved as CSV."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import ProgressEvent
from studio.core.base.messages import unwritable
from studio.core.inference.batch import BatchResult, write_predictions_csv
from studio.core.inference.mask_files import write_masks
from studio.gui.inference.prediction_table import SORT_ROLE, PredictionTableModel
from studio.gui.widgets.jobs import JobSlot


class FolderBatch(QWidget):
    """Shows a batch as it goes and what it answered; the view runs it."""

    message = Signal(str)
    """A short note for the status bar."""
    problem = Signal(str)
    """Something went wrong, in words for the view's status line."""

    def __init__(self) -> None:
        super().__init__()
        self.table_model = PredictionTableModel()
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(self.table_model)
        proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setObjectName("try-table")
        self.table.setModel(proxy)
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
        batch_bar = QHBoxLayout()
        batch_bar.addWidget(self.progress, 1)
        batch_bar.addWidget(self.cancel_button)
        batch_bar.addWidget(self.export_button)
        batch_bar.addWidget(self.masks_button)
        folder_layout = QVBoxLayout(self)
        folder_layout.addLayout(batch_bar)
        folder_layout.addWidget(self.table, 1)

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
