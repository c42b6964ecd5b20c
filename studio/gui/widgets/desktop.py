"""Handing files to the desktop: a folder opens in the person's file manager."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices


def open_folder(path: Path | str) -> str:
    """Show the folder ``path`` in the desktop's file manager; what went wrong, in one line,
    or an empty string."""
    folder = Path(path)
    if not folder.is_dir():
        return f"The folder {folder} is gone."
    if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
        return f"No file manager could open {folder}."
    return ""
