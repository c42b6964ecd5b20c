"""A parallel-coordinates plot of a search: one vertical axis per searched value and one for
the metric, each trial a line across them coloured by its metric, the best one emphasised.
Categorical values are spread along their axis, log ranges drawn on a log axis."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QLinearGradient, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QVBoxLayout, QWidget

from studio.core.project.document import Dimension
from studio.gui.widgets.dimension_dialog import format_value
from studio.gui.widgets.plot_style import GRID_PEN, PLOT_WIDTH, TEXT_PEN, TITLE_COLOR

LOG_RATIO = 100.0
"""A list of positive numbers spanning this ratio or more is drawn on a log axis."""
COLOR_MAP = "viridis"
MAX_MARKS = 6
"""A list of at most this many numbers has each labelled on its axis."""
BEST_PEN = pg.mkPen("#d93025", width=4)
TOP = 1.0
LABEL_FILL = pg.mkBrush(255, 255, 255, 240)
LABEL_Z = 100
"""Labels are drawn over the trials' lines, on a background, so that no line hides them."""
METRIC_MARKS = 4
"""About how many steps the metric's axis is labelled in, besides its ends."""
SCALE_WIDTH = 0.06
"""The width of the colour scale drawn along the metric's axis, in axis spacings."""
RIGHT_ROOM = 0.7
"""Room right of the last axis for its labels, in axis spacings."""
LABEL_ROOM = 0.3
"""Room above the axes for their titles, as a fraction of an axis's height."""


@dataclass
class Axis:
    """One vertical axis: a label and how a value finds its height (0 at the bottom, 1 at the
    top): spread categories, or a linear or log span from ``low`` to ``high``."""

    label: str
    low: float = 0.0
    high: float = 1.0
    log: bool = False
    categories: list[Any] = field(default_factory=list)
    text: Callable[[Any], str] = format_value
    marks: list[float] = field(default_factory=list)
    """Values labelled along a numeric axis besides its ends (a list's values)."""
    """How a value on the axis is written."""

    @property
    def categorical(self) -> bool:
        """True for values that are not numbers (choices, on/off)."""
        return bool(self.categories)

    def position(self, value: Any) -> float | None:
        """Where ``value`` sits on the axis, or None if it cannot be placed."""
        if self.categorical:
            if value not in self.categories:
                return None
            count = len(self.categories)
            return 0.5 if count == 1 else self.categories.index(value) / (count - 1)
        if value is None or isinstance(value, bool) or not isinstance(value, int | float):
            return None
        low, high, value = float(self.low), float(self.high), float(value)
        if self.log:
            if value <= 0:
                return None
            low, high, value = math.log(low), math.log(high), math.log(value)
        return 0.5 if high == low else (value - low) / (high - low)

    def ticks(self) -> list[tuple[float, str]]:
        """(height, text) of the labels along the axis."""
        if self.categorical:
            return [(self.position(c), self.text(c)) for c in self.categories]
        values = sorted({self.low, self.high, *self.marks})
        return [(self.position(value), self.text(value)) for value in values]


