"""Evaluating a trained run on its own validation or test split: loss, accuracy, the
confusion matrix, per-class precision, recall and F1, and the samples behind each answer.

The run's project snapshot says which data it learned from and how it was split; the data
is read again, split with the same seed and streamed through the same pipeline as in
training (without augmentation), so the scores are those ``model.evaluate`` would give.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.events import Progress
from studio.core.base.messages import count
from studio.core.build.keras_model import outputs_probabilities
from studio.core.data import sources as data
from studio.core.data.pipelines import make_pipelines
from studio.core.data.types import (
    ArraySamples,
    DataError,
    FileSamples,
    LoadedData,
    Samples,
)
from studio.core.inference.predictor import Predictor
from studio.core.project.document import ProjectFileError, load_project
from studio.core.runs import folders as runs
from studio.core.tasks.registry import task_for

BATCH_SIZE = 256
"""Samples per batch while answering (any size gives the same scores)."""
DISPLAY_SIDE = 256
"""Image files are shown at most this many pixels a side."""
SPLIT_NAMES = ("validation", "test")
GREY_MODES = ("1", "L", "LA", "La", "F")
NEVER_PREDICTED = ("Precision is 0 for a class the model never answered ({names}): no "
                   "answer of it was right, as none was given.")


class EvaluationCancelled(DataError):
    """The person stopped the evaluation before it ended."""


def per_class_scores(confusion: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall, F1 and support of each class from a confusion matrix (rows: true
    class, columns: answer). A score whose denominator is 0 is 0, not NaN: precision of a
    class never answered, recall of a class absent from the split, F1 when both are 0."""
    confusion = np.asarray(confusion, dtype=np.int64)
    right = np.diag(confusion).astype(np.float64)
    answered = confusion.sum(axis=0)
    support = confusion.sum(axis=1)
    precision = np.divide(right, answered, out=np.zeros_like(right), where=answered > 0)
    recall = np.divide(right, support, out=np.zeros_like(right), where=support > 0)
    both = precision + recall
    f1 = np.divide(2 * precision * recall, both, out=np.zeros_like(right), where=both > 0)
    return precision, recall, f1, support


