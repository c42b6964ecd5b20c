"""A segmentation dataset as read from disk (``SegmentationSet``), its masks as labels that
split and count like an array (``MaskLabels``), and the summary a report prints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.data.segmentation.health import SegmentationHealth
from studio.core.data.segmentation.layouts import TITLES
from studio.core.data.segmentation.mask_kinds import MaskDecoder


class ClassPixels:
    """What every record of masks counts from its ``pixels`` (int64 N × C, the pixels of
    each class in each mask)."""

    pixels: np.ndarray

    def class_pixels(self) -> np.ndarray:
        """Pixels of each class over these masks (int64 C)."""
        return self.pixels.sum(axis=0)

    def class_images(self) -> np.ndarray:
        """How many of these masks hold each class (int64 C)."""
        return (self.pixels > 0).sum(axis=0)

    def class_counts(self, num_classes: int) -> list[int]:
        """Pixels per class, as a split's class counts."""
        return [int(n) for n in self.class_pixels()[:num_classes]]


@dataclass(frozen=True)
class MaskLabels(ClassPixels):
    """The masks of N images: each mask's file (``masks``, str N), each image's height and
    width as stored (``sizes``, int32 N × 2: its mask's too) and the pixels of each class in
    each mask (``pixels``, int64 N × C). Indexing by an integer array gives those images'."""

    masks: np.ndarray
    sizes: np.ndarray
    pixels: np.ndarray

    def __len__(self) -> int:
        return len(self.masks)

    def __getitem__(self, indices: np.ndarray) -> MaskLabels:
        """The labels of the images at ``indices`` (an integer array), in that order."""
        indices = np.asarray(indices, np.int64).reshape(-1)
        return MaskLabels(self.masks[indices], self.sizes[indices], self.pixels[indices])

    def tobytes(self) -> bytes:
        """The labels as bytes, for a dataset's fingerprint: the mask files' names and the
        pixels of each class (a mask's contents are hashed with its file elsewhere)."""
        names = "\n".join(self.masks.tolist()).encode()
        return names + np.ascontiguousarray(self.sizes, np.int32).tobytes() + \
            np.ascontiguousarray(self.pixels, np.int64).tobytes()


@dataclass
class SegmentationSet:
    """The images of a segmentation dataset with their masks, in the layout's order.

    ``splits[i]`` is ``train``, ``validation`` or ``test`` where the layout says so, else None
    (to be split later, with a seed). ``decoder`` reads any of ``labels.masks`` as a mask of
    class indices (uint8 H × W, IGNORE where none). ``health`` counts and explains every file
    left out and every pixel ignored.
    """

    root: Path
    layout: str
    class_names: list[str]
    images: list[Path]
    labels: MaskLabels
    splits: list[str | None]
    decoder: MaskDecoder
    health: SegmentationHealth

    def __len__(self) -> int:
        return len(self.images)

    def mask(self, index: int) -> np.ndarray:
        """The mask of image ``index``."""
        return self.decoder.read(Path(self.labels.masks[index]))

    def split_indices(self) -> dict[str | None, np.ndarray]:
        """The images of each split the layout names; those it does not name under ``None``."""
        out: dict[str | None, list[int]] = {}
        for index, split in enumerate(self.splits):
            out.setdefault(split, []).append(index)
        return {split: np.asarray(indices, np.int64) for split, indices in out.items()}


def describe_dict(dataset: SegmentationSet) -> dict[str, Any]:
    """A JSON-serialisable report of a segmentation dataset: its layout, classes, images per
    split (``unsplit`` for those the layout puts in none) and health, with ``problems`` and
    ``blocking`` as in an image folder's report."""
    splits = {split or "unsplit": len(indices)
              for split, indices in dataset.split_indices().items()}
    return {"task": "segmentation", "root": str(dataset.root), "layout": dataset.layout,
            "layout_title": TITLES[dataset.layout], "class_names": list(dataset.class_names),
            "splits": splits, **dataset.health.to_dict()}
