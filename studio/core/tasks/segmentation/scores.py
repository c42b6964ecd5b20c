"""Segmentation's scores from a pixel confusion matrix (NumPy only): each class's IoU and Dice,
the mean IoU, pixel accuracy, and each image's own mean IoU.

A class absent from both the true masks and the answers has no IoU (NaN here): it is left
out of the mean, as ``keras.metrics.MeanIoU`` leaves it out. Pixels of IGNORE count nowhere.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from studio.core.tasks.segmentation.masks import IGNORE


def predicted_masks(outputs: np.ndarray) -> np.ndarray:
    """The class of each pixel in model outputs (… × H × W × C, probabilities or logits):
    uint8 masks of … × H × W, the argmax over the classes."""
    return np.asarray(outputs).argmax(axis=-1).astype(np.uint8)


def confusion_matrix(true: np.ndarray, predicted: np.ndarray, num_classes: int) -> np.ndarray:
    """Pixels of each (true class, answered class) pair (int64 ``num_classes`` square; rows:
    true class, columns: answer) of masks ``true`` and ``predicted`` of one shape (an image's
    or a batch's). True pixels of IGNORE, or of any value beyond the classes, are left out."""
    return image_confusions(np.reshape(true, (1, -1)), np.reshape(predicted, (1, -1)),
                            num_classes)[0]


def image_confusions(true: np.ndarray, predicted: np.ndarray, num_classes: int) -> np.ndarray:
    """Each image's confusion matrix (int64 N × k × k) of a batch of masks ``true`` and
    ``predicted`` of one shape (N × H × W), counted at once; true pixels of IGNORE, or of any
    value beyond the classes, left out."""
    true = np.asarray(true).reshape(len(true), -1).astype(np.int64)
    predicted = np.asarray(predicted).reshape(len(predicted), -1).astype(np.int64)
    if true.shape != predicted.shape:
        raise ValueError(f"The true masks hold {true.size:,} pixels but the answers "
                         f"{predicted.size:,}: they must be of one size.")
    cells = num_classes ** 2
    image = np.broadcast_to(np.arange(len(true))[:, None] * cells, true.shape)
    kept = (true < num_classes) & (predicted < num_classes)
    pairs = image[kept] + true[kept] * num_classes + predicted[kept]
    return np.bincount(pairs, minlength=len(true) * cells).reshape(-1, num_classes,
                                                                    num_classes)


def class_iou(confusion: np.ndarray) -> np.ndarray:
    """Each class's intersection over union: right pixels / (true + answered - right);
    NaN for a class in neither the truth nor the answers."""
    right, union = _right_and_both(confusion)
    union = union - right
    return np.divide(right, union, out=np.full_like(right, np.nan), where=union > 0)


def class_dice(confusion: np.ndarray) -> np.ndarray:
    """Each class's Dice (F1) score: 2 × right pixels / (true + answered); NaN for a class in
    neither the truth nor the answers."""
    right, both = _right_and_both(confusion)
    return np.divide(2 * right, both, out=np.full_like(right, np.nan), where=both > 0)


def _right_and_both(confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each class's right pixels, and its true pixels plus its answered ones (float64)."""
    confusion = np.asarray(confusion, np.float64)
    return np.diag(confusion).copy(), confusion.sum(axis=0) + confusion.sum(axis=1)


def mean_iou(confusion: np.ndarray) -> float:
    """The mean IoU over the classes in the truth or the answers; NaN if there are none (no
    pixel was scored)."""
    return _mean_of_present(class_iou(confusion))


def _mean_of_present(values: np.ndarray) -> float:
    present = values[~np.isnan(values)]
    return float(present.mean()) if present.size else float("nan")


def pixel_accuracy(confusion: np.ndarray) -> float:
    """The share of scored pixels answered with their true class; NaN if none was scored."""
    confusion = np.asarray(confusion)
    total = confusion.sum()
    return float(np.trace(confusion) / total) if total else float("nan")


def image_ious(true: Iterable[np.ndarray], predicted: Iterable[np.ndarray],
               num_classes: int) -> np.ndarray:
    """Each image's own mean IoU (over the classes in its truth or its answer; NaN for an
    image whose pixels are all IGNORE), from pairs of masks that may differ in size."""
    return np.array([mean_iou(confusion_matrix(t, p, num_classes))
                     for t, p in zip(true, predicted, strict=True)], np.float64)


def ignored_pixels(true: np.ndarray) -> int:
    """How many pixels of the masks ``true`` are IGNORE."""
    return int(np.count_nonzero(np.asarray(true) == IGNORE))
