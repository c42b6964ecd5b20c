"""The boxes an image is labelled with, and the geometry detection needs on them (NumPy only).

Boxes are ``x_min, y_min, x_max, y_max`` in pixels of the image as stored on disk (its
width and height before any resizing), float32; a class is an index into the dataset's class
names. Every reader, writer, augmentation and metric speaks this one convention.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ImageBoxes:
    """The labelled boxes of one image: ``boxes`` float32 N × 4 (x_min, y_min, x_max, y_max in
    pixels), ``classes`` int32 N. An image without boxes (a background image) has N = 0."""

    boxes: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))
    classes: np.ndarray = field(default_factory=lambda: np.zeros((0,), np.int32))

    def __post_init__(self) -> None:
        boxes = np.asarray(self.boxes, np.float32).reshape(-1, 4)
        classes = np.asarray(self.classes, np.int32).reshape(-1)
        if len(boxes) != len(classes):
            raise ValueError(f"{len(boxes)} boxes but {len(classes)} classes")
        object.__setattr__(self, "boxes", boxes)
        object.__setattr__(self, "classes", classes)

    def __len__(self) -> int:
        return len(self.classes)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ImageBoxes) and np.array_equal(self.boxes, other.boxes)
                and np.array_equal(self.classes, other.classes))

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside


def areas(boxes: np.ndarray) -> np.ndarray:
    """Each box's area (0 for an empty or inverted box)."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    return (np.clip(boxes[:, 2] - boxes[:, 0], 0, None)
            * np.clip(boxes[:, 3] - boxes[:, 1], 0, None))


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection over union of every box of ``a`` (N × 4) with every box of ``b``
    (M × 4): N × M, 0 where the union is empty."""
    a = np.asarray(a, np.float64).reshape(-1, 4)
    b = np.asarray(b, np.float64).reshape(-1, 4)
    low = np.maximum(a[:, None, :2], b[None, :, :2])
    high = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(high - low, 0, None), axis=2)
    union = areas(a)[:, None] + areas(b)[None, :] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
