"""Showing a document value in an editor widget without disturbing a person typing into it."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from studio.gui.widgets.axes_box import AxesSpinBox


def shows(widget: QWidget, value: Any) -> bool:
    """True if ``widget`` already shows ``value`` (a decimal box: as it would format it)."""
    if isinstance(widget, QCheckBox):
        return widget.isChecked() == bool(value)
    if isinstance(widget, QComboBox):
        return widget.currentText() == str(value)
    if isinstance(widget, QLineEdit):
        return widget.text() == str(value)
    if isinstance(widget, AxesSpinBox):  # typed text is taken only when the edit is finished
        return widget.text() == widget.format(value)
    if isinstance(widget, QDoubleSpinBox):
        return widget.textFromValue(widget.value()) == widget.textFromValue(value)
    if isinstance(widget, QSpinBox):
        return widget.value() == value
    raise TypeError(f"cannot show a value in a {type(widget).__name__}")


def show_value(widget: QWidget, value: Any) -> None:
    """Make ``widget`` show ``value`` without emitting its change signals.

    Every edit refreshes all editors from the document, including the one being typed into.
    Setting that one again would reformat its text under the cursor (a decimal box turns "0.01"
    into "0.01000", and the next digit typed is refused), so a widget that already shows
    ``value`` is left alone.
    """
    if shows(widget, value):
        return
    with QSignalBlocker(widget):
        if isinstance(widget, QCheckBox):
            widget.setChecked(bool(value))
        elif isinstance(widget, QComboBox):
            widget.setCurrentText(str(value))
        elif isinstance(widget, QLineEdit):
            widget.setText(str(value))
        else:
            widget.setValue(value)
