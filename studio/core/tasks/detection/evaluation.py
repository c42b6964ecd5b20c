"""How a detector scores on a split: COCO-style mAP@0.5 and mAP@[0.5:0.95], each class's AP
and precision-recall curve, and each class's false positives and missed boxes, image by image.

The split's images are scored as the training's ``val_map50`` scores them
(``map_callback``): the head's outputs decoded with the run's ``decoding`` record down to
its mAP threshold, against the true boxes in the network's input pixels; the mistakes are
then taken back to each image's own pixels, to be drawn on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studio.core.tasks.detection.average_precision import (
    DetectionScores,
    average_precision,
)
from studio.core.tasks.detection.boxes import Detections, ImageBoxes
from studio.core.tasks.detection.fitting import box_mapping, boxes_in_input
from studio.core.tasks.detection.labels import BoxLabels
from studio.core.tasks.detection.map_callback import SCORE_THRESHOLD, map_detections

NAME_WIDTH = 16
"""The most characters of a class name the text table shows."""
NO_BOXES = ("{names} {verb} no true box in this split: {pronoun} AP is left out of the mAPs "
            "(shown as —).")


@dataclass(frozen=True)
class ImageMistakes:
    """One image's mistakes for one class, in the image's own pixels: the boxes the model
    found that match no true box (with their scores), and the true boxes it missed."""

    position: int
    """The image's place in the split."""
    image_size: tuple[int, int]
    """The image's own (height, width), which the boxes are in."""
    false_positives: np.ndarray  # float32 N × 4
    scores: np.ndarray  # float32 N
    missed: np.ndarray  # float32 M × 4


