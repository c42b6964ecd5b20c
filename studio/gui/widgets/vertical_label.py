"""A one-line text drawn bottom to top: the title of a vertical axis beside a table."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

PADDING = 4


class VerticalLabel(QWidget):
    """Shows ``text`` turned a quarter to the left, centred along its height."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self._text = text
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)

    def text(self) -> str:
        """The text shown."""
        return self._text

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """One line wide, the text's length tall."""
        metrics = self.fontMetrics()
        return QSize(metrics.height() + PADDING, metrics.horizontalAdvance(self._text) + PADDING)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """As wide as the hint; the text may be cut only along a very short axis."""
        return QSize(self.sizeHint().width(), self.fontMetrics().height())

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Draw the text rotated, in the palette's text colour."""
        painter = QPainter(self)
        painter.setPen(self.palette().windowText().color())
        painter.translate(0, self.height())
        painter.rotate(-90)
        painter.drawText(QRect(0, 0, self.height(), self.width()),
                         Qt.AlignmentFlag.AlignCenter, self._text)
        painter.end()
