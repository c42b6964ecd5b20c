"""Turning numpy image arrays into Qt pixmaps."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage, QPixmap

GAP_COLOR = 255


def mosaic(images: np.ndarray, columns: int, gap: int = 2) -> np.ndarray:
    """Tile uint8 images (N × H × W, grey, or N × H × W × C) row by row into one picture,
    ``columns`` across, with white gaps between them."""
    count, height, width = images.shape[:3]
    rows = -(-count // columns)
    out = np.full((rows * (height + gap) - gap, columns * (width + gap) - gap,
                   *images.shape[3:]), GAP_COLOR, np.uint8)
    for index, image in enumerate(images):
        r, c = divmod(index, columns)
        top, left = r * (height + gap), c * (width + gap)
        out[top : top + height, left : left + width] = image
    return out


def array_pixmap(image: np.ndarray, scale: int = 1) -> QPixmap:
    """A pixmap of a uint8 image: H × W or H × W × 1 (grey), H × W × 3 (RGB) or 4 (RGBA),
    enlarged ``scale`` times without blurring."""
    image = image if image.ndim == 3 else image[..., None]
    if scale > 1:
        image = image.repeat(scale, axis=0).repeat(scale, axis=1)
    return QPixmap.fromImage(array_image(np.ascontiguousarray(image, np.uint8)).copy())


def array_image(image: np.ndarray) -> QImage:
    """A QImage over a C-contiguous uint8 image's own memory (H × W × 1, 3 or 4), not a
    copy: the array must outlive the QImage."""
    height, width, channels = image.shape
    formats = {1: QImage.Format.Format_Grayscale8, 3: QImage.Format.Format_RGB888,
               4: QImage.Format.Format_RGBA8888}
    return QImage(image.data, width, height, width * channels, formats[channels])


def image_array(image: QImage, grey: bool = False) -> np.ndarray:
    """A copy of ``image``'s pixels as uint8 H × W × 3 (RGB), or H × W × 1 with ``grey``."""
    image = image.convertToFormat(QImage.Format.Format_Grayscale8 if grey
                                  else QImage.Format.Format_RGB888)
    width, height, line = image.width(), image.height(), image.bytesPerLine()
    channels = 1 if grey else 3
    rows = np.frombuffer(image.constBits(), np.uint8, height * line).reshape(height, line)
    return rows[:, : width * channels].reshape(height, width, channels).copy()
