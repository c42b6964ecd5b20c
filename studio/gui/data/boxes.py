"""Boxes drawn on the Data view's pictures: each in its class's colour (the Try tab's), tagged
with the class name, scaled from the pixels of the image the boxes belong to."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap

from studio.core.base.messages import count
from studio.core.tasks.detection.boxes import ImageBoxes
from studio.gui.data.images import ImageGrid, enlarged
from studio.gui.tasks.detection import COLORS
from studio.gui.widgets.tagged_box import draw_tagged_box

PEN = 2
"""The width of a box's outline, in screen pixels."""
TAG_MIN_SIDE = 100
"""Pictures drawn smaller than this (pixels across) show their boxes without class tags, which
would hide the objects."""
NAMES_LISTED = 4


def box_colour(class_index: int) -> QColor:
    """The colour boxes of class ``class_index`` are drawn in."""
    return COLORS[int(class_index) % len(COLORS)]


def box_rects(boxes: ImageBoxes, image_size: tuple[int, int], area: QRectF) -> list[QRectF]:
    """Where ``boxes`` (pixels of an image of ``image_size``, height × width) fall when that
    image is drawn into ``area``."""
    height, width = image_size
    sx, sy = area.width() / max(width, 1), area.height() / max(height, 1)
    return [QRectF(area.left() + x0 * sx, area.top() + y0 * sy, (x1 - x0) * sx, (y1 - y0) * sy)
            for x0, y0, x1, y1 in boxes.boxes.tolist()]


def draw_boxes(painter: QPainter, boxes: ImageBoxes, image_size: tuple[int, int], area: QRectF,
               class_names: Sequence[str], tags: bool = True) -> None:
    """Outline ``boxes`` on the image drawn into ``area``; ``tags`` names each box's class in a
    coloured tag above it (inside the picture when the box touches its top) if the picture is
    large enough for tags."""
    tags = tags and area.width() >= TAG_MIN_SIDE
    painter.save()
    for rect, cls in zip(box_rects(boxes, image_size, area), boxes.classes.tolist(),
                         strict=True):
        name = class_names[cls] if 0 <= cls < len(class_names) else str(cls)
        draw_tagged_box(painter, rect, QPen(box_colour(cls), PEN), name if tags else "",
                        area.top())
    painter.restore()


def boxed(picture: QPixmap, boxes: ImageBoxes, image_size: tuple[int, int],
          class_names: Sequence[str], size: QSize) -> QPixmap:
    """``picture`` enlarged to fit ``size`` and centred on a transparent pixmap of that size,
    with ``boxes`` (pixels of the image as stored, ``image_size``) drawn on it."""
    inner = enlarged(picture, size)
    out = QPixmap(size)
    out.fill(Qt.GlobalColor.transparent)
    area = QRectF((size.width() - inner.width()) // 2, (size.height() - inner.height()) // 2,
                  inner.width(), inner.height())
    painter = QPainter(out)
    painter.drawPixmap(area.topLeft(), inner)
    font = painter.font()
    font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
    painter.setFont(font)
    draw_boxes(painter, boxes, image_size, area, class_names)
    painter.end()
    return out


def boxes_text(boxes: ImageBoxes, class_names: Sequence[str]) -> str:
    """``3 boxes: 7, 1, 4`` (the first few classes named), or ``no boxes (background)``."""
    if not len(boxes):
        return "no boxes (background)"
    names = [class_names[c] if 0 <= c < len(class_names) else str(c)
             for c in boxes.classes.tolist()]
    more = ", …" if len(names) > NAMES_LISTED else ""
    return f"{count(len(names), 'box', 'boxes')}: {', '.join(names[:NAMES_LISTED])}{more}"


class BoxGrid(ImageGrid):
    """An ``ImageGrid`` that draws each image's boxes (pixels of the images shown) on it."""

    def __init__(self, gap: int = 4, first_gap: int = 4) -> None:
        super().__init__(gap, first_gap)
        self.boxes: list[list[ImageBoxes]] = []
        self.class_names: Sequence[str] = ()

    def set_images(self, grid: np.ndarray | None, boxes: list[list[ImageBoxes]] | None = None,
                   class_names: Sequence[str] = ()) -> None:
        """Show the images as ``ImageGrid`` does, with ``boxes[row][column]`` on each (None:
        no boxes)."""
        self.boxes, self.class_names = boxes or [], class_names
        super().set_images(grid)

    def drawn_boxes(self, row: int, column: int) -> list[QRectF]:
        """Where the boxes of the image at ``row``, ``column`` are drawn, in widget pixels."""
        if row >= len(self.boxes):
            return []
        return box_rects(self.boxes[row][column],
                         (self._image_size.height(), self._image_size.width()),
                         QRectF(self.image_rect(row, column)))

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Draw the images, then their boxes."""
        super().paintEvent(event)
        if not self.boxes or self.zoom() <= 0:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        size = (self._image_size.height(), self._image_size.width())
        for r, row in enumerate(self.boxes):
            for c, boxes in enumerate(row):
                draw_boxes(painter, boxes, size, QRectF(self.image_rect(r, c)),
                           self.class_names)
        painter.end()
