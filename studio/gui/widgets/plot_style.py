"""One look for every per-epoch plot: white background, a light opaque grid under the curves,
grey tick labels, labelled axes, and the legend under the plot, never over the data."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QSizeF, Qt

from studio.gui.widgets.plot_size import MIN_HEIGHT

GRID_PEN = pg.mkPen("#e3e5e8")
TEXT_PEN = pg.mkPen("#5f6368")
TITLE_COLOR = "#202124"
LEGEND_TEXT_SIZE = "8pt"
ENTRY_SPACING = 8
"""Pixels between a legend's entries (and round a sample's line)."""
LEGEND_ROW = 4
"""The row of a plot item's layout under its bottom axis (pyqtgraph fills rows 0 to 3)."""


class EpochAxis(pg.AxisItem):
    """An axis of epochs: ticks at whole epochs, never 1.2 or 1.4."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803
        """pyqtgraph's tick spacings, none finer than one epoch."""
        return [(max(1.0, spacing), offset if spacing >= 1 else 0.0)
                for spacing, offset in super().tickSpacing(minVal, maxVal, size)]


def epoch_plot(title: str, title_size: str = "10pt", left: str = "",
               legend_columns: int = 0) -> pg.PlotWidget:
    """A plot of values against the epoch, titled ``title``, its axes labelled (``left``
    names the values); with ``legend_columns`` a legend of that many columns under it.

    The grid is drawn by the axes, which sit under the curves (an opaque grid repaints
    faster than a translucent one)."""
    plot = pg.PlotWidget(background="w", axisItems={"bottom": EpochAxis("bottom")})
    plot.setMinimumHeight(MIN_HEIGHT)
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
    if legend_columns:
        legend_below(plot, legend_columns)
    return plot


def _row_width(widths: list[float], columns: int) -> float:
    """How wide entries of ``widths`` are laid out in ``columns`` (each as wide as its
    widest entry)."""
    return sum(max(widths[column::columns]) for column in range(columns))


class _LaidOutLegend(pg.LegendItem):
    """A legend placed by its plot's layout (pyqtgraph's moves itself to a corner), in as
    many columns as fit the plot's width: more entries wrap onto more rows, and the legend
    never widens the plot beyond its widget."""

    def updateSize(self) -> None:  # noqa: N802 - pyqtgraph's name
        """Ask the plot's layout for room for the entries now listed."""
        self.updateGeometry()

    def _entry_widths(self) -> list[float]:
        return [sample.boundingRect().width() + label.minimumWidth() + 2 * ENTRY_SPACING
                for sample, label in self.items]

    def setGeometry(self, rect) -> None:  # noqa: N802 - Qt's name
        """Reflow the entries into the columns that fit ``rect``'s width."""
        widths = self._entry_widths()
        columns = len(widths)
        while columns > 1 and _row_width(widths, columns) > rect.width():
            columns -= 1
        self.setColumnCount(max(1, columns))
        super().setGeometry(rect)

    def sizeHint(self, which, constraint=None) -> QSizeF:  # noqa: N802 - Qt's name
        """At least as wide as the widest entry (one column), however wide the rows."""
        hint = super().sizeHint(which, QSizeF() if constraint is None else constraint)
        if which == Qt.SizeHint.MinimumSize:
            return QSizeF(max(self._entry_widths(), default=0.0), hint.height())
        return hint


def legend_below(plot: pg.PlotWidget, columns: int) -> pg.LegendItem:
    """A legend in ``columns`` under ``plot``'s bottom axis, outside the data, so that it
    never hides a curve or a point; curves added with a name list themselves in it."""
    item = plot.getPlotItem()
    legend = _LaidOutLegend(labelTextColor=TITLE_COLOR, labelTextSize=LEGEND_TEXT_SIZE,
                            colCount=columns, horSpacing=ENTRY_SPACING, verSpacing=-4)
    item.layout.addItem(legend, LEGEND_ROW, 1)
    item.layout.setAlignment(legend, Qt.AlignmentFlag.AlignHCenter)
    item.legend = legend
    return legend
