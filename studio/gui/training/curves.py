"""Live curves of the loss, the task's score (accuracy, mean absolute error, mAP@0.5), the
loss's parts where the task has them, and the learning rate, redrawn from a timer rather than
on every metric.

The grid is drawn opaque: pyqtgraph's default translucent grid lines made each repaint of the
two plots cost about 25 ms instead of 2 ms, which showed as GUI stalls during training.

The plots are built (and pyqtgraph imported) just after the window first shows them: points
that arrive before are kept and drawn then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QWidget

from studio.core.tasks.registry import DEFAULT_TASK, task_for
from studio.core.tasks.task import Task
from studio.gui.widgets.deferred import Deferred, When
from studio.gui.widgets.plot_size import MIN_HEIGHT

if TYPE_CHECKING:
    import pyqtgraph as pg

REDRAW_MS = 50
SMOOTHING = 0.8
RATE_HEADROOM = 1.1
"""The learning-rate plot reaches this many times the highest planned rate (a constant rate
runs just under the top, not on the frame)."""

_PENS = {  # pyqtgraph's mkPen arguments
    "batch": {"color": "#8ab4f8", "width": 1.5},
    "train": {"color": "#1a73e8", "width": 2.5},
    "val": {"color": "#e8710a", "width": 2.5},
    "planned": {"color": "#9aa0a6", "width": 1.5, "style": Qt.PenStyle.DashLine},
    "actual": {"color": "#188038", "width": 2.5},
}
_PART_COLORS = ("#1a73e8", "#e8710a", "#188038", "#a142f4", "#d01884")
_EPOCH_CURVES = (("batch", "batches"), ("train", "train"), ("val", "validation"))
PLOTS = {"loss": ("Loss", "loss", _EPOCH_CURVES),
         "score": ("Score", "score", _EPOCH_CURVES),
         "parts": ("Loss parts", "loss", ()),
         "learning_rate": ("Learning rate", "rate", (("planned", "planned"),
                                                     ("actual", "used")))}
"""Each plot's title, the label of its values' axis, and its curves (kind, legend label); the
score's title and the parts' curves come from the run's task (``show_task``)."""
_SYMBOLS = {"train": "o", "val": "s"}


class Series:
    """Points of one curve, kept in Python lists and turned into arrays when drawn."""

    def __init__(self, build_plots: Callable[[], object]) -> None:
        self._build_plots = build_plots
        self._item: pg.PlotDataItem | None = None
        self.x: list[float] = []
        self.y: list[float] = []
        self.dirty = False

    @property
    def item(self) -> pg.PlotDataItem:
        """The curve's plot item (the plots are built now if they were not yet)."""
        if self._item is None:
            self._build_plots()
        return self._item

    def attach(self, item: pg.PlotDataItem) -> None:
        """Draw the curve with ``item``, from the points it has so far."""
        self._item = item
        self.dirty = True
        self.draw()

    def append(self, x: float, y: float) -> None:
        """Add one point."""
        self.x.append(x)
        self.y.append(y)
        self.dirty = True

    def replace(self, x, y) -> None:
        """Hold these points instead of those so far (drawn at the next draw)."""
        self.x, self.y, self.dirty = list(x), list(y), True

    def draw(self) -> None:
        """Push the points to the plot item if any arrived since the last draw."""
        if self.dirty and self._item is not None:
            self.dirty = False
            self._item.setData(np.asarray(self.x), np.asarray(self.y))

    def clear(self) -> None:
        """Forget every point."""
        self.x.clear()
        self.y.clear()
        self.dirty = False
        if self._item is not None:
            self._item.setData([], [])


