"""The Pareto front of a search of several objectives: each measured trial a point, its metric
against its first extra objective (latency, else parameters or file size), a second one as the
point's size; the trials on the front drawn strong and joined, the others faint. Clicking a
point picks its trial."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from studio.core.project.document import OBJECTIVES
from studio.core.search.space import OBJECTIVE_NAMES
from studio.core.search.state import TrialRecord
from studio.gui.search.trial_table import metric_title
from studio.gui.widgets.plot_style import PLOT_WIDTH, value_plot

FRONT_COLOR = "#1a73e8"
OTHER_COLOR = (95, 99, 104, 70)
"""The trials off the front: a faint grey."""
POINT_SIZE = 11
SIZE_RANGE = (7.0, 26.0)
"""The smallest and largest point, in pixels, when a second objective sets the size."""
PICKED_COLOR = "#202124"
PICKED_SIZE = SIZE_RANGE[1] + 8
"""The ring around the picked trial's point: larger than the largest point."""


def axes_of(objectives: Sequence[str]) -> tuple[str, str | None]:
    """The objective along the bottom axis (latency first, then parameters or size) and the
    one shown as the points' size, if there is a second."""
    ordered = sorted(objectives, key=OBJECTIVES.index)
    return ordered[0], ordered[1] if len(ordered) > 1 else None


def point_sizes(values: Sequence[float]) -> list[float]:
    """Each of ``values`` as a point size within SIZE_RANGE, the smallest value smallest."""
    low, high = min(values, default=0.0), max(values, default=0.0)
    small, large = SIZE_RANGE
    if high <= low:
        return [(small + large) / 2] * len(values)
    return [small + (v - low) / (high - low) * (large - small) for v in values]


class ParetoPlot(QWidget):
    """The trials of a search of several objectives on the plane of the metric and its first
    extra objective; ``trial_clicked`` says which trial a click picked."""

    trial_clicked = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.plot = value_plot("Pareto front", "")
        self.plot.setObjectName("pareto-plot")
        self.plot.setMinimumWidth(PLOT_WIDTH)
        self.line = self.plot.plot(pen=pg.mkPen(FRONT_COLOR, width=1.5,
                                                style=Qt.PenStyle.DashLine))
        self.scatter = pg.ScatterPlotItem(hoverable=True, tip=self._tip)
        self.scatter.sigClicked.connect(self._clicked)
        self.plot.addItem(self.scatter)
        self.ring = pg.ScatterPlotItem(size=PICKED_SIZE, brush=None,
                                       pen=pg.mkPen(PICKED_COLOR, width=2))
        """Around the point of the trial picked in the table or on the plot."""
        self.plot.addItem(self.ring)
        self.picked: int | None = None
        self.note = QLabel()
        self.note.setObjectName("pareto-note")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #5f6368;")
        self.points: dict[int, tuple[float, float]] = {}
        """Each drawn trial's point (bottom axis, metric), by trial number."""
        self.front: list[int] = []
        self._tips: dict[int, str] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.note)

    def show_trials(self, metric: str, objectives: Sequence[str],
                    trials: Sequence[dict[str, Any]], front: Sequence[int]) -> None:
        """Draw the finished ``trials`` measured in every one of ``objectives`` (TrialRecord
        dicts), those numbered in ``front`` on the front."""
        across, sized = axes_of(objectives)
        measured = [t for t in trials
                    if TrialRecord.from_dict(t).values(objectives) is not None]
        self.points = {t["number"]: (float(t["measures"][across]), float(t["value"]))
                       for t in measured}
        self.front = [n for n in front if n in self.points]
        sizes = (point_sizes([float(t["measures"][sized]) for t in measured]) if sized
                 else [POINT_SIZE] * len(measured))
        self._tips = {t["number"]: self._tip_text(t, metric, objectives) for t in measured}
        spots = []
        for trial, size in zip(measured, sizes, strict=True):
            on_front = trial["number"] in self.front
            spots.append({"pos": self.points[trial["number"]], "data": trial["number"],
                          "size": size,
                          "brush": pg.mkBrush(FRONT_COLOR if on_front else OTHER_COLOR),
                          "pen": pg.mkPen("w" if on_front else None)})
        self.scatter.setData(spots)
        line = sorted(self.points[n] for n in self.front)
        self.line.setData([x for x, _ in line], [y for _, y in line])
        self.plot.setLabel("bottom", OBJECTIVE_NAMES[across])
        self.plot.setLabel("left", metric_title(metric))
        size_words = f" A point's size is its {OBJECTIVE_NAMES[sized].lower()}." if sized else ""
        self.note.setText(f"Blue points are on the front: no other trial is better in every "
                          f"objective.{size_words} Click a point to pick its trial.")
        self.mark(self.picked)

    def mark(self, number: int | None) -> None:
        """Ring the point of trial ``number`` (picked in the table or here); None: no ring,
        as for a trial the plot does not draw."""
        self.picked = number if number in self.points else None
        shown = [self.points[self.picked]] if self.picked is not None else []
        self.ring.setData(pos=shown)

    def clear(self) -> None:
        """Draw no trial."""
        self.points, self.front, self._tips = {}, [], {}
        self.scatter.clear()
        self.line.setData([], [])
        self.mark(None)

    @staticmethod
    def _tip_text(trial: dict[str, Any], metric: str, objectives: Sequence[str]) -> str:
        measures = "\n".join(f"{OBJECTIVE_NAMES[name]}: {trial['measures'][name]:,.4g}"
                             for name in objectives)
        return f"Trial {trial['number']}\n{metric_title(metric)}: {trial['value']:.4f}\n{measures}"

    def _tip(self, x: float, y: float, data: Any) -> str:
        return self._tips.get(data, "")

    def _clicked(self, _item: Any, points: Sequence[Any], _event: Any = None) -> None:
        if len(points):
            self.trial_clicked.emit(int(points[0].data()))
