"""Images for the Data view: decoding files with Pillow, fitting them, and showing arrays.

The decoding functions run on worker threads; only ``pixmap``, ``enlarged``, ``framed`` and
``ImageGrid`` touch Qt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageOps
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QImage, QPainter, QPixmap
from PySide6.QtWidgets import QSizePolicy, QWidget

THUMBNAIL = 96
"""The longest side of a sample thumbnail, in pixels."""
_WIDE_MODES = ("I;16", "I;16B", "I;16L", "I;16N", "I")


def _eight_bit(image: Image.Image) -> Image.Image:
    """``image`` as L or RGB: 16-bit grey scaled down, palette, alpha and CMYK dropped."""
    if image.mode in _WIDE_MODES:
        wide = np.asarray(image).astype(np.uint32)
        return Image.fromarray((np.minimum(wide, 65535) >> 8).astype(np.uint8), "L")
    if image.mode == "F":
        return Image.fromarray(np.clip(np.asarray(image), 0, 255).astype(np.uint8), "L")
    if image.mode in ("L", "RGB"):
        return image
    return image.convert("L" if image.mode in ("1", "LA") else "RGB")


def as_array(image: Image.Image) -> np.ndarray:
    """A Pillow image as uint8 H × W × C (C is 1 or 3)."""
    array = np.asarray(_eight_bit(image), dtype=np.uint8)
    return array[..., np.newaxis] if array.ndim == 2 else array


def thumbnail(path: Path, size: int = THUMBNAIL) -> np.ndarray | None:
    """The image file shrunk to fit ``size`` pixels, uint8 H × W × C; None if unreadable."""
    try:
        with Image.open(path) as image:
            image.draft(None, (size, size))
            small = _eight_bit(image)
            small.thumbnail((size, size))
            return as_array(small)
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


def read_array(path: Path) -> np.ndarray | None:
    """The whole image file as uint8 H × W × C; None if it cannot be read."""
    try:
        with Image.open(path) as image:
            return as_array(image)
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


def fit(array: np.ndarray, size: tuple[int, int] | None, resize: str, channels: int
        ) -> np.ndarray:
    """An H × W × C image at ``size`` (height, width) with ``channels``, as training reads it.

    ``resize`` is ``squash`` (stretch), ``crop`` (centre crop to the aspect, then scale) or
    ``pad`` (scale to fit, then pad with black).
    """
    image = Image.fromarray(array[..., 0] if array.shape[-1] == 1 else array)
    image = image.convert("L" if channels == 1 else "RGB")
    if size is not None and tuple(size) != (array.shape[0], array.shape[1]):
        target = (int(size[1]), int(size[0]))
        method = Image.Resampling.BILINEAR
        if resize == "crop":
            image = ImageOps.fit(image, target, method)
        elif resize == "pad":
            image = ImageOps.pad(image, target, method, color=0)
        else:
            image = image.resize(target, method)
    return as_array(image)


def pixmap(array: np.ndarray) -> QPixmap:
    """A pixmap of a uint8 H × W × C array (C is 1 or 3)."""
    array = np.ascontiguousarray(array)
    height, width, channels = array.shape
    fmt = QImage.Format.Format_Grayscale8 if channels == 1 else QImage.Format.Format_RGB888
    image = QImage(array.data, width, height, width * channels, fmt)
    return QPixmap.fromImage(image.copy())


def zoom_to_fit(width: int, height: int, space_width: float, space_height: float) -> float:
    """How much to enlarge a ``width`` × ``height`` picture to fill the space keeping its
    aspect: a whole number from twice its size up (every pixel the same size), else exact."""
    zoom = max(min(space_width / max(width, 1), space_height / max(height, 1)), 0.0)
    return float(int(zoom)) if zoom >= 2 else zoom


def _transform(zoom: float) -> Qt.TransformationMode:
    """Nearest neighbour for whole-number zooms (crisp pixels), smooth otherwise."""
    return (Qt.TransformationMode.FastTransformation if zoom >= 1 and zoom.is_integer()
            else Qt.TransformationMode.SmoothTransformation)


def enlarged(picture: QPixmap, size: QSize) -> QPixmap:
    """``picture`` scaled to fit ``size`` keeping its aspect; small images stay crisp."""
    zoom = zoom_to_fit(picture.width(), picture.height(), size.width(), size.height())
    return picture.scaled(max(1, round(picture.width() * zoom)),
                          max(1, round(picture.height() * zoom)),
                          Qt.AspectRatioMode.KeepAspectRatio, _transform(zoom))


def framed(picture: QPixmap, size: QSize) -> QPixmap:
    """``picture`` enlarged to fit ``size`` and centred on a transparent pixmap of that size,
    so that pictures of any shape line up."""
    inner = enlarged(picture, size)
    out = QPixmap(size)
    out.fill(Qt.GlobalColor.transparent)
    painter = QPainter(out)
    painter.drawPixmap((size.width() - inner.width()) // 2,
                       (size.height() - inner.height()) // 2, inner)
    painter.end()
    return out


class ImageGrid(QWidget):
    """Rows of same-sized images drawn as large as the widget allows (see ``zoom_to_fit``),
    with ``gap`` pixels between them and ``first_gap`` below the first row; redrawn to
    size on every resize."""

    def __init__(self, gap: int = 4, first_gap: int = 4) -> None:
        super().__init__()
        self.gap, self.first_gap = gap, first_gap
        self.setMinimumSize(120, 120)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self._rows: list[list[QPixmap]] = []
        self._image_size = QSize()

    def set_images(self, grid: np.ndarray | None) -> None:
        """Show R × C × H × W × ch uint8 images (ch is 1 or 3); None shows nothing."""
        self._rows = [] if grid is None else [[pixmap(image) for image in row] for row in grid]
        self._image_size = (QSize(grid.shape[3], grid.shape[2]) if self._rows and len(grid[0])
                            else QSize())
        self.update()

    def zoom(self) -> float:
        """How much the images are enlarged to fill the widget (0 when there are none)."""
        if self._image_size.isEmpty():
            return 0.0
        rows, columns = len(self._rows), len(self._rows[0])
        gaps_across = (columns - 1) * self.gap
        gaps_down = (rows - 1) * self.gap + (self.first_gap - self.gap) * (rows > 1)
        return zoom_to_fit(self._image_size.width(), self._image_size.height(),
                           (self.width() - gaps_across) / columns,
                           (self.height() - gaps_down) / rows)

    def image_rect(self, row: int, column: int) -> QRect:
        """Where the image at ``row``, ``column`` is drawn (the grid hangs from the top, centred
        across)."""
        zoom = self.zoom()
        width = round(self._image_size.width() * zoom)
        height = round(self._image_size.height() * zoom)
        rows, columns = len(self._rows), len(self._rows[0])
        extra = (self.first_gap - self.gap) * (rows > 1)
        left = (self.width() - columns * width - (columns - 1) * self.gap) // 2
        return QRect(left + column * (width + self.gap),
                     row * (height + self.gap) + extra * (row > 0), width, height)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Draw every image at the zoom that fills the widget."""
        if self.zoom() <= 0:
            return
        painter = QPainter(self)
        smooth = _transform(self.zoom()) == Qt.TransformationMode.SmoothTransformation
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, smooth)
        for r, row in enumerate(self._rows):
            for c, picture in enumerate(row):
                painter.drawPixmap(self.image_rect(r, c), picture)
        painter.end()
