"""Static bar charts: stacked bars with a category name under each."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg

AXIS_ROOM = 70
"""Pixels of the chart's width taken by the left axis and margins."""
CHAR_WIDTH = 7
TICK_GAP = 10
TICK_CHARS = 12
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


def used(bars: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """The bars from the first to the last that is not empty (all of them if all are)."""
    filled = [i for i, bar in enumerate(bars) if bar[key]]
    return bars[filled[0]:filled[-1] + 1] if filled else bars
