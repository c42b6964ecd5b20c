"""Detection: the model finds the objects in an image, each as a box with its class and score,
through a DetectionHead (CenterNet, see ``studio.core.model.layers.detection``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from studio.core.model.fixes import Problem, set_classes
from studio.core.model.graph import Graph
from studio.core.model.layers import Shape
from studio.core.model.layers.detection import BOX_CHANNELS, MAX_BOXES, NMS_IOU, SCORE_THRESHOLD
from studio.core.model.params import format_shape
from studio.core.tasks.detection.agreement import box_agreement, export_agreement
from studio.core.tasks.detection.decode import decode
from studio.core.tasks.detection.evaluation import DetectionEvaluation, evaluation_text
from studio.core.tasks.detection.export_snippet import SNIPPET
from studio.core.tasks.detection.labels import BoxLabels
from studio.core.tasks.detection.targets import TARGET_CHANNELS_AFTER_CLASSES
from studio.core.tasks.task import Curve, DatasetFacts, ExportAgreement, Task

HEAD = "DetectionHead"


class Detection(Task):
    """Boxes with classes, learnt with CenterNet's focal heatmap, offset and size losses."""

    name = "detection"
    title = "Detection"
    description = "Find objects: a box and a class for each"
    label_kind = "boxes"
    summary_metrics = ("val_map50", "val_map", "val_loss")
    epoch_end_metrics = ("val_map50", "val_map")
    curve = Curve("map50", "mAP@0.5", "mAP", bounded=True, validation_only=True)
    loss_parts = (("heatmap_loss", "centre heatmap"), ("size_loss", "box size"),
                  ("offset_loss", "centre offset"))

    def score_text(self, name: str, value: float) -> str:
        """mAP in percent as COCO names it (``val mAP@0.5 91.2%``), losses as numbers."""
        words = {"map50": "mAP@0.5", "map": "mAP@[0.5:0.95]"}.get(name.removeprefix("val_"))
        if words is not None:
            return f"{'val ' if name.startswith('val_') else ''}{words} {value * 100:.1f}%"
        return super().score_text(name, value)

    def class_counts(self, labels: BoxLabels, num_classes: int) -> list[int]:
        """Boxes per class."""
        return labels.class_counts(num_classes)

    def register_keras_objects(self) -> None:
        from studio.core.tasks.detection.loss import loss_class

        loss_class()

    def loss_specs(self, probabilities: Sequence[bool], kind: str | None = None,
                   class_weights: Sequence[float] | None = None
                   ) -> list[tuple[str, dict[str, Any]]]:
        return [("LayerStudio>DetectionLoss", {}) for _ in probabilities]

    def losses(self, probabilities: Sequence[bool], kind: str | None = None,
               class_weights: Sequence[float] | None = None) -> list[Any]:
        from studio.core.tasks.detection.loss import detection_loss

        return [detection_loss() for _ in probabilities]

    def metrics(self, chosen: Sequence[str], probabilities: Sequence[bool] = (True,),
                class_weights: Sequence[float] | None = None) -> list[Any]:
        """The loss's heatmap, size and offset parts, each logged as its own metric."""
        from studio.core.tasks.detection.loss import part_metrics

        return part_metrics()

    def check_output(self, graph: Graph, out: str, shapes: Mapping[str, Shape | None],
                     dataset: DatasetFacts, several: bool) -> list[Problem]:
        """A detector ends in a DetectionHead finding the dataset's classes."""
        node = graph.node(out)
        classes = dataset.num_classes
        if node.type != HEAD:
            shape = shapes.get(out)
            return [Problem(
                out,
                f"The model ends in {node.type} with output {format_shape(shape or ())}, which "
                f"answers one thing per image, but {dataset.title} is a detection dataset "
                f"(boxes in each image): end the model with a DetectionHead (group Detection) "
                f"with {classes} classes on a feature map."
                + (" (Every layer that feeds nothing is an output of the model.)" if several
                   else ""), cause=True)]
        problems = []
        wanted = node.resolved_params()["classes"]
        if wanted != classes:
            problems.append(Problem(out, f"The head expects {wanted} classes; the dataset has "
                                         f"{classes}. Set classes to {classes}.",
                                    (set_classes(out, classes),)))
        grid, size = tuple((shapes.get(out) or (0, 0))[:2]), tuple(dataset.sample_shape[:2])
        if head_stride(size, grid) is None:
            problems.append(Problem(out, uneven_grid(size, grid)))
        return problems

    def output_settings(self, graph: Graph, out: str, shapes: Mapping[str, Shape | None]
                        ) -> dict[str, Any]:
        """The head's grid (rows, cols) and decoding settings (score threshold, NMS IoU,
        most boxes per image)."""
        node = graph.node(out)
        params = node.resolved_params() if node.type == HEAD else {}
        shape = shapes.get(out) or ()
        return {"grid": list(shape[:2]),
                "score_threshold": params.get("score_threshold", SCORE_THRESHOLD),
                "nms_iou": params.get("nms_iou", NMS_IOU),
                "max_boxes": params.get("max_boxes", MAX_BOXES)}

    def training_callbacks(self, scoring: Any, preprocessing: Mapping[str, Any]) -> list[Any]:
        """The mAP of the validation split at epoch ends (see ``map_callback``)."""
        if scoring is None:
            return []
        from studio.core.tasks.detection.map_callback import map_callback

        images, truths = scoring
        return [map_callback(images, truths, preprocessing["decoding"])]

    def answers(self, outputs: np.ndarray, class_names: Sequence[str], top_k: int,
                settings: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Each image's boxes, best first, with their classes and scores. ``settings``: a
        run's ``decoding`` record, to give boxes in input pixels (``image_size`` in it, if
        given, in the image's own); without it, boxes are in cells of the head's grid."""
        settings = settings or {}
        grid = tuple(outputs.shape[1:3])
        size = tuple(settings.get("input_size", grid))
        image = tuple(settings.get("image_size", size))
        answers = []
        for output in outputs:
            found = decode(output, settings.get("stride", 1), size, image,
                           settings.get("resize", "squash"),
                           settings.get("score_threshold", SCORE_THRESHOLD),
                           settings.get("nms_iou", NMS_IOU),
                           settings.get("max_boxes", MAX_BOXES))
            answers.append({
                "labels": [class_names[k] if k < len(class_names) else str(k)
                           for k in found.classes],
                "probabilities": [float(s) for s in found.scores],
                "boxes": [[float(v) for v in box] for box in found.boxes]})
        return answers

    answers_need_image_sizes = True

    def image_answers(self, outputs: np.ndarray, class_names: Sequence[str], top_k: int,
                      preprocessing: Mapping[str, Any],
                      image_sizes: Sequence[tuple[int, int]] | None = None
                      ) -> list[dict[str, Any]]:
        """Each image's boxes in its own pixels (in the input's if ``image_sizes`` is None),
        decoded with the run's ``decoding`` record; each answer keeps its head output and
        settings, for ``predictor.redecoded``."""
        decoding = preprocessing.get("decoding", {})
        sizes = image_sizes or [decoding.get("input_size", output.shape[:2]) for output in outputs]
        answers = []
        for output, size in zip(outputs, sizes, strict=True):
            settings = {**decoding, "image_size": [int(v) for v in size]}
            (answer,) = self.answers(output[np.newaxis], class_names, top_k, settings)
            answers.append({**answer, "output": output, "decoding": settings})
        return answers

    csv_columns = ("class", "score", "x_min", "y_min", "x_max", "y_max")

    def csv_rows(self, answer: Any) -> list[list[str]]:
        """One row per box (class, score, corners in the image's pixels); one empty row for
        an image with none, so that every file is listed."""
        rows = [[label, f"{p:.6f}", *(f"{v:.2f}" for v in box)]
                for label, p, box in zip(answer.labels, answer.probabilities,
                                         answer.boxes or [], strict=True)]
        return rows or [[""] * len(self.csv_columns)]

    def answer_text(self, answer: Any) -> str:
        """Each box with its class and score: ``7 97.0% at (12, 30)-(40, 64)``; ``no boxes``."""
        boxes = getattr(answer, "boxes", [])
        if not boxes:
            return "no boxes"
        return "  ".join(
            f"{label} {p:.1%} at ({x0:.0f}, {y0:.0f})-({x1:.0f}, {y1:.0f})"
            for label, p, (x0, y0, x1, y1) in zip(answer.labels, answer.probabilities, boxes,
                                                   strict=True))

    def agreement(self, outputs: np.ndarray, expected: np.ndarray,
                  settings: Mapping[str, Any] | None = None) -> float | None:
        """The share of the Keras model's boxes (decoded with ``settings``, a run's
        ``decoding`` record; without one, in grid cells at the head's defaults) that the
        export's outputs find too: same class, IoU at least AGREEMENT_IOU."""
        return box_agreement(outputs, expected, settings or {})[0]

    export_thresholds = (99.0, 95.0)

    def export_agreement(self, outputs: np.ndarray, expected: np.ndarray,
                         preprocessing: Mapping[str, Any], scoring: Any) -> ExportAgreement:
        """The box agreement at the run's decoding settings, and the mAP@0.5 of the export
        and of the Keras model on the validation images (``scoring``'s true boxes)."""
        return export_agreement(outputs, expected, preprocessing.get("decoding", {}),
                                None if scoring is None else scoring[1])

    def export_model(self, model: Any, quantised: bool) -> tuple[Any, int]:
        """For int8, the model with its head's output map split in three (heatmaps, offsets,
        log sizes: see ``split_head``), each given an int8 scale fitted to its range."""
        if not quantised:
            return model, 1
        from studio.core.tasks.detection.split_head import PARTS, split_head

        return split_head(model), len(PARTS)

    def export_snippet(self) -> str:
        """The head's output decoded into boxes in NumPy (see ``export_snippet``)."""
        return SNIPPET

    def score_batch(self, y: np.ndarray, outputs: np.ndarray, logits: bool,
                    class_names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The head outputs as they are (``evaluation`` decodes them), and each image's
        detection loss against its target maps ``y``, as in training."""
        from studio.core.tasks.detection.loss import detection_loss

        classes = outputs.shape[-1] - BOX_CHANNELS
        if outputs.ndim != 4 or classes != len(class_names):
            raise ValueError(f"This model answers with outputs of shape "
                             f"{format_shape(outputs.shape[1:])}, not a DetectionHead's for "
                             f"the run's {len(class_names)} classes: pick a model of this run.")
        return outputs, np.asarray(detection_loss().call(y, outputs), np.float64)

    def evaluation(self, split: str, class_names: Sequence[str], true: np.ndarray,
                   answers: np.ndarray, loss: float, indices: np.ndarray, samples: Any,
                   notes: Sequence[str], *, labels: Any = None,
                   preprocessing: Mapping[str, Any] | None = None) -> DetectionEvaluation:
        """mAP@0.5, mAP@[0.5:0.95], per-class AP, precision-recall curves and each class's
        mistakes: ``answers`` (head outputs) decoded with ``preprocessing``'s decoding
        record, scored against ``labels`` (the dataset's ``BoxLabels``) at ``indices``."""
        if labels is None or not (preprocessing or {}).get("decoding"):
            raise ValueError("Scoring a detector needs the images' true boxes and the run's "
                             "decoding settings.")
        return DetectionEvaluation.of_outputs(split, class_names, answers, labels[indices],
                                              preprocessing["decoding"], loss, indices,
                                              samples, notes)

    def evaluation_text(self, evaluation: DetectionEvaluation) -> str:
        """The mAPs and loss, and each class's APs, boxes, false positives and misses."""
        return evaluation_text(evaluation)

    def synthetic_labels(self, size: int, output_shape: Shape | None = None) -> np.ndarray:
        """Empty target maps (no objects) for a head of ``output_shape``."""
        if output_shape is None or len(output_shape) != 3:
            raise ValueError("A detector's made-up labels need its head's output shape.")
        rows, cols, channels = output_shape
        classes = channels - BOX_CHANNELS
        return np.zeros((size, rows, cols, classes + TARGET_CHANNELS_AFTER_CLASSES),
                        np.float32)


def head_stride(input_size: Sequence[int], grid: Sequence[int]) -> int | None:
    """The input pixels per cell of a head's ``grid`` (rows, cols) on an input of
    ``input_size`` (height, width), or None unless the grid divides it evenly, alike across
    and down."""
    (height, width), (rows, cols) = input_size, grid
    if not rows or not cols or height % rows or width % cols or height // rows != width // cols:
        return None
    return height // rows


def uneven_grid(input_size: Sequence[int], grid: Sequence[int]) -> str:
    """Why a head whose ``grid`` does not divide ``input_size`` evenly cannot be trained."""
    return (f"The DetectionHead's grid of {grid[0]} × {grid[1]} cells does not divide the "
            f"{input_size[0]} × {input_size[1]} input evenly: choose an input size that is a "
            "multiple of the head's stride (8 after three halvings, for example).")

