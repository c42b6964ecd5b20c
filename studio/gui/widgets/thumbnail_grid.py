"""A grid of thumbnails with captions that fills itself a chunk per turn of the event loop, so
that a long list never freezes the window, and says what it would show while empty."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QAbstractItemView, QListView, QListWidget, QListWidgetItem


class ThumbnailGrid(QListWidget):
    """Thumbnails ``side`` pixels a side in cells of ``cell`` with captions under them; says
    ``placeholder`` when empty. ``show_entries`` lists what to show and ``items`` (a
    subclass's) makes the items of ``chunk`` entries at a time."""

    filled = Signal()
    """Every entry asked for is on screen."""

    def __init__(self, placeholder: str, side: int, cell: QSize, chunk: int) -> None:
        super().__init__()
        self.placeholder = placeholder
        self.chunk = chunk
        self.setViewMode(QListView.ViewMode.IconMode)
        self.setIconSize(QSize(side, side))
        self.setGridSize(cell)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setMovement(QListView.Movement.Static)
        self.setUniformItemSizes(True)
        self.setWordWrap(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self._queue: list[Any] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._add_some)

    def show_entries(self, entries: Sequence[Any], placeholder: str | None = None) -> None:
        """Show ``entries`` in place of those before; ``placeholder`` is what to say if
        there are none."""
        self.clear()
        self.placeholder = placeholder or self.placeholder
        self._queue = list(entries)
        self._timer.start()

    def pending(self) -> int:
        """Entries still to be added."""
        return len(self._queue)

    def items(self, chunk: list[Any]) -> list[QListWidgetItem]:
        """The items showing ``chunk`` (some of the entries, in order)."""
        raise NotImplementedError

    @Slot()
    def _add_some(self) -> None:
        chunk, self._queue = self._queue[:self.chunk], self._queue[self.chunk:]
        if not chunk:
            self.viewport().update()
            self.filled.emit()
            return
        for item in self.items(chunk):
            self.addItem(item)
        self._timer.start()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """The placeholder text while there is nothing to show."""
        super().paintEvent(event)
        if self.count() == 0 and not self._queue:
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().placeholderText().color())
            painter.drawText(self.viewport().rect().adjusted(12, 12, -12, -12),
                             Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                             self.placeholder)
            painter.end()
