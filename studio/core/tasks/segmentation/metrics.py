"""Pixel accuracy and mean IoU as streaming Keras metrics (Keras is imported when called).

Both add each batch's pixels to a confusion matrix (true class × answered class, the answer
the argmax of the output) and score it at any time, as ``scores`` does in NumPy: pixels of
IGNORE (or any true value beyond the classes) count in neither. The mean IoU leaves out the
classes in neither the truth nor the answers, as ``keras.metrics.MeanIoU`` does.

The matrix holds MAX_CLASSES classes unless told fewer, so a metric needs no dataset: the
classes a model does not have stay empty and are left out of the mean.
"""

from __future__ import annotations

import functools
from typing import Any

from studio.core.tasks.detection.loss import PACKAGE
from studio.core.tasks.segmentation.masks import MAX_CLASSES


def segmentation_metrics(num_classes: int = MAX_CLASSES) -> list[Any]:
    """Pixel accuracy (``pixel_accuracy``) and mean IoU (``mean_iou``), in that order."""
    pixel_accuracy, mean_iou = metric_classes()
    return [pixel_accuracy(num_classes), mean_iou(num_classes)]


@functools.cache
def metric_classes() -> tuple[type, type]:
    """The ``PixelAccuracy`` and ``MeanIoU`` metric classes, made and registered with Keras
    (under ``LayerStudio>``) on first use, as it loads Keras."""
    import keras
    from keras import ops

    class ConfusionMetric(keras.metrics.Metric):
        """A score of the pixel confusion matrix summed over the batches seen, logged under
        ``score`` unless named otherwise."""

        score = ""

        def __init__(self, num_classes: int = MAX_CLASSES, name: str | None = None,
                     dtype: Any = None) -> None:
            super().__init__(name=name or self.score, dtype=dtype)
            self._direction = "up"  # higher is better, for checkpoints and early stopping
            self.num_classes = num_classes
            self.confusion = self.add_variable(shape=(num_classes, num_classes),
                                               initializer="zeros", dtype="float64",
                                               name="confusion")

        def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
            n = self.num_classes
            labels = ops.cast(y_true, "int32")
            if len(labels.shape) == len(y_pred.shape):  # a trailing axis of one
                labels = labels[..., 0]
            answers = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
            valid = ops.logical_and(ops.logical_and(labels >= 0, labels < n), answers < n)
            weights = ops.cast(valid, "float64")
            if sample_weight is not None:
                sample_weight = ops.cast(sample_weight, "float64")
                while len(sample_weight.shape) < len(weights.shape):
                    sample_weight = ops.expand_dims(sample_weight, -1)
                weights = weights * sample_weight
            pairs = ops.where(valid, labels * n + answers, 0)
            counts = ops.segment_sum(ops.reshape(weights, [-1]), ops.reshape(pairs, [-1]),
                                     num_segments=n * n)
            self.confusion.assign_add(ops.reshape(counts, (n, n)))

        def get_config(self) -> dict[str, Any]:
            return {**super().get_config(), "num_classes": self.num_classes}

    @keras.saving.register_keras_serializable(package=PACKAGE)
    class PixelAccuracy(ConfusionMetric):
        """The share of pixels answered with their true class."""

        score = "pixel_accuracy"

        def result(self) -> Any:
            total = ops.sum(self.confusion)
            right = ops.trace(self.confusion)
            return ops.cast(ops.where(total > 0, right / ops.maximum(total, 1.0), 0.0),
                            self.dtype)

    @keras.saving.register_keras_serializable(package=PACKAGE)
    class MeanIoU(ConfusionMetric):
        """The mean over the classes seen of right pixels / (true + answered - right)."""

        score = "mean_iou"

        def result(self) -> Any:
            right = ops.diagonal(self.confusion)
            union = ops.sum(self.confusion, axis=0) + ops.sum(self.confusion, axis=1) - right
            seen = ops.cast(union > 0, "float64")
            iou = right / ops.maximum(union, 1.0) * seen
            return ops.cast(ops.sum(iou) / ops.maximum(ops.sum(seen), 1.0), self.dtype)

    return PixelAccuracy, MeanIoU
