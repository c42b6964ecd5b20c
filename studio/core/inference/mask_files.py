"""A segmentation's answers as files: each predicted mask as a palette PNG (its pixels the
class indices, as Pascal VOC stores its masks, its palette each class's colour, so the one
file is both the index mask and the colour picture), and the colour of each class."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from studio.core.base.files import atomic_file
from studio.core.inference.batch import write_predictions_csv
from studio.core.tasks.segmentation.masks import IGNORE, VOC_CLASSES, voc_palette

DISTINCT = np.array([(0, 0, 0), (230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200),
                     (245, 130, 48), (145, 30, 180), (70, 240, 240), (240, 50, 230),
                     (210, 245, 60), (250, 190, 212), (0, 128, 128), (220, 190, 255),
                     (170, 110, 40), (128, 0, 0), (170, 255, 195), (128, 128, 0),
                     (0, 0, 128), (128, 128, 128)], np.uint8)
"""Colours told apart at a glance (black first, for class 0), cycled for classes beyond."""
BACKGROUND_NAMES = frozenset({"background", "_background_", "bg", "void"})
"""Class names meaning no object: left transparent where a mask is laid over its image."""
MASKS_CSV = "areas.csv"
"""The file beside the mask PNGs listing each image's class areas."""


def class_colors(class_names: Sequence[str]) -> np.ndarray:
    """The colour of each mask value (uint8 256 × 3): Pascal VOC's palette for VOC's classes
    (and for IGNORE), else DISTINCT's colours cycled (black for class 0)."""
    palette = voc_palette()
    if tuple(class_names) != VOC_CLASSES:
        values = np.arange(len(class_names))
        palette[values] = DISTINCT[np.where(values == 0, 0,
                                            (values - 1) % (len(DISTINCT) - 1) + 1)]
    return palette


def is_background(name: str) -> bool:
    """Whether a class called ``name`` stands for no object (drawn transparent on top of
    the image)."""
    return name.strip().casefold() in BACKGROUND_NAMES


def mask_rgba(mask: np.ndarray, class_names: Sequence[str], overlay: bool) -> np.ndarray:
    """``mask`` in its classes' colours (uint8 H × W × 4); for an ``overlay``, background
    classes and IGNORE pixels are transparent."""
    colors = np.concatenate([class_colors(class_names), np.full((256, 1), 255, np.uint8)], 1)
    if overlay:
        clear = [k for k, name in enumerate(class_names) if is_background(name)] + [IGNORE]
        colors[clear, 3] = 0
    return colors[mask]


def write_mask(mask: np.ndarray, path: Path, class_names: Sequence[str]) -> None:
    """Save ``mask`` as a palette PNG at ``path`` (atomically)."""
    from PIL import Image

    picture = Image.fromarray(mask, mode="P")
    picture.putpalette(class_colors(class_names).reshape(-1).tolist())
    with atomic_file(path) as handle:
        picture.save(handle, format="PNG")


def mask_paths(sources: Sequence[str], folder: Path) -> list[Path]:
    """Where each answered image's mask goes in ``folder``: its path below the folder all
    ``sources`` share, as a .png (``a/cat.jpg`` -> ``folder/a/cat.png``), so images of one
    name in different folders keep masks apart."""
    if not sources:
        return []
    parents = [os.path.dirname(os.path.abspath(source)) for source in sources]
    common = os.path.commonpath(parents)
    return [Path(folder) / Path(os.path.relpath(os.path.abspath(source), common)
                                ).with_suffix(".png")
            for source in sources]


class MaskWriter:
    """Writes answered images' masks in ``folder`` as they come (see ``mask_paths``, of all
    the ``sources`` to be answered), freeing each mask once written, so a large folder's
    masks are never all held at once."""

    def __init__(self, sources: Sequence[str], folder: Path, class_names: Sequence[str]
                 ) -> None:
        self.folder = Path(folder)
        self.class_names = list(class_names)
        self.targets = dict(zip(sources, mask_paths(sources, folder), strict=True))
        self.written: list[Path] = []

    def write(self, predictions: Sequence) -> None:
        """Save the masks of ``predictions`` that hold one, and let them go."""
        for prediction in predictions:
            if prediction.error is None and prediction.mask is not None:
                path = self.targets[prediction.source]
                write_mask(prediction.mask, path, self.class_names)
                prediction.mask = None
                self.written.append(path)

    def finish(self, predictions: Sequence) -> list[Path]:
        """Save the class areas of all ``predictions`` as MASKS_CSV; the masks written."""
        write_predictions_csv(predictions, self.folder / MASKS_CSV)
        return self.written


def write_masks(predictions: Sequence, folder: Path, class_names: Sequence[str]) -> list[Path]:
    """Save each answered prediction's mask in ``folder`` (see ``mask_paths``) and their class
    areas as MASKS_CSV there; the mask files written. The predictions keep their masks."""
    answered = [p for p in predictions if p.error is None and p.mask is not None]
    paths = mask_paths([p.source for p in answered], folder)
    for prediction, path in zip(answered, paths, strict=True):
        write_mask(prediction.mask, path, class_names)
    write_predictions_csv(predictions, Path(folder) / MASKS_CSV)
    return paths
