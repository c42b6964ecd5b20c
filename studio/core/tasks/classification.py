"""Classification: each sample belongs to one of several classes, and the model answers a
probability for each."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from studio.core.model.fixes import Fix, Problem, classifier_fixes, flatten_fixes, set_units
from studio.core.model.graph import Graph
from studio.core.model.layers import Shape
from studio.core.model.params import format_shape
from studio.core.tasks.class_scores import Evaluation, evaluation_text
from studio.core.tasks.task import Curve, DatasetFacts, Task


class Classification(Task):
    """One class per sample, learnt with sparse categorical cross-entropy."""

    name = "classification"
    title = "Classification"
    description = "Predict one of several classes"
    label_kind = "classes"
    summary_metrics = ("val_accuracy", "val_loss")
    curve = Curve("accuracy", "Accuracy", "accuracy", bounded=True)

    def score_text(self, name: str, value: float) -> str:
        """Accuracy in percent (``val accuracy 97.1%``), other scores as numbers."""
        if name.endswith("accuracy"):
            return f"{name.replace('_', ' ')} {value * 100:.1f}%"
        return super().score_text(name, value)

    def loss_specs(self, probabilities: Sequence[bool], kind: str | None = None,
                   class_weights: Sequence[float] | None = None
                   ) -> list[tuple[str, dict[str, Any]]]:
        return [("SparseCategoricalCrossentropy", {"from_logits": not p}) for p in probabilities]

    def metrics(self, chosen: Sequence[str], probabilities: Sequence[bool] = (True,),
                class_weights: Sequence[float] | None = None) -> list[str]:
        return list(chosen)

    def check_output(self, graph: Graph, out: str, shapes: Mapping[str, Shape | None],
                     dataset: DatasetFacts, several: bool) -> list[Problem]:
        """A classifier ends in one value per class (softmax or logits)."""
        shape = shapes[out]
        params = graph.node(out).resolved_params()
        classes = dataset.num_classes
        if graph.node(out).type == "DetectionHead":
            return [Problem(out, f"The model ends in a DetectionHead, which finds boxes, but "
                                 f"{dataset.title} is a classification dataset (one class per "
                                 f"sample): choose a detection dataset, or end the model with "
                                 f"Dense({classes}, softmax).", cause=True)]
        if _per_pixel(graph, out, shapes):
            symptoms: list[Problem] = []  # a Dense fed many dimensions, said after
            fixes = _fixes_for_many_dims(graph, out, shape, classes, shapes, symptoms)
            return [Problem(
                out,
                f"The model ends in {graph.node(out).type} with output {format_shape(shape)}, "
                f"a class for each pixel (a segmentation model), but {dataset.title} is a "
                f"classification dataset (one class per image): choose a segmentation dataset "
                f"(images with masks), or end the model with GlobalAveragePooling2D and "
                f"Dense({classes}, softmax).", fixes, cause=True), *symptoms]
        if params.get("activation") == "softmax" and shape and shape[-1] != classes:
            return [Problem(
                out,
                f"This softmax classifier has {shape[-1]} outputs, but {dataset.title} has "
                f"{classes} classes. Set units to {classes}.",
                (set_units(out, classes),) if "units" in params else (),
            )]
        if shape == (classes,):
            return []
        problems: list[Problem] = []
        if len(shape) > 1:
            hint = " Add Flatten or GlobalAveragePooling2D before the last Dense layer."
            fixes = _fixes_for_many_dims(graph, out, shape, classes, shapes, problems)
        else:
            hint = f" End with Dense({classes}, softmax)."
            fixes = classifier_fixes(out, shape, classes)
        output_problem = Problem(
            out,
            f"The model's output is {format_shape(shape)}, but a classifier for "
            f"{dataset.title} must output {classes} values, one per class.{hint}"
            + (" (Every layer that feeds nothing is an output of the model.)" if several
               else ""),
            fixes,
        )
        return [*problems, output_problem]  # a Dense fed many dimensions is the cause

    def answers(self, outputs: np.ndarray, class_names: Sequence[str],
                top_k: int) -> list[dict[str, Any]]:
        """The ``top_k`` likeliest classes of each row, with their probabilities (logits and
        a single sigmoid unit are turned into probabilities first)."""
        if outputs.shape[-1] == 1:  # one sigmoid unit: the second class's probability
            outputs = np.concatenate([1 - outputs, outputs], axis=-1)
        elif (outputs.min() < 0 or outputs.max() > 1
              or not np.allclose(outputs.sum(axis=-1), 1, atol=1e-3)):
            shifted = np.exp(outputs - outputs.max(axis=-1, keepdims=True))
            outputs = shifted / shifted.sum(axis=-1, keepdims=True)  # logits

        def name(index: int) -> str:
            return class_names[index] if index < len(class_names) else str(index)

        order = np.argsort(-outputs, axis=-1, kind="stable")[:, :top_k]
        return [{"labels": [name(i) for i in row],
                 "probabilities": [float(p) for p in probabilities[row]]}
                for row, probabilities in zip(order, outputs, strict=True)]

    def answer_text(self, answer: Any) -> str:
        """The top classes with their probabilities: ``cat 91.0%  dog 9.0%``."""
        return "  ".join(f"{label} {p:.1%}" for label, p in
                         zip(answer.labels, answer.probabilities, strict=True))

    def agreement(self, outputs: np.ndarray, expected: np.ndarray) -> float | None:
        """The share of samples whose top class is the Keras model's."""
        return float(np.mean(_top1(outputs) == _top1(expected)) * 100)

    def score_batch(self, y: np.ndarray, outputs: np.ndarray, logits: bool,
                    class_names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Class probabilities, and sparse categorical cross-entropy as in training."""
        import keras

        if outputs.shape[-1] != len(class_names):
            raise ValueError(f"This model answers with {outputs.shape[-1]} values, but the "
                             f"run's data has {len(class_names)} classes: pick a model of "
                             "this run.")
        losses = np.asarray(keras.losses.sparse_categorical_crossentropy(
            y, outputs, from_logits=logits))
        return (np.asarray(keras.ops.softmax(outputs)) if logits else outputs), losses

    def evaluation(self, split: str, class_names: Sequence[str], true: np.ndarray,
                   answers: np.ndarray, loss: float, indices: np.ndarray, samples: Any,
                   notes: Sequence[str], *, labels: Any = None,
                   preprocessing: Mapping[str, Any] | None = None) -> Evaluation:
        """Accuracy, the confusion matrix and per-class scores."""
        return Evaluation.of_answers(split, class_names, true, answers, loss, indices,
                                     samples, notes)

    def evaluation_text(self, evaluation: Evaluation) -> str:
        """Accuracy and loss, the per-class scores and the confusion matrix."""
        return evaluation_text(evaluation)

    def synthetic_labels(self, size: int, output_shape: Shape | None = None) -> np.ndarray:
        return np.zeros(size, np.int32)


def _top1(outputs: np.ndarray) -> np.ndarray:
    if outputs.shape[-1] == 1:  # one sigmoid unit
        return (outputs[..., 0] > 0.5).astype(np.int64)
    return outputs.argmax(axis=-1)


def _per_pixel(graph: Graph, out: str, shapes: Mapping[str, Shape | None]) -> bool:
    """Whether the output ``out`` is a softmax over classes for each pixel of an input image:
    a map of an Input's height × width, as a segmentation model ends."""
    shape = shapes.get(out) or ()
    if len(shape) != 3 or graph.node(out).resolved_params().get("activation") != "softmax":
        return False
    return any(len(inputs := shapes.get(node.id) or ()) == 3 and inputs[:2] == shape[:2]
               for node in graph.nodes if node.type == "Input")


def _fixes_for_many_dims(graph: Graph, out: str, shape: Shape, classes: int,
                         shapes: Mapping[str, Shape | None], problems: list[Problem]
                         ) -> tuple[Fix, ...]:
    """Fixes for an output with several dimensions, to pin on the output's problem.

    If a Dense layer before the output is fed several dimensions, that layer is the cause:
    it gets its own problem (added to ``problems``) with the fixes, and the output's problem
    gets none.
    """
    dense = _first_dense_fed_many_dims(graph, shapes)
    if dense is None:
        return classifier_fixes(out, shape, classes)
    fixes = flatten_fixes(*dense)
    if dense[0] == out:
        return fixes
    problems.append(_unflattened_dense_problem(*dense, fixes))
    return ()


def _first_dense_fed_many_dims(graph: Graph, shapes: Mapping[str, Shape | None]
                               ) -> tuple[str, Shape] | None:
    """The first Dense layer whose input has more than one dimension, with that input shape."""
    for node_id in shapes:
        feeds = graph.inputs_of(node_id)
        if graph.node(node_id).type == "Dense" and len(feeds) == 1:
            shape = shapes.get(feeds[0])
            if shape is not None and len(shape) > 1:
                return node_id, shape
    return None


def _unflattened_dense_problem(node_id: str, shape: Shape, fixes: tuple[Fix, ...]) -> Problem:
    kind = {2: "sequence", 3: "image"}.get(len(shape), "tensor")
    return Problem(
        node_id,
        f"This Dense layer receives {_article(shape[0])} {format_shape(shape)} {kind}, so its "
        "output keeps those dimensions. Flatten it first.",
        fixes,
    )


def _article(number: int) -> str:
    """``an`` before numbers said with a vowel sound (8, 11, 18, 80, 11 000), else ``a``."""
    digits = str(number)
    eleven = len(digits) % 3 == 2 and digits[:2] in ("11", "18")
    return "an" if digits.startswith("8") or eleven else "a"
