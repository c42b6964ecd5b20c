"""The optimizer, its learning rate and schedule, with the schedule drawn before training
(its plot is built, and pyqtgraph imported, just after the form first shows)."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QSignalBlocker, QSize, Qt
from PySide6.QtGui import QResizeEvent, QValidator
from PySide6.QtWidgets import (
    QBoxLayout,
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from studio.core.build.estimate import split_sizes
from studio.core.build.optimizers import (
    OPTIMIZER_CLASSES,
    OPTIMIZER_HELP,
    PARAMETERS_BY_OPTIMIZER,
    PARAMETERS_BY_SCHEDULE,
    SCHEDULE_HELP,
    SCHEDULE_LABELS,
    schedule_curve,
    schedule_problems,
)
from studio.core.project.document import Project
from studio.core.search.space import TRAINING_TARGETS, training_target
from studio.core.tasks.registry import task_for
from studio.gui.widgets.deferred import Deferred, When
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.forms import choice_box, hint, show_choice
from studio.gui.widgets.search_button import SearchButton, with_search_button
from studio.gui.widgets.sync import show_value

if TYPE_CHECKING:
    import pyqtgraph as pg

    from studio.core.tasks.task import Task

NOMINAL_STEPS_PER_EPOCH = 100
"""Steps per epoch for the drawn curve while the dataset's size is unknown."""

ADAMW_WEIGHT_DECAY = 0.004
"""The weight decay set when AdamW is picked with none (Keras's default for AdamW)."""

ZERO_STEP = 1e-5
"""Where the up arrow of a rate box goes from 0."""

_NUMBER = re.compile(r"[0-9]*\.?[0-9]*(?:[eE][-+]?[0-9]*)?")
_LADDER = (1, 2, 5)
_ERROR_STYLE = "color: #b3261e;"
_CURVE_PEN = {"color": "#1a73e8", "width": 2}  # pyqtgraph's mkPen arguments
_ACTUAL_PEN = {"color": "#e8710a", "width": 2}
_PLOT_SIZE = (200, 150)
"""The schedule plot's least width and height."""

OPTIMIZER_FIELDS = {
    "momentum": ("Momentum", "How much of the previous update carries into the next one "
                 "(0: none; 0.9 is usual)"),
    "nesterov": ("Nesterov", "Take the gradient after a look ahead along the momentum; often a "
                 "little better. Needs a momentum above 0"),
    "beta_1": ("Beta 1", "How slowly the running average of the gradients forgets (closer to "
               "1: slower; 0.9 is usual)"),
    "beta_2": ("Beta 2", "How slowly the running average of the squared gradients forgets "
               "(0.999 is usual)"),
    "rho": ("Rho", "How slowly the running average of the squared gradients forgets (0.9 is "
            "usual)"),
    "weight_decay": ("Weight decay", "Shrinks every weight a little at each step, against "
                     "overfitting (0: off; 0.004 is usual for AdamW). Type 1e-4 or 0.0001"),
}
"""Label and tooltip of each optimizer parameter."""

SCHEDULE_FIELDS = {
    "step_epochs": ("Every", "How many epochs pass between two drops of the rate"),
    "factor": ("Factor", "What the rate is multiplied by at each drop (0.5 halves it); for the "
               "exponential schedule, in each epoch"),
    "warmup_epochs": ("Warm-up", "Epochs over which the rate rises from 0 to the learning rate "
                      "before it falls (0: no warm-up)"),
    "min_learning_rate": ("Minimum rate", "The rate never falls below this. Type 1e-5 or "
                          "0.00001"),
    "patience": ("Patience", "Epochs without a lower validation loss before the rate drops"),
}
"""Label and tooltip of each schedule parameter."""


def rate_step(value: float, steps: int, minimum: float, maximum: float) -> float:
    """``value`` moved ``steps`` rungs along 1, 2, 5, 10, 20, 50… (a rate between two rungs
    goes to the next one), kept within ``minimum`` and ``maximum``."""
    if value <= 0:
        return value if steps < 0 else min(max(ZERO_STEP, minimum), maximum)
    mantissa, exponent = f"{value:e}".split("e")
    index = bisect.bisect_right(_LADDER, float(mantissa) * (1 + 1e-9)) - 1
    rung = int(exponent) * 3 + index
    on_rung = math.isclose(_rung(rung), value, rel_tol=1e-9)
    rung += steps if on_rung or steps > 0 else steps + 1
    return min(max(_rung(rung), minimum), maximum)


def _rung(index: int) -> float:
    return float(f"{_LADDER[index % 3]}e{index // 3}")


