"""Segmentation: the model answers a class for every pixel of an image, as a map of the input's
height × width with one channel per class (softmax probabilities or logits), learnt from masks
(see ``masks``) with pixel cross-entropy, Dice, or both."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from studio.core.model.fixes import Problem
from studio.core.model.graph import Graph
from studio.core.model.layers import Shape
from studio.core.model.params import format_shape
from studio.core.tasks.segmentation.agreement import THRESHOLDS, export_agreement, pixel_agreement
from studio.core.tasks.segmentation.evaluation import (
    LOWEST_KEPT,
    MaskTally,
    SegmentationEvaluation,
    evaluation_text,
)
from studio.core.tasks.segmentation.fitting import mask_in_image
from studio.core.tasks.segmentation.loss import DEFAULT_KIND, LOSS_HELP, LOSS_KINDS
from studio.core.tasks.segmentation.masks import class_pixels
from studio.core.tasks.segmentation.output_check import output_problems
from studio.core.tasks.segmentation.scores import predicted_masks
from studio.core.tasks.task import BatchTally, Curve, DatasetFacts, ExportAgreement, Task

SNIPPET = """\
mask = np.argmax(outputs[0], axis=-1).astype(np.uint8)  # each input pixel's class
# Back to the picture's pixels (it was squashed to the input): each pixel of the picture
# takes the class of the input pixel its centre lands in.
rows = ((np.arange(image.height) + 0.5) * mask.shape[0] / image.height).astype(int)
columns = ((np.arange(image.width) + 0.5) * mask.shape[1] / image.width).astype(int)
mask = mask[rows[:, None], columns[None, :]]  # picture height x width, class indices
pixels = np.bincount(mask.ravel(), minlength=len(labels))
print({labels[k]: int(n) for k, n in enumerate(pixels) if n})
Image.fromarray(mask).save("mask.png")  # each pixel's value is its class's line in labels.txt
"""
"""An export's output read as the predicted mask in the picture's pixels, with each class's
pixels."""


class Segmentation(Task):
    """A class for each pixel, learnt from masks; scored by mean IoU and pixel accuracy."""

    name = "segmentation"
    title = "Segmentation"
    description = "Label every pixel with a class"
    label_kind = "masks"
    summary_metrics = ("val_mean_iou", "val_pixel_accuracy", "val_loss")
    curve = Curve("mean_iou", "Mean IoU", "mean IoU", bounded=True)
    loss_parts = (("cross_entropy_loss", "pixel cross-entropy"), ("dice_loss", "Dice"))
    loss_choices = tuple((kind, LOSS_KINDS[kind][0].upper() + LOSS_KINDS[kind][1:],
                          LOSS_HELP[kind])
                         for kind in sorted(LOSS_KINDS, key=lambda kind: kind != DEFAULT_KIND))
    export_thresholds = THRESHOLDS
    export_samples = 100
    cached_label_channels = 1

    def score_text(self, name: str, value: float) -> str:
        """Mean IoU and pixel accuracy in percent (``val mean IoU 71.2%``), losses as
        numbers."""
        words = {"mean_iou": "mean IoU",
                 "pixel_accuracy": "pixel accuracy"}.get(name.removeprefix("val_"))
        if words is not None:
            return f"{'val ' if name.startswith('val_') else ''}{words} {value * 100:.1f}%"
        return super().score_text(name, value)

    @property
    def label_dtype(self) -> type[np.generic]:
        """Masks are fed as they are stored: uint8 class indices."""
        return np.uint8

    class_weights_in_loss = True

    def class_counts(self, labels: Any, num_classes: int) -> list[int]:
        """Pixels per class (``labels``: a dataset's masks, ``MaskLabels`` or alike)."""
        return labels.class_counts(num_classes)

    def register_keras_objects(self) -> None:
        from studio.core.tasks.segmentation.loss import loss_class, part_metric_class
        from studio.core.tasks.segmentation.metrics import metric_classes

        loss_class()
        part_metric_class()
        metric_classes()

    def loss_specs(self, probabilities: Sequence[bool], kind: str | None = DEFAULT_KIND,
                   class_weights: Sequence[float] | None = None
                   ) -> list[tuple[str, dict[str, Any]]]:
        """The ``kind`` of loss (``loss.LOSS_KINDS``; any other, such as a classifier's
        loss every new project names, is DEFAULT_KIND) for each output, with cross-entropy
        weighed by ``class_weights`` (one per class) if given."""
        kind = self.chosen_loss(kind or "")
        weights = None if class_weights is None else [float(w) for w in class_weights]
        return [("LayerStudio>SegmentationLoss",
                 {"kind": kind, "from_logits": not p, "class_weights": weights})
                for p in probabilities]

    def losses(self, probabilities: Sequence[bool], kind: str | None = DEFAULT_KIND,
               class_weights: Sequence[float] | None = None) -> list[Any]:
        from studio.core.tasks.segmentation.loss import segmentation_loss

        return [segmentation_loss(**kwargs)
                for _, kwargs in self.loss_specs(probabilities, kind, class_weights)]

    def metrics(self, chosen: Sequence[str], probabilities: Sequence[bool] = (True,),
                class_weights: Sequence[float] | None = None) -> list[Any]:
        """Pixel accuracy, mean IoU, and the loss's cross-entropy and Dice parts (computed
        from probabilities or, where the first of ``probabilities`` is False, logits, with
        the loss's ``class_weights``); the ``chosen`` metrics are classification's and are
        not used, as they would count IGNORE pixels."""
        from studio.core.tasks.segmentation.loss import part_metrics
        from studio.core.tasks.segmentation.metrics import segmentation_metrics

        return [*segmentation_metrics(),
                *part_metrics(from_logits=not probabilities[0], class_weights=class_weights)]

    def check_output(self, graph: Graph, out: str, shapes: Mapping[str, Shape | None],
                     dataset: DatasetFacts, several: bool) -> list[Problem]:
        """A segmentation model ends in an H × W × classes map at the input's resolution."""
        return output_problems(graph, out, shapes, dataset, several)

    def answers(self, outputs: np.ndarray, class_names: Sequence[str],
                top_k: int) -> list[dict[str, Any]]:
        """Each image's predicted mask (uint8, the argmax of its map) and the classes in it,
        the largest first, with their pixels (``areas``); every class shown is listed, so
        ``top_k`` is not used."""
        return [_answer(mask, class_names, outputs.shape[-1])
                for mask in predicted_masks(outputs)]

    answers_need_image_sizes = True

    def image_answers(self, outputs: np.ndarray, class_names: Sequence[str], top_k: int,
                      preprocessing: Mapping[str, Any],
                      image_sizes: Sequence[tuple[int, int]] | None = None
                      ) -> list[dict[str, Any]]:
        """``answers`` with each mask in its image's own pixels (see ``mask_in_image``; in
        the input's if ``image_sizes`` is None), fitted back with the run's ``resize``."""
        if image_sizes is None:
            return self.answers(outputs, class_names, top_k)
        resize = preprocessing.get("resize", "squash")
        return [_answer(mask_in_image(mask, (int(size[0]), int(size[1])), resize),
                        class_names, outputs.shape[-1])
                for mask, size in zip(predicted_masks(outputs), image_sizes, strict=True)]

    csv_columns = ("class", "pixels", "percent")

    def csv_rows(self, answer: Any) -> list[list[str]]:
        """One row per class in the predicted mask, the largest first: its pixels and its
        share of the image in percent."""
        total = sum(answer.areas) or 1
        return [[label, str(pixels), f"{pixels / total * 100:.2f}"]
                for label, pixels in zip(answer.labels, answer.areas, strict=True)]

    def answer_text(self, answer: Any) -> str:
        """Each class in the predicted mask with its share of the pixels: ``cat 62.5%
        background 37.5% of 8 × 8 pixels`` (``of 64 pixels`` once the mask is let go)."""
        total = sum(answer.areas) or 1
        shares = "  ".join(f"{label} {pixels / total:.1%}"
                           for label, pixels in zip(answer.labels, answer.areas, strict=True))
        if answer.mask is None:  # saved and let go (``studio infer --masks``)
            return f"{shares} of {total:,} pixels"
        return f"{shares} of {format_shape(answer.mask.shape)} pixels"

    def agreement(self, outputs: np.ndarray, expected: np.ndarray) -> float | None:
        """The share of pixels whose class is the Keras model's."""
        return pixel_agreement(outputs, expected)

    def export_agreement(self, outputs: np.ndarray, expected: np.ndarray,
                         preprocessing: Mapping[str, Any], scoring: Any) -> ExportAgreement:
        """The pixel agreement, and the mean IoU of the export and of the Keras model against
        the validation samples' true masks: ``scoring(n)`` reads the first n (None: not
        scored)."""
        return export_agreement(outputs, expected,
                                None if scoring is None else scoring(len(outputs)))

    def export_snippet(self) -> str:
        """The output read as a mask and each class's pixels."""
        return SNIPPET

    def score_batch(self, y: np.ndarray, outputs: np.ndarray, logits: bool,
                    class_names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The predicted masks, and each image's loss (the default kind) against its true
        mask ``y``, as in training."""
        from studio.core.tasks.segmentation.loss import segmentation_loss

        if outputs.ndim != 4 or outputs.shape[-1] != len(class_names):
            raise ValueError(f"This model answers with outputs of shape "
                             f"{format_shape(outputs.shape[1:])}, not a map with one channel "
                             f"for each of the run's {len(class_names)} classes: pick a model "
                             "of this run.")
        loss = segmentation_loss(from_logits=logits).call(y, outputs)
        return predicted_masks(outputs), np.asarray(loss, np.float64)

    def tally(self, class_names: Sequence[str], logits: bool) -> SegmentationTally:
        """The pixel counts of each batch's predicted masks, adding up as batches come."""
        return SegmentationTally(self, class_names, logits)

    def evaluation(self, split: str, class_names: Sequence[str], true: np.ndarray,
                   answers: np.ndarray, loss: float, indices: np.ndarray, samples: Any,
                   notes: Sequence[str], *, labels: Any = None,
                   preprocessing: Mapping[str, Any] | None = None) -> SegmentationEvaluation:
        """Each class's IoU and Dice, the mean IoU, pixel accuracy and each image's IoU, of
        the predicted masks ``answers`` against the fed masks ``true``."""
        return SegmentationEvaluation.of_masks(split, class_names, true, answers, loss,
                                               indices, samples, notes)

    def evaluation_text(self, evaluation: SegmentationEvaluation) -> str:
        """The mean IoU, pixel accuracy and loss, each class's scores and the worst images."""
        return evaluation_text(evaluation)

    def synthetic_labels(self, size: int, output_shape: Shape | None = None) -> np.ndarray:
        """Masks of class 0 for a model whose output map is ``output_shape``."""
        if output_shape is None or len(output_shape) != 3:
            raise ValueError("A segmentation model's made-up labels need its output map's "
                             "shape.")
        return np.zeros((size, *output_shape[:2]), np.uint8)


class SegmentationTally(BatchTally):
    """A split's predicted masks scored batch by batch: the pixel confusion matrix and each
    image's IoU add up, and only the masks of the images of lowest IoU are kept."""

    def __init__(self, task: Task, class_names: Sequence[str], logits: bool) -> None:
        super().__init__(task, class_names, logits)
        self.masks = MaskTally(len(class_names), LOWEST_KEPT)

    def add(self, y: np.ndarray, outputs: np.ndarray) -> None:
        """Score a batch of output maps against its true masks ``y``."""
        predicted, losses = self.task.score_batch(y, outputs, self.logits, self.class_names)
        self.losses.append(np.asarray(losses, np.float64).reshape(-1))
        self.masks.add(y, predicted)

    def evaluation(self, split: str, class_names: Sequence[str], indices: np.ndarray,
                   samples: Any, notes: Sequence[str], **details: Any
                   ) -> SegmentationEvaluation:
        """Each class's IoU and Dice, the mean IoU, pixel accuracy and each image's IoU
        (``preprocessing`` in ``details``: the record the model answered with, saying how the
        images were fitted to its input)."""
        resize = (details.get("preprocessing") or {}).get("resize", "squash")
        return self.masks.evaluation(split, class_names, self.loss, indices, samples, notes,
                                     resize)


def _answer(mask: np.ndarray, class_names: Sequence[str], classes: int) -> dict[str, Any]:
    """A predicted ``mask`` as an answer: the classes in it, the largest first, with their
    pixels (IGNORE pixels, which no class covers, left out)."""
    pixels = class_pixels(mask, classes)
    shown = [int(k) for k in np.argsort(-pixels, kind="stable") if pixels[k]]
    return {"labels": [class_names[k] if k < len(class_names) else str(k) for k in shown],
            "areas": [int(pixels[k]) for k in shown], "mask": mask}