@dataclass
class DetectionEvaluation:
    """A detector's answers on one split and the scores they make.

    Per-image lists are in split order (a *position*); ``indices[position]`` is that image's
    index in the whole dataset. ``truths`` and ``detections`` are in the network's input
    pixels, as scored; ``image_sizes`` are the images' own (height, width).
    """

    split: str
    class_names: list[str]
    loss: float
    scores: DetectionScores
    truths: list[ImageBoxes]
    detections: list[Detections]
    image_sizes: np.ndarray
    decoding: dict[str, Any]
    indices: np.ndarray
    notes: list[str] = field(default_factory=list)
    samples: Any = field(default=None, repr=False, compare=False)
    """The dataset's samples, to show the images (``data.display``)."""

    @classmethod
    def of_outputs(cls, split: str, class_names: Sequence[str], outputs: np.ndarray,
                   labels: BoxLabels, decoding: Mapping[str, Any], loss: float,
                   indices: np.ndarray, samples: Any = None, notes: Sequence[str] = ()
                   ) -> DetectionEvaluation:
        """The evaluation of head ``outputs`` (one per image) against ``labels`` (the same
        images' true boxes in their own pixels), decoded with the run's ``decoding``."""
        names = [str(n) for n in class_names]
        size, resize = tuple(decoding["input_size"]), decoding.get("resize", "squash")
        sizes = np.asarray(labels.sizes, np.int64).reshape(-1, 2)
        truths = [boxes_in_input(labels.image(i), tuple(sizes[i]), size, resize)
                  for i in range(len(labels))]
        detections = map_detections(outputs, decoding)
        scores = average_precision(truths, detections, len(names))
        absent = [names[k] for k, ap in enumerate(scores.class_ap50) if ap is None]
        if absent:
            many = len(absent) > 1
            notes = [*notes, NO_BOXES.format(names=", ".join(absent),
                                             verb="have" if many else "has",
                                             pronoun="their" if many else "its")]
        return cls(split, names, float(loss), scores, truths, detections, sizes,
                   dict(decoding), np.asarray(indices, np.int64), list(notes), samples)

    @property
    def box_count(self) -> int:
        """True boxes in the split (as scored, in the input)."""
        return sum(len(t) for t in self.truths)

    def class_boxes(self) -> list[int]:
        """True boxes of each class."""
        classes = np.concatenate([t.classes for t in self.truths] + [np.zeros(0, np.int32)])
        return [int(n) for n in np.bincount(classes, minlength=len(self.class_names))]

    def class_detections(self) -> list[int]:
        """Boxes found of each class (at the mAP threshold)."""
        classes = np.concatenate([d.classes for d in self.detections] + [np.zeros(0, np.int32)])
        return [int(n) for n in np.bincount(classes, minlength=len(self.class_names))]

    def image_mistakes(self, class_index: int) -> list[ImageMistakes]:
        """The images where the model went wrong on class ``class_index`` (at IoU 0.5), the
        one with the surest false positive first, then those with missed boxes only, in
        split order; each with its mistakes in its own pixels."""
        mistakes = self.scores.mistakes[class_index]
        size, resize = tuple(self.decoding["input_size"]), self.decoding.get("resize", "squash")
        positions = np.union1d(mistakes.false_positive_images, mistakes.missed_images)
        surest = {int(p): -float(np.max(mistakes.false_positive_scores[
            mistakes.false_positive_images == p], initial=-np.inf)) for p in positions}
        ordered = sorted(positions.tolist(), key=lambda p: (surest[p], p))
        found = []
        for position in ordered:
            image_size = (int(self.image_sizes[position][0]), int(self.image_sizes[position][1]))
            back = box_mapping(image_size, size, resize).to_image
            wrong = mistakes.false_positive_images == position
            missed = mistakes.missed_images == position
            found.append(ImageMistakes(position, image_size,
                                       back(mistakes.false_positive_boxes[wrong]),
                                       mistakes.false_positive_scores[wrong],
                                       back(mistakes.missed_boxes[missed])))
        return found

    def sample_indices(self, positions: Sequence[int]) -> list[int]:
        """The dataset indices of the images at ``positions`` (to show them)."""
        return [int(self.indices[p]) for p in positions]

    def to_dict(self) -> dict[str, Any]:
        """The scores as JSON-ready values: mAPs and per-class APs in [0, 1], None (null)
        for a class without true boxes."""
        scores = self.scores
        boxes, found = self.class_boxes(), self.class_detections()
        return {
            "split": self.split,
            "images": len(self.truths),
            "boxes": self.box_count,
            "loss": self.loss,
            "map50": scores.map50,
            "map": scores.map,
            "score_threshold": SCORE_THRESHOLD,
            "class_names": self.class_names,
            "per_class": [
                {"class": name, "ap50": scores.class_ap50[k], "ap": scores.class_ap[k],
                 "boxes": boxes[k], "detections": found[k],
                 "false_positives": len(scores.mistakes[k].false_positive_boxes),
                 "missed": len(scores.mistakes[k].missed_boxes)}
                for k, name in enumerate(self.class_names)],
            "notes": list(self.notes),
        }


def ap_text(value: float | None) -> str:
    """An AP as a percentage with one decimal, ``—`` where there is none."""
    return "—" if value is None else f"{value:.1%}"


def _name(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1].rstrip() + "…"


def evaluation_text(evaluation: DetectionEvaluation) -> str:
    """``evaluation`` as plain text: the mAPs and loss, then each class's AP@0.5,
    AP@[0.5:0.95], true boxes, false positives and missed boxes, and the notes."""
    scores = evaluation.scores
    table = evaluation.to_dict()["per_class"]
    names = [_name(n) for n in evaluation.class_names]
    first = max(len("class"), *(len(n) for n in names))
    lines = [f"{len(evaluation.truths):,} images, {evaluation.box_count:,} boxes: "
             f"mAP@0.5 {ap_text(scores.map50)}, mAP@[0.5:0.95] {ap_text(scores.map)}, "
             f"loss {evaluation.loss:.4f}",
             "",
             f"{'class':<{first}}  AP@0.5  AP@[0.5:0.95]  boxes  false positives  missed"]
    lines += [f"{name:<{first}}  {ap_text(row['ap50']):>6}  {ap_text(row['ap']):>13}  "
              f"{row['boxes']:5,}  {row['false_positives']:15,}  {row['missed']:6,}"
              for name, row in zip(names, table, strict=True)]
    lines += ["", f"Boxes scoring at least {SCORE_THRESHOLD:g} count, as in training's "
                  "val_map50; false positives and missed boxes are at IoU 0.5."]
    lines += [f"Note: {note}" for note in evaluation.notes]
    return "\n".join(lines)
