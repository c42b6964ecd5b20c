"""Showing an error to the person, and remembering the last one shown for a bug report."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

_last = [""]
"""The last error shown, as ``title: message`` (one app, one last error)."""


def note_error(title: str, message: str) -> None:
    """Remember an error shown some other way than :func:`show_error` (a red status line)."""
    _last[0] = f"{title}: {message}"


def show_error(parent: QWidget | None, title: str, message: str) -> None:
    """Tell the person what went wrong, in a dialog, and remember it."""
    note_error(title, message)
    QMessageBox.warning(parent, title, message)


def last_error() -> str:
    """The last error shown, or an empty string."""
    return _last[0]
