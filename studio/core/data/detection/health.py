"""The health report of a detection dataset: every box clipped or dropped and every file left
out is counted, with examples by file name and one plain-language sentence; plus the classes'
box counts, boxes per image and box sizes relative to the image.

What is dropped and what blocks: a box that cannot be used (coordinates not finite, zero or
negative area, wholly outside its image, an unknown class, a copy of another box, past the cap
of boxes an image may hold) is dropped and counted; a box reaching outside its image is clipped
and counted; an image whose label file cannot be read, or whose file cannot be used, is left
out and counted; an image without a label file is a background image. Only a dataset left with
no usable image or no box at all cannot train (``blocking``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studio.core.base.messages import count, quoted
from studio.core.data.image_folder import EXAMPLES
from studio.core.tasks.detection.boxes import ImageBoxes, areas, iou_matrix

MAX_BOXES = 1_000
"""The most boxes an image keeps; more are dropped, counted (a 20,000-box image is a mistake
far more often than a real crowd, and would slow every step of training)."""
EDGE_TOLERANCE = 0.01
"""How far (pixels) a box may reach past its image's edge before it counts as clipped: the
formats' rounding (six decimals of a normalised YOLO coordinate) reaches that far."""
DUPLICATE_IOU = 0.95
"""Two boxes of the same class overlapping more than this (intersection over union) are the
same object labelled twice; identical boxes (IoU 1) are the common case."""
SIZE_BINS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2)
SIZE_LABELS = ("≤1/32", "≤1/16", "≤1/8", "≤1/4", "≤1/2", "≤1")
"""Upper bounds of the box-size histogram's bars: sqrt(box area / image area), a box's side
relative to its image's; one more bar holds the rest."""
PER_IMAGE_BINS = (0, 1, 2, 5, 10, 50, 100)
PER_IMAGE_LABELS = ("0", "1", "2", "3–5", "6–10", "11–50", "51–100", ">100")


@dataclass
class Tally:
    """How many of one kind of problem were found, the first few files they were found in,
    and what the first one was (``detail``)."""

    count: int = 0
    examples: list[str] = field(default_factory=list)
    detail: str = ""

    def add(self, name: str, n: int = 1, detail: str = "") -> None:
        """Count ``n`` more, found in the file ``name``."""
        if not n:
            return
        if not self.count:
            self.detail = detail
        self.count += n
        if name not in self.examples and len(self.examples) < EXAMPLES:
            self.examples.append(name)


def _first(tally: Tally) -> str:
    return quoted(tally.examples[0]) if tally.examples else ""


def _with_detail(tally: Tally) -> str:
    return f"{_first(tally)}: {tally.detail}" if tally.detail else _first(tally)


def _its(tally: Tally) -> str:
    return "its" if tally.count == 1 else "their"


