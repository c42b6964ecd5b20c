"""How closely an exported detector answers like the Keras model: both head outputs decoded
at the run's settings, the share of the Keras model's boxes the export finds too (same class,
IoU at least AGREEMENT_IOU), and the mAP@0.5 of each against the true boxes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from studio.core.base.messages import count
from studio.core.tasks.detection.boxes import Detections, ImageBoxes, iou_matrix
from studio.core.tasks.detection.decode import decode_in_input
from studio.core.tasks.detection.map_callback import map_scores
from studio.core.tasks.task import ExportAgreement

AGREEMENT_IOU = 0.9
"""An export's box agrees with the Keras model's when it has its class and overlaps it by at
least this IoU."""


def matches(wanted: Detections, found: Detections) -> int:
    """How many of ``wanted``'s boxes have a box of ``found`` of their class at IoU ≥
    AGREEMENT_IOU, each box of ``found`` matching one at most (best scores first)."""
    if not len(wanted) or not len(found):
        return 0
    close = (iou_matrix(wanted.boxes, found.boxes) >= AGREEMENT_IOU) & (
        wanted.classes[:, None] == found.classes[None, :])
    taken = np.zeros(len(found), bool)
    matched = 0
    for row in close:
        free = np.flatnonzero(row & ~taken)
        if len(free):
            taken[free[0]] = True
            matched += 1
    return matched


def box_agreement(outputs: np.ndarray, expected: np.ndarray, settings: Mapping[str, Any]
                  ) -> tuple[float, int]:
    """The percentage of the Keras model's boxes (in ``expected``) that the export's
    ``outputs`` find too, and how many boxes the Keras model found. When it found none, 100
    if the export finds none either, else 0."""
    matched = total = extra = 0
    for ours, theirs in zip(outputs, expected, strict=True):
        found, wanted = decode_in_input(ours, settings), decode_in_input(theirs, settings)
        total += len(wanted)
        extra += len(found)
        matched += matches(wanted, found)
    if total == 0:
        return (0.0 if extra else 100.0), 0
    return matched / total * 100, total


def export_agreement(outputs: np.ndarray, expected: np.ndarray, settings: Mapping[str, Any],
                     truths: Sequence[ImageBoxes] | None) -> ExportAgreement:
    """The box agreement of an export's head ``outputs`` with the Keras model's
    (``expected``), decoded with the run's ``settings``, and the mAP@0.5 of each against
    ``truths`` (the images' true boxes in input pixels; None: not scored)."""
    percent, boxes = box_agreement(outputs, expected, settings)
    samples = count(len(outputs), "validation sample")
    words = (f"finds {percent:.1f}% of the Keras model's {count(boxes, 'box', 'boxes')} (same "
             f"class, IoU ≥ {AGREEMENT_IOU:g}) in {samples}" if boxes else
             f"finds {'no' if percent else 'boxes where the Keras model finds no'} box in "
             f"{samples}{', nor does the Keras model' if percent else ''}")
    if truths is None:
        return ExportAgreement(percent, "box agreement", words)
    truths = list(truths)[:len(outputs)]
    ours = map_scores(np.asarray(outputs, np.float32), truths, settings)["val_map50"]
    theirs = map_scores(np.asarray(expected, np.float32), truths, settings)["val_map50"]
    return ExportAgreement(percent, "box agreement", words,
                           {"map50": ours, "keras_map50": theirs},
                           f"mAP@0.5 {ours:.3f}, against the Keras model's {theirs:.3f}.")
