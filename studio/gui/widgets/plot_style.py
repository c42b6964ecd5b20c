"""One look for every per-epoch plot: white background, a light opaque grid under the curves,
grey tick labels, labelled axes, and the legend under the plot, never over the data."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSize, QSizeF, Qt
from PySide6.QtWidgets import QApplication

GRID_PEN = pg.mkPen("#e3e5e8")
TEXT_PEN = pg.mkPen("#5f6368")
TITLE_COLOR = "#202124"
LEGEND_TEXT_SIZE = "8pt"
ENTRY_SPACING = 8
"""Pixels between a legend's entries (and round a sample's line)."""
LEGEND_GAP = 2
"""Pixels between the bottom axis's label and the legend (pyqtgraph's 9 px round a legend
take a short plot's data area)."""
LEGEND_ROW = 4
"""The row of a plot item's layout under its bottom axis (pyqtgraph fills rows 0 to 3)."""
MIN_DATA_HEIGHT = 80
"""The least height of a plot's data area: a plot is never shorter than this plus its title,
axes, labels and legend (however many rows the legend wraps onto)."""
PLOT_WIDTH = 160
"""The least width of a plot sharing a row with others: three fit a laptop's Search tab."""


class EpochAxis(pg.AxisItem):
    """An axis of epochs: ticks at whole epochs, never 1.2 or 1.4."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803
        """pyqtgraph's tick spacings, none finer than one epoch."""
        return [(max(1.0, spacing), offset if spacing >= 1 else 0.0)
                for spacing, offset in super().tickSpacing(minVal, maxVal, size)]


class EpochPlot(pg.PlotWidget):
    """A plot widget never shorter than its title, axes, labels and legend around a data area
    of MIN_DATA_HEIGHT: a short dock or page scrolls rather than squeeze the data away."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.getPlotItem().vb.setMinimumHeight(MIN_DATA_HEIGHT)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The plot item's least size: its layout's rows, the data's included."""
        least = self.getPlotItem().effectiveSizeHint(Qt.SizeHint.MinimumSize)
        return QSize(math.ceil(least.width()), math.ceil(least.height()))

    def keep_least_height(self) -> None:
        """Hold the widget at the plot item's least height (a layout short of room would
        otherwise squeeze it below its minimumSizeHint)."""
        height = self.minimumSizeHint().height()
        if height != self.minimumHeight():
            self.setMinimumHeight(height)

    def least_height_changed(self) -> None:
        """The legend changed its rows while the plot's layout placed it: check the least
        height once that is over (a layout request, which code that measures layouts can
        deliver at once)."""
        QApplication.postEvent(self, QEvent(QEvent.Type.LayoutRequest))

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.keep_least_height()
        return super().event(event)

    def setTitle(self, title: str, **style) -> None:  # noqa: N802 - pyqtgraph's name
        """Title the plot, in a row as tall as the title's text (pyqtgraph's 30 px row wastes
        room in a short plot)."""
        item = self.getPlotItem()
        item.setTitle(title, **style)
        height = item.titleLabel.effectiveSizeHint(Qt.SizeHint.PreferredSize).height()
        item.layout.setRowFixedHeight(0, math.ceil(height))
        self.keep_least_height()


def epoch_plot(title: str, title_size: str = "10pt", left: str = "",
               legend_columns: int = 0) -> EpochPlot:
    """A plot of values against the epoch, titled ``title``, its axes labelled (``left``
    names the values); with ``legend_columns`` a legend of that many columns under it."""
    plot = value_plot(title, "epoch", left, title_size, EpochAxis("bottom"))
    if legend_columns:
        legend_below(plot, legend_columns)
    plot.keep_least_height()
    return plot


def value_plot(title: str, bottom: str, left: str = "", title_size: str = "10pt",
               bottom_axis: pg.AxisItem | None = None) -> EpochPlot:
    """A plot of one value against another in the look of every plot, titled ``title``, its
    axes labelled ``bottom`` and ``left``.

    The grid is drawn by the axes, which sit under the curves (an opaque grid repaints
    faster than a translucent one)."""
    plot = EpochPlot(background="w", axisItems={"bottom": bottom_axis or pg.AxisItem("bottom")})
    plot.setTitle(title, color=TITLE_COLOR, size=title_size)
    plot.setLabel("bottom", bottom)
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
    return plot


def _row_width(widths: list[float], columns: int) -> float:
    """How wide entries of ``widths`` are laid out in ``columns`` (each as wide as its
    widest entry)."""
    return sum(max(widths[column::columns]) for column in range(columns))


class _LaidOutLegend(pg.LegendItem):
    """A legend placed by its plot's layout (pyqtgraph's moves itself to a corner), in as
    many columns as fit the plot's width: more entries wrap onto more rows, and the legend
    never widens the plot beyond its widget."""

    _laying_out = False
    """True while the plot's layout places the legend (see setGeometry)."""

    def updateSize(self) -> None:  # noqa: N802 - pyqtgraph's name
        """Ask the plot's layout for room for the entries now listed, and the plot widget
        for its least height (once the layout pass, if one is under way, is over)."""
        self.updateGeometry()
        for view in self.scene().views() if self.scene() else ():
            if isinstance(view, EpochPlot):
                view.least_height_changed() if self._laying_out else view.keep_least_height()

    def _entry_widths(self) -> list[float]:
        return [sample.boundingRect().width() + label.minimumWidth() + 2 * ENTRY_SPACING
                for sample, label in self.items]

    def reflow(self, width: float) -> None:
        """Lay the entries out in as many columns as fit ``width``."""
        widths = self._entry_widths()
        columns = max(1, len(widths))
        while columns > 1 and _row_width(widths, columns) > width:
            columns -= 1
        self.setColumnCount(columns)  # calls updateSize if the rows change

    def setGeometry(self, rect) -> None:  # noqa: N802 - Qt's name
        """Reflow the entries into the columns that fit ``rect``'s width."""
        self._laying_out = True
        try:
            self.reflow(rect.width())
        finally:
            self._laying_out = False
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
    legend.layout.setContentsMargins(0, LEGEND_GAP, 0, 0)
    item.layout.addItem(legend, LEGEND_ROW, 1)
    item.layout.setAlignment(legend, Qt.AlignmentFlag.AlignHCenter)
    item.legend = legend
    return legend
