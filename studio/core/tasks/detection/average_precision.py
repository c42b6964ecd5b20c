"""COCO-style average precision of a detector on labelled images (NumPy only).

``average_precision`` scores a whole validation pass at once and gives the same numbers as
pycocotools' ``COCOeval`` for boxes (``iouType="bbox"``) with ``iscrowd=0`` everywhere, the
area range "all" and at most 100 detections, and follows its conventions to the letter:

- IoU on ``x, y, w, h`` boxes in double precision, areas ``w * h`` (no "+1" pixel);
- each image and class on its own: its 100 surest detections (equal scores keep their input
  order), matched surest first, at each IoU threshold 0.50, 0.55, …, 0.95, to the unmatched
  true box of the largest IoU at or above the threshold (the last such box on a tie);
- per class, the detections of all images ranked by score (equal scores: earlier image
  first), precision made non-increasing from the right and read at the 101 recalls
  0, 0.01, …, 1; AP is its mean, 0 where recall never reaches;
- a class without any true box has no AP (COCO's -1, ``None`` here), whatever it predicts,
  and the mAPs are means over the classes that have true boxes (``None`` if none has).

Boxes are expected the right way round (``x_min <= x_max``); pycocotools would give an
inverted box a signed area, which no label reader or decoder of ours produces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from studio.core.tasks.detection.boxes import Detections, ImageBoxes

# pycocotools' own expressions, so that each threshold is the same double.
IOU_THRESHOLDS = np.linspace(.5, 0.95, int(np.round((0.95 - .5) / .05)) + 1, endpoint=True)
RECALL_THRESHOLDS = np.linspace(.0, 1.00, int(np.round((1.00 - .0) / .01)) + 1, endpoint=True)
MAX_DETECTIONS = 100  # per image and class, as pycocotools applies maxDets


@dataclass(frozen=True)
class PrecisionRecall:
    """One class's precision-recall curve at IoU 0.5: a point after each of its ranked
    detections (surest first), ``precision`` interpolated (the best precision at that recall
    or beyond, as AP reads it), ``scores`` the score of that detection. Empty for a class
    without true boxes."""

    recall: np.ndarray
    precision: np.ndarray
    scores: np.ndarray


@dataclass(frozen=True)
class ClassMistakes:
    """One class's mistakes at IoU 0.5, each with the index of its image: the false
    positives, surest first, and the true boxes no detection matched, in image order."""

    false_positive_images: np.ndarray  # int64 N
    false_positive_boxes: np.ndarray  # float32 N × 4
    false_positive_scores: np.ndarray  # float32 N
    missed_images: np.ndarray  # int64 M
    missed_boxes: np.ndarray  # float32 M × 4


@dataclass(frozen=True)
class DetectionScores:
    """A validation pass's scores. APs are in [0, 1]; ``None`` where COCO reports -1 (a class
    without true boxes, or means when no class has any). Per-class tuples are indexed by
    class."""

    map50: float | None  # mAP at IoU 0.5
    map: float | None  # mAP averaged over IoU 0.50:0.05:0.95 (COCO's headline AP)
    class_ap50: tuple[float | None, ...]
    class_ap: tuple[float | None, ...]
    curves: tuple[PrecisionRecall, ...]
    mistakes: tuple[ClassMistakes, ...]


def average_precision(truths: Sequence[ImageBoxes], predictions: Sequence[Detections],
                      num_classes: int) -> DetectionScores:
    """Score ``predictions`` (one ``Detections`` per image) against ``truths`` (the same
    images' true boxes, in the same order) over classes ``0 … num_classes - 1``."""
    if len(truths) != len(predictions):
        raise ValueError(f"{len(truths)} labelled images but predictions for {len(predictions)}")
    truth, found = _Flat.of(truths, num_classes), _Flat.of(predictions, num_classes)
    found = found.take(_surest_per_group(found))
    matches = _match(truth, found)  # detection × threshold: row of its true box in truth, or -1
    found_at_50 = np.zeros(len(truth.classes), bool)
    found_at_50[matches[:, 0][matches[:, 0] >= 0]] = True
    precision = -np.ones((len(IOU_THRESHOLDS), len(RECALL_THRESHOLDS), num_classes))
    curves, mistakes = [], []
    for k in range(num_classes):
        ranked = np.flatnonzero(found.classes == k)
        ranked = ranked[np.argsort(-found.scores[ranked].astype(np.float64), kind="stable")]
        hits = matches[ranked].T >= 0
        true_count = np.count_nonzero(truth.classes == k)
        curve = PrecisionRecall(np.zeros(0), np.zeros(0), np.zeros(0, np.float32))
        if true_count:
            precision[:, :, k], recall, interpolated = _sampled_precision(hits, true_count)
            curve = PrecisionRecall(recall[0], interpolated[0], found.scores[ranked])
        curves.append(curve)
        wrong = ranked[~hits[0]]
        missed = np.flatnonzero((truth.classes == k) & ~found_at_50)
        mistakes.append(ClassMistakes(found.images[wrong], found.boxes[wrong], found.scores[wrong],
                                      truth.images[missed], truth.boxes[missed]))
    scored = precision[0, 0] > -1  # the classes with true boxes
    return DetectionScores(  # means over flat arrays, in pycocotools' order: the same doubles
        map50=float(precision[0][:, scored].ravel().mean()) if scored.any() else None,
        map=float(precision[:, :, scored].ravel().mean()) if scored.any() else None,
        class_ap50=tuple(float(precision[0, :, k].mean()) if scored[k] else None
                         for k in range(num_classes)),
        class_ap=tuple(float(precision[:, :, k].mean()) if scored[k] else None
                       for k in range(num_classes)),
        curves=tuple(curves), mistakes=tuple(mistakes))


@dataclass(frozen=True)
class _Flat:
    """The boxes of all images in one list: image index, box, class, score (1 for truths),
    and a key per row that orders by class, then image."""

    images: np.ndarray
    boxes: np.ndarray
    classes: np.ndarray
    scores: np.ndarray
    groups: np.ndarray

    @staticmethod
    def of(per_image: Sequence[ImageBoxes], num_classes: int) -> _Flat:
        classes = np.concatenate([item.classes for item in per_image] + [np.zeros(0, np.int32)])
        bad = (classes < 0) | (classes >= num_classes)
        if bad.any():
            raise ValueError(f"class {classes[bad][0]} is beyond the {num_classes} classes")
        images = np.repeat(np.arange(len(per_image)), [len(item) for item in per_image])
        return _Flat(
            images,
            np.concatenate([item.boxes for item in per_image] + [np.zeros((0, 4), np.float32)]),
            classes,
            np.concatenate([getattr(item, "scores", np.ones(len(item), np.float32))
                            for item in per_image] + [np.zeros(0, np.float32)]),
            classes.astype(np.int64) * len(per_image) + images)

    def take(self, rows: np.ndarray) -> _Flat:
        return _Flat(self.images[rows], self.boxes[rows], self.classes[rows], self.scores[rows],
                     self.groups[rows])


def _rank_in_group(groups: np.ndarray) -> np.ndarray:
    """For sorted group keys, each row's place in its group (0 for the first)."""
    rows = np.arange(len(groups))
    starts = np.r_[True, groups[1:] != groups[:-1]] if len(groups) else np.zeros(0, bool)
    return rows - np.maximum.accumulate(np.where(starts, rows, 0))


def _surest_per_group(found: _Flat) -> np.ndarray:
    """The rows of each class and image's 100 surest detections, grouped by class and image,
    surest first within each (equal scores in input order)."""
    order = np.lexsort((-found.scores.astype(np.float64), found.groups))
    return order[_rank_in_group(found.groups[order]) < MAX_DETECTIONS]


def _match(truth: _Flat, found: _Flat) -> np.ndarray:
    """Greedy matching as pycocotools': for each detection (``found`` grouped by class and
    image, surest first) and IoU threshold, the row in ``truth`` of the true box it matched,
    or -1. The n-th detections of all groups are matched together, one step per rank."""
    thresholds = np.minimum(IOU_THRESHOLDS, 1 - 1e-10)
    matches = -np.ones((len(found.classes), len(thresholds)), np.int64)
    by_group = np.argsort(truth.groups, kind="stable")  # input order within a group
    first = np.searchsorted(truth.groups[by_group], found.groups, "left")
    count = np.searchsorted(truth.groups[by_group], found.groups, "right") - first
    rows = np.flatnonzero(count > 0)  # the others have no true box to match
    width = int(count.max(initial=0))
    slot = np.arange(width)
    candidates = by_group[np.minimum(first[rows, None] + slot, max(len(by_group) - 1, 0))]
    ious = np.where(slot < count[rows, None],
                    _coco_iou(found.boxes[rows], truth.boxes, candidates), -1.0)
    # a detection below the lowest threshold with every box matches nothing and takes nothing
    hopeful = (ious >= thresholds[0]).any(axis=1)
    rows, candidates, ious = rows[hopeful], candidates[hopeful], ious[hopeful]
    taken = np.zeros((len(truth.classes), len(thresholds)), bool)
    rank = _rank_in_group(found.groups)[rows]
    for r in np.unique(rank):
        step = np.flatnonzero(rank == r)  # one detection per group: none contend for a box
        iou = ious[step][:, :, None]
        open_ = (iou >= thresholds) & ~taken[candidates[step]]
        # the largest IoU wins, the last such box on a tie (pycocotools replaces on >=)
        best = width - 1 - np.argmax(np.where(open_, iou, -np.inf)[:, ::-1], axis=1)
        won = open_.any(axis=1)
        box = np.take_along_axis(candidates[step], best, axis=1)
        matches[rows[step]] = np.where(won, box, -1)
        row, level = np.nonzero(won)
        taken[box[row, level], level] = True
    return matches


def _coco_iou(boxes: np.ndarray, others: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """IoU of each box (N × 4) with ``others[candidates]`` (candidates N × G), computed as
    pycocotools' ``bbIou`` does from ``x, y, w, h`` in doubles, so a threshold cuts where
    pycocotools' cuts."""
    def xywh_terms(b: np.ndarray) -> tuple[np.ndarray, ...]:
        b = b.astype(np.float64)
        w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
        return b[:, 0], b[:, 1], w + b[:, 0], h + b[:, 1], w * h

    x, y, right, bottom, area = (t[:, None] for t in xywh_terms(boxes))
    x_, y_, right_, bottom_, area_ = (t[candidates] for t in xywh_terms(others))
    w = np.minimum(right, right_) - np.maximum(x, x_)
    h = np.minimum(bottom, bottom_) - np.maximum(y, y_)
    inter = w * h
    return np.divide(inter, area + area_ - inter, out=np.zeros_like(inter),
                     where=(w > 0) & (h > 0))

def _sampled_precision(hits: np.ndarray, true_count: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From one class's hits (threshold × ranked detection): precision at the 101 recalls
    (threshold × 101), and per threshold the recall and interpolated precision after each
    detection, computed in pycocotools' order of operations."""
    tp = np.cumsum(hits, axis=1).astype(float)
    fp = np.cumsum(~hits, axis=1).astype(float)
    recall = tp / true_count
    interpolated = np.maximum.accumulate((tp / (fp + tp + np.spacing(1)))[:, ::-1], axis=1)[:, ::-1]
    sampled = np.zeros((len(hits), len(RECALL_THRESHOLDS)))
    for t in range(len(hits)):
        at = np.searchsorted(recall[t], RECALL_THRESHOLDS, side="left")
        reached = at < recall.shape[1]
        sampled[t, reached] = interpolated[t, at[reached]]
    return sampled, recall, interpolated