class RateSpinBox(QDoubleSpinBox):
    """A box for rates: takes ``0.0001`` or ``3e-4``, shows six significant digits, and its
    arrows step along 1, 2, 5 × 10ⁿ. The value is taken on Enter or when focus leaves."""

    def __init__(self, minimum: float, maximum: float, tip: str) -> None:
        super().__init__()
        self.setDecimals(15)
        self.setRange(minimum, maximum)
        self.setKeyboardTracking(False)
        self.setToolTip(tip)

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt's name
        mantissa, marker, exponent = f"{value:.6g}".partition("e")
        return f"{mantissa}e{int(exponent)}" if marker else mantissa

    def valueFromText(self, text: str) -> float:  # noqa: N802 - Qt's name
        try:
            return float(text)
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int) -> Any:
        typed = text.strip()
        if not _NUMBER.fullmatch(typed):
            return QValidator.State.Invalid, text, pos
        try:
            value = float(typed)
        except ValueError:
            return QValidator.State.Intermediate, text, pos
        fits = self.minimum() <= value <= self.maximum()
        return (QValidator.State.Acceptable if fits else QValidator.State.Intermediate), text, pos

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt's name
        self.setValue(rate_step(self.value(), steps, self.minimum(), self.maximum()))


def _fraction_box(tip: str, minimum: float = 0.0) -> QDoubleSpinBox:
    """A box for a value below 1 such as a momentum or a beta."""
    box = QDoubleSpinBox()
    box.setDecimals(4)
    box.setRange(minimum, 0.9999)
    box.setSingleStep(0.01)
    box.setToolTip(tip)
    return box


