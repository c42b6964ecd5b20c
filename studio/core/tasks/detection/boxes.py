"""The boxes an image is labelled with, and the geometry detection needs on them (NumPy only).

Boxes are ``x_min, y_min, x_max, y_max`` in pixels of the image as stored on disk (its
width and height before any resizing), float32; a class is an index into the dataset's class
names. Every reader, writer, augmentation and metric speaks this one convention. A model's
answer for an image is a ``Detections``: the same boxes and classes, with a score each.
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


@dataclass(frozen=True, eq=False)
class Detections(ImageBoxes):
    """A model's boxes for one image: ``boxes`` and ``classes`` as in ``ImageBoxes``, and
    ``scores`` float32 N, each box's confidence (higher is surer)."""

    scores: np.ndarray = field(default_factory=lambda: np.zeros((0,), np.float32))

    def __post_init__(self) -> None:
        super().__post_init__()
        scores = np.asarray(self.scores, np.float32).reshape(-1)
        if len(scores) != len(self):
            raise ValueError(f"{len(self)} boxes but {len(scores)} scores")
        object.__setattr__(self, "scores", scores)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Detections) and super().__eq__(other)
                and np.array_equal(self.scores, other.scores))

    __hash__ = None  # type: ignore[assignment]


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
    # width and height apart: a product over an axis of length 2 costs NMS twice the time
    w = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    h = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.maximum(w, 0) * np.maximum(h, 0)
    union = areas(a)[:, None] + areas(b)[None, :] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float,
        max_boxes: int | None = None) -> np.ndarray:
    """Greedy non-maximum suppression: the indices of the boxes kept, highest score first.

    The surest box is kept and every box overlapping it with IoU above ``iou_threshold`` is
    dropped, then the surest box left, and so on, up to ``max_boxes`` kept (all by default).
    Equal scores keep the input order. Meant for a decoder's candidates (hundreds of boxes):
    it works on their IoU matrix, so that re-running it takes a few milliseconds at most.
    """
    return _greedy_nms(boxes, scores, None, iou_threshold, max_boxes)


def nms_by_class(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray,
                 iou_threshold: float, max_boxes: int | None = None) -> np.ndarray:
    """``nms`` within each class: boxes of different classes never suppress each other.
    ``max_boxes`` caps the boxes kept over all classes (the surest ones)."""
    return _greedy_nms(boxes, scores, classes, iou_threshold, max_boxes)


def _greedy_nms(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray | None,
                iou_threshold: float, max_boxes: int | None) -> np.ndarray:
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    scores = np.asarray(scores, np.float64).reshape(-1)
    if len(scores) != len(boxes):
        raise ValueError(f"{len(boxes)} boxes but {len(scores)} scores")
    order = np.argsort(-scores, kind="stable")
    groups = [order]
    if classes is not None:
        classes = np.asarray(classes).reshape(-1)
        if len(classes) != len(boxes):
            raise ValueError(f"{len(boxes)} boxes but {len(classes)} classes")
        groups = [order[classes[order] == label] for label in np.unique(classes)]
    kept = np.zeros(len(boxes), bool)
    for members in groups:  # surest first
        # row i: the less sure boxes that box i would suppress, if it is kept itself
        overlaps = np.triu(iou_matrix(boxes[members], boxes[members]) > iou_threshold, 1)
        alive = np.ones(len(members), bool)
        for i in np.flatnonzero(overlaps.any(axis=1)):
            if alive[i]:
                alive &= ~overlaps[i]
        kept[members[alive]] = True
    return order[kept[order]][:None if max_boxes is None else max(max_boxes, 0)]
