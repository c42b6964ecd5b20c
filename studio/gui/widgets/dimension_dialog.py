"""The dialog that makes one value of the project a search dimension: a list of values or a
range, showing live the points it gives or why it is refused; and the undoable edits that add,
replace or remove a dimension."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.messages import count
from studio.core.model.params import Param
from studio.core.project.document import Dimension, Project
from studio.core.search.space import (
    DEFAULT_POINTS,
    SearchSpaceError,
    check_dimension,
    current_value,
    param_for,
    parse_number,
    parse_values,
    start_value,
    target_label,
)
from studio.gui.widgets.document import ProjectDocument

ERROR_STYLE = "color: #b3261e;"
SHOWN_POINTS = 12
"""How many points the preview lists before it says how many more there are."""


def format_value(value: Any) -> str:
    """A searched value as a person reads it: ``0.001``, ``1e-05``, ``on``, ``relu``."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):  # a size per axis
        return " × ".join(str(v) for v in value)
    return str(value)


def format_points(points: list[Any], limit: int = SHOWN_POINTS) -> str:
    """``points`` joined by commas, the list cut after ``limit`` with how many more."""
    shown = ", ".join(format_value(p) for p in points[:limit])
    return shown + (f" … and {len(points) - limit} more" if len(points) > limit else "")


def dimension_of(project: Project, target: str) -> Dimension | None:
    """The dimension of ``project``'s search over ``target``, or None."""
    return next((d for d in project.search.dimensions if d.target == target), None)


def set_dimension(doc: ProjectDocument, dimension: Dimension) -> None:
    """Add ``dimension`` to the search, or replace the one over the same value: one undo step."""
    label = target_label(dimension.target)

    def change(project: Project) -> None:
        dimensions = project.search.dimensions
        for index, old in enumerate(dimensions):
            if old.target == dimension.target:
                dimensions[index] = dimension
                return
        dimensions.append(dimension)

    doc.edit(f"Search {label.lower()}", change)


def remove_dimension(doc: ProjectDocument, target: str) -> None:
    """Stop searching ``target``: one undo step."""

    def change(project: Project) -> None:
        project.search.dimensions = [d for d in project.search.dimensions if d.target != target]

    doc.edit(f"Stop searching {target_label(target).lower()}", change)


def _line(text: str, tip: str, name: str) -> QLineEdit:
    line = QLineEdit(text)
    line.setToolTip(tip)
    line.setObjectName(name)
    return line


