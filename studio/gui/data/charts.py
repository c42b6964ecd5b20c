"""Bar charts of the data: samples per class and split (or label values for regression)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
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

from studio.core.data.types import SPLITS, LoadedData
from studio.core.tasks.registry import task_for
from studio.gui.data.samples import SPLIT_TITLES, has_boxes

SPLIT_COLOURS = {"train": "#1a73e8", "validation": "#e8710a", "test": "#188038"}
AXIS_ROOM = 70
"""Pixels of the chart's width taken by the left axis and margins."""
CHAR_WIDTH = 7
TICK_GAP = 10
TICK_CHARS = 12
BINS = 20
IMBALANCE_RATIO = 5
_AXIS_PEN = pg.mkPen("#c4c7cc")
_TEXT_PEN = pg.mkPen("#3c4043")


def _short(name: str) -> str:
    return name if len(name) <= TICK_CHARS else name[:TICK_CHARS - 1] + "…"


class BarChart(pg.PlotWidget):
    """Stacked bars with a category name under each; static (no pan or zoom)."""

    categories: tuple[str, ...] = ()
    """The bar names, shortened (a class attribute first: pyqtgraph resizes while building)."""

    def __init__(self, left: str = "") -> None:
        super().__init__(background="w")
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.setMinimumHeight(160)
        self.showGrid(y=True, alpha=0.3)
        for side in ("left", "bottom"):
            axis = self.getAxis(side)
            axis.setPen(_AXIS_PEN)
            axis.setTextPen(_TEXT_PEN)
        if left:
            self.setLabel("left", left)
        self.legend = self.addLegend(offset=(-10, 4), labelTextColor="#202124", colCount=3,
                                     brush=pg.mkBrush(255, 255, 255, 230))
        self.heights: dict[str, list[float]] = {}
        """The bars drawn, by series name (for tests and tooltips)."""

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Label as many bars as fit the new width."""
        super().resizeEvent(event)
        self._update_ticks()

    def _update_ticks(self) -> None:
        """Name every bar, or every k-th one when the names would overlap."""
        names = self.categories
        if not names:
            return
        room = max(self.width() - AXIS_ROOM, 100) / len(names)
        needed = max(len(n) for n in names) * CHAR_WIDTH + TICK_GAP
        step = max(1, -(-needed // int(room)) if room >= 1 else len(names))
        self.getAxis("bottom").setTicks([[(i, names[i]) for i in range(0, len(names), step)]])

    def show_bars(self, categories: list[str], series: dict[str, tuple[list[float], str]]
                  ) -> None:
        """Draw one bar per category stacking each series (name: (heights, colour))."""
        self.plotItem.clear()
        self.heights = {}
        x = np.arange(len(categories))
        bottom = np.zeros(len(categories))
        for name, (heights, colour) in series.items():
            values = np.asarray(heights, dtype=float)
            if not values.any():
                continue
            self.addItem(pg.BarGraphItem(x=x, height=values, y0=bottom, width=0.75,
                                         brush=colour, pen=None, name=name))
            bottom = bottom + values
            self.heights[name] = values.tolist()
        self.legend.setVisible(len(self.heights) > 1)
        self.categories = tuple(_short(name) for name in categories)
        self._update_ticks()
        self.setXRange(-0.6, len(categories) - 0.4, padding=0)
        headroom = 1.25 if len(self.heights) > 1 else 1.08  # room for the legend
        self.setYRange(0, max(1.0, float(bottom.max(initial=0))) * headroom, padding=0)


def _numeric(value: int) -> QTableWidgetItem:
    item = QTableWidgetItem()
    item.setData(Qt.ItemDataRole.DisplayRole, value)
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def balance_text(names: list[str], totals: list[int], what: str = "samples") -> str:
    """A sentence on how evenly the samples (or boxes, ``what``) spread over the classes."""
    present = [(n, name) for name, n in zip(names, totals, strict=True) if n]
    if len(present) < 2:
        return ""
    (small, small_name), (big, big_name) = min(present), max(present)
    text = (f"Largest class {big_name!r}: {big:,} {what}; smallest {small_name!r}: "
            f"{small:,} ({big / small:.1f} : 1).")
    if big >= IMBALANCE_RATIO * small:  # (class weights are for samples, not boxes)
        text += " The classes are imbalanced" + (
            ": consider “Balance classes with weights”." if what == "samples" else ".")
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
        task = task_for(loaded.info.task)
        classes = task.has_classes or has_boxes(loaded)
        what = "boxes" if has_boxes(loaded) else "samples"
        self.chart.setLabel("left", what)
        if classes:
            names = list(loaded.info.class_names)
            counts = {s: loaded.class_counts(s) for s in SPLITS}
            self.chart.setLabel("bottom", "class")
        else:
            edges = np.histogram_bin_edges(loaded.labels, BINS)
            names = [f"{edges[i]:.3g}" for i in range(BINS)]
            counts = {s: np.histogram(loaded.labels[loaded.splits[s]], edges)[0].tolist()
                      for s in SPLITS}
            self.chart.setLabel("bottom", "label value (bin start)")
        self.chart.show_bars(names, {SPLIT_TITLES[s]: (counts[s], SPLIT_COLOURS[s])
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
