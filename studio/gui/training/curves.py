"""Live loss and accuracy curves, redrawn from a timer rather than on every metric.

The grid is drawn opaque: pyqtgraph's default translucent grid lines made each repaint of the
two plots cost about 25 ms instead of 2 ms, which showed as GUI stalls during training.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QWidget

from studio.gui.widgets.plot_style import epoch_plot

REDRAW_MS = 50
SMOOTHING = 0.8
RATE_HEADROOM = 1.1
"""The learning-rate plot reaches this many times the highest planned rate (a constant rate
runs just under the top, not on the frame)."""

_PENS = {
    "batch": pg.mkPen("#8ab4f8", width=1.5),
    "train": pg.mkPen("#1a73e8", width=2.5),
    "val": pg.mkPen("#e8710a", width=2.5),
    "planned": pg.mkPen("#9aa0a6", width=1.5, style=Qt.PenStyle.DashLine),
    "actual": pg.mkPen("#188038", width=2.5),
}
PLOTS = {"loss": ("Loss", "loss", (("batch", "batches"), ("train", "train"),
                                    ("val", "validation"))),
         "accuracy": ("Accuracy", "accuracy", (("batch", "batches"),
                                               ("train", "train"), ("val", "validation"))),
         "learning_rate": ("Learning rate", "rate", (("planned", "planned"),
                                                     ("actual", "used")))}
"""Each plot's title, the label of its values' axis, and its curves (kind, legend label)."""
_SYMBOLS = {"train": "o", "val": "s"}


class Series:
    """Points of one curve, kept in Python lists and turned into arrays when drawn."""

    def __init__(self, item: pg.PlotDataItem) -> None:
        self.item = item
        self.x: list[float] = []
        self.y: list[float] = []
        self.dirty = False

    def append(self, x: float, y: float) -> None:
        """Add one point."""
        self.x.append(x)
        self.y.append(y)
        self.dirty = True

    def draw(self) -> None:
        """Push the points to the plot item if any arrived since the last draw."""
        if self.dirty:
            self.dirty = False
            self.item.setData(np.asarray(self.x), np.asarray(self.y))

    def clear(self) -> None:
        """Forget every point."""
        self.x.clear()
        self.y.clear()
        self.dirty = False
        self.item.setData([], [])


class LiveCurves(QWidget):
    """Loss and accuracy (smoothed batch, epoch and validation curves) and the learning rate
    (planned and used)."""

    def __init__(self) -> None:
        super().__init__()
        self.plots: dict[str, pg.PlotWidget] = {}
        self.series: dict[str, Series] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for metric, (title, left, kinds) in PLOTS.items():
            plot = epoch_plot(title, "11pt", left=left, legend_columns=len(kinds))
            plot.setObjectName(f"plot-{metric}")
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            if metric == "accuracy":
                plot.setYRange(0, 1, padding=0.02)
            for kind, label in kinds:
                item = plot.plot(
                    name=label,
                    pen=_PENS[kind],
                    symbol=_SYMBOLS.get(kind),
                    symbolSize=7,
                    symbolBrush=_PENS[kind].color(),
                    symbolPen=None,
                    antialias=True,
                )
                self.series[f"{kind}_{metric}"] = Series(item)
            self.plots[metric] = plot
            layout.addWidget(plot, 1)  # as wide as each other, whatever their legends
        self._smoothed: dict[str, float] = {}
        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self.redraw)
        self.timer.start()

    def clear(self) -> None:
        """Start a new run with empty curves."""
        for series in self.series.values():
            series.clear()
        self._smoothed.clear()

    def add_batch(self, x: float, metrics: dict[str, float]) -> None:
        """Add a batch point (x in epochs), smoothed with an exponential moving average."""
        for metric in ("loss", "accuracy"):
            if metric in metrics:
                value = metrics[metric]
                previous = self._smoothed.get(metric, value)
                self._smoothed[metric] = SMOOTHING * previous + (1 - SMOOTHING) * value
                self.series[f"batch_{metric}"].append(x, self._smoothed[metric])

    def add_epoch(self, epoch: int, metrics: dict[str, float]) -> None:
        """Add the end-of-epoch training and validation points."""
        for metric in ("loss", "accuracy"):
            if metric in metrics:
                self.series[f"train_{metric}"].append(epoch, metrics[metric])
            if f"val_{metric}" in metrics:
                self.series[f"val_{metric}"].append(epoch, metrics[f"val_{metric}"])

    def add_rate(self, x: float, rate: float) -> None:
        """Add the learning rate used at ``x`` (in epochs)."""
        self.series["actual_learning_rate"].append(x, rate)

    def show_plan(self, x, rates) -> None:
        """Draw the planned learning rate over the run (x in epochs), from 0 up."""
        rates = np.asarray(rates)
        self.series["planned_learning_rate"].item.setData(np.asarray(x), rates)
        if len(rates):
            top = float(rates.max()) * RATE_HEADROOM or 1
            self.plots["learning_rate"].setYRange(0, top, padding=0)

    def show_history(self, rows: list[dict[str, float]]) -> None:
        """Draw the epochs a resumed run did before, so its curves go on from there."""
        for row in rows:
            self.add_epoch(int(row["epoch"]), row)
            if "learning_rate" in row:
                self.add_rate(row["epoch"], row["learning_rate"])

    def point_count(self) -> int:
        """How many points all curves hold together."""
        return sum(len(s.x) for s in self.series.values())

    def redraw(self) -> None:
        """Draw what arrived since the last tick (called by the timer)."""
        for series in self.series.values():
            series.draw()