class DimensionDialog(QDialog):
    """Asks which values of ``target`` a search tries, pre-filled with the dimension it has or
    with the current value. OK is enabled only while the values can be searched."""

    def __init__(self, project: Project, target: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.target = target
        self.param = param_for(project, target)
        self.removed = False
        """The person chose "Don't search" (the dialog was accepted to remove the dimension)."""
        existing = dimension_of(project, target)
        now = start_value(project, target)
        self.setWindowTitle(f"Search {target_label(target)}")
        self.setObjectName("dimension-dialog")
        per_axis = " Each value is used on every axis." if self.param.axes > 1 else ""
        intro = QLabel(f"Which values of <b>{target_label(target)}</b> should the search try? "
                       f"It is {format_value(current_value(project, target))} now.{per_axis}")
        intro.setWordWrap(True)
        intro.setObjectName("dimension-intro")
        self.choices: dict[Any, QCheckBox] = {}
        self.list_mode = QRadioButton("A list of values")
        self.range_mode = QRadioButton("A range")
        self.values = _line("", "Values separated by commas, e.g. 0.01, 0.001 (1e-3 works too)",
                            "dimension-values")
        self.low = _line("", "The lowest value of the range", "dimension-low")
        self.high = _line("", "The highest value of the range", "dimension-high")
        self.scale = QComboBox()
        self.scale.setObjectName("dimension-scale")
        self.scale.addItem("linear", "linear")
        self.scale.addItem("log", "log")
        self.scale.setToolTip("Linear spaces the points evenly; log spaces them by equal ratios "
                              "(usual for learning rates and weight decay)")
        self.cut = QComboBox()
        self.cut.setObjectName("dimension-cut")
        self.cut.addItem("points", "count")
        self.cut.addItem("step", "step")
        self.cut.setToolTip("Cut the range into this many points, or step through it (on a log "
                            "scale the step multiplies)")
        self.cut_value = _line(str(DEFAULT_POINTS), "How many points, or the step",
                               "dimension-cut-value")
        self.preview = QLabel()
        self.preview.setObjectName("dimension-preview")
        self.preview.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        if existing is not None:
            unsearch = self.buttons.addButton("Don't search",
                                              QDialogButtonBox.ButtonRole.DestructiveRole)
            unsearch.setToolTip("Remove this dimension from the search")
            unsearch.clicked.connect(self._remove)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        if self.param.kind in ("choice", "bool"):
            layout.addLayout(self._choice_boxes(existing, now))
        else:
            layout.addLayout(self._number_fields(existing, now))
        layout.addWidget(self.preview)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(420)
        self.update_preview()

    def _choice_boxes(self, existing: Dimension | None, now: Any) -> QVBoxLayout:
        options = (True, False) if self.param.kind == "bool" else self.param.choices
        chosen = existing.values if existing is not None and existing.values else [now]
        boxes = QVBoxLayout()
        for option in options:
            box = QCheckBox(format_value(option))
            box.setObjectName(f"dimension-choice-{format_value(option)}")
            box.setChecked(option in chosen)
            box.toggled.connect(self.update_preview)
            boxes.addWidget(box)
            self.choices[option] = box
        return boxes

    def _number_fields(self, existing: Dimension | None, now: Any) -> QVBoxLayout:
        ranged = existing is not None and existing.is_range
        self.list_mode.setChecked(not ranged)
        self.range_mode.setChecked(ranged)
        group = QButtonGroup(self)
        group.addButton(self.list_mode)
        group.addButton(self.range_mode)
        if existing is not None and not ranged:
            self.values.setText(", ".join(format_value(v) for v in existing.values))
        else:
            self.values.setText(format_value(now))
        self._fill_range(existing if ranged else None, now)
        range_row = QHBoxLayout()
        for widget in (self.low, QLabel("to"), self.high, self.scale):
            range_row.addWidget(widget)
        cut_row = QHBoxLayout()
        cut_row.addWidget(self.cut_value)
        cut_row.addWidget(self.cut)
        cut_row.addStretch(1)
        form = QFormLayout()
        form.addRow(self.list_mode, self.values)
        form.addRow(self.range_mode, range_row)
        form.addRow("Cut into", cut_row)
        for signal in (self.list_mode.toggled, self.values.textChanged, self.low.textChanged,
                       self.high.textChanged, self.scale.currentIndexChanged,
                       self.cut.currentIndexChanged, self.cut_value.textChanged):
            signal.connect(self.update_preview)
        self.values.textEdited.connect(lambda: self.list_mode.setChecked(True))
        for line in (self.low, self.high, self.cut_value):
            line.textEdited.connect(lambda: self.range_mode.setChecked(True))
        self.cut_value.setMaximumWidth(80)
        column = QVBoxLayout()
        column.addLayout(form)
        return column

    def _fill_range(self, existing: Dimension | None, now: Any) -> None:
        """The range of ``existing``, or one around the current value: a tenth to ten times
        on a log scale for rates, half to twice for whole numbers."""
        if existing is not None:
            low, high, scale = existing.low, existing.high, existing.scale
            cut, amount = ("step", existing.step) if existing.step is not None else (
                "count", existing.count)
        else:
            value = float(now) if isinstance(now, int | float) and now else 1.0
            if self.param.kind == "int":
                low, high, scale = max(1, int(value) // 2), int(value) * 2, "linear"
            elif 0 < value < 1:
                low, high, scale = value / 10, min(value * 10, self._highest(value)), "log"
            else:
                low, high, scale = value / 2, value * 2, "linear"
            cut, amount = "count", DEFAULT_POINTS
        self.low.setText(format_value(low))
        self.high.setText(format_value(high))
        self.scale.setCurrentIndex(self.scale.findData(scale))
        self.cut.setCurrentIndex(self.cut.findData(cut))
        self.cut_value.setText(format_value(amount))

    def _highest(self, value: float) -> float:
        """The largest value the parameter allows (below 1 for fractions), for a range's end."""
        maximum = self.param.maximum
        if maximum is None:
            return value * 10
        return float(maximum) * (0.99 if self.param.exclusive_maximum else 1.0)

    def dimension(self) -> Dimension:
        """The dimension as typed; SearchSpaceError if a typed value is not a number."""
        if self.choices:
            return Dimension(self.target,
                             values=[v for v, box in self.choices.items() if box.isChecked()])
        if self.list_mode.isChecked():
            return Dimension(self.target, values=parse_values(self.values.text(), self.param))
        low = float(parse_number(self.low.text(), self.param))
        high = float(parse_number(self.high.text(), self.param))
        scale = self.scale.currentData()
        if self.cut.currentData() == "count":
            count = parse_number(self.cut_value.text(), Param("Number of points", "int", 0, ""))
            return Dimension(self.target, low=low, high=high, scale=scale, count=int(count))
        step = parse_number(self.cut_value.text(), Param("Step", "float", 0.0, ""))
        return Dimension(self.target, low=low, high=high, scale=scale, step=float(step))

    def points(self) -> list[Any]:
        """The values a grid would try; SearchSpaceError says why there are none."""
        return check_dimension(self.project, self.dimension())

    def update_preview(self) -> None:
        """Show the points the values give, or why they cannot be searched (OK disabled)."""
        ranged = not self.choices and self.range_mode.isChecked()
        for widget in (self.low, self.high, self.scale, self.cut, self.cut_value):
            widget.setEnabled(ranged)
        self.values.setEnabled(not self.choices and not ranged)
        try:
            points = self.points()
        except SearchSpaceError as exc:
            self.preview.setStyleSheet(ERROR_STYLE)
            self.preview.setText(str(exc))
            self.ok.setEnabled(False)
            self.ok.setToolTip(str(exc))
            return
        sampled = " (random and Bayesian search pick anywhere in the range)" if ranged else ""
        self.preview.setStyleSheet("")
        self.preview.setText(f"{count(len(points), 'value')}: {format_points(points)}{sampled}")
        self.ok.setEnabled(True)
        self.ok.setToolTip("Search these values")

    def _remove(self) -> None:
        self.removed = True
        self.accept()


def open_dimension_dialog(parent: QWidget, doc: ProjectDocument, target: str) -> DimensionDialog:
    """Open the dialog for ``target`` (window-modal, not blocking); OK adds or replaces the
    dimension, "Don't search" removes it, each as one undo step."""
    dialog = DimensionDialog(doc.project, target, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def accepted() -> None:
        if dialog.removed:
            remove_dimension(doc, target)
        else:
            set_dimension(doc, dialog.dimension())

    dialog.accepted.connect(accepted)
    dialog.open()
    return dialog
