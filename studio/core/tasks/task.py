"""The task seam: what every task (classification, regression, ...) says about itself.

The rest of the core asks the project's task, through ``registry.task_for``, instead of
branching on its name: a new task is a new module here and one line in the registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from studio.core.base.messages import count
from studio.core.model.fixes import Problem
from studio.core.model.graph import Graph
from studio.core.model.layers import Shape


class DatasetFacts(Protocol):
    """What a task needs to know of a dataset (``DatasetInfo`` has it)."""

    title: str
    sample_shape: tuple[int, ...]
    num_classes: int
    class_names: tuple[str, ...]


@dataclass(frozen=True)
class Curve:
    """A score drawn against the epoch: its name as Keras logs it for the training batches
    (``val_`` before it for the validation split), its title, and whether it lies in 0..1."""

    metric: str
    title: str
    axis: str
    """The label of the values' axis: ``accuracy``."""
    bounded: bool = False
    validation_only: bool = False
    """Scored on the validation split at an epoch's end only (a detector's mAP)."""


@dataclass(frozen=True)
class ExportAgreement:
    """How closely an export answers like the Keras model, as its task measures it."""

    percent: float | None
    """The share of the Keras model's answers the export gives too (the export is flagged
    under its format's threshold); None where answers are numbers and only their largest
    difference counts."""
    name: str = ""
    """What ``percent`` is, in a few words: ``top-1 agreement``."""
    words: str = ""
    """``percent`` in a phrase following the export's name: ``gives the Keras model's top
    answer on 99.5% of 200 validation samples``."""
    scores: dict[str, float | None] = field(default_factory=dict)
    """Further figures, each beside the Keras model's (a detector's mAP@0.5)."""
    scores_words: str = ""
    """``scores`` in a sentence, empty without any."""


