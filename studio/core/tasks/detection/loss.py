"""The loss a DetectionHead learns from, and its three parts as metrics for their own curves
(TensorFlow and Keras are imported when called).

It compares the head's output (rows × cols × ``classes + 4``) with the target map of
``targets.detection_targets`` (``classes + 5``) per image:

- heatmap: CenterNet's penalty-reduced focal loss over every cell and class, divided by the
  image's number of objects (cells where a heatmap is 1), so it weighs alike in crowded and
  sparse images;
- offset: the mean absolute error of the centre offsets (after the sigmoid, in cells) at the
  objects' centre cells;
- size: the mean absolute error of the log sizes at those cells (0.1 is a box 10% off).

The loss is ``heatmap_weight × heatmap + size_weight × size + offset_weight × offset`` per
image; Keras averages over the batch, so the logged parts add up to it with the weights. An
image without objects has only the heatmap part, its focal loss on empty cells.

CenterNet weighs pixel sizes by 0.1; as sizes here are logs, an error of 0.1 already is 10%,
so they weigh 1 like the offsets.
"""

from __future__ import annotations

import functools
from typing import Any

from studio.core.model.layers.detection import BOX_CHANNELS

PACKAGE = "LayerStudio"
"""The package Layer Studio registers its Keras objects under, for saving and loading."""
HEATMAP_WEIGHT = 1.0
SIZE_WEIGHT = 1.0
OFFSET_WEIGHT = 1.0
FOCAL_ALPHA = 2
"""How much a cell's own error damps its focal loss: (1 - p)^alpha at peaks, p^alpha off them."""
FOCAL_BETA = 4
"""How much nearness to a peak damps the loss of a cell off it: (1 - target)^beta."""


def loss_parts(y_true: Any, y_pred: Any) -> tuple[Any, Any, Any]:
    """The heatmap, size and offset losses of each image in the batch (three tensors of
    batch size), from target maps ``y_true`` and head outputs ``y_pred``."""
    return heatmap_loss(y_true, y_pred), size_loss(y_true, y_pred), offset_loss(y_true, y_pred)


def heatmap_loss(y_true: Any, y_pred: Any) -> Any:
    """The heatmap part of the detection loss, per image (a Keras metric function)."""
    import tensorflow as tf

    y_true, y_pred, classes = _split(y_true, y_pred)
    logits, target = y_pred[..., :classes], y_true[..., :classes]
    probability = tf.sigmoid(logits)
    peak = tf.cast(target >= 1.0, tf.float32)
    at_peaks = -tf.math.log_sigmoid(logits) * (1 - probability) ** FOCAL_ALPHA * peak
    off_peaks = (-tf.math.log_sigmoid(-logits) * probability ** FOCAL_ALPHA
                 * (1 - target) ** FOCAL_BETA * (1 - peak))
    objects = tf.reduce_sum(peak, axis=[1, 2, 3])
    return tf.reduce_sum(at_peaks + off_peaks, axis=[1, 2, 3]) / tf.maximum(objects, 1.0)


def size_loss(y_true: Any, y_pred: Any) -> Any:
    """The size part of the detection loss, per image (a Keras metric function)."""
    y_true, y_pred, classes = _split(y_true, y_pred)
    at = slice(classes + 2, classes + 4)
    return _at_centres(y_pred[..., at], y_true[..., at], y_true[..., classes + 4:])


def offset_loss(y_true: Any, y_pred: Any) -> Any:
    """The offset part of the detection loss, per image (a Keras metric function)."""
    import tensorflow as tf

    y_true, y_pred, classes = _split(y_true, y_pred)
    at = slice(classes, classes + 2)
    return _at_centres(tf.sigmoid(y_pred[..., at]), y_true[..., at], y_true[..., classes + 4:])


def _split(y_true: Any, y_pred: Any) -> tuple[Any, Any, int]:
    """Targets and outputs in float32 (the output may be float16 under mixed precision), and
    the number of classes."""
    import tensorflow as tf

    return (tf.cast(y_true, tf.float32), tf.cast(y_pred, tf.float32),
            y_pred.shape[-1] - BOX_CHANNELS)


def _at_centres(predicted: Any, wanted: Any, mask: Any) -> Any:
    """The mean absolute error of two values per object at its centre cell (``mask``), per
    image; 0 for an image without objects."""
    import tensorflow as tf

    centres = 2 * tf.maximum(tf.reduce_sum(mask, axis=[1, 2, 3]), 1.0)
    return tf.reduce_sum(tf.abs(predicted - wanted) * mask, axis=[1, 2, 3]) / centres


PART_METRICS = (heatmap_loss, size_loss, offset_loss)
"""The loss's parts, in the order ``loss_parts`` gives them; Keras logs each under its
function's name (``heatmap_loss``, ``val_heatmap_loss``, ...)."""


def detection_loss(heatmap_weight: float = HEATMAP_WEIGHT, size_weight: float = SIZE_WEIGHT,
                   offset_weight: float = OFFSET_WEIGHT) -> Any:
    """The Keras loss: its parts added with these weights."""
    return loss_class()(heatmap_weight=heatmap_weight, size_weight=size_weight,
                        offset_weight=offset_weight)


def part_metrics() -> list[Any]:
    """The parts as Keras metric functions, registered for saving and loading."""
    loss_class()
    return list(PART_METRICS)


@functools.cache
def loss_class() -> type:
    """The ``DetectionLoss`` class, made and registered with Keras (as
    ``LayerStudio>DetectionLoss``, beside the part metrics) on first use, as it loads Keras.
    Call it before loading a compiled detector."""
    import keras

    for part in PART_METRICS:
        keras.saving.register_keras_serializable(package=PACKAGE)(part)

    @keras.saving.register_keras_serializable(package=PACKAGE)
    class DetectionLoss(keras.losses.Loss):
        """CenterNet's loss: focal heatmap loss plus L1 offset and size losses, weighted."""

        def __init__(self, heatmap_weight: float = HEATMAP_WEIGHT,
                     size_weight: float = SIZE_WEIGHT, offset_weight: float = OFFSET_WEIGHT,
                     name: str = "detection_loss", **kwargs: Any) -> None:
            super().__init__(name=name, **kwargs)
            self.heatmap_weight = heatmap_weight
            self.size_weight = size_weight
            self.offset_weight = offset_weight

        def call(self, y_true: Any, y_pred: Any) -> Any:
            heatmap, size, offset = loss_parts(y_true, y_pred)
            return (self.heatmap_weight * heatmap + self.size_weight * size
                    + self.offset_weight * offset)

        def get_config(self) -> dict[str, Any]:
            return {**super().get_config(), "heatmap_weight": self.heatmap_weight,
                    "size_weight": self.size_weight, "offset_weight": self.offset_weight}

    return DetectionLoss
