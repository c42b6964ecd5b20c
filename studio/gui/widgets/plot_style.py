"""One look for every per-epoch plot: white background, a light opaque grid under the curves
and legends, grey tick labels."""

from __future__ import annotations

import pyqtgraph as pg

GRID_PEN = pg.mkPen("#e3e5e8")
TEXT_PEN = pg.mkPen("#5f6368")
TITLE_COLOR = "#202124"
LEGEND_BRUSH = pg.mkBrush(255, 255, 255, 235)


class EpochAxis(pg.AxisItem):
    """An axis of epochs: ticks at whole epochs, never 1.2 or 1.4."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803
        """pyqtgraph's tick spacings, none finer than one epoch."""
        return [(max(1.0, spacing), offset if spacing >= 1 else 0.0)
                for spacing, offset in super().tickSpacing(minVal, maxVal, size)]


def epoch_plot(title: str, title_size: str = "10pt", left: str = "",
               legend_offset: tuple[int, int] | None = None,
               legend_columns: int = 1) -> pg.PlotWidget:
    """A plot of values against the epoch, titled ``title``; with ``legend_offset`` a legend
    that far from a corner (negative: from the right or the bottom), in ``legend_columns``.

    The grid is drawn by the axes, which sit under the curves (an opaque grid repaints
    faster than a translucent one, and never crosses a legend's text)."""
    plot = pg.PlotWidget(background="w", axisItems={"bottom": EpochAxis("bottom")})
    plot.setTitle(title, color=TITLE_COLOR, size=title_size)
    plot.setLabel("bottom", "epoch")
    if left:
        plot.setLabel("left", left)
    plot.showGrid(x=True, y=True, alpha=1.0)
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        axis.setPen(GRID_PEN)
        axis.setTextPen(TEXT_PEN)
        axis.setStyle(tickAlpha=255, maxTickLevel=0)
        axis.enableAutoSIPrefix(False)
        axis.setZValue(-1)
    if legend_offset is not None:
        plot.addLegend(offset=legend_offset, labelTextColor=TITLE_COLOR, brush=LEGEND_BRUSH,
                       colCount=legend_columns)
    return plot