def _numbers(values: list[Any]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def axis_for(label: str, dimension: Dimension, seen: list[Any]) -> Axis:
    """The axis of a searched value: its dimension's list or range, widened to the values
    ``seen`` in trials (random and Bayesian search sample inside a range)."""
    listed = list(dimension.values or [])
    values = [v for v in [*listed, *seen] if v is not None]
    if dimension.is_range or (values and _numbers(values)):
        numbers = [float(v) for v in values if _numbers([v])]
        ends = [float(e) for e in (dimension.low, dimension.high) if e is not None]
        low, high = min([*numbers, *ends], default=0.0), max([*numbers, *ends], default=1.0)
        log = low > 0 and (dimension.scale == "log" if dimension.is_range
                           else high / low >= LOG_RATIO)
        marks = [float(v) for v in listed] if len(listed) <= MAX_MARKS else []
        return Axis(label, low, high, log, marks=marks)
    categories = []
    for value in values:
        if value not in categories:
            categories.append(value)
    return Axis(label, categories=categories)


def round_marks(low: float, high: float, steps: int = METRIC_MARKS) -> list[float]:
    """Round values between ``low`` and ``high`` (steps of 1, 2 or 5 × 10ⁿ, about ``steps``
    of them across), none so near an end that their labels would overlap."""
    if not high > low:
        return []
    rough = (high - low) / steps
    power = 10.0 ** math.floor(math.log10(rough))
    step = min((m * power for m in (1, 2, 5, 10)), key=lambda step: abs(step - rough))
    marks, value = [], math.ceil(low / step) * step
    while value < high - step / 3:
        if value > low + step / 3:
            marks.append(round(value, 12))
        value += step
    return marks


def metric_axis(label: str, values: list[float]) -> Axis:
    """The metric's axis over the trials' values, labelled at its ends and round steps."""
    usable = [v for v in values if v is not None and math.isfinite(v)]
    low, high = min(usable, default=0.0), max(usable, default=1.0)
    return Axis(label, low, high, text=lambda value: f"{value:.4g}",
                marks=round_marks(low, high))


class ParallelCoordinates(QWidget):
    """Trials as lines across the axes of their values and their metric."""

    def __init__(self) -> None:
        super().__init__()
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("parallel-coordinates")
        self.plot.setTitle("Values against the metric", color=TITLE_COLOR, size="10pt")
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMinimumSize(PLOT_WIDTH, 160)
        self.plot.setToolTip("One vertical axis per searched value and one for the metric; "
                             "each trial is a line, coloured by its metric (yellow is best), the "
                             "best trial in red")
        self.colors = pg.colormap.get(COLOR_MAP)
        self.axes: list[Axis] = []
        self.lines: dict[int, pg.PlotDataItem] = {}
        self.labels: list[pg.TextItem] = []
        """The axes' titles and tick labels."""
        self.scale: QGraphicsRectItem | None = None
        """The metric's colour scale, along its axis."""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self._say_empty()

    def _say_empty(self) -> None:
        note = pg.TextItem("Each finished trial becomes a line here", color=TEXT_PEN.color(),
                           anchor=(0.5, 0.5))
        note.setPos(0.5, 0.5)
        self.plot.addItem(note)
        self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def show_trials(self, labelled: list[tuple[str, Dimension]], metric_label: str,
                    trials: list[dict[str, Any]], minimize: bool, best: int | None) -> None:
        """Draw the finished ``trials`` (TrialRecord dicts with a value) over one axis per
        (label, dimension) and the metric."""
        self.plot.clear()
        self.lines, self.labels, self.scale = {}, [], None
        scored = [t for t in trials if t.get("value") is not None
                  and math.isfinite(t["value"])]
        self.axes = [axis_for(label, dimension,
                              [t.get("params", {}).get(dimension.target) for t in scored])
                     for label, dimension in labelled]
        if not scored:
            self.axes = []
            self._say_empty()
            return
        self.axes.append(metric_axis(metric_label, [t["value"] for t in scored]))
        self._draw_axes()
        self._draw_scale(minimize)
        metric = self.axes[-1]
        ordered = sorted(scored, key=lambda t: t["number"] == best)  # the best drawn last
        for trial in ordered:
            heights = [axis.position(trial.get("params", {}).get(dimension.target))
                       for axis, (_, dimension) in zip(self.axes, labelled, strict=False)]
            heights.append(metric.position(trial["value"]))
            if any(h is None for h in heights):
                continue
            pen = BEST_PEN if trial["number"] == best else pg.mkPen(
                self.color_at(heights[-1], minimize), width=2)
            line = self.plot.plot(np.arange(len(heights), dtype=float),
                                  np.asarray(heights, dtype=float), pen=pen, antialias=True)
            self.lines[trial["number"]] = line
        self.plot.setXRange(-0.45, len(self.axes) - 1 + RIGHT_ROOM, padding=0)
        self.plot.setYRange(-0.06, TOP + LABEL_ROOM, padding=0)

    def color_at(self, height: float, minimize: bool) -> QColor:
        """The colour of a metric at ``height`` on its axis: yellow is best."""
        return self.colors.map(1 - height if minimize else height, mode="qcolor")

    def _draw_axes(self) -> None:
        for index, axis in enumerate(self.axes):
            self.plot.addItem(pg.PlotDataItem([index, index], [0, TOP], pen=GRID_PEN))
            title = self._label(axis.label.replace(" · ", "\n"), TITLE_COLOR, (0.5, 0.5))
            title.setPos(index, TOP + LABEL_ROOM / 2)
            for height, text in axis.ticks():
                self._label(text, TEXT_PEN.color(), (0.0, 0.5)).setPos(
                    index + SCALE_WIDTH, height)

    def _label(self, text: str, color, anchor: tuple[float, float]) -> pg.TextItem:
        """A label over every line, on a background."""
        label = pg.TextItem(text, color=color, anchor=anchor, fill=LABEL_FILL)
        label.setZValue(LABEL_Z)
        self.plot.addItem(label)
        self.labels.append(label)
        return label

    def _draw_scale(self, minimize: bool) -> None:
        """The metric's axis drawn as its colour scale: each height in the colour of a trial
        line ending there."""
        gradient = QLinearGradient(0, 0, 0, TOP)
        for stop in np.linspace(0.0, 1.0, 11):
            gradient.setColorAt(stop, self.color_at(stop, minimize))
        index = len(self.axes) - 1
        self.scale = QGraphicsRectItem(index - SCALE_WIDTH / 2, 0, SCALE_WIDTH, TOP)
        self.scale.setBrush(QBrush(gradient))
        self.scale.setPen(QPen(Qt.PenStyle.NoPen))
        self.scale.setToolTip("The colour scale of the metric: each trial's line has the "
                              "colour of its metric on this axis")
        self.plot.addItem(self.scale)
