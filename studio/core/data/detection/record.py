"""A detection dataset as read from disk (``DetectionSet``), an image to write out with its
boxes (``LabelledImage``), and the summary ``studio data PATH --json`` prints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.data.detection.health import DetectionHealth
from studio.core.tasks.detection.boxes import ImageBoxes

SPLIT_WORDS = {"train": "train", "training": "train", "val": "validation", "valid": "validation",
               "validation": "validation", "test": "test", "testing": "test"}
"""Folder and file-name words that name a split, and the split they name."""
SPLIT_FOLDERS = {"train": "train", "validation": "val", "test": "test"}
"""The folder (or file-name word) each split is written to, as the formats' own tools name it."""


def split_named(word: str) -> str | None:
    """The split a folder or file-name word names (``val`` gives ``validation``), if any."""
    return SPLIT_WORDS.get(word.lower())


@dataclass
class DetectionSet:
    """The images of a detection dataset with their boxes, in the files' sorted order.

    ``labels[i]`` is None for an image without a label file (a background image); ``sizes[i]``
    is its (width, height) as stored; ``splits[i]`` is ``train``, ``validation`` or ``test``
    where the layout says so, else None (to be split later, with a seed). ``health`` counts and
    explains everything that was clipped, dropped or left out.
    """

    root: Path
    format: str
    class_names: list[str]
    images: list[Path]
    labels: list[ImageBoxes | None]
    sizes: list[tuple[int, int]]
    splits: list[str | None]
    health: DetectionHealth

    def __len__(self) -> int:
        return len(self.images)

    def boxes(self, index: int) -> ImageBoxes:
        """The boxes of image ``index``: none for a background image."""
        return self.labels[index] or ImageBoxes()

    def split_indices(self) -> dict[str, np.ndarray]:
        """The images of each split the layout names; those it does not name under ``None``."""
        out: dict[Any, list[int]] = {}
        for index, split in enumerate(self.splits):
            out.setdefault(split, []).append(index)
        return {split: np.asarray(indices, np.int64) for split, indices in out.items()}


@dataclass(frozen=True)
class LabelledImage:
    """An image to write out: its file's stem (unique in the set), pixels (uint8, H × W or
    H × W × C), boxes (None: no label file) and split (None: no split folder)."""

    name: str
    pixels: np.ndarray
    boxes: ImageBoxes | None
    split: str | None = None


def describe_dict(dataset: DetectionSet) -> dict[str, Any]:
    """A JSON-serialisable report of a detection dataset: its format, classes, images per split
    (``unsplit`` for those the layout puts in none) and health, with ``problems`` and
    ``blocking`` as in an image folder's report."""
    splits = {split or "unsplit": len(indices)
              for split, indices in dataset.split_indices().items()}
    return {"task": "detection", "root": str(dataset.root), "format": dataset.format,
            "class_names": list(dataset.class_names), "splits": splits,
            **dataset.health.to_dict()}
