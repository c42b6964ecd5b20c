"""The loss a segmentation model learns from, and its parts as metrics for their own curves
(Keras is imported when called).

It compares the model's output (H × W × C per image, softmax probabilities or logits) with
the true mask (H × W class indices; a trailing axis of one is dropped), image by image:

- cross-entropy: the mean over the image's pixels of -log p(true class), each pixel weighed
  by its class's weight if the loss has class weights (as Keras's ``class_weight`` weighs
  samples: the weighted sum over the pixel count, not over the weights);
- Dice: 1 - the soft Dice score of each class in the image's truth, 2 Σ p·t / (Σ p + Σ t)
  over its pixels, averaged over those classes (a class absent from the truth is left out,
  so a small object weighs as much as the background).

Pixels of IGNORE (or of any value beyond the classes) count in neither part; an image with
no other pixel has a loss of 0. The loss is the chosen part or the sum of both per image;
Keras averages over the batch, so the logged parts add up to it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from studio.core.tasks.detection.loss import PACKAGE

CROSS_ENTROPY = "cross_entropy"
DICE = "dice"
BOTH = "cross_entropy_dice"
LOSS_KINDS = {CROSS_ENTROPY: "pixel cross-entropy", DICE: "Dice",
              BOTH: "pixel cross-entropy + Dice"}
"""The losses a person can choose, with their words."""
LOSS_HELP = {
    BOTH: "The sum of the two: cross-entropy learns every pixel, Dice keeps small classes from "
          "being drowned by the background. A good default",
    CROSS_ENTROPY: "How surprised the model is by each pixel's true class, averaged over the "
                   "pixels (classes weighed by Balance classes, if on)",
    DICE: "1 minus the overlap of each class's predicted and true pixels, so every class "
          "counts alike whatever its size",
}
"""What each loss does, for tooltips."""
DEFAULT_KIND = BOTH
EPSILON = 1e-7
"""The least probability whose log is taken (Keras's own epsilon)."""


def _labels_and_valid(y_true: Any, classes: int) -> tuple[Any, Any]:
    """The true classes as int32 (B × H × W, IGNORE pixels set to class 0) and where the
    pixels count (float32, 1 or 0)."""
    from keras import ops

    labels = ops.cast(y_true, "int32")
    if len(labels.shape) == 4:
        labels = labels[..., 0]
    valid = ops.logical_and(labels >= 0, labels < classes)
    return ops.where(valid, labels, 0), ops.cast(valid, "float32")


def _image_axes(tensor: Any) -> list[int]:
    """The axes of a batch's pixels (all but the batch's, and a channel axis if any)."""
    return list(range(1, len(tensor.shape)))


def cross_entropy_part(y_true: Any, y_pred: Any, from_logits: bool = False,
                       class_weights: Sequence[float] | None = None) -> Any:
    """The cross-entropy part of the loss, per image (B)."""
    from keras import ops

    y_pred = ops.cast(y_pred, "float32")
    labels, valid = _labels_and_valid(y_true, y_pred.shape[-1])
    log_p = (ops.log_softmax(y_pred, axis=-1) if from_logits
             else ops.log(ops.clip(y_pred, EPSILON, 1.0)))
    picked = ops.take_along_axis(log_p, ops.expand_dims(labels, -1), axis=-1)[..., 0]
    weights = valid
    if class_weights is not None:
        weights = weights * ops.take(ops.convert_to_tensor(class_weights, "float32"), labels)
    axes = _image_axes(valid)
    return (ops.sum(-picked * weights, axis=axes)
            / ops.maximum(ops.sum(valid, axis=axes), 1.0))


def dice_part(y_true: Any, y_pred: Any, from_logits: bool = False,
              class_weights: Sequence[float] | None = None) -> Any:
    """The Dice part of the loss, per image (B); ``class_weights`` are not used (each class in
    the truth weighs alike)."""
    from keras import ops

    y_pred = ops.cast(y_pred, "float32")
    classes = y_pred.shape[-1]
    labels, valid = _labels_and_valid(y_true, classes)
    mask = ops.expand_dims(valid, -1)
    truth = ops.one_hot(labels, classes) * mask
    probability = (ops.softmax(y_pred, axis=-1) if from_logits else y_pred) * mask
    axes = _image_axes(valid)  # the pixels' axes, before the classes'
    right = ops.sum(probability * truth, axis=axes)
    sizes = ops.sum(probability, axis=axes) + ops.sum(truth, axis=axes)
    present = ops.cast(ops.sum(truth, axis=axes) > 0, "float32")
    loss = (1.0 - 2.0 * right / ops.maximum(sizes, EPSILON)) * present
    return ops.sum(loss, axis=-1) / ops.maximum(ops.sum(present, axis=-1), 1.0)


PARTS = {CROSS_ENTROPY: cross_entropy_part, DICE: dice_part}
"""Each part of the loss by name; Keras logs part ``p`` as the metric ``p_loss``."""


def part_names(kind: str) -> tuple[str, ...]:
    """The parts loss ``kind`` adds up."""
    if kind not in LOSS_KINDS:
        raise ValueError(f"Unknown segmentation loss {kind!r}: choose one of "
                         f"{', '.join(LOSS_KINDS)}.")
    return (CROSS_ENTROPY, DICE) if kind == BOTH else (kind,)


def segmentation_loss(kind: str = DEFAULT_KIND, from_logits: bool = False,
                      class_weights: Sequence[float] | None = None) -> Any:
    """The Keras loss: ``kind`` of LOSS_KINDS, from logits or probabilities, cross-entropy
    weighed per class by ``class_weights`` (one per class) if given."""
    return loss_class()(kind=kind, from_logits=from_logits, class_weights=class_weights)


def part_metrics(from_logits: bool = False,
                 class_weights: Sequence[float] | None = None) -> list[Any]:
    """Both parts as Keras metrics (``cross_entropy_loss``, ``dice_loss``), computed as the
    loss computes them, whichever loss is chosen."""
    metric = part_metric_class()
    return [metric(part, from_logits=from_logits, class_weights=class_weights)
            for part in PARTS]


@functools.cache
def loss_class() -> type:
    """The ``SegmentationLoss`` class, made and registered with Keras (as
    ``LayerStudio>SegmentationLoss``) on first use, as it loads Keras. Call it before loading
    a compiled segmentation model."""
    import keras

    @keras.saving.register_keras_serializable(package=PACKAGE)
    class SegmentationLoss(keras.losses.Loss):
        """Pixel cross-entropy, Dice, or their sum, with IGNORE pixels left out."""

        def __init__(self, kind: str = DEFAULT_KIND, from_logits: bool = False,
                     class_weights: Sequence[float] | None = None,
                     name: str = "segmentation_loss", **kwargs: Any) -> None:
            super().__init__(name=name, **kwargs)
            self.parts = part_names(kind)
            self.kind = kind
            self.from_logits = from_logits
            self.class_weights = None if class_weights is None else [float(w) for w in
                                                                     class_weights]

        def call(self, y_true: Any, y_pred: Any) -> Any:
            losses = [PARTS[part](y_true, y_pred, self.from_logits, self.class_weights)
                      for part in self.parts]
            return sum(losses[1:], losses[0])

        def get_config(self) -> dict[str, Any]:
            return {**super().get_config(), "kind": self.kind, "from_logits": self.from_logits,
                    "class_weights": self.class_weights}

    return SegmentationLoss


@functools.cache
def part_metric_class() -> type:
    """The ``SegmentationLossPart`` metric class, made and registered with Keras on first
    use: the mean over images of one part of the loss."""
    import keras

    @keras.saving.register_keras_serializable(package=PACKAGE)
    class SegmentationLossPart(keras.metrics.Mean):
        """One part of the segmentation loss, averaged over the images seen."""

        def __init__(self, part: str = CROSS_ENTROPY, from_logits: bool = False,
                     class_weights: Sequence[float] | None = None, name: str | None = None,
                     dtype: Any = None) -> None:
            super().__init__(name=name or f"{part}_loss", dtype=dtype)
            self.part = part
            self.from_logits = from_logits
            self.class_weights = None if class_weights is None else [float(w) for w in
                                                                     class_weights]

        def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
            values = PARTS[self.part](y_true, y_pred, self.from_logits, self.class_weights)
            return super().update_state(values, sample_weight)

        def get_config(self) -> dict[str, Any]:
            return {**super().get_config(), "part": self.part, "from_logits": self.from_logits,
                    "class_weights": self.class_weights}

    return SegmentationLossPart
