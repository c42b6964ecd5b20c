"""The Data tab's views of labels that are a class or a number per sample (classification,
regression): the default the views of other kinds of label start from."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize
from PySide6.QtGui import QPixmap

from studio.core.base.messages import count
from studio.core.data.augmentation import augment_preview
from studio.core.data.types import ArraySamples, LoadedData
from studio.core.project.document import Augmentation, DatasetChoice
from studio.core.tasks.registry import task_for
from studio.gui.data.folder_health import FolderCharts, samples_html
from studio.gui.data.images import THUMBNAIL, ImageGrid, framed, pixmap, thumbnail
from studio.gui.data.views import Preview

CARD_SIDE = 88


class SampleViews:
    """Cards framing each sample with its class or value under it; a chart of the samples per
    class (or of the values); a folder's image sizes and modes; the preview's images alone."""

    card_side = CARD_SIDE
    counted = "samples"
    health_stretch = 2

    def counts_classes(self, loaded: LoadedData) -> bool:
        """Whether the labels are classes (else numbers, whose spread is charted)."""
        return task_for(loaded.info.task).has_classes

    def charted(self, loaded: LoadedData) -> list[int]:
        """Every class."""
        return list(range(loaded.info.num_classes))

    def label_text(self, loaded: LoadedData, index: int) -> str:
        """The class name of sample ``index``, or its value."""
        value = loaded.labels[index]
        if self.counts_classes(loaded):
            return loaded.info.class_names[int(value)]
        return f"{float(value):.4g}"

    def card_tip(self, loaded: LoadedData, index: int, image: np.ndarray) -> tuple[str, str]:
        """The label, and whether the picture is a thumbnail."""
        return (self.label_text(loaded, index),
                "" if max(image.shape[:2]) < THUMBNAIL else " (thumbnail)")

    def card_image(self, loaded: LoadedData, index: int, size: int) -> np.ndarray | None:
        """Sample ``index``'s pixels: held in memory, or its file's thumbnail of at most
        ``size`` pixels across; None if the file cannot be read."""
        if isinstance(loaded.samples, ArraySamples):
            return loaded.samples.x[index]
        return thumbnail(loaded.samples.paths[index], size)

    def picture(self, loaded: LoadedData, index: int, image: np.ndarray, size: QSize
                ) -> QPixmap:
        """The image framed to ``size``."""
        return framed(pixmap(image), size)

    def summary(self, loaded: LoadedData) -> str:
        """`` in 10 classes`` for classes; nothing for numbers."""
        if not self.counts_classes(loaded):
            return ""
        return f" in {count(loaded.info.num_classes, 'class', 'classes')}"

    def found_format(self, loaded: LoadedData) -> str:
        """None: these labels come in one form."""
        return ""

    def health_html(self, loaded: LoadedData) -> str:
        """A folder's, a CSV file's or arrays' report."""
        return samples_html(loaded)

    def health_charts(self) -> FolderCharts:
        """A folder's image sizes and modes."""
        return FolderCharts()

    def preview_grid(self, first_gap: int) -> ImageGrid:
        """A grid of the images alone."""
        return ImageGrid(first_gap=first_gap)

    def overlays(self, loaded: LoadedData, kept: np.ndarray, choice: DatasetChoice,
                 shape: tuple[int, ...]) -> None:
        """Nothing: the images show alone."""
        return None

    def augment(self, images: np.ndarray, overlays: None, augmentation: Augmentation,
                repeats: int, seed: int) -> tuple[np.ndarray, None]:
        """The images augmented."""
        return augment_preview(images, augmentation, repeats, seed), None

    def show_preview(self, grid: ImageGrid, preview: Preview, class_names: list[str]) -> None:
        """Show the images."""
        grid.set_images(preview[0])
