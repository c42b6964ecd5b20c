"""A spin box for a size that may differ per axis: it steps and reads like a plain spin box
for ``3``, and also takes ``3, 1`` (one number per axis) or, with sides, ``0, 1, 0, 1``."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QAbstractSpinBox

from studio.core.model.params import Param, parse_shape

AUTO = "auto"
"""What an optional size shows when it is not set (a pool's strides follow its size)."""


class AxesSpinBox(QAbstractSpinBox):
    """Edits one per-axis ``Param``: its text is the value; the arrows step every axis."""

    stepped = Signal()
    """The arrows, keys or wheel changed the value."""

    def __init__(self, param: Param) -> None:
        super().__init__()
        self.param = param
        self._value: Any = param.default
        self.lineEdit().setText(self.format(param.default))
        self.setAccelerated(True)

    @staticmethod
    def format(value: Any) -> str:
        """``3``, ``3, 1`` or ``auto``."""
        if value is None:
            return AUTO
        return str(value) if isinstance(value, int) else ", ".join(str(v) for v in value)

    def parse(self, text: str) -> Any:
        """The value ``text`` gives; ValueError says in words why it is not one."""
        typed = text.strip()
        if self.param.optional and typed.lower() in ("", AUTO):
            return None
        numbers = parse_shape(typed) if typed else []
        value: Any = numbers[0] if len(numbers) == 1 else numbers
        problem = self.param.check(value) if numbers else f"{self.param.label} must be set."
        if problem:
            raise ValueError(problem)
        return value

    def value(self) -> Any:
        """The value last entered or stepped to."""
        return self._value

    def setValue(self, value: Any) -> None:  # noqa: N802 - Qt's name, as QSpinBox has
        """Show ``value``; emits nothing."""
        self._value = value
        self.lineEdit().setText(self.format(value))

    def commit(self) -> Any:
        """Take the typed text as the value; ValueError if it is not one (the value stays)."""
        self._value = self.parse(self.text())
        return self._value

    def validate(self, text: str, pos: int) -> object:
        """Only digits, separators and ``auto`` can be typed; whether they make a value is
        said when the edit is finished (see ``commit``)."""
        if set(text) <= set("0123456789, ×x") or (
                self.param.optional and AUTO.startswith(text.strip().lower())):
            return QValidator.State.Acceptable
        return QValidator.State.Invalid

    def _bounds(self) -> tuple[int, int]:
        low = int(self.param.minimum) if self.param.minimum is not None else 0
        return low, int(self.param.maximum) if self.param.maximum is not None else 2**31 - 1

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt's name
        """Step the square value, or every axis of a per-axis one, within the bounds; an
        optional size steps down from its minimum to ``auto``."""
        low, high = self._bounds()
        value = self._value
        if value is None:
            value = low if steps > 0 else None
        elif isinstance(value, int):
            value = value + steps
            if value < low:
                value = None if self.param.optional else low
            value = value if value is None else min(value, high)
        else:
            value = [min(max(v + steps, low), high) for v in value]
        if value != self._value:
            self.setValue(value)
            self.stepped.emit()

    def stepEnabled(self) -> QAbstractSpinBox.StepEnabledFlag:  # noqa: N802 - Qt's name
        low, high = self._bounds()
        value = self._value
        flags = QAbstractSpinBox.StepEnabledFlag.StepNone
        sizes = [] if value is None else [value] if isinstance(value, int) else value
        if value is None or any(v < high for v in sizes):
            flags |= QAbstractSpinBox.StepEnabledFlag.StepUpEnabled
        if value is not None and (self.param.optional or any(v > low for v in sizes)):
            flags |= QAbstractSpinBox.StepEnabledFlag.StepDownEnabled
        return flags