@dataclass
class Evaluation:
    """A model's answers on one split and the scores they make.

    Per-sample arrays are in split order; a *position* indexes them (0 to n - 1) and
    ``indices[position]`` is that sample's index in the whole dataset. ``notes`` tell the
    person what to keep in mind (data changed since training, classes never answered).
    """

    split: str
    class_names: list[str]
    loss: float
    accuracy: float
    confusion: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    support: np.ndarray
    true: np.ndarray
    predicted: np.ndarray
    confidence: np.ndarray
    indices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    notes: list[str] = field(default_factory=list)
    samples: Samples | None = field(default=None, repr=False, compare=False)
    """The dataset's samples, for ``images``."""

    @classmethod
    def of_answers(cls, split: str, class_names: Sequence[str], true: np.ndarray,
                   probabilities: np.ndarray, loss: float, indices: np.ndarray | None = None,
                   samples: Samples | None = None, notes: Sequence[str] = ()) -> Evaluation:
        """The evaluation of ``probabilities`` (n × classes) against the ``true`` classes."""
        names = [str(n) for n in class_names]
        true = np.asarray(true, dtype=np.int64)
        probabilities = np.asarray(probabilities, dtype=np.float64)
        predicted = probabilities.argmax(axis=1) if len(true) else np.zeros(0, np.int64)
        confidence = probabilities.max(axis=1) if len(true) else np.zeros(0)
        k = len(names)
        confusion = np.bincount(true * k + predicted, minlength=k * k).reshape(k, k)
        precision, recall, f1, support = per_class_scores(confusion)
        never = [names[i] for i in np.flatnonzero(confusion.sum(axis=0) == 0)]
        notes = list(notes) + ([NEVER_PREDICTED.format(names=", ".join(never))] if never else [])
        return cls(split, names, float(loss), float(np.trace(confusion) / max(len(true), 1)),
                   confusion, precision, recall, f1, support, true, predicted.astype(np.int64),
                   confidence,
                   np.arange(len(true), dtype=np.int64) if indices is None else indices,
                   notes, samples)

    def cell(self, true_class: int, predicted_class: int) -> np.ndarray:
        """Positions of the samples of ``true_class`` answered ``predicted_class``, in split
        order."""
        return np.flatnonzero((self.true == true_class) & (self.predicted == predicted_class))

    def confident_mistakes(self, count: int) -> np.ndarray:
        """Positions of up to ``count`` wrong answers, the most confident first."""
        wrong = np.flatnonzero(self.true != self.predicted)
        return wrong[np.argsort(-self.confidence[wrong], kind="stable")][:count]

    def images(self, positions: Sequence[int]) -> list[np.ndarray]:
        """The samples at ``positions`` as stored, uint8 H × W × C, for showing: in-memory
        images as they are; image files read with Pillow as grey (C = 1) or RGB, at most
        DISPLAY_SIDE pixels a side (a file that can no longer be read shows black)."""
        samples = self.samples
        chosen = [int(self.indices[p]) for p in positions]
        if isinstance(samples, ArraySamples):
            return [samples.x[i] for i in chosen]
        if isinstance(samples, FileSamples):
            return [_read_for_display(samples.paths[i]) for i in chosen]
        raise ValueError("This evaluation's samples are not images.")

    def to_dict(self) -> dict[str, Any]:
        """The scores as JSON-ready values (no per-sample arrays). Precision is 0 for a class
        never answered (``answered`` is 0), recall 0 for a class absent from the split."""
        answered = self.confusion.sum(axis=0)
        return {
            "split": self.split,
            "samples": int(len(self.true)),
            "loss": self.loss,
            "accuracy": self.accuracy,
            "mistakes": int(np.sum(self.true != self.predicted)),
            "class_names": self.class_names,
            "confusion": self.confusion.tolist(),
            "per_class": [
                {"class": name, "precision": float(self.precision[i]),
                 "recall": float(self.recall[i]), "f1": float(self.f1[i]),
                 "support": int(self.support[i]), "answered": int(answered[i])}
                for i, name in enumerate(self.class_names)],
            "macro": {"precision": float(np.mean(self.precision)),
                      "recall": float(np.mean(self.recall)), "f1": float(np.mean(self.f1))},
            "notes": list(self.notes),
        }


