"""The camera's live picture, as large as the widget allows with its proportions kept."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from studio.gui.widgets.images import array_image

BACKGROUND = QColor("#202124")
TEXT = QColor("#e8eaed")


class FramePreview(QWidget):
    """Paints the newest frame it was given, or a line of text while there is none."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("camera-preview")
        self.setMinimumSize(160, 120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.frame: np.ndarray | None = None
        """The frame shown (uint8 H × W × 3), or None."""
        self.text = ""
        self._image = QImage()

    def show_frame(self, frame: np.ndarray) -> None:
        """Show ``frame`` until the next one."""
        self.frame = np.ascontiguousarray(frame)
        self._image = array_image(self.frame)  # over the frame's memory, kept with it
        self.update()

    def show_text(self, text: str) -> None:
        """Show ``text`` instead of a frame (the camera is off, say)."""
        self.frame, self._image, self.text = None, QImage(), text
        self.update()

    def target(self) -> QRectF:
        """Where the frame is drawn: as large as fits, centred, keeping its proportions."""
        if self._image.isNull():
            return QRectF()
        side = min(self.width() / self._image.width(), self.height() / self._image.height())
        width, height = self._image.width() * side, self._image.height() * side
        return QRectF((self.width() - width) / 2, (self.height() - height) / 2, width, height)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.fillRect(self.rect(), BACKGROUND)
        if self._image.isNull():
            painter.setPen(TEXT)
            painter.drawText(self.rect().adjusted(12, 12, -12, -12),
                             Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.text)
        else:
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            painter.drawImage(self.target(), self._image)
        painter.end()
