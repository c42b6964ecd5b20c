"""Evaluating a trained run on its own validation or test split: the model answers every
sample, and the run's task scores the answers (for a classifier: loss, accuracy, the confusion
matrix, per-class precision, recall and F1, and the samples behind each answer; for a
detector: mAP, per-class AP, precision-recall curves and each class's mistakes; for a
segmentation: per-class IoU and Dice, the pixel confusion matrix and the worst images).

The run's project snapshot says which data it learned from and how it was split; the data
is read again, split with the same seed and streamed through the same pipeline as in
training (without augmentation), so the scores are those ``model.evaluate`` would give.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.events import Progress
from studio.core.base.messages import count
from studio.core.build.analysis import output_settings
from studio.core.build.keras_model import outputs_probabilities
from studio.core.data import sources as data
from studio.core.data.pipelines import make_pipelines
from studio.core.data.types import (
    DataError,
    LoadedData,
)
from studio.core.inference.predictor import Predictor
from studio.core.project.document import ProjectFileError, load_project
from studio.core.runs import folders as runs
from studio.core.tasks.registry import task_for
from studio.core.tasks.task import BatchTally

BATCH_SIZE = 256
"""Samples per batch while answering (any size gives the same scores)."""
SPLIT_NAMES = ("validation", "test")


class EvaluationCancelled(DataError):
    """The person stopped the evaluation before it ended."""


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
                 stop: threading.Event | None = None) -> Any:
    """Evaluate a run's model (its final one, or ``model_path``, e.g. a checkpoint) on the
    run's own ``split`` ("validation" or "test"), read and split as in training, without
    augmentation.

    The task's evaluation is returned (a classifier's ``Evaluation``, a detector's
    ``DetectionEvaluation``, a segmentation's ``SegmentationEvaluation``), scored batch by
    batch through the task's ``tally``; the loss is the
    run's, on the model's first output for a model with several. Progress goes to
    ``on_progress(what, done, total)`` while the data loads and while the model answers;
    setting ``stop`` raises EvaluationCancelled. Raises DataError or ValueError in plain
    words for an empty split, a task that cannot be scored (regression), data no longer
    where it was, and ModelFileError for a model that cannot be loaded.
    """

    run_dir = Path(run_dir)
    stop = stop or threading.Event()
    project = _project(run_dir)
    _refuse_early(project, split)
    loaded = _load(project, run_dir, on_progress, stop)
    if not loaded.size(split):
        raise DataError(_no_split(split))
    pipes = make_pipelines(loaded, project.dataset, BATCH_SIZE, project.training.seed,
                           output=output_settings(project.graph, loaded.info))
    dataset = pipes.test if split == "test" else pipes.validation.take(pipes.validation_steps)
    predictor = Predictor.load(Path(model_path) if model_path else run_dir,
                               pipes.preprocessing)
    task = task_for(project.dataset.task)
    logits = not outputs_probabilities(project.graph)[0]
    tally = task.tally(predictor.class_names, logits)
    _answer(tally, predictor, dataset, loaded.size(split), on_progress, stop)
    return tally.evaluation(split, loaded.info.class_names, loaded.splits[split],
                            loaded.samples, _data_notes(run_dir, loaded), labels=loaded.labels,
                            preprocessing=predictor.prep)


def _answer(tally: BatchTally, predictor, dataset, total: int,
            on_progress: Progress | None, stop: threading.Event) -> None:
    """Answer the split batch by batch, each batch scored into ``tally``."""
    what = f"Answering {count(total, 'sample')}"
    for x, y in dataset:
        if stop.is_set():
            raise EvaluationCancelled("The evaluation was cancelled.")
        tally.add(y.numpy(), predictor.outputs(x.numpy()).astype(np.float32))
        if on_progress is not None:
            on_progress(what, tally.size, total)
    if not tally.size:
        raise DataError("The split gave no samples to evaluate.")