Sentence = Callable[[Tally], str]
CHECKS: dict[str, Sentence] = {
    "unusable_images": lambda t: (
        f"{count(t.count, 'image file cannot', 'image files cannot')} be used and "
        f"{'is' if t.count == 1 else 'are'} left out (e.g. {_with_detail(t)})."),
    "unreadable_labels": lambda t: (
        f"{count(t.count, 'label cannot', 'labels cannot')} be read, so "
        f"{'its image is' if t.count == 1 else 'their images are'} left out "
        f"(e.g. {_with_detail(t)})."),
    "missing_labels": lambda t: (
        f"{count(t.count, 'image has', 'images have')} no label file (e.g. {_first(t)}): "
        "used as background images, with no objects."),
    "empty_labels": lambda t: (
        f"{count(t.count, 'label file lists', 'label files list')} no objects (e.g. "
        f"{_first(t)}): {'its image is' if t.count == 1 else 'their images are'} used as "
        "background."),
    "no_image": lambda t: (
        f"{count(t.count, 'label has', 'labels have')} no image file (e.g. {_with_detail(t)}):"
        f" {'its boxes are' if t.count == 1 else 'their boxes are'} not used."),
    "non_finite": lambda t: (
        f"{count(t.count, 'box has', 'boxes have')} coordinates that are not numbers (NaN) or "
        f"infinite (e.g. in {_first(t)}): dropped."),
    "unknown_class": lambda t: (
        f"{count(t.count, 'box has', 'boxes have')} a class that is not among the class "
        f"names (e.g. {t.detail} in {_first(t)}): dropped."),
    "empty_boxes": lambda t: (
        f"{count(t.count, 'box has', 'boxes have')} zero or negative width or height (e.g. "
        f"in {_first(t)}): dropped."),
    "outside": lambda t: (
        f"{count(t.count, 'box lies', 'boxes lie')} wholly outside {_its(t)} image (e.g. in "
        f"{_first(t)}): dropped."),
    "clipped": lambda t: (
        f"{count(t.count, 'box reaches', 'boxes reach')} outside {_its(t)} image (e.g. in "
        f"{_first(t)}): clipped to the image's edges."),
    "duplicates": lambda t: (
        f"{count(t.count, 'box repeats', 'boxes repeat')} another box of the same class "
        f"(identical, or overlapping it by an IoU above {DUPLICATE_IOU}; e.g. in {_first(t)}):"
        " the copies are dropped."),
    "capped": lambda t: (
        f"{count(t.count, 'image has', 'images have')} more than {MAX_BOXES:,} boxes (e.g. "
        f"{_first(t)}, {t.detail}): only the first {MAX_BOXES:,} of each are kept."),
    "dont_care": lambda t: (
        f"{count(t.count, 'KITTI DontCare region is', 'KITTI DontCare regions are')} ignored,"
        f" as KITTI means them to be (e.g. in {_first(t)})."),
    "crowd": lambda t: (
        f"{count(t.count, 'COCO crowd annotation', 'COCO crowd annotations')} (iscrowd 1) "
        f"{'is' if t.count == 1 else 'are'} ignored, as COCO training does (e.g. in "
        f"{_first(t)})."),
}
"""Each check's sentence, most serious first."""


def checks_report(checks: dict[str, Tally], sentences: dict[str, Sentence], cancelled: bool,
                  notes: list[str], problems: list[str], blocking: list[str]
                  ) -> dict[str, Any]:
    """The part of a dataset's health report every task shares, as JSON-serialisable data:
    each check's count, examples and sentence (by ``sentences``), notes, problems and what
    blocks training."""
    return {"checks": {key: {"count": tally.count, "examples": list(tally.examples),
                             "sentence": sentences[key](tally) if tally.count else ""}
                       for key, tally in checks.items()},
            "cancelled": cancelled, "notes": list(notes), "problems": problems,
            "blocking": blocking}


def _histogram(values: np.ndarray, bins: tuple[float, ...], labels: tuple[str, ...]
               ) -> list[int]:
    counts = np.bincount(np.searchsorted(bins, values, side="left"), minlength=len(labels))
    return [int(n) for n in counts]


