"""The Data tab's views of a segmentation dataset: each sample drawn with its mask laid over it
(a colour per class, background clear: the Try tab's colours), captioned with the classes it
holds; the pixels counted per class; the segmentation health report and its class charts; and
the augmentation preview moving each mask with its image."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter

from studio.core.base.messages import count
from studio.core.data.image_check import UnusableImage
from studio.core.data.segmentation.augment import mask_augment_preview
from studio.core.data.segmentation.mask_kinds import MaskError
from studio.core.data.types import LoadedData
from studio.core.inference.mask_files import is_background, mask_rgba
from studio.core.project.document import Augmentation, DatasetChoice
from studio.core.tasks.segmentation.fitting import mask_in_input
from studio.gui.data.images import ImageGrid
from studio.gui.data.sample_views import SampleViews
from studio.gui.data.segmentation_health import MaskCharts, segmentation_html
from studio.gui.data.views import Preview
from studio.gui.tasks.segmentation import DEFAULT_OPACITY
from studio.gui.widgets.images import array_pixmap

CARD_SIDE = 128
"""A sample's picture is drawn larger than a class's: its mask's shapes must read (the demo
set's 64-pixel images at twice their size)."""
OPACITY = DEFAULT_OPACITY / 100
"""How strongly a mask's colours cover its image (the Try tab's overlay at rest)."""
NAMES_LISTED = 4


def present(loaded: LoadedData, index: int) -> list[int]:
    """The classes with pixels in sample ``index``'s mask, background classes left out."""
    names = loaded.info.class_names
    return [int(k) for k in np.flatnonzero(loaded.labels.pixels[index])
            if k < len(names) and not is_background(names[k])]


def overlaid(image: np.ndarray, mask: np.ndarray, class_names: Sequence[str]) -> np.ndarray:
    """``image`` (uint8 H × W × C, maybe a thumbnail) in RGB with ``mask`` (its image's pixels,
    maybe larger) laid over it in its classes' colours at OPACITY, background clear."""
    height, width = image.shape[:2]
    if mask.shape != (height, width):
        mask = np.asarray(Image.fromarray(mask).resize((width, height), Image.Resampling.NEAREST))
    colours = mask_rgba(mask, class_names, overlay=True).astype(np.float32)
    alpha = colours[..., 3:] / 255 * OPACITY
    rgb = np.broadcast_to(image, (height, width, 3)).astype(np.float32)
    return np.rint(rgb * (1 - alpha) + colours[..., :3] * alpha).astype(np.uint8)


class SegmentationViews(SampleViews):
    """Views of labels that are an image's mask (``FileMasks``, ``ArrayMasks``)."""

    card_side = CARD_SIDE
    counted = "pixels"
    health_stretch = 3

    def counts_classes(self, loaded: LoadedData) -> bool:
        """Always: the pixels have classes."""
        return True

    def charted(self, loaded: LoadedData) -> list[int]:
        """The classes but background ones, which cover most of every image (all of them if
        every class is one)."""
        names = loaded.info.class_names
        return ([k for k, name in enumerate(names) if not is_background(name)]
                or list(range(len(names))))

    def label_text(self, loaded: LoadedData, index: int) -> str:
        """The classes in the mask (``3, 7``), or ``background``."""
        names = loaded.info.class_names
        classes = [names[k] for k in present(loaded, index)]
        return ", ".join(classes) if classes else "background"

    def card_tip(self, loaded: LoadedData, index: int, image: np.ndarray) -> tuple[str, str]:
        """Each class in the mask with its share of the pixels, and the image's size as
        stored."""
        pixels = loaded.labels.pixels[index]
        total = max(int(pixels.sum()), 1)
        names = loaded.info.class_names
        shares = [f"{names[k]} {100 * int(pixels[k]) / total:.1f} %"
                  for k in np.argsort(-pixels, kind="stable") if pixels[k] and k < len(names)]
        height, width = loaded.labels.sizes[index].tolist()
        return ("Mask: " + ", ".join(shares) if shares else "Mask: every pixel ignored",
                f" (stored {width}×{height})")

    def card_image(self, loaded: LoadedData, index: int, size: int) -> np.ndarray | None:
        """The image with its mask laid over it; the image alone if the mask cannot be read
        any more (changed since the dataset was read)."""
        image = super().card_image(loaded, index, size)
        if image is None:
            return None
        try:
            mask = loaded.labels.mask(index)
        except (MaskError, UnusableImage, OSError):
            return image
        return overlaid(image, mask, loaded.info.class_names)

    def summary(self, loaded: LoadedData) -> str:
        """`` with 12 masks in 11 classes (images and masks folders)``."""
        layout = (loaded.report or {}).get("layout_title")
        return (f" with {count(len(loaded.labels), 'mask')}" + super().summary(loaded)
                + (f" ({layout})" if layout else ""))

    def health_html(self, loaded: LoadedData) -> str:
        """The segmentation report: its summary and its table of checks."""
        return segmentation_html(loaded.report or {})

    def health_charts(self) -> MaskCharts:
        """Pixels and images per class."""
        return MaskCharts()

    def preview_grid(self, first_gap: int) -> MaskGrid:
        """A grid laying each image's mask over it."""
        return MaskGrid(first_gap=first_gap)

    def overlays(self, loaded: LoadedData, kept: np.ndarray, choice: DatasetChoice,
                 shape: tuple[int, ...]) -> list[np.ndarray]:
        """Each image's mask fitted to the input as its image is."""
        return [mask_in_input(loaded.labels.mask(int(i)), shape[:2], choice.resize)
                for i in kept]

    def augment(self, images: np.ndarray, overlays: list[np.ndarray],
                augmentation: Augmentation, repeats: int, seed: int
                ) -> tuple[np.ndarray, list[list[np.ndarray]]]:
        """The images augmented, their masks moved with them."""
        moved_images, moved_masks = mask_augment_preview(images, np.stack(overlays),
                                                         augmentation, repeats, seed)
        return moved_images, [list(row) for row in moved_masks]

    def show_preview(self, grid: ImageGrid, preview: Preview, class_names: list[str]) -> None:
        """Show the images with their masks."""
        grid.set_images(*preview, class_names)


class MaskGrid(ImageGrid):
    """An ``ImageGrid`` laying each image's mask (pixels of the images shown) over it."""

    def __init__(self, gap: int = 4, first_gap: int = 4) -> None:
        super().__init__(gap, first_gap)
        self.masks: list[list[np.ndarray]] = []
        self._overlays: list[list] = []

    def set_images(self, grid: np.ndarray | None, masks: list[list[np.ndarray]] | None = None,
                   class_names: Sequence[str] = ()) -> None:
        """Show the images as ``ImageGrid`` does, with ``masks[row][column]`` over each (None:
        no masks)."""
        self.masks = masks or []
        self._overlays = [[array_pixmap(mask_rgba(mask, class_names, overlay=True))
                           for mask in row] for row in self.masks]
        super().set_images(grid)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Draw the images, then their masks, every mask pixel whole."""
        super().paintEvent(event)
        if not self._overlays or self.zoom() <= 0:
            return
        painter = QPainter(self)
        painter.setOpacity(OPACITY)
        for r, row in enumerate(self._overlays):
            for c, overlay in enumerate(row):
                painter.drawPixmap(QRectF(self.image_rect(r, c)), overlay,
                                   QRectF(overlay.rect()))
        painter.end()
