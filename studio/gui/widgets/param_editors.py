"""One editor widget per parameter kind, all speaking ``value()``/``set_value()``/``edited``."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from studio.core.model.params import Param, parse_shape
from studio.gui.widgets.axes_box import AxesSpinBox
from studio.gui.widgets.forms import narrow_box
from studio.gui.widgets.sync import show_value

INT_LIMIT = 2**31 - 1


class ParamEditor(QWidget):
    """Wraps the right Qt editor for a :class:`Param`."""

    edited = Signal(object)
    """The user set a new value."""
    invalid = Signal(str)
    """The user typed something that cannot be a value; the argument says why."""

    def __init__(self, param: Param) -> None:
        super().__init__()
        self.param = param
        self.widget = self._make()
        self.widget.setToolTip(param.help if param.axes == 1 or param.kind != "int" else
                               f"{param.help} Type {param.per_axis_form()}; the arrows step "
                               "every axis.")
        self.widget.setObjectName(f"param-{param.name}")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget)

    def _make(self) -> QWidget:
        p = self.param
        if p.kind == "bool":
            box = QCheckBox()
            box.toggled.connect(self.edited.emit)
            return box
        if p.kind == "choice":
            combo = narrow_box()  # a long choice must not widen the inspector
            combo.addItems(list(p.choices))
            combo.currentTextChanged.connect(self.edited.emit)
            return combo
        if p.kind == "shape":
            line = QLineEdit()
            line.setPlaceholderText(p.unset if p.optional else "e.g. 28, 28, 1")
            line.editingFinished.connect(self._shape_entered)
            return line
        if p.kind == "int" and p.axes > 1:
            box = AxesSpinBox(p)
            box.editingFinished.connect(self._axes_entered)
            box.stepped.connect(lambda: self.edited.emit(box.value()))
            return box
        if p.kind == "int":
            spin = QSpinBox()
            low = int(p.minimum) if p.minimum is not None else -INT_LIMIT
            if p.optional:
                low -= 1
                spin.setSpecialValueText(p.unset)
            spin.setRange(low, int(p.maximum) if p.maximum is not None else INT_LIMIT)
            spin.valueChanged.connect(lambda v: self.edited.emit(self._unless_lowest(v)))
            return spin
        spin = QDoubleSpinBox()
        spin.setDecimals(6)
        low = p.minimum if p.minimum is not None else -1e9
        if p.optional:  # one step below the lowest value stands for "unset"
            low -= 1
            spin.setSpecialValueText(p.unset)
        spin.setRange(low, p.maximum if p.maximum is not None else 1e9)
        spin.setSingleStep(0.05 if (p.maximum or 0) <= 1 and (p.default or 0) >= 0.01
                           else 0.0001)
        spin.valueChanged.connect(lambda v: self.edited.emit(self._unless_lowest(v)))
        return spin

    def _unless_lowest(self, value: float) -> float | None:
        """``value``, or None for an optional parameter's lowest value, which means unset."""
        if self.param.optional and value == self.widget.minimum():
            return None
        return value

    def _axes_entered(self) -> None:
        before = self.widget.value()
        try:
            value = self.widget.commit()
        except ValueError as exc:
            self.invalid.emit(str(exc))
            return
        if value != before:
            self.edited.emit(value)

    def _shape_entered(self) -> None:
        if self.param.optional and not self.widget.text().strip():
            self.edited.emit(None)
            return
        try:
            shape = parse_shape(self.widget.text())
        except ValueError as exc:
            self.invalid.emit(str(exc))
            return
        self.edited.emit(shape)

    def set_value(self, value: Any) -> None:
        """Show ``value`` without emitting ``edited``; leaves alone an editor already showing it."""
        w = self.widget
        if isinstance(w, QLineEdit):
            value = "" if value is None else ", ".join(str(d) for d in value)
        elif isinstance(w, QSpinBox | QDoubleSpinBox):
            if value is None:
                value = w.minimum()
            elif not w.minimum() <= value <= w.maximum():
                with QSignalBlocker(w):
                    w.setRange(min(w.minimum(), value), max(w.maximum(), value))
        show_value(w, value)