@dataclass
class DetectionHealth:
    """What reading a detection dataset found: each check's tally (the keys of CHECKS),
    notes, and the boxes' statistics, filled by ``clean`` and ``add_image``."""

    class_names: list[str]
    checks: dict[str, Tally] = field(default_factory=lambda: {key: Tally() for key in CHECKS})
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False
    boxes_per_image: list[int] = field(default_factory=list)
    relative_sizes: list[np.ndarray] = field(default_factory=list, repr=False)
    class_boxes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    class_images: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __post_init__(self) -> None:
        self.class_boxes = np.zeros(len(self.class_names), np.int64)
        self.class_images = np.zeros(len(self.class_names), np.int64)

    def clean(self, name: str, boxes: np.ndarray, classes: np.ndarray, size: tuple[int, int],
              unknown: Callable[[int], str]) -> ImageBoxes:
        """The usable boxes of the image labelled by the file ``name``: ``boxes`` (pixels,
        N × 4) of ``classes`` (index into the class names, anything else unknown, named by
        ``unknown(i)`` for box i), clipped to the image of ``size`` (width, height), with what
        is clipped or dropped counted."""
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        classes = np.asarray(classes, np.int64).reshape(-1)
        keep = np.isfinite(boxes).all(axis=1)
        self.checks["non_finite"].add(name, int((~keep).sum()))
        known = (classes >= 0) & (classes < len(self.class_names))
        bad = np.flatnonzero(keep & ~known)
        if len(bad):
            self.checks["unknown_class"].add(name, len(bad), unknown(int(bad[0])))
        keep &= known
        positive = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
        self.checks["empty_boxes"].add(name, int((keep & ~positive).sum()))
        keep &= positive
        boxes, classes = boxes[keep], classes[keep]
        width, height = size
        clipped = np.clip(boxes, 0, [width, height, width, height])
        inside = (clipped[:, 2] > clipped[:, 0]) & (clipped[:, 3] > clipped[:, 1])
        self.checks["outside"].add(name, int((~inside).sum()))
        reach = np.abs(clipped - boxes).max(axis=1, initial=0) > EDGE_TOLERANCE
        self.checks["clipped"].add(name, int((reach & inside).sum()))
        boxes, classes = clipped[inside], classes[inside]
        if len(boxes) > MAX_BOXES:
            self.checks["capped"].add(name, 1, f"with {len(boxes):,}")
            boxes, classes = boxes[:MAX_BOXES], classes[:MAX_BOXES]
        copies = _duplicates(boxes, classes)
        self.checks["duplicates"].add(name, int(copies.sum()))
        return ImageBoxes(boxes[~copies], classes[~copies])

    def add_image(self, boxes: ImageBoxes, size: tuple[int, int]) -> None:
        """Count a kept image's boxes in the statistics."""
        self.boxes_per_image.append(len(boxes))
        width, height = size
        self.relative_sizes.append(np.sqrt(areas(boxes.boxes) / (width * height)))
        self.class_boxes += np.bincount(boxes.classes, minlength=len(self.class_names))
        self.class_images[np.unique(boxes.classes)] += 1

    @property
    def total_boxes(self) -> int:
        return int(self.class_boxes.sum())

    def blocking(self) -> list[str]:
        """What keeps a detector from training on the dataset (empty if nothing does)."""
        if self.cancelled:
            return ["Reading the detection dataset was cancelled."]
        if not self.boxes_per_image:
            return ["The dataset holds no usable image."]
        if not self.total_boxes:
            return ["The dataset's images hold no boxes: a detector needs labelled objects."]
        return []

    def problems(self) -> list[str]:
        """One sentence for each check that found something, most serious first."""
        return [*self.blocking(), *(sentence(self.checks[key]) for key, sentence
                                    in CHECKS.items() if self.checks[key].count)]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-serialisable data."""
        per_image = np.asarray(self.boxes_per_image, np.int64)
        sizes = np.concatenate([np.zeros(0), *self.relative_sizes])
        return {
            "total_images": len(per_image),
            "total_boxes": self.total_boxes,
            "background_images": int((per_image == 0).sum()),
            "classes": [{"name": name, "boxes": int(boxes), "images": int(images)}
                        for name, boxes, images in zip(self.class_names, self.class_boxes,
                                                       self.class_images, strict=True)],
            "boxes_per_image": {
                "min": int(per_image.min()) if len(per_image) else 0,
                "max": int(per_image.max(initial=0)),
                "mean": round(float(per_image.mean()), 3) if len(per_image) else 0.0,
                "histogram": [{"boxes": label, "images": n} for label, n in zip(
                    PER_IMAGE_LABELS, _histogram(per_image, PER_IMAGE_BINS, PER_IMAGE_LABELS),
                    strict=True)]},
            "box_sizes": [{"relative_side": label, "boxes": n} for label, n in zip(
                SIZE_LABELS, _histogram(sizes, SIZE_BINS, SIZE_LABELS), strict=True)],
            **checks_report(self.checks, CHECKS, self.cancelled, self.notes, self.problems(),
                            self.blocking()),
        }


def _duplicates(boxes: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Which boxes repeat an earlier box of the same class (IoU above DUPLICATE_IOU)."""
    copies = np.zeros(len(boxes), bool)
    for cls in np.unique(classes):
        members = np.flatnonzero(classes == cls)
        if len(members) < 2:
            continue
        overlap = np.triu(iou_matrix(boxes[members], boxes[members]) > DUPLICATE_IOU, k=1)
        copies[members] = overlap.any(axis=0)
    return copies