def _epochs_box(minimum: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(minimum, 100_000)
    box.setSuffix(" epochs")
    box.setToolTip(tip)
    return box


class OptimizerForm(QWidget):
    """Optimizer, learning rate and schedule, each change one undoable edit, with the schedule
    drawn over the project's epochs and what cannot work said in red."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.loss = choice_box([], "What training makes smaller")
        self.loss.setObjectName("loss")
        self.loss.activated.connect(
            lambda: self._edit("loss", "loss", self.loss.currentData(), merge=None))
        self.optimizer = choice_box(
            [(OPTIMIZER_CLASSES[name], name, OPTIMIZER_HELP[name]) for name in OPTIMIZER_CLASSES],
            "The rule that updates the weights")
        self.optimizer.setObjectName("optimizer")
        self.optimizer.currentIndexChanged.connect(self._optimizer_picked)
        self.learning_rate = RateSpinBox(1e-8, 10.0, "How big each weight update is, at the "
                                         "start of the schedule. Type 0.001 or 1e-3")
        self.learning_rate.setObjectName("learning-rate")
        self.learning_rate.valueChanged.connect(
            lambda v: self._edit("learning rate", "learning_rate", v))
        self.schedule = choice_box(
            [(SCHEDULE_LABELS[kind], kind, SCHEDULE_HELP[kind]) for kind in SCHEDULE_LABELS],
            "How the learning rate changes during the run")
        self.schedule.setObjectName("schedule")
        self.schedule.setMinimumContentsLength(max(len(text) for text in SCHEDULE_LABELS.values()))
        self.schedule.currentIndexChanged.connect(
            lambda: self._edit_schedule("schedule", "kind", self.schedule.currentData(), None))
        self.fields: dict[str, QWidget] = {
            "momentum": _fraction_box(OPTIMIZER_FIELDS["momentum"][1]),
            "nesterov": QCheckBox("Nesterov momentum"),
            "beta_1": _fraction_box(OPTIMIZER_FIELDS["beta_1"][1]),
            "beta_2": _fraction_box(OPTIMIZER_FIELDS["beta_2"][1]),
            "rho": _fraction_box(OPTIMIZER_FIELDS["rho"][1]),
            "weight_decay": RateSpinBox(0.0, 1.0, OPTIMIZER_FIELDS["weight_decay"][1]),
        }
        self.fields["nesterov"].setToolTip(OPTIMIZER_FIELDS["nesterov"][1])
        self.schedule_fields: dict[str, QWidget] = {
            "step_epochs": _epochs_box(1, SCHEDULE_FIELDS["step_epochs"][1]),
            "factor": _fraction_box(SCHEDULE_FIELDS["factor"][1], minimum=0.0001),
            "warmup_epochs": _epochs_box(0, SCHEDULE_FIELDS["warmup_epochs"][1]),
            "min_learning_rate": RateSpinBox(0.0, 10.0, SCHEDULE_FIELDS["min_learning_rate"][1]),
            "patience": _epochs_box(1, SCHEDULE_FIELDS["patience"][1]),
        }
        self.schedule_fields["factor"].setMaximum(1.0)
        self.search_buttons: dict[str, SearchButton] = {}
        """The Search… button of each setting a search can vary (by its training path)."""
        self.rows: dict[str, QWidget] = {}
        """The field of each setting's form row: its editor, or the editor and its button."""
        self.form = QFormLayout()
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.addRow("Loss", self.loss)  # shown for a task with losses to choose from
        self.form.addRow("Optimizer", self._searchable("optimizer", self.optimizer))
        self.form.addRow("Learning rate", self._searchable("learning_rate", self.learning_rate))
        for name, widget in self.fields.items():
            self._add_field(name, widget, OPTIMIZER_FIELDS[name][0], self._edit)
        self.form.addRow("Schedule", self._searchable("schedule.kind", self.schedule))
        for name, widget in self.schedule_fields.items():
            self._add_field(name, widget, SCHEDULE_FIELDS[name][0], self._edit_schedule)
        self.problems = QLabel()
        self.problems.setObjectName("schedule-problems")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet(_ERROR_STYLE)
        settings = QVBoxLayout()
        settings.addLayout(self.form)
        settings.addStretch(1)

        self.chart = Deferred(self._make_plot, When.PAINTED)
        """Where the schedule's plot goes once built."""
        self.chart.setMinimumSize(*_PLOT_SIZE)
        self._curve: pg.PlotDataItem | None = None
        self._actual: pg.PlotDataItem | None = None
        self._schedule = None
        """The schedule's curve, as last worked out, and the epochs it spans."""
        self._used: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))
        """The rate used in training (epochs, rates)."""
        self.note = hint()
        self.note.setObjectName("schedule-note")
        chart = QVBoxLayout()
        chart.addWidget(self.chart, 1)
        chart.addWidget(self.note)
        self.columns = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        """The settings beside the chart, or above it in a narrow column."""
        self.columns.addLayout(settings)
        self.columns.addLayout(chart, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self.columns, 1)
        layout.addWidget(self.problems)
        doc.changed.connect(self.refresh)
        self.refresh()

    def _side_by_side_width(self) -> int:
        """The least width that shows the settings and the chart side by side."""
        return (self.form.minimumSize().width() + self.columns.spacing()
                + self._chart_width())

    def _chart_width(self) -> int:
        """The chart's least width (its place's, so that laying out builds no plot)."""
        return self.chart.minimumSizeHint().expandedTo(self.chart.minimumSize()).width()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """As narrow as the settings: a narrower column puts the chart under them, so the
        column never scrolls sideways."""
        width = max(self.form.minimumSize().width(), self._chart_width(),
                    self.note.minimumSizeHint().width())
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        """Put the chart beside the settings where both fit, else under them."""
        wide = event.size().width() >= self._side_by_side_width()
        direction = (QBoxLayout.Direction.LeftToRight if wide
                     else QBoxLayout.Direction.TopToBottom)
        if self.columns.direction() != direction:
            self.columns.setDirection(direction)
            self.updateGeometry()  # the least height changed
        super().resizeEvent(event)

    def _searchable(self, path: str, widget: QWidget) -> QWidget:
        """``widget`` with a Search… button for the training setting ``path``."""
        row = with_search_button(widget, self.doc, training_target(path))
        self.search_buttons[path] = row.search_button
        return row

    def _add_field(self, name: str, widget: QWidget, label: str, edit) -> None:
        widget.setObjectName(name.replace("_", "-"))
        what = name.replace("_", " ")
        field = self._searchable(name, widget) if name in TRAINING_TARGETS else widget
        self.rows[name] = field
        if isinstance(widget, QCheckBox):
            widget.toggled.connect(lambda v: edit(what, name, v, None))
            self.form.addRow("", field)
        else:
            widget.valueChanged.connect(lambda v: edit(what, name, v))
            self.form.addRow(label, field)

    @property
    def plot(self) -> pg.PlotWidget:
        """The schedule's plot (built now if it was not yet)."""
        return self.chart.widget()

    @property
    def curve(self) -> pg.PlotDataItem:
        """The schedule's curve in the plot."""
        self.chart.widget()
        return self._curve

    @property
    def actual(self) -> pg.PlotDataItem:
        """The rate used in training, in the plot."""
        self.chart.widget()
        return self._actual

    def _make_plot(self) -> pg.PlotWidget:
        """A small static plot with an opaque grid (a translucent one is slow to repaint)."""
        import pyqtgraph as pg

        from studio.gui.widgets.plot_style import epoch_plot

        plot = epoch_plot("Learning rate", "9pt")
        plot.setObjectName("schedule-plot")
        plot.setMouseEnabled(x=False, y=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMinimumWidth(_PLOT_SIZE[0])
        plot.setToolTip("The learning rate over the run, as the schedule sets it; during "
                        "training the rate actually used is drawn in orange")
        self._curve = plot.plot(pen=pg.mkPen(**_CURVE_PEN), antialias=True)
        self._actual = plot.plot(pen=pg.mkPen(**_ACTUAL_PEN), antialias=True)
        self._draw_plot(plot)
        return plot

    def _edit(self, label: str, field: str, value: Any, merge: str | None = "merge") -> None:
        self.doc.edit(f"Set {label}", lambda p: setattr(p.training, field, value),
                      merge_key=f"training.{field}" if merge else None)

    def _edit_schedule(self, label: str, field: str, value: Any,
                       merge: str | None = "merge") -> None:
        self.doc.edit(f"Set {label}", lambda p: setattr(p.training.schedule, field, value),
                      merge_key=f"training.schedule.{field}" if merge else None)

    def _optimizer_picked(self) -> None:
        name = self.optimizer.currentData()

        def change(project: Project) -> None:
            project.training.optimizer = name
            if name == "adamw" and project.training.weight_decay <= 0:
                project.training.weight_decay = ADAMW_WEIGHT_DECAY

        self.doc.edit(f"Set optimizer to {OPTIMIZER_CLASSES[name]}", change)

    def steps_per_epoch(self) -> int | None:
        """Batches per epoch for the project's data and batch size; None while unknown."""
        info = self.doc.dataset()
        sizes = split_sizes(self.doc.project, info) if info is not None else None
        if not sizes or sizes[0] <= 0:
            return None
        return math.ceil(sizes[0] / self.doc.project.training.batch_size)

    def refresh(self) -> None:
        """Show the document's settings, only the fields that apply, the curve and problems."""
        training = self.doc.project.training
        self._show_loss(task_for(self.doc.project.dataset.task), training.loss)
        show_choice(self.optimizer, training.optimizer)
        self.optimizer.setToolTip(OPTIMIZER_HELP.get(training.optimizer, ""))
        show_choice(self.schedule, training.schedule.kind)
        self.schedule.setToolTip(SCHEDULE_HELP.get(training.schedule.kind, ""))
        show_value(self.learning_rate, training.learning_rate)
        used = set(PARAMETERS_BY_OPTIMIZER.get(training.optimizer, ()))
        for name, widget in self.fields.items():
            show_value(widget, getattr(training, name))
            self.form.setRowVisible(self.rows[name], name in used)
        used = set(PARAMETERS_BY_SCHEDULE.get(training.schedule.kind, ()))
        for name, widget in self.schedule_fields.items():
            show_value(widget, getattr(training.schedule, name))
            self.form.setRowVisible(self.rows[name], name in used)
        problems = schedule_problems(training)
        self.problems.setText("\n".join(problems))
        self.problems.setVisible(bool(problems))
        self._draw()

    def _show_loss(self, task: Task, named: str) -> None:
        """Offer ``task``'s losses with the one the project learns from (``named``, or the
        task's default) chosen; no Loss row for a task with one loss."""
        choices = task.loss_choices
        if [self.loss.itemData(i) for i in range(self.loss.count())] != [
                name for name, _, _ in choices]:
            with QSignalBlocker(self.loss):
                self.loss.clear()
                for index, (name, text, tip) in enumerate(choices):
                    self.loss.addItem(text, name)
                    self.loss.setItemData(index, tip, Qt.ItemDataRole.ToolTipRole)
        self.form.setRowVisible(self.loss, bool(choices))
        if choices:
            chosen = task.chosen_loss(named)
            show_choice(self.loss, chosen)
            self.loss.setToolTip(next(tip for name, _, tip in choices if name == chosen))

    def _draw(self) -> None:
        training = self.doc.project.training
        steps = self.steps_per_epoch()
        curve = schedule_curve(training, training.epochs, steps or NOMINAL_STEPS_PER_EPOCH)
        self._schedule = curve, training.epochs
        if self.chart.is_built():
            self._draw_plot(self.plot)
        notes = [curve.note] if curve.note else []
        if steps is None:
            notes.append(f"Drawn for {NOMINAL_STEPS_PER_EPOCH} steps per epoch until the "
                         "data's size is known.")
        self.note.setText(" ".join(notes))
        self.note.setVisible(bool(notes))

    def _draw_plot(self, plot: pg.PlotWidget) -> None:
        """Draw the schedule and the rate used in ``plot``."""
        curve, epochs = self._schedule
        self._curve.setData(curve.x, curve.rate)
        self._actual.setData(*self._used)
        plot.setXRange(0, epochs, padding=0.02)
        plot.setYRange(0, float(np.max(curve.rate)), padding=0.05)

    def show_actual(self, epochs: Sequence[float], rates: Sequence[float]) -> None:
        """Draw the rate actually used during training (x in epochs) over the schedule."""
        self._used = np.asarray(epochs, dtype=float), np.asarray(rates, dtype=float)
        if self.chart.is_built():
            self._actual.setData(*self._used)
