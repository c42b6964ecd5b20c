"""Live loss and accuracy curves, redrawn from a timer rather than on every metric.

The grid is drawn opaque: pyqtgraph's default translucent grid lines made each repaint of the
two plots cost about 25 ms instead of 2 ms, which showed as GUI stalls during training.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QWidget

REDRAW_MS = 50
SMOOTHING = 0.8

_PENS = {
    "batch": pg.mkPen("#8ab4f8", width=1.5),
    "train": pg.mkPen("#1a73e8", width=2.5),
    "val": pg.mkPen("#e8710a", width=2.5),
}
_SYMBOLS = {"train": "o", "val": "s"}
_GRID_PEN = pg.mkPen("#e3e5e8")
_TEXT_PEN = pg.mkPen("#5f6368")
_LEGEND_BRUSH = pg.mkBrush(255, 255, 255, 235)


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
    """Two plots (loss and accuracy) with smoothed batch, epoch and validation curves."""

    def __init__(self) -> None:
        super().__init__()
        self.plots: dict[str, pg.PlotWidget] = {}
        self.series: dict[str, Series] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for metric, title in (("loss", "Loss"), ("accuracy", "Accuracy")):
            plot = pg.PlotWidget(background="w")
            plot.setObjectName(f"plot-{metric}")
            plot.setTitle(title, color="#202124", size="11pt")
            plot.setLabel("bottom", "epoch")
            plot.showGrid(x=True, y=True, alpha=1.0)
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen(_GRID_PEN)
                axis.setTextPen(_TEXT_PEN)
                axis.setStyle(tickAlpha=255, maxTickLevel=0)
                axis.setZValue(-1)
            plot.addLegend(offset=(-10, 10) if metric == "loss" else (-10, -10),
                           labelTextColor="#202124", brush=_LEGEND_BRUSH)
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            if metric == "accuracy":
                plot.setYRange(0, 1, padding=0.02)
            for kind, label in (("batch", "train (batch, smoothed)"), ("train", "train"),
                                ("val", "validation")):
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
            layout.addWidget(plot)
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

    def point_count(self) -> int:
        """How many points all curves hold together."""
        return sum(len(s.x) for s in self.series.values())

    def redraw(self) -> None:
        """Draw what arrived since the last tick (called by the timer)."""
        for series in self.series.values():
            series.draw()
