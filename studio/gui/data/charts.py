"""Bar charts of the data: samples per class and split (or label values for regression)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.data.segmentation.health import PIXEL_IMBALANCE_RATIO
from studio.core.data.types import SPLITS, LoadedData
from studio.core.tasks.registry import task_for
from studio.gui.data.bars import BarChart
from studio.gui.data.registry import data_views_for
from studio.gui.data.samples import SPLIT_TITLES

SPLIT_COLOURS = {"train": "#1a73e8", "validation": "#e8710a", "test": "#188038"}
BINS = 20
IMBALANCE_RATIO = 5
WEIGHED = ("samples", "pixels")
"""What "Balance classes with weights" weighs: a class's samples, or a mask's pixels."""


def _numeric(value: int) -> QTableWidgetItem:
    item = QTableWidgetItem()
    item.setData(Qt.ItemDataRole.DisplayRole, value)
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def balance_text(names: list[str], totals: list[int], what: str = "samples") -> str:
    """A sentence on how evenly the samples (or boxes, or pixels: ``what``) spread over the
    classes; pixels are called imbalanced by the segmentation health report's measure (a
    background covers most of every image)."""
    present = [(n, name) for name, n in zip(names, totals, strict=True) if n]
    if len(present) < 2:
        return ""
    (small, small_name), (big, big_name) = min(present), max(present)
    text = (f"Largest class {big_name!r}: {big:,} {what}; smallest {small_name!r}: "
            f"{small:,} ({big / small:.1f} : 1).")
    ratio = PIXEL_IMBALANCE_RATIO if what == "pixels" else IMBALANCE_RATIO
    if big >= ratio * small:  # (class weights are for samples and pixels, not boxes)
        text += " The classes are imbalanced" + (
            ": consider “Balance classes with weights”." if what in WEIGHED else ".")
    return text


class ClassesView(QWidget):
    """Samples per class in each split, as stacked bars and as a sortable table."""

    def __init__(self) -> None:
        super().__init__()
        self.chart = BarChart("samples")
        self.chart.setObjectName("class-chart")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.table = QTableWidget()
        self.table.setObjectName("class-table")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.empty = QLabel()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.chart)
        split.addWidget(self.table)
        split.setSizes([300, 160])
        content = QWidget()
        inner = QVBoxLayout(content)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(self.summary)
        inner.addWidget(split, 1)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(content)
        layout = QVBoxLayout(self)
        layout.addWidget(self.stack)
        self.clear("No data yet.")

    def clear(self, message: str) -> None:
        """Show ``message`` instead of the chart."""
        self.empty.setText(message)
        self.stack.setCurrentWidget(self.empty)

    def show_data(self, loaded: LoadedData) -> None:
        """Chart the classes of ``loaded`` (label values for regression)."""
        task, views = task_for(loaded.info.task), data_views_for(loaded.info.task)
        classes, what = views.counts_classes(loaded), views.counted
        self.chart.setLabel("left", what)
        if classes:
            names = list(loaded.info.class_names)
            counts = {s: loaded.class_counts(s) for s in SPLITS}
            shown = views.charted(loaded)
            left_out = [names[k] for k in range(len(names)) if k not in shown]
            self.chart.setLabel("bottom", "class" + (
                f" ({', '.join(left_out)} left out: see the table)" if left_out else ""))
            bars = [names[k] for k in shown], {s: [c[k] for k in shown]
                                               for s, c in counts.items()}
        else:
            edges = np.histogram_bin_edges(loaded.labels, BINS)
            names = [f"{edges[i]:.3g}" for i in range(BINS)]
            counts = {s: np.histogram(loaded.labels[loaded.splits[s]], edges)[0].tolist()
                      for s in SPLITS}
            self.chart.setLabel("bottom", "label value (bin start)")
            bars = names, counts
        self.chart.show_bars(bars[0], {SPLIT_TITLES[s]: (bars[1][s], SPLIT_COLOURS[s])
                                       for s in SPLITS})
        totals = [sum(c) for c in zip(*counts.values(), strict=True)]
        self.summary.setText(balance_text(names, totals, what) if classes
                             else f"{task.title}: the chart shows how the label values "
                             "spread over each split.")
        self._fill_table("Class" if classes else "From",
                         names, counts, totals)
        self.stack.setCurrentIndex(1)

    def _fill_table(self, first: str, names: list[str], counts: dict[str, list[int]],
                    totals: list[int]) -> None:
        self.table.setSortingEnabled(False)
        self.table.clear()
        headers = [first, *(SPLIT_TITLES[s] for s in SPLITS), "Total"]
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setRowCount(len(names))
        for row, name in enumerate(names):
            self.table.setItem(row, 0, QTableWidgetItem(name))
            for column, split in enumerate(SPLITS, start=1):
                self.table.setItem(row, column, _numeric(counts[split][row]))
            self.table.setItem(row, len(headers) - 1, _numeric(totals[row]))
        self.table.setSortingEnabled(True)
