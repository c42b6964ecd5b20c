"""Live loss and accuracy curves, redrawn from a timer rather than on every metric."""

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


class Series:
    """Points of one curve, kept in Python lists and turned into arrays when drawn."""

    def __init__(self, item: pg.PlotDataItem) -> None:
        self.item = item
        self.x: list[float] = []
        self.y: list[float] = []

    def append(self, x: float, y: float) -> None:
        """Add one point."""
        self.x.append(x)
        self.y.append(y)

    def draw(self) -> None:
        """Push the points to the plot item."""
        self.item.setData(np.asarray(self.x), np.asarray(self.y))

    def clear(self) -> None:
        """Forget every point."""
        self.x.clear()
        self.y.clear()
        self.item.setData([], [])


class LiveCurves(QWidget):
    """Two plots (loss and accuracy) with smoothed batch, epoch and validation curves."""

    def __init__(self) -> None:
        super().__init__()
        pg.setConfigOptions(antialias=True)
        self.plots: dict[str, pg.PlotWidget] = {}
        self.series: dict[str, Series] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for metric, title in (("loss", "Loss"), ("accuracy", "Accuracy")):
            plot = pg.PlotWidget(background="w")
            plot.setObjectName(f"plot-{metric}")
            plot.setTitle(title, color="#202124", size="11pt")
            plot.setLabel("bottom", "epoch")
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.addLegend(offset=(-10, 10) if metric == "loss" else (-10, -10),
                           labelTextColor="#202124")
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
                )
                self.series[f"{kind}_{metric}"] = Series(item)
            self.plots[metric] = plot
            layout.addWidget(plot)
        self._smoothed: dict[str, float] = {}
        self._dirty = False
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
        self._dirty = True

    def add_epoch(self, epoch: int, metrics: dict[str, float]) -> None:
        """Add the end-of-epoch training and validation points."""
        for metric in ("loss", "accuracy"):
            if metric in metrics:
                self.series[f"train_{metric}"].append(epoch, metrics[metric])
            if f"val_{metric}" in metrics:
                self.series[f"val_{metric}"].append(epoch, metrics[f"val_{metric}"])
        self._dirty = True

    def point_count(self) -> int:
        """How many points all curves hold together."""
        return sum(len(s.x) for s in self.series.values())

    def redraw(self) -> None:
        """Draw what arrived since the last tick (called by the timer)."""
        if not self._dirty:
            return
        self._dirty = False
        for series in self.series.values():
            series.draw()
