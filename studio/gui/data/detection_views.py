"""The Data tab's views of a detection dataset: each sample drawn larger with its boxes, the
boxes counted per class, the detection health report and its box charts, and the augmentation
preview moving the boxes with the images."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize
from PySide6.QtGui import QPixmap

from studio.core.base.messages import count
from studio.core.data.detection.augment import box_augment_preview
from studio.core.data.detection.pipeline import input_boxes
from studio.core.data.image_pipeline import ImageForm
from studio.core.data.types import LoadedData
from studio.core.project.document import Augmentation, DatasetChoice
from studio.core.tasks.detection.boxes import ImageBoxes
from studio.gui.data.boxes import BoxGrid, boxed, boxes_text
from studio.gui.data.detection_health import BoxCharts, detection_html, format_title
from studio.gui.data.images import ImageGrid, pixmap
from studio.gui.data.sample_views import SampleViews
from studio.gui.data.views import Preview

CARD_SIDE = 150
"""A detection sample's picture is drawn larger: its boxes and their tags must read."""


class DetectionViews(SampleViews):
    """Views of labels that are an image's boxes (``BoxLabels``)."""

    card_side = CARD_SIDE
    counted = "boxes"
    health_stretch = 3

    def counts_classes(self, loaded: LoadedData) -> bool:
        """Always: the boxes have classes."""
        return True

    def label_text(self, loaded: LoadedData, index: int) -> str:
        """``3 boxes``, or ``background``."""
        boxes = len(loaded.labels.image(index))
        return count(boxes, "box", "boxes") if boxes else "background"

    def card_tip(self, loaded: LoadedData, index: int, image: np.ndarray) -> tuple[str, str]:
        """The boxes' classes, and the image's size as stored (the boxes' pixels)."""
        height, width = loaded.labels.sizes[index].tolist()
        return (boxes_text(loaded.labels.image(index), loaded.info.class_names),
                f" (stored {width}×{height})")

    def picture(self, loaded: LoadedData, index: int, image: np.ndarray, size: QSize
                ) -> QPixmap:
        """The image enlarged to ``size`` with its boxes drawn."""
        return boxed(pixmap(image), loaded.labels.image(index),
                     tuple(loaded.labels.sizes[index].tolist()), loaded.info.class_names, size)

    def summary(self, loaded: LoadedData) -> str:
        """`` with 147 boxes in 10 classes (YOLO labels)``."""
        found = self.found_format(loaded)
        return (f" with {count(len(loaded.labels.boxes), 'box', 'boxes')}"
                + super().summary(loaded)
                + (f" ({format_title(found)} labels)" if found else ""))

    def found_format(self, loaded: LoadedData) -> str:
        """The label format the reader found (``yolo``)."""
        return (loaded.report or {}).get("format", "")

    def health_html(self, loaded: LoadedData) -> str:
        """The detection report: its summary and its table of checks."""
        return detection_html(loaded.report or {})

    def health_charts(self) -> BoxCharts:
        """Boxes per class, per image and by size."""
        return BoxCharts()

    def preview_grid(self, first_gap: int) -> BoxGrid:
        """A grid drawing each image's boxes."""
        return BoxGrid(first_gap=first_gap)

    def overlays(self, loaded: LoadedData, kept: np.ndarray, choice: DatasetChoice,
                 shape: tuple[int, ...]) -> list[ImageBoxes]:
        """Each image's boxes, in the pixels of the image as read."""
        return input_boxes(loaded.labels[kept], ImageForm(shape[:2], shape[2], choice.resize))

    def augment(self, images: np.ndarray, overlays: list[ImageBoxes], augmentation: Augmentation,
                repeats: int, seed: int) -> tuple[np.ndarray, list[list[ImageBoxes]]]:
        """The images augmented, their boxes moved with them."""
        return box_augment_preview(images, overlays, augmentation, repeats, seed)

    def show_preview(self, grid: ImageGrid, preview: Preview, class_names: list[str]) -> None:
        """Show the images with their boxes."""
        grid.set_images(*preview, class_names)
