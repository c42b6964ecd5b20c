"""A layout of widgets in rows of equal columns, as many as fit its width: cards stand side by
side on a wide window and stack on a narrow one."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget


class FlowGrid(QLayout):
    """Widgets in reading order, in rows of as many equal columns as fit the width (a column
    as wide as the widest widget wants, at least), each row as tall as its tallest widget;
    hidden widgets take no place. Its height follows its width (heightForWidth), so a scroll
    area holding it scrolls just the rows there are."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 8) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setSpacing(spacing)

    def insertWidget(self, index: int, widget: QWidget) -> None:  # noqa: N802 - as QBoxLayout
        """Put ``widget`` at ``index`` in the reading order."""
        self.addWidget(widget)  # Qt makes (and owns) its item, which addItem appends
        self._items.insert(index, self._items.pop())

    def columns(self) -> int:
        """How many columns the widgets stand in at the layout's width now."""
        return self._arrange(self.geometry(), place=False)[0]

    # QLayout's interface

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt's name
        return Qt.Orientation.Horizontal

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        return self._arrange(QRect(0, 0, width, 0), place=False)[1]

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt's name
        super().setGeometry(rect)
        self._arrange(rect, place=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt's name
        """One column wide: a narrower space scrolls sideways rather than squeezing a card."""
        left, top, right, bottom = self.getContentsMargins()
        width = max((item.minimumSize().width() for item in self._shown()), default=0)
        return QSize(width + left + right, top + bottom)

    def _shown(self) -> list[QLayoutItem]:
        return [item for item in self._items if not item.isEmpty()]

    def _arrange(self, rect: QRect, place: bool) -> tuple[int, int]:
        """The columns and the height the widgets take in ``rect``; with ``place``, put them
        there."""
        left, top, right, bottom = self.getContentsMargins()
        area = rect.adjusted(left, top, -right, -bottom)
        items, gap = self._shown(), self.spacing()
        if not items:
            return 1, top + bottom
        wanted = max(item.sizeHint().width() for item in items)
        columns = max(1, (area.width() + gap) // (wanted + gap))
        width = max(1, (area.width() - gap * (columns - 1)) // columns)
        y = area.y()
        for start in range(0, len(items), columns):
            row = items[start:start + columns]
            height = max(item.heightForWidth(width) if item.hasHeightForWidth()
                         else item.sizeHint().height() for item in row)
            if place:
                for column, item in enumerate(row):
                    item.setGeometry(QRect(area.x() + column * (width + gap), y, width, height))
            y += height + gap
        return columns, y - gap - area.y() + top + bottom
