"""The curves of all of a search's trials overlaid, one metric at a time, redrawn from a timer
rather than on every epoch; the best trial drawn thick on top."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from studio.gui.search.trial_table import metric_title, offer_metrics
from studio.gui.widgets.plot_style import PLOT_WIDTH, epoch_plot

REDRAW_MS = 200
TRIAL_HUES = 9
BEST_WIDTH = 4
TRIAL_WIDTH = 1.5


def trial_pen(number: int, best: bool) -> pg.QtGui.QPen:
    """Trial ``number``'s colour, thick for the best trial."""
    return pg.mkPen(pg.intColor(number, hues=TRIAL_HUES, values=1, maxValue=200),
                    width=BEST_WIDTH if best else TRIAL_WIDTH)


class TrialCurves(QWidget):
    """Each trial's per-epoch metric, overlaid; a combo picks the metric."""

    def __init__(self) -> None:
        super().__init__()
        self.metric_box = QComboBox()
        self.metric_box.setObjectName("curves-metric")
        self.metric_box.setToolTip("The metric drawn for every trial, by epoch")
        self.metric_box.currentIndexChanged.connect(self._metric_changed)
        self.note = QLabel("Each trial is one line; the best one is thick.")
        self.note.setObjectName("curves-note")
        self.note.setWordWrap(True)  # a laptop's narrow plot column
        self.note.setStyleSheet("color: #5f6368;")
        self.plot = epoch_plot("Trials", "10pt")
        self.plot.setObjectName("trial-curves")
        self.plot.setMinimumWidth(PLOT_WIDTH)
        self.items: dict[int, pg.PlotDataItem] = {}
        self.rows: dict[int, list[dict[str, float]]] = {}
        self.best: int | None = None
        self._dirty: set[int] = set()
        top = QHBoxLayout()
        top.addWidget(QLabel("Curves of"))
        top.addWidget(self.metric_box)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.note)
        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self.redraw)
        self.timer.start()
        self._metric_changed()

    def show_metric(self, metric: str, choices: Sequence[str]) -> None:
        """Offer ``choices`` (the searched task's metrics) and draw ``metric``, one of them."""
        offer_metrics(self.metric_box, choices)
        self.metric_box.setCurrentIndex(self.metric_box.findData(metric))

    def clear(self) -> None:
        """Forget every trial."""
        for item in self.items.values():
            self.plot.removeItem(item)
        self.items.clear()
        self.rows.clear()
        self._dirty.clear()
        self.best = None

    def set_epochs(self, number: int, rows: list[dict[str, float]]) -> None:
        """Trial ``number``'s epochs so far (each a dict with ``epoch`` and metrics)."""
        self.rows[number] = list(rows)
        self._dirty.add(number)

    def add_epoch(self, number: int, row: dict[str, float]) -> None:
        """One more epoch of trial ``number``."""
        self.rows.setdefault(number, []).append(row)
        self._dirty.add(number)

    def set_best(self, number: int | None) -> None:
        """Draw trial ``number`` thick, on top of the others."""
        if number != self.best:
            self._dirty.update(n for n in (self.best, number) if n is not None)
            self.best = number

    def drawn(self, number: int) -> int:
        """How many points trial ``number``'s line shows."""
        item = self.items.get(number)
        x = item.getData()[0] if item is not None else None
        return 0 if x is None else len(x)

    def redraw(self) -> None:
        """Push what changed since the last tick into the plot (called by the timer)."""
        metric = self.metric_box.currentData()
        for number in sorted(self._dirty):
            points = [(r["epoch"], r[metric]) for r in self.rows.get(number, []) if metric in r]
            item = self.items.get(number)
            if item is None:
                item = self.plot.plot(symbol="o", symbolSize=5, antialias=True)
                self.items[number] = item
            best = number == self.best
            pen = trial_pen(number, best)
            item.setPen(pen)
            item.setSymbolBrush(pen.color())
            item.setSymbolPen(None)
            item.setZValue(10 if best else 0)
            x, y = (np.asarray(v, dtype=float) for v in zip(*points, strict=True)) \
                if points else (np.array([]), np.array([]))
            item.setData(x, y)
        self._dirty.clear()

    def _metric_changed(self) -> None:
        metric = self.metric_box.currentData()
        self.plot.setTitle(metric_title(metric) if metric else "")
        self._dirty.update(self.rows)
        self.redraw()
