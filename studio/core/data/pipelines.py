"""Streaming a loaded dataset to Keras: ``tf.data`` pipelines for every kind of sample."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from studio.core.data.image_reading import image_datasets
from studio.core.data.table_pipeline import table_datasets
from studio.core.data.types import ArraySamples, FileSamples, LoadedData
from studio.core.project.document import DatasetChoice
from studio.core.tasks.registry import task_for

PREFETCH_BATCHES = 2


@dataclass
class Pipelines:
    """Batched, prefetched datasets for training, validation and (if held out) test.

    Training and validation repeat without end, read ``steps`` and ``validation_steps``
    batches per epoch: Keras then keeps one iterator for the whole run instead of building
    the pipeline again each epoch (which cost 50-100 ms per epoch on an image folder, see
    bench/folder_throughput.py). ``preprocessing`` records every step applied to a sample,
    for inference later; ``class_weight`` is set when the choice asks to balance the classes.
    """

    train: Any
    validation: Any | None
    test: Any | None
    preprocessing: dict[str, Any]
    class_weight: dict[int, float] | None
    steps: int
    validation_steps: int
    scoring: Any = None
    """What the task's training callbacks score at epoch ends (a detector's validation
    images and true boxes), None if it scores nothing beyond Keras's metrics."""
    loss_class_weights: list[float] | None = None
    """Each class's weight in the loss itself, for a task whose labels are not one class per
    sample (a mask's pixels): set when the choice asks to balance the classes."""

    def fit_arguments(self) -> dict[str, Any]:
        """What ``keras.Model.fit`` needs to read these datasets."""
        return {"x": self.train, "validation_data": self.validation,
                "steps_per_epoch": self.steps, "validation_steps": self.validation_steps,
                "class_weight": self.class_weight, "shuffle": False}


Datasets = tuple[Any, Any | None, Any | None, dict[str, Any], Any]
"""What a pipeline builder returns: the batched (not yet repeated) training, validation and
test datasets, the preprocessing record and what the task scores at epoch ends (or None)."""

PipelineBuilder = Callable[[LoadedData, DatasetChoice, int, int, dict[str, Any]], Datasets]
"""Builds the datasets of one label kind from (loaded, choice, batch size, seed, the task's
output settings)."""


def _sample_datasets(loaded: LoadedData, choice: DatasetChoice, batch_size: int, seed: int,
                     output: dict[str, Any]) -> Datasets:
    """Classes or numbers as labels: images (in memory or files), or the rows of a table."""
    datasets = (image_datasets if isinstance(loaded.samples, ArraySamples | FileSamples)
                else table_datasets)
    return (*datasets(loaded, choice, batch_size, seed), None)


def _box_datasets(loaded: LoadedData, choice: DatasetChoice, batch_size: int, seed: int,
                  output: dict[str, Any]) -> Datasets:
    """Boxes as labels: images with their boxes as the head's target maps."""
    # Imported here: the detection pipeline is only read when a detector trains.
    from studio.core.data.detection.pipeline import detection_datasets

    return detection_datasets(loaded, choice, batch_size, seed, output)


def _mask_datasets(loaded: LoadedData, choice: DatasetChoice, batch_size: int, seed: int,
                   output: dict[str, Any]) -> Datasets:
    """Masks as labels: images with their masks fitted to the input."""
    # Imported here: the segmentation pipeline is only read when a segmentation model trains.
    from studio.core.data.segmentation.pipeline import segmentation_datasets

    return segmentation_datasets(loaded, choice, batch_size, seed, output)


PIPELINE_BUILDERS: dict[str, PipelineBuilder] = {
    "classes": _sample_datasets,
    "numbers": _sample_datasets,
    "boxes": _box_datasets,
    "masks": _mask_datasets,
}
"""The pipeline builder of each task's ``label_kind``: a new kind of label plugs in with one
entry."""


def make_pipelines(loaded: LoadedData, choice: DatasetChoice, batch_size: int, seed: int,
                   inputs: int = 1, outputs: int = 1,
                   output: dict[str, Any] | None = None) -> Pipelines:
    """The ``tf.data`` pipelines for ``loaded``, read and augmented as ``choice`` says, in
    batches of ``batch_size`` (validation and test too).

    A model with several inputs gets the samples on each; one with several outputs learns
    the labels on each. ``output``: the task's ``output_settings`` for the model's output,
    which boxes need (the head's grid and decoding settings).
    """
    build = PIPELINE_BUILDERS[task_for(loaded.info.task).label_kind]
    train, validation, test, prep, scoring = build(loaded, choice, batch_size, seed, output or {})
    if not loaded.size("validation"):  # else Keras reads nothing from it, and warns
        validation = None

    def fan_out(x, y):
        return ((x,) * inputs if inputs > 1 else x), ((y,) * outputs if outputs > 1 else y)

    def finish(dataset, repeat: bool):
        if dataset is None:
            return None
        if repeat:
            dataset = dataset.repeat()
        if inputs > 1 or outputs > 1:
            dataset = dataset.map(fan_out)
        return dataset.prefetch(PREFETCH_BATCHES)

    learns = task_for(loaded.info.task)
    balance = choice.class_weights and outputs == 1
    weights = loaded.class_weights() if balance and learns.has_classes else None
    in_loss = None
    if balance and learns.class_weights_in_loss:
        found = loaded.class_weights()
        in_loss = [found.get(k, 1.0) for k in range(loaded.info.num_classes)]
    if validation is None:
        scoring = None
    return Pipelines(finish(train, True), finish(validation, True), finish(test, False), prep,
                     weights, math.ceil(loaded.size("train") / batch_size),
                     math.ceil(loaded.size("validation") / batch_size), scoring, in_loss)
