"""What the Data tab draws differently for each kind of label: the interface every task's data
views implement (``registry`` picks them by the dataset's task)."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from PySide6.QtCore import QSize
from PySide6.QtGui import QPixmap

from studio.core.data.types import LoadedData
from studio.core.project.document import Augmentation, DatasetChoice
from studio.gui.data.images import ImageGrid

Preview = tuple[np.ndarray, list[list[Any]] | None]
"""R × N × H × W × C uint8 images, the first row unaugmented, and what is drawn over each image
(row by row: a detection's boxes), or None where nothing is."""


class HealthCharts(Protocol):
    """A widget (a QWidget) of charts beside the health report."""

    def show_data(self, loaded: LoadedData) -> bool:
        """Chart ``loaded``; whether there is anything to show."""


class DataViews(Protocol):
    """How the Data tab shows one kind of label: the samples' cards, the class chart, the
    health report and the augmentation preview."""

    card_side: int
    """Pixels across a sample card's picture."""
    counted: str
    """What the class chart counts: ``samples``, or ``boxes``."""
    health_stretch: int
    """The share of the health view's width its charts take (the report's is 3)."""

    def counts_classes(self, loaded: LoadedData) -> bool:
        """Whether the chart counts classes (else it spreads the label values)."""

    def charted(self, loaded: LoadedData) -> list[int]:
        """The classes the class chart draws (the table lists every one): all but those that
        would flatten the others' bars (a segmentation's background)."""

    def label_text(self, loaded: LoadedData, index: int) -> str:
        """The label of sample ``index`` as a person reads it, in a few words."""

    def card_tip(self, loaded: LoadedData, index: int, image: np.ndarray) -> tuple[str, str]:
        """The label of sample ``index`` in full for its card's tooltip, and a note on the size
        of its picture ``image`` (say ``(thumbnail)``), empty or starting with a space."""

    def card_image(self, loaded: LoadedData, index: int, size: int) -> np.ndarray | None:
        """Sample ``index``'s pixels for its card (uint8 H × W × C; a file's thumbnail of at
        most ``size`` pixels across), with what is drawn into them (a segmentation's mask);
        None if unreadable. Runs off the UI thread for files: it touches no widget."""

    def picture(self, loaded: LoadedData, index: int, image: np.ndarray, size: QSize
                ) -> QPixmap:
        """Sample ``index``'s card picture of ``size`` from its pixels ``image`` (maybe a
        thumbnail), with its labels drawn on it where they are drawable."""

    def summary(self, loaded: LoadedData) -> str:
        """The words following ``Read 52 images`` in the status line: ``in 10 classes``,
        ``with 147 boxes in 10 classes (YOLO labels)``; empty or starting with a space."""

    def found_format(self, loaded: LoadedData) -> str:
        """The label format found in the data (``yolo``) for the source form, or empty."""

    def health_html(self, loaded: LoadedData) -> str:
        """The health report's body as HTML (the problems, listed above it, come apart)."""

    def health_charts(self) -> HealthCharts:
        """A new widget of charts shown beside the health report."""

    def preview_grid(self, first_gap: int) -> ImageGrid:
        """A new grid showing the augmentation preview (``show_preview`` fills it)."""

    def overlays(self, loaded: LoadedData, kept: np.ndarray, choice: DatasetChoice,
                 shape: tuple[int, ...]) -> list | None:
        """What the preview draws over samples ``kept`` of ``loaded`` once read by ``choice``
        at ``shape`` (a detection's boxes in those pixels), one per sample; None for nothing.
        Runs off the UI thread: it touches no widget."""

    def augment(self, images: np.ndarray, overlays: list | None, augmentation: Augmentation,
                repeats: int, seed: int) -> tuple[np.ndarray, list[list] | None]:
        """``repeats`` random augmentations of N ``images`` and their ``overlays``, moved with
        them: R × N × H × W × C images, and the overlays row by row (None for none). Runs off
        the UI thread."""

    def show_preview(self, grid: ImageGrid, preview: Preview, class_names: list[str]) -> None:
        """Show ``preview`` in ``grid`` (made by ``preview_grid``)."""