def _read_for_display(path: Path) -> np.ndarray:
    """An image file as uint8 grey or RGB, at most DISPLAY_SIDE a side (black if unreadable)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            image.draft(None, (DISPLAY_SIDE, DISPLAY_SIDE))  # a JPEG decodes at a smaller scale
            image.thumbnail((DISPLAY_SIDE, DISPLAY_SIDE))
            if image.mode.startswith("I"):  # 16-bit grey
                values = np.clip(np.asarray(image, dtype=np.float64), 0, 65535)
                pixels = np.rint(values / 257.0).astype(np.uint8)
            else:
                pixels = np.asarray(image.convert("L" if image.mode in GREY_MODES else "RGB"))
    except (OSError, ValueError, Image.DecompressionBombError):
        return np.zeros((DISPLAY_SIDE // 8, DISPLAY_SIDE // 8, 3), np.uint8)
    return pixels.reshape(*pixels.shape[:2], -1)


def _project(run_dir: Path):
    try:
        return load_project(run_dir / runs.PROJECT_FILE)
    except ProjectFileError as exc:
        raise ValueError(f"{run_dir} is not a run Layer Studio can evaluate: {exc}") from None


def _refuse_early(project, split: str) -> None:
    """Refuse what can be told from the project alone, before reading any data."""
    if split not in SPLIT_NAMES:
        raise ValueError(f"Unknown split {split!r}: evaluate on the validation or test split.")
    _refuse_task(project.dataset.task)
    if split == "test" and project.dataset.test_split <= 0:
        raise DataError(_no_split("test"))


def _refuse_task(task: str) -> None:
    """Refuse the runs of a task that evaluation cannot score, saying why."""
    refusal = task_for(task).evaluation_refusal
    if refusal:
        raise ValueError(refusal)


def _no_split(split: str) -> str:
    return (f"This run holds no {split} split: set a {split} split in Data and train again.")


def _load(project, run_dir: Path, on_progress: Progress | None,
          stop: threading.Event) -> LoadedData:
    try:
        loaded = data.load(project.dataset, on_progress, stop)
    except DataError as exc:
        if stop.is_set():
            raise EvaluationCancelled("The evaluation was cancelled.") from None
        raise DataError(f"The data {run_dir.name} was trained on cannot be read any more: "
                        f"{exc} Put it back where it was, then evaluate again.") from None
    _refuse_task(loaded.info.task)
    return loaded


def _data_notes(run_dir: Path, loaded: LoadedData) -> list[str]:
    """A warning when the data differs from what the run recorded at training time."""
    try:
        config = json.loads((run_dir / runs.CONFIG_FILE).read_text(encoding="utf-8"))
        recorded = config["dataset_fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if recorded == loaded.fingerprint():
        return []
    return ["The data changed since this run was trained (files added, removed or edited): "
            "the scores are on the data as it is now."]


def evaluate_run(run_dir: Path, split: str = "validation", model_path: Path | None = None,
                 on_progress: Progress | None = None,
                 stop: threading.Event | None = None) -> Evaluation:
    """Evaluate a run's model (its final one, or ``model_path``, e.g. a checkpoint) on the
    run's own ``split`` ("validation" or "test"), read and split as in training, without
    augmentation.

    The loss is the run's (sparse categorical cross-entropy, on the model's first output
    for a model with several). Progress goes to ``on_progress(what, done, total)`` while
    the data loads and while the model answers; setting ``stop`` raises
    EvaluationCancelled. Raises DataError or ValueError in plain words for an empty split, a
    regression run, data no longer where it was, and ModelFileError for a model that cannot
    be loaded.
    """

    run_dir = Path(run_dir)
    stop = stop or threading.Event()
    project = _project(run_dir)
    _refuse_early(project, split)
    loaded = _load(project, run_dir, on_progress, stop)
    if not loaded.size(split):
        raise DataError(_no_split(split))
    pipes = make_pipelines(loaded, project.dataset, BATCH_SIZE, project.training.seed)
    dataset = pipes.test if split == "test" else pipes.validation.take(pipes.validation_steps)
    predictor = Predictor.load(Path(model_path) if model_path else run_dir,
                               pipes.preprocessing)
    logits = not outputs_probabilities(project.graph)[0]
    true, probabilities, losses = _answer(predictor, dataset, loaded.size(split), logits,
                                          on_progress, stop)
    return Evaluation.of_answers(split, loaded.info.class_names, true, probabilities,
                                 float(np.mean(losses)), loaded.splits[split], loaded.samples,
                                 _data_notes(run_dir, loaded))


def _answer(predictor, dataset, total: int, logits: bool, on_progress: Progress | None,
            stop: threading.Event) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The true classes, the answer probabilities and each sample's loss, batch by batch."""
    import keras

    what = f"Answering {count(total, 'sample')}"
    classes = len(predictor.class_names)
    trues, answers, losses = [], [], []
    done = 0
    for x, y in dataset:
        if stop.is_set():
            raise EvaluationCancelled("The evaluation was cancelled.")
        outputs = predictor.outputs(x.numpy()).astype(np.float32)
        if outputs.shape[-1] != classes:
            raise ValueError(f"This model answers with {outputs.shape[-1]} values, but the "
                             f"run's data has {classes} classes: pick a model of this run.")
        losses.append(np.asarray(keras.losses.sparse_categorical_crossentropy(
            y, outputs, from_logits=logits)))
        answers.append(np.asarray(keras.ops.softmax(outputs)) if logits else outputs)
        trues.append(y.numpy())
        done += len(outputs)
        if on_progress is not None:
            on_progress(what, done, total)
    if not answers:
        raise DataError("The split gave no samples to evaluate.")
    return np.concatenate(trues), np.concatenate(answers), np.concatenate(losses)

