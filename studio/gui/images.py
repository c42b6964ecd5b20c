"""Turning numpy image arrays into Qt pixmaps."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage, QPixmap


def mosaic(images: np.ndarray, columns: int, gap: int = 2) -> np.ndarray:
    """Tile uint8 images (N × H × W [× 1]) into one grey uint8 picture with white gaps."""
    images = images.reshape(images.shape[:3])
    count, height, width = images.shape
    rows = -(-count // columns)
    out = np.full((rows * (height + gap) - gap, columns * (width + gap) - gap), 255, np.uint8)
    for index, image in enumerate(images):
        r, c = divmod(index, columns)
        top, left = r * (height + gap), c * (width + gap)
        out[top : top + height, left : left + width] = 255 - image
    return out


def grey_pixmap(picture: np.ndarray, scale: int = 1) -> QPixmap:
    """A pixmap of a 2-D uint8 array, enlarged ``scale`` times without blurring."""
    picture = np.ascontiguousarray(np.kron(picture, np.ones((scale, scale), np.uint8)))
    height, width = picture.shape
    image = QImage(picture.data, width, height, width, QImage.Format.Format_Grayscale8)
    return QPixmap.fromImage(image.copy())