class LiveCurves(QWidget):
    """The loss and the task's score (smoothed batch, epoch and validation curves), the loss's
    parts per epoch, and the learning rate (planned and used)."""

    def __init__(self) -> None:
        super().__init__()
        self._plots: dict[str, pg.PlotWidget] = {}
        self.task: Task = task_for(DEFAULT_TASK)
        """The task whose score and loss parts are drawn."""
        self.place = Deferred(self._build_plots, When.PAINTED)
        """Where the plots go once built."""
        self.place.setMinimumHeight(MIN_HEIGHT)  # the plots' own least height
        self.series = {f"{kind}_{metric}": Series(self.place.widget)
                       for metric, (_, _, kinds) in PLOTS.items() for kind, _ in kinds}
        self._plan_top: float | None = None
        """The top of the learning-rate plot for the planned rate, once planned."""
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.place)
        self._smoothed: dict[str, float] = {}
        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self.redraw)
        self.timer.start()

    @property
    def plots(self) -> dict[str, pg.PlotWidget]:
        """The plots the task draws, by name (built now if they were not yet)."""
        self.place.widget()
        hidden = {"score"} if self.task.curve is None else set()
        hidden |= set() if self.task.loss_parts else {"parts"}
        return {name: plot for name, plot in self._plots.items() if name not in hidden}

    def _build_plots(self) -> QWidget:
        import pyqtgraph as pg

        from studio.gui.widgets.plot_style import epoch_plot

        host = QWidget()
        layout = QHBoxLayout(host)
        layout.setContentsMargins(0, 0, 0, 0)
        for metric, (title, left, kinds) in PLOTS.items():
            plot = epoch_plot(title, "11pt", left=left, legend_columns=len(kinds) or 2)
            plot.setObjectName(f"plot-{metric}")
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            for kind, label in kinds:
                self._attach(plot, f"{kind}_{metric}", label, pg.mkPen(**_PENS[kind]),
                             _SYMBOLS.get(kind))
            self._plots[metric] = plot
            layout.addWidget(plot, 1)  # as wide as each other, whatever their legends
        self._show_plan_range()
        self._show_task_plots()
        return host

    def _attach(self, plot: pg.PlotWidget, name: str, label: str, pen,
                symbol: str | None) -> None:
        self.series[name].attach(plot.plot(name=label, pen=pen, symbol=symbol, symbolSize=7,
                                           symbolBrush=pen.color(), symbolPen=None,
                                           antialias=True))

    def show_task(self, task: Task) -> None:
        """Draw ``task``'s score and loss parts from now on (the curves of another task's
        parts are dropped)."""
        if task is self.task:
            return
        for name in [name for name in self.series if name.startswith("part_")]:
            del self.series[name]
        if "parts" in self._plots:
            self._plots["parts"].clear()
        self.task = task
        for metric, _ in task.loss_parts:
            for kind in ("train", "val"):
                self.series[f"part_{kind}_{metric}"] = Series(self.place.widget)
        self._show_task_plots()

    def _show_task_plots(self) -> None:
        """Title the score plot and fill the parts plot for the task (once the plots are
        built)."""
        if not self._plots:
            return
        import pyqtgraph as pg

        curve, score = self.task.curve, self._plots["score"]
        score.setVisible(curve is not None)
        if curve is not None:
            score.setTitle(curve.title, size="11pt")
            score.setLabel("left", curve.axis)
            if curve.bounded:
                score.setYRange(0, 1, padding=0.02)
            else:
                score.enableAutoRange()
            self._show_training_curves(score, not curve.validation_only)
        parts = self._plots["parts"]
        parts.setVisible(bool(self.task.loss_parts))
        parts.setToolTip("The loss's parts: solid for training, dashed for validation")
        for i, (metric, words) in enumerate(self.task.loss_parts):
            color = _PART_COLORS[i % len(_PART_COLORS)]
            self._attach(parts, f"part_train_{metric}", words, pg.mkPen(color, width=2), "o")
            self._attach(parts, f"part_val_{metric}", None,
                         pg.mkPen(color, width=2, style=Qt.PenStyle.DashLine), None)

    def clear(self) -> None:
        """Start a new run with empty curves."""
        for series in self.series.values():
            series.clear()
        self._smoothed.clear()

    def _batch_series(self) -> list[tuple[str, str]]:
        """Each logged metric drawn per batch (the loss, the task's score), with its series."""
        curve = self.task.curve
        return [("loss", "batch_loss")] + ([(curve.metric, "batch_score")] if curve else [])

    def _epoch_series(self) -> list[tuple[str, str, str]]:
        """Each logged metric drawn per epoch, with its training and validation series: the
        loss, the task's score and the loss's parts."""
        curve = self.task.curve
        return ([("loss", "train_loss", "val_loss")]
                + ([(curve.metric, "train_score", "val_score")] if curve else [])
                + [(metric, f"part_train_{metric}", f"part_val_{metric}")
                   for metric, _ in self.task.loss_parts])

    def _show_training_curves(self, plot: pg.PlotWidget, shown: bool) -> None:
        """Show the score's batch and training curves, and their legend entries, or hide them
        for a score Keras logs on the validation split only."""
        legend = plot.getPlotItem().legend
        for kind, label in _EPOCH_CURVES:  # listed again in their order
            item = self.series[f"{kind}_score"].item
            legend.removeItem(item)
            item.setVisible(shown or kind == "val")
            if item.isVisible():
                legend.addItem(item, label)

    def add_batch(self, x: float, metrics: dict[str, float]) -> None:
        """Add a batch point (x in epochs), smoothed with an exponential moving average."""
        for metric, series in self._batch_series():
            if metric in metrics:
                value = metrics[metric]
                previous = self._smoothed.get(metric, value)
                self._smoothed[metric] = SMOOTHING * previous + (1 - SMOOTHING) * value
                self.series[series].append(x, self._smoothed[metric])

    def add_epoch(self, epoch: int, metrics: dict[str, float]) -> None:
        """Add the end-of-epoch training and validation points, and the loss's parts."""
        for metric, train, val in self._epoch_series():
            if metric in metrics:
                self.series[train].append(epoch, metrics[metric])
            if f"val_{metric}" in metrics:
                self.series[val].append(epoch, metrics[f"val_{metric}"])

    def add_rate(self, x: float, rate: float) -> None:
        """Add the learning rate used at ``x`` (in epochs)."""
        self.series["actual_learning_rate"].append(x, rate)

    def show_plan(self, x, rates) -> None:
        """Draw the planned learning rate over the run (x in epochs), from 0 up."""
        planned = self.series["planned_learning_rate"]
        planned.replace(x, rates)
        planned.draw()
        if len(planned.y):
            self._plan_top = max(planned.y) * RATE_HEADROOM or 1
            self._show_plan_range()

    def _show_plan_range(self) -> None:
        if self._plan_top is not None and self._plots:
            self._plots["learning_rate"].setYRange(0, self._plan_top, padding=0)

    def show_history(self, rows: list[dict[str, float]]) -> None:
        """Draw the epochs a resumed run did before, so its curves go on from there."""
        for row in rows:
            self.add_epoch(int(row["epoch"]), row)
            if "learning_rate" in row:
                self.add_rate(row["epoch"], row["learning_rate"])

    def point_count(self) -> int:
        """How many points the curves of the run hold together (the plan is not counted)."""
        return sum(len(s.x) for name, s in self.series.items()
                   if name != "planned_learning_rate")

    def redraw(self) -> None:
        """Draw what arrived since the last tick (called by the timer)."""
        for series in self.series.values():
            series.draw()
