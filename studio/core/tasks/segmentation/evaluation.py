"""How a segmentation model scores on a split: each class's IoU and Dice, the mean IoU, pixel
accuracy, and each image's own mean IoU, so that the worst answered images can be shown."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studio.core.tasks.segmentation.scores import (
    class_dice,
    class_iou,
    ignored_pixels,
    image_confusions,
    mean_iou,
    pixel_accuracy,
)

NAME_WIDTH = 16
"""The most characters of a class name the text table shows."""
LOWEST_SHOWN = 5
"""How many of the lowest-IoU images the text names."""
ABSENT = ("{names} {verb} in neither the true masks nor the answers of this split: {pronoun} "
          "IoU is left out of the mean IoU (shown as —).")


LOWEST_KEPT = 24
"""How many of the lowest-IoU images keep their masks, to be drawn (the rest keep only their
pixel counts)."""


@dataclass
class SegmentationEvaluation:
    """A segmentation model's answers on one split and the scores they make.

    Per-image arrays are in split order (a *position*); ``indices[position]`` is that image's
    index in the whole dataset. Pixels of IGNORE in the true masks count in no score. Only
    the images of lowest IoU keep their masks (``shown``).
    """

    split: str
    class_names: list[str]
    loss: float
    confusion: np.ndarray
    """Pixels of each (true class, answered class) pair over the split (int64 k × k)."""
    image_iou: np.ndarray
    """Each image's own mean IoU (NaN for an image without a scored pixel)."""
    ignored: int
    """Pixels of IGNORE in the true masks."""
    indices: np.ndarray
    shown: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    """The true and answered masks of the images of lowest IoU, by position."""
    notes: list[str] = field(default_factory=list)
    samples: Any = field(default=None, repr=False, compare=False)
    """The dataset's samples, to show the images (``data.display``)."""
    resize: str = "squash"
    """How the images were fitted to the network's input, to take the masks back to them."""

    @classmethod
    def of_masks(cls, split: str, class_names: Sequence[str], true: np.ndarray,
                 predicted: np.ndarray, loss: float, indices: np.ndarray | None = None,
                 samples: Any = None, notes: Sequence[str] = ()) -> SegmentationEvaluation:
        """The evaluation of the answered masks ``predicted`` against the ``true`` masks (both
        uint8 N × H × W, a trailing axis of one dropped), all at once."""
        tally = MaskTally(len(class_names))
        tally.add(true, predicted)
        return tally.evaluation(split, class_names, loss, indices, samples, notes)

    @property
    def size(self) -> int:
        """The images scored."""
        return len(self.image_iou)

    def masks(self, position: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The true and answered masks of the image at ``position`` (in the network's input
        pixels), if it is among those kept to be shown."""
        return self.shown.get(int(position))

    @property
    def iou(self) -> np.ndarray:
        """Each class's IoU (NaN for a class in neither the truth nor the answers)."""
        return class_iou(self.confusion)

    @property
    def dice(self) -> np.ndarray:
        """Each class's Dice score (NaN as for ``iou``)."""
        return class_dice(self.confusion)

    @property
    def mean_iou(self) -> float:
        return mean_iou(self.confusion)

    @property
    def pixel_accuracy(self) -> float:
        return pixel_accuracy(self.confusion)

    def lowest_iou(self, count: int) -> np.ndarray:
        """Positions of up to ``count`` images with the lowest mean IoU, the lowest first
        (images without a scored pixel left out)."""
        scored = np.flatnonzero(~np.isnan(self.image_iou))
        return scored[np.argsort(self.image_iou[scored], kind="stable")][:count]

    def sample_indices(self, positions: Sequence[int]) -> list[int]:
        """The dataset indices of the images at ``positions`` (to show them)."""
        return [int(self.indices[p]) for p in positions]

    def to_dict(self) -> dict[str, Any]:
        """The scores as JSON-ready values in [0, 1]; None (null) where there is none (a
        class in neither the truth nor the answers)."""
        iou, dice = self.iou, self.dice
        truth, answered = self.confusion.sum(axis=1), self.confusion.sum(axis=0)
        return {
            "split": self.split,
            "images": self.size,
            "pixels": int(self.confusion.sum()),
            "ignored_pixels": self.ignored,
            "loss": self.loss,
            "mean_iou": _number(self.mean_iou),
            "pixel_accuracy": _number(self.pixel_accuracy),
            "class_names": self.class_names,
            "confusion": self.confusion.tolist(),
            "per_class": [
                {"class": name, "iou": _number(iou[k]), "dice": _number(dice[k]),
                 "true_pixels": int(truth[k]), "answered_pixels": int(answered[k])}
                for k, name in enumerate(self.class_names)],
            "image_iou": [_number(v) for v in self.image_iou],
            "notes": list(self.notes),
        }


class MaskTally:
    """A split's masks scored batch by batch: the pixel confusion matrix and each image's IoU
    add up as batches come, and only the masks of the ``kept`` images of lowest IoU so far
    are held, so a large split's masks are never all in memory at once."""

    def __init__(self, num_classes: int, kept: int | None = None) -> None:
        self.num_classes, self.kept = num_classes, kept
        self.confusion = np.zeros((num_classes, num_classes), np.int64)
        self.ious: list[np.ndarray] = []
        self.ignored = 0
        self.shown: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def size(self) -> int:
        return sum(len(batch) for batch in self.ious)

    def add(self, true: np.ndarray, predicted: np.ndarray) -> None:
        """Score a batch of ``predicted`` masks against its ``true`` ones (uint8 B × H × W,
        a trailing axis of one dropped; IGNORE pixels left out)."""
        true, predicted = _masks(true), _masks(predicted)
        first = self.size
        confusions = image_confusions(true, predicted, self.num_classes)
        self.confusion += confusions.sum(axis=0)
        ious = np.array([mean_iou(c) for c in confusions], np.float64)
        self.ious.append(ious)
        self.ignored += ignored_pixels(true)
        for at in np.flatnonzero(~np.isnan(ious)):
            self.shown[first + int(at)] = (true[at], predicted[at])
        if self.kept is not None and len(self.shown) > self.kept:
            image_iou = np.concatenate(self.ious)
            keep = sorted(self.shown, key=lambda p: (image_iou[p], p))[: self.kept]
            self.shown = {p: self.shown[p] for p in sorted(keep)}

    def evaluation(self, split: str, class_names: Sequence[str], loss: float,
                   indices: np.ndarray | None = None, samples: Any = None,
                   notes: Sequence[str] = (), resize: str = "squash") -> SegmentationEvaluation:
        """The evaluation of the masks added (``resize``: how the images were fitted to the
        network's input)."""
        names = [str(n) for n in class_names]
        absent = [names[k] for k, iou in enumerate(class_iou(self.confusion)) if np.isnan(iou)]
        if absent:
            many = len(absent) > 1
            notes = [*notes, ABSENT.format(names=", ".join(absent), verb="are" if many else "is",
                                           pronoun="their" if many else "its")]
        image_iou = np.concatenate(self.ious) if self.ious else np.zeros(0, np.float64)
        return SegmentationEvaluation(
            split, names, float(loss), self.confusion.copy(), image_iou, self.ignored,
            np.arange(len(image_iou), dtype=np.int64) if indices is None
            else np.asarray(indices, np.int64), dict(self.shown), list(notes), samples, resize)


def _masks(masks: np.ndarray) -> np.ndarray:
    masks = np.asarray(masks)
    if masks.ndim == 4 and masks.shape[-1] == 1:
        masks = masks[..., 0]
    return masks.astype(np.uint8)


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def percent_text(value: float | None) -> str:
    """A score in [0, 1] as a percentage with one decimal, ``—`` where there is none."""
    return "—" if value is None or math.isnan(value) else f"{value:.1%}"


def _name(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1].rstrip() + "…"


def evaluation_text(evaluation: SegmentationEvaluation) -> str:
    """``evaluation`` as plain text: the mean IoU, pixel accuracy and loss, then each class's
    IoU, Dice, true and answered pixels, the images of lowest IoU, and the notes."""
    table = evaluation.to_dict()
    names = [_name(n) for n in evaluation.class_names]
    first = max(len("class"), *(len(n) for n in names))
    ignored = f" ({evaluation.ignored:,} ignored)" if evaluation.ignored else ""
    lines = [f"{evaluation.size:,} images, {table['pixels']:,} pixels scored{ignored}: "
             f"mean IoU {percent_text(table['mean_iou'])}, pixel accuracy "
             f"{percent_text(table['pixel_accuracy'])}, loss {evaluation.loss:.4f}",
             "",
             f"{'class':<{first}}     IoU    Dice  true pixels  answered pixels"]
    lines += [f"{name:<{first}}  {percent_text(row['iou']):>6}  {percent_text(row['dice']):>6}  "
              f"{row['true_pixels']:11,}  {row['answered_pixels']:15,}"
              for name, row in zip(names, table["per_class"], strict=True)]
    lowest = evaluation.lowest_iou(LOWEST_SHOWN)
    if len(lowest):
        lines += ["", "Lowest image IoU: " + ", ".join(
            f"sample {index} {percent_text(evaluation.image_iou[p])}"
            for p, index in zip(lowest, evaluation.sample_indices(lowest), strict=True))]
    lines += [f"Note: {note}" for note in evaluation.notes]
    return "\n".join(lines)
