"""A segmentation mask drawn over its image in a colour per class (background left clear), as
the Try tab's answers and the Evaluate tab's worst images show it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap

from studio.core.inference.mask_files import mask_rgba
from studio.gui.widgets.images import array_pixmap

DEFAULT_OPACITY = 60
"""The overlay's opacity, in percent, before the person moves the slider."""


@dataclass(frozen=True)
class MaskLayers:
    """A mask drawn in its classes' colours: ``overlay`` with background clear (to lay over
    the image), ``colored`` with every class."""

    overlay: QPixmap
    colored: QPixmap

    @classmethod
    def of(cls, mask: np.ndarray, class_names: Sequence[str]) -> MaskLayers:
        return cls(array_pixmap(mask_rgba(mask, class_names, overlay=True)),
                   array_pixmap(mask_rgba(mask, class_names, overlay=False)))


def draw_mask(painter: QPainter, area: QRectF, picture: QImage, layers: MaskLayers,
              mode: str = "overlay", opacity: float = DEFAULT_OPACITY / 100) -> None:
    """Draw ``picture`` in ``area`` with the mask as ``mode`` (one of MODES) says: over it at
    ``opacity``, alone, or not at all. Mask pixels are drawn whole (no blurring)."""
    painter.save()
    painter.fillRect(area, QColor("#f8f9fa"))
    if mode != "mask" and not picture.isNull():
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.drawImage(area, picture)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
    if mode == "overlay":
        painter.setOpacity(opacity)
        painter.drawPixmap(area, layers.overlay, QRectF(layers.overlay.rect()))
    elif mode == "mask":
        painter.drawPixmap(area, layers.colored, QRectF(layers.colored.rect()))
    painter.restore()
