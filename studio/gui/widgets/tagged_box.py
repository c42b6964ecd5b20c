"""A box outlined on a picture with a small coloured tag above it (a class name, a score), as
the Data, Try and Evaluate views draw detection boxes."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen

TAG_PADDING = 4
"""Room beside a tag's text, in pixels."""


def draw_tagged_box(painter: QPainter, rect: QRectF, pen: QPen, tag: str = "",
                    top: float = 0.0) -> None:
    """Outline ``rect`` with ``pen`` and, if ``tag`` is given, write it in white on the pen's
    colour just above the box (below ``top``, the picture's top edge, when the box touches
    it)."""
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRect(rect)
    if not tag:
        return
    metrics = QFontMetrics(painter.font())
    box = QRectF(rect.left(), max(top, rect.top() - metrics.height()),
                 metrics.horizontalAdvance(tag) + TAG_PADDING, metrics.height())
    painter.fillRect(box, pen.color())
    painter.setPen(QColor("white"))
    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, tag)