class Task(ABC):
    """A kind of answer a model learns to give."""

    name: str
    """As written in the project file (``dataset.task``)."""
    title: str
    """For people: "Classification"."""
    description: str
    """What the model learns, in a few words, for a tooltip."""
    label_kind: str
    """What a label is, for the data readers: ``classes`` (an index into the class names),
    ``numbers`` (a value per sample) or ``boxes`` (an image's boxes with their classes, held
    for a dataset as one ``BoxLabels`` record)."""
    evaluation_refusal: str | None = None
    """Why a run of this task cannot be evaluated, or None if it can (``score_batch`` and
    ``evaluation`` then say how)."""

    summary_metrics: tuple[str, ...] = ("val_loss",)
    """The scores a finished run's one-line summary gives, most telling first (each in its
    validation form: the training form stands in where a run has no validation split)."""

    epoch_end_metrics: tuple[str, ...] = ()
    """Summary metrics scored on the validation split at an epoch's end only (a detector's
    mAP), which Keras logs no training form of."""

    curve: Curve | None = None
    """The score the curves draw beside the loss, if any."""

    loss_parts: tuple[tuple[str, str], ...] = ()
    """The parts of the loss Keras logs as metrics (name, words), drawn as their own curves."""

    loss_choices: tuple[tuple[str, str, str], ...] = ()
    """The losses a person may choose between (``TrainingSettings.loss``, words, help), the
    default first; empty for a task with one loss."""

    def chosen_loss(self, named: str) -> str | None:
        """Which of ``loss_choices`` a project naming the loss ``named`` learns from: that
        one, else the default; None for a task with one loss."""
        names = [name for name, _, _ in self.loss_choices]
        return (named if named in names else names[0]) if names else None

    @property
    def search_metrics(self) -> tuple[str, ...]:
        """What a search of this task may optimise, its default first: the summary metrics,
        then the training forms of those Keras logs for the training batches too."""
        trained = [name.removeprefix("val_") for name in self.summary_metrics
                   if name not in self.epoch_end_metrics]
        return (*self.summary_metrics, *trained)

    def score_text(self, name: str, value: float) -> str:
        """One logged score as a person reads it: ``val loss 0.093``."""
        return f"{name.replace('_', ' ')} {value:.3g}"

    def summary_names(self, scores: Mapping[str, float]) -> list[str]:
        """The summary metrics ``scores`` (as Keras logs them) hold, most telling first, each
        in its validation form, else its training form."""
        names = (name if name in scores else name.removeprefix("val_")
                 for name in self.summary_metrics)
        return [name for name in names if name in scores]

    def summary(self, scores: Mapping[str, float]) -> str:
        """An epoch's ``scores`` in a few words, the summary metrics only: ``val accuracy
        97.1% · val loss 0.093``; empty if it has none of them."""
        return " · ".join(self.score_text(name, scores[name])
                          for name in self.summary_names(scores))

    @property
    def has_classes(self) -> bool:
        """Whether the labels are classes: they are counted, weighted and stratified."""
        return self.label_kind == "classes"

    @property
    def label_dtype(self) -> type[np.generic]:
        """The dtype the labels are fed to Keras in."""
        return np.int32 if self.has_classes else np.float32

    def class_counts(self, labels: Any, num_classes: int) -> list[int]:
        """How often each class occurs in ``labels`` (some of a dataset's labels); empty for
        labels that are not classes."""
        if not self.has_classes:
            return []
        return [int(n) for n in np.bincount(labels, minlength=num_classes)]

    cached_label_channels = 0
    """The bytes a pixel's labels add to its decoded image where a cache keeps them together
    (a segmentation mask's one class a pixel), which the ``auto`` cache counts."""

    class_weights_in_loss = False
    """Whether balancing the classes weighs them in the loss (``loss_specs``'s
    ``class_weights``: a mask's pixels) rather than each sample by its class, as Keras's
    ``class_weight`` does."""

    def register_keras_objects(self) -> None:
        """Make the Keras objects a compiled model of this task saves (a custom loss)
        known to Keras, before such a model is loaded. Most tasks use Keras's own."""
        return None

    def output_settings(self, graph: Graph, out: str, shapes: Mapping[str, Shape | None]
                        ) -> dict[str, Any]:
        """What reading the answers of output layer ``out`` takes beyond the data's
        preprocessing (``shapes``: every analysed layer's output shape), recorded with a run
        and given to its pipelines and ``training_callbacks``; none for most tasks."""
        return {}

    def training_callbacks(self, scoring: Any, preprocessing: Mapping[str, Any]) -> list[Any]:
        """Keras callbacks training adds for this task, run first at each epoch's end so that
        what they log reaches the run's history, early stopping and checkpoints; ``scoring``
        is what the pipelines made for them (None when the task asks for none)."""
        return []

    @abstractmethod
    def loss_specs(self, probabilities: Sequence[bool], kind: str | None = None,
                   class_weights: Sequence[float] | None = None
                   ) -> list[tuple[str, dict[str, Any]]]:
        """The Keras loss of each output as a class in ``keras.losses`` and its arguments;
        ``probabilities`` says, per output, whether it ends in softmax (else it gives
        logits). One description for training and for exported scripts. ``kind`` is the
        loss the project names (``TrainingSettings.loss``) and ``class_weights`` each class's
        weight for a task whose loss weighs them (``class_weights_in_loss``); the tasks with
        one loss and Keras's own class weights leave both out."""

    def losses(self, probabilities: Sequence[bool], kind: str | None = None,
               class_weights: Sequence[float] | None = None) -> list[Any]:
        """A Keras loss for each output (see ``loss_specs``)."""
        import keras

        return [getattr(keras.losses, name)(**kwargs)
                for name, kwargs in self.loss_specs(probabilities, kind, class_weights)]

    @abstractmethod
    def metrics(self, chosen: Sequence[str], probabilities: Sequence[bool] = (True,),
                class_weights: Sequence[float] | None = None) -> list[Any]:
        """The Keras metrics each output reports, given those the person ``chosen``; a
        metric computed from the output needs to know whether each output gives
        ``probabilities`` (else logits), and the loss's ``class_weights`` (as
        ``loss_specs``)."""

    @abstractmethod
    def check_output(self, graph: Graph, out: str, shapes: Mapping[str, Shape | None],
                     dataset: DatasetFacts, several: bool) -> list[Problem]:
        """The problems of output layer ``out`` for this task on ``dataset`` (``shapes``: every
        analysed layer's output shape; ``several``: the model has more than one output)."""

    @abstractmethod
    def answers(self, outputs: np.ndarray, class_names: Sequence[str],
                top_k: int) -> list[dict[str, Any]]:
        """Each row of model outputs as the answer a person reads (the fields of a
        ``Prediction``)."""

    answers_need_image_sizes: bool = False
    """Whether ``image_answers`` uses the images' own sizes (a detector's boxes are in their
    pixels); where not, they are not read."""

    def image_answers(self, outputs: np.ndarray, class_names: Sequence[str], top_k: int,
                      preprocessing: Mapping[str, Any],
                      image_sizes: Sequence[tuple[int, int]] | None = None
                      ) -> list[dict[str, Any]]:
        """``answers`` for images whose own sizes (height, width) are ``image_sizes`` (None:
        the model's input size), read with ``preprocessing`` (the run's record); most
        answers do not depend on the size."""
        return self.answers(outputs, class_names, top_k)

    csv_columns: tuple[str, ...] = ("answer", "probability", "next")
    """The columns an answer fills in a predictions CSV file (beside file, seconds, problem)."""

    def csv_rows(self, answer: Any) -> list[list[str]]:
        """One answer (a ``Prediction``) as rows of cells under ``csv_columns``: the top class,
        its probability and the next classes (or the values), in one row."""
        if answer.value is not None:
            return [[";".join(f"{v:.6g}" for v in answer.value), "", ""]]
        top = answer.labels[0] if answer.labels else ""
        probability = f"{answer.probabilities[0]:.6f}" if answer.probabilities else ""
        rest = ";".join(f"{label}:{q:.6f}" for label, q in
                        zip(answer.labels[1:], answer.probabilities[1:], strict=True))
        return [[top, probability, rest]]

    @abstractmethod
    def answer_text(self, answer: Any) -> str:
        """One answer (a ``Prediction`` of this task) in one line of text."""

    @abstractmethod
    def agreement(self, outputs: np.ndarray, expected: np.ndarray) -> float | None:
        """How often an export gives the Keras model's answer, in percent (None where answers
        are numbers and only their difference counts)."""

    export_thresholds: tuple[float, float] = (99.0, 97.0)
    """The ``agreement`` (percent) under which an export is flagged: in a float format, and
    in a quantised (int8) one."""

    export_samples: int = 200
    """How many validation samples (at most) an export is checked on."""

    def export_agreement(self, outputs: np.ndarray, expected: np.ndarray,
                         preprocessing: Mapping[str, Any], scoring: Any) -> ExportAgreement:
        """How closely an export's ``outputs`` on validation samples follow the Keras model's
        (``expected``). ``preprocessing``: the run's record; ``scoring``: what the pipelines
        made for the task's scores (``training_callbacks``), whose first samples are these."""
        percent = self.agreement(outputs, expected)
        if percent is None:
            return ExportAgreement(None)
        return ExportAgreement(percent, "top-1 agreement",
                               f"gives the Keras model's top answer on {percent:.1f}% of "
                               f"{count(len(outputs), 'validation sample')}")

    def export_model(self, model: Any, quantised: bool) -> tuple[Any, int]:
        """The Keras model an export converts (``quantised``: to int8), and how many of its
        first outputs, joined on the last axis in order, make the ``model``'s first output:
        ``model`` itself and 1, unless the task splits its output for int8's scales."""
        return model, 1

    def export_snippet(self) -> str:
        """Python lines reading an export's ``outputs`` (one image's, as a batch of one) as
        the answer, for the export's README; ``labels`` and ``prep`` are loaded before."""
        return "print(labels[int(np.argmax(outputs[0]))])\n"

    def score_batch(self, y: np.ndarray, outputs: np.ndarray, logits: bool,
                    class_names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """A batch of model outputs (``logits``: not yet probabilities) as the answers
        evaluation scores, and each sample's loss against the labels ``y``."""
        raise NotImplementedError(self.evaluation_refusal)

    def tally(self, class_names: Sequence[str], logits: bool) -> BatchTally:
        """What evaluation keeps of a split's batches as the model answers them, and how it
        makes the evaluation of them (``class_names``: the model's; ``logits``: its outputs
        are not yet probabilities)."""
        return BatchTally(self, class_names, logits)

    def evaluation(self, split: str, class_names: Sequence[str], true: np.ndarray,
                   answers: np.ndarray, loss: float, indices: np.ndarray, samples: Any,
                   notes: Sequence[str], *, labels: Any = None,
                   preprocessing: Mapping[str, Any] | None = None) -> Any:
        """The scores of a split's answers, as the Evaluate tab shows them (``indices``: each
        answer's sample in the dataset; ``samples``: the dataset's, to show them). ``true``
        is what the pipeline fed as labels; ``labels`` are the dataset's own (all samples,
        e.g. a detector's boxes, which its target maps only encode) and ``preprocessing``
        the record the model answered with (a detector's decoding settings)."""
        raise NotImplementedError(self.evaluation_refusal)

    def evaluation_text(self, evaluation: Any) -> str:
        """An evaluation (from ``evaluation``) as lines of plain text, as ``studio evaluate``
        prints it."""
        raise NotImplementedError(self.evaluation_refusal)

    @abstractmethod
    def synthetic_labels(self, size: int, output_shape: Shape | None = None) -> np.ndarray:
        """``size`` labels of the right type for a model whose output (one sample's) is
        ``output_shape``, for a timing run on made-up data."""


class BatchTally:
    """A split's answers gathered batch by batch for evaluation: by default each batch's
    labels and answers (``Task.score_batch``) are kept, and joined for ``Task.evaluation`` at
    the end. A task whose scores add up batch by batch (segmentation's pixel counts) keeps
    less, so that a large split's labels are never all held at once."""

    def __init__(self, task: Task, class_names: Sequence[str], logits: bool) -> None:
        self.task, self.class_names, self.logits = task, list(class_names), logits
        self.losses: list[np.ndarray] = []
        """Each batch's loss per sample."""
        self._true: list[np.ndarray] = []
        self._answers: list[np.ndarray] = []

    @property
    def size(self) -> int:
        """The samples added so far."""
        return sum(len(lost) for lost in self.losses)

    @property
    def loss(self) -> float:
        """The mean loss of the samples added."""
        return float(np.mean(np.concatenate(self.losses))) if self.losses else float("nan")

    def add(self, y: np.ndarray, outputs: np.ndarray) -> None:
        """Score a batch of model ``outputs`` against its labels ``y``."""
        answers, losses = self.task.score_batch(y, outputs, self.logits, self.class_names)
        self.losses.append(np.asarray(losses, np.float64).reshape(-1))
        self._true.append(y)
        self._answers.append(answers)

    def evaluation(self, split: str, class_names: Sequence[str], indices: np.ndarray,
                   samples: Any, notes: Sequence[str], **details: Any) -> Any:
        """The task's evaluation of everything added (``details``: ``Task.evaluation``'s
        keyword arguments)."""
        return self.task.evaluation(split, class_names, np.concatenate(self._true),
                                    np.concatenate(self._answers), self.loss, indices,
                                    samples, notes, **details)
