"""A grid of sample images with their labels per split, or a table of rows for CSV data."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStackedWidget,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.messages import count
from studio.core.data.types import SPLITS, ArraySamples, FileSamples, LoadedData, TableSamples
from studio.core.model.params import format_shape
from studio.core.tasks.registry import DEFAULT_TASK, task_for
from studio.gui.data.images import THUMBNAIL
from studio.gui.data.registry import data_views_for
from studio.gui.data.source import ERROR_STYLE
from studio.gui.data.views import DataViews
from studio.gui.widgets.forms import same_width
from studio.gui.widgets.jobs import JobSlot

SAMPLES = 48
"""Images shown per split."""
ROWS = 100
"""Table or text rows shown per split."""
SPLIT_TITLES = {"train": "Training", "validation": "Validation", "test": "Test"}
TEXT_TIP = 600


def pick(loaded: LoadedData, split: str, n: int, seed: int = 0) -> np.ndarray:
    """Up to ``n`` seeded random indices of a split, the classes taking turns so that every
    class shows among the first."""
    order = np.random.default_rng(seed).permutation(loaded.splits[split])
    if task_for(loaded.info.task).has_classes and len(order):
        labels = loaded.labels[order]
        turn = np.zeros(len(order), np.int64)
        for label in np.unique(labels):
            mine = labels == label
            turn[mine] = np.arange(np.count_nonzero(mine))
        order = order[np.argsort(turn, kind="stable")]
    return order[:n]


def _card_images(views: DataViews, loaded: LoadedData, indices: np.ndarray, size: int):
    def task(on_event, stop):
        out = []
        for index in indices:
            if stop.is_set():
                break
            out.append(views.card_image(loaded, index, size))
        return out

    return task


def _cell(value: float) -> QTableWidgetItem:
    item = QTableWidgetItem("missing" if np.isnan(value) else f"{value:.6g}")
    if np.isnan(value):
        item.setForeground(Qt.GlobalColor.gray)
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


class SamplesView(QWidget):
    """Samples of one split at a time: thumbnails (decoded off the UI thread) or rows."""

    thumbnails_shown = Signal()
    """Every thumbnail of the current grid is drawn."""
    grid_filled = Signal()
    """The grid holds a card for each sample picked (their pictures still being drawn)."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded: LoadedData | None = None
        self.split = "train"
        self.seed = 0
        self.indices = np.zeros(0, np.int64)
        self.buttons = QButtonGroup(self)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Split"))
        for name in SPLITS:
            button = QPushButton(SPLIT_TITLES[name])
            button.setCheckable(True)
            button.setObjectName(f"split-{name}")
            button.setToolTip(f"Show samples of the {SPLIT_TITLES[name].lower()} split")
            self.buttons.addButton(button)
            bar.addWidget(button)
            button.clicked.connect(lambda _=False, name=name: self.show_split(name))
        self.buttons.buttons()[0].setChecked(True)
        same_width(self.buttons.buttons())
        bar.addStretch(1)
        self.caption = QLabel()
        bar.addWidget(self.caption)
        self.shuffle = QPushButton("Shuffle")
        self.shuffle.setToolTip("Show other samples of this split")
        self.shuffle.clicked.connect(self._shuffle)
        bar.addWidget(self.shuffle)

        self.grid = QListWidget()
        self.grid.setObjectName("sample-grid")
        self.grid.setViewMode(QListView.ViewMode.IconMode)
        self.grid.setResizeMode(QListView.ResizeMode.Adjust)
        self.grid.setMovement(QListView.Movement.Static)
        self.views = data_views_for(DEFAULT_TASK)
        """How samples of the data shown are drawn (its task's data views)."""
        self._size_grid(self.views.card_side)
        self.grid.setUniformItemSizes(True)
        self.grid.setWordWrap(False)
        self.grid.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table = QTableWidget()
        self.table.setObjectName("sample-table")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.notice = QLabel()
        self.notice.setObjectName("samples-notice")
        self.notice.setWordWrap(True)
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice.hide()
        self.empty = QLabel()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.stack = QStackedWidget()
        for widget in (self.empty, self.grid, self.table):
            self.stack.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.notice)
        layout.addWidget(self.stack, 1)
        self.job = JobSlot(self)
        self.job.succeeded.connect(self._show_thumbnails)
        self.clear("No data yet.")

    def clear(self, message: str) -> None:
        """Show ``message`` instead of samples."""
        self.job.cancel()
        self.loaded = None
        self.empty.setText(message)
        self.stack.setCurrentWidget(self.empty)
        self.caption.clear()
        self.notice.hide()
        self._enable(False)

    def say(self, text: str, error: bool = False) -> None:
        """Say what a change of the samples did (or why not) in one line above them."""
        self.notice.setStyleSheet(ERROR_STYLE if error else "")
        self.notice.setText(text)
        self.notice.show()

    def selected_samples(self) -> list[int]:
        """The indices of the samples whose cards are selected, in grid order."""
        rows = sorted(self.grid.row(item) for item in self.grid.selectedItems())
        return [int(self.indices[row]) for row in rows]

    def show_data(self, loaded: LoadedData) -> None:
        """Show samples of ``loaded``, in the split chosen before."""
        self.loaded, self.views = loaded, data_views_for(loaded.info.task)
        self._enable(True)
        self._fill()

    def show_split(self, split: str) -> None:
        """Show samples of ``split`` (train, validation or test)."""
        self.split = split
        for button in self.buttons.buttons():
            button.setChecked(button.objectName() == f"split-{split}")
        if self.loaded is not None:
            self._fill()

    def _enable(self, on: bool) -> None:
        for button in [*self.buttons.buttons(), self.shuffle]:
            button.setEnabled(on)

    def _shuffle(self) -> None:
        self.seed += 1
        self._fill()

    def _fill(self) -> None:
        loaded = self.loaded
        self.job.cancel()
        total = loaded.size(self.split)
        image = isinstance(loaded.samples, ArraySamples | FileSamples)
        self.indices = pick(loaded, self.split, SAMPLES if image else ROWS, self.seed)
        self.caption.setText(f"{len(self.indices)} of {count(total, 'sample')}")
        if total == 0:
            self.empty.setText(f"The {SPLIT_TITLES[self.split].lower()} split is empty.")
            self.stack.setCurrentWidget(self.empty)
        elif image:
            self._fill_grid(loaded)
        else:
            self._fill_table(loaded)

    def icon_size(self) -> QSize:
        """The size each sample's picture is drawn at."""
        return self.grid.iconSize()

    def _fill_grid(self, loaded: LoadedData) -> None:
        self.grid.clear()
        icon = self.views.card_side
        self._size_grid(icon)
        blank = QPixmap(icon, icon)
        blank.fill(QColor("#eceef1"))
        for index in self.indices:
            item = QListWidgetItem(QIcon(blank), self.views.label_text(loaded, index))
            item.setTextAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            self.grid.addItem(item)
        self.stack.setCurrentWidget(self.grid)
        self.grid_filled.emit()
        size = max(icon, THUMBNAIL)
        if isinstance(loaded.samples, ArraySamples):  # in memory: drawn at once
            self._show_thumbnails([self.views.card_image(loaded, i, size) for i in self.indices])
        else:
            self.job.start(_card_images(self.views, loaded, self.indices, size))

    def _show_thumbnails(self, images: list[np.ndarray | None]) -> None:
        loaded = self.loaded
        broken = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        for row, (index, image) in enumerate(zip(self.indices, images, strict=False)):
            item = self.grid.item(row)
            if image is None:
                name = self.views.label_text(loaded, index)
                item.setIcon(broken)
                item.setToolTip(f"{name}\nThis file cannot be read.")
                continue
            item.setIcon(QIcon(self.picture(index, image)))
            where = (f"\n{loaded.samples.paths[index].name}"
                     if isinstance(loaded.samples, FileSamples) else f"\nSample {index:,}")
            name, shown = self.views.card_tip(loaded, index, image)
            item.setToolTip(f"{name}{where}\n{format_shape(image.shape)}{shown}")
        self.thumbnails_shown.emit()

    def picture(self, index: int, image: np.ndarray) -> QPixmap:
        """Sample ``index``'s card picture from its pixels ``image`` (a thumbnail, maybe), as
        the data's views draw it (a detection's with its boxes)."""
        return self.views.picture(self.loaded, index, image, self.icon_size())

    def _size_grid(self, icon: int) -> None:
        self.grid.setIconSize(QSize(icon, icon))
        self.grid.setGridSize(QSize(icon + 20, icon + 28))

    def _fill_table(self, loaded: LoadedData) -> None:
        samples = loaded.samples
        table = isinstance(samples, TableSamples)
        columns = [*samples.columns, "Label"] if table else ["Text", "Label"]
        self.table.clear()
        self.table.setColumnCount(len(columns))
        self.table.setHorizontalHeaderLabels(columns)
        self.table.setRowCount(len(self.indices))
        for row, index in enumerate(self.indices):
            if table:
                for column, value in enumerate(samples.features[index]):
                    self.table.setItem(row, column, _cell(float(value)))
            else:
                text = samples.texts[index]
                item = QTableWidgetItem(text)
                item.setToolTip(text[:TEXT_TIP] + ("…" if len(text) > TEXT_TIP else ""))
                self.table.setItem(row, 0, item)
            self.table.setItem(row, len(columns) - 1,
                               QTableWidgetItem(self.views.label_text(loaded, index)))
        self.table.setVerticalHeaderLabels([f"{i:,}" for i in self.indices])
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(
            0, QHeaderView.ResizeMode.Interactive if table else QHeaderView.ResizeMode.Stretch)
        self.stack.setCurrentWidget(self.table)
