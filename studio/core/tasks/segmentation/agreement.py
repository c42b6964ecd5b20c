"""How closely an exported segmentation model answers like the Keras model: the share of
pixels whose class (the argmax) is the Keras model's, and the mean IoU of each against the
true masks."""

from __future__ import annotations

import math

import numpy as np

from studio.core.base.messages import count
from studio.core.tasks.segmentation.scores import confusion_matrix, mean_iou, predicted_masks
from studio.core.tasks.task import ExportAgreement

THRESHOLDS = (99.5, 98.0)
"""The pixel agreement (percent) under which an export is flagged: in a float format, and in
a quantised (int8) one, whose rounding moves more pixels at the borders between classes."""


def pixel_agreement(outputs: np.ndarray, expected: np.ndarray) -> float:
    """The percentage of pixels the export's ``outputs`` give the class the Keras model's
    ``expected`` outputs give (both N × H × W × C)."""
    ours, theirs = predicted_masks(outputs), predicted_masks(expected)
    if ours.shape != theirs.shape:
        raise ValueError(f"The export answers with maps of {ours.shape[1:]} pixels but the "
                         f"Keras model with {theirs.shape[1:]}: they must be of one size.")
    return float(np.mean(ours == theirs) * 100) if ours.size else 100.0


def export_agreement(outputs: np.ndarray, expected: np.ndarray,
                     truths: np.ndarray | None) -> ExportAgreement:
    """The pixel agreement of an export's ``outputs`` with the Keras model's (``expected``),
    and the mean IoU of each against ``truths`` (the true masks, N × H × W at the outputs'
    size, whose first are these samples'; None: not scored)."""
    percent = pixel_agreement(outputs, expected)
    words = (f"gives the Keras model's class to {percent:.2f}% of the pixels of "
             f"{count(len(outputs), 'validation sample')}")
    if truths is None:
        return ExportAgreement(percent, "pixel agreement", words)
    truths = np.asarray(truths)[:len(outputs)]
    classes = outputs.shape[-1]
    ours = _mean_iou(truths, outputs, classes)
    theirs = _mean_iou(truths, expected, classes)
    return ExportAgreement(percent, "pixel agreement", words,
                           {"mean_iou": ours, "keras_mean_iou": theirs},
                           f"mean IoU {_text(ours)}, against the Keras model's {_text(theirs)}.")


def _mean_iou(truths: np.ndarray, outputs: np.ndarray, classes: int) -> float | None:
    """The mean IoU of ``outputs`` against ``truths``; None if no pixel was scored."""
    value = mean_iou(confusion_matrix(truths, predicted_masks(outputs), classes))
    return None if math.isnan(value) else value


def _text(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"
