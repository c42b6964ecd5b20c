"""A detection dataset as a project's data (``DatasetChoice`` source ``detection``): a folder of
images with labels in one of the four formats, or, with no folder, the bundled demo set.

``describe`` says what it holds for shape checks, ``load`` reads it into a ``LoadedData`` whose
labels are a ``BoxLabels`` record (boxes in pixels of each image as stored). Images keep the
split the layout gives them (a ``val`` folder, a COCO ``instances_val`` file, the demo set's);
when the layout names no validation split, the images are split at random, seeded, by the
choice's fractions (images a layout puts in its test split stay there).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.events import Progress
from studio.core.base.recent import Recent
from studio.core.data.detection import demo
from studio.core.data.detection.formats import read_detection
from studio.core.data.detection.health import DetectionHealth
from studio.core.data.detection.record import DetectionSet, describe_dict
from studio.core.data.splits import layout_splits
from studio.core.data.types import (
    ArraySamples,
    DataError,
    DataPending,
    DatasetInfo,
    FileSamples,
    LoadedData,
)
from studio.core.project.document import DatasetChoice
from studio.core.tasks.detection.labels import BoxLabels
from studio.core.tasks.detection.task import Detection

TASK = Detection.name
DEMO_IMAGES = {"train": 4_000, "validation": 500}
"""The size of the demo set a project trains on."""
DEMO_TITLE = "Detection demo (digits)"


@dataclass(frozen=True)
class _Read:
    """What a detection source holds, read once: the image sizes (width, height) as stored,
    the class names, channels, and the split each image's layout names (None: none)."""

    sizes: list[tuple[int, int]]
    class_names: tuple[str, ...]
    channels: int
    named_splits: list[str | None]


def _format_name(choice: DatasetChoice) -> str | None:
    return None if choice.label_format == "auto" else choice.label_format


_sets: Recent[DetectionSet] = Recent(2)
"""The folders read last, by path, modification time and format."""


def _key(choice: DatasetChoice) -> tuple[Any, ...]:
    path = Path(choice.path)
    try:
        changed = os.stat(path).st_mtime_ns
    except OSError:
        changed = None  # read_detection explains it
    return str(path.resolve()), changed, choice.label_format


def _folder_set(choice: DatasetChoice, read: bool) -> DetectionSet:
    """The chosen folder as read last since it changed, else read now (with ``read``) or
    DataPending (without: a window must not wait for a large set's labels)."""
    key = _key(choice)
    dataset = _sets.get(key)
    if dataset is not None:
        return dataset
    if not read:
        raise DataPending(f"{Path(choice.path).name} is being read…")
    return _sets.remember(key, read_detection(Path(choice.path), _format_name(choice)))


def _demo_read() -> _Read:
    sizes = [(demo.SIDE, demo.SIDE)] * sum(DEMO_IMAGES.values())
    named = [split for split, n in DEMO_IMAGES.items() for _ in range(n)]
    return _Read(sizes, demo.CLASS_NAMES, 1, named)


def _info(choice: DatasetChoice, read: _Read, name: str, title: str, images: int
          ) -> DatasetInfo:
    """The dataset as the choice reads it: images at ``image_size`` if given, else at the most
    common size of its images."""
    if choice.image_size:
        size = tuple(choice.image_size)
    else:
        width, height = Counter(read.sizes).most_common(1)[0][0] if read.sizes else (64, 64)
        size = (height, width)
    channels = {"grayscale": 1, "rgb": 3}.get(choice.color, read.channels)
    return DatasetInfo(name=name, title=title, sample_shape=(*size, channels),
                       num_classes=len(read.class_names), class_names=read.class_names,
                       num_samples=images, task=TASK)


def _set_read(dataset: DetectionSet) -> _Read:
    return _Read(dataset.sizes, tuple(dataset.class_names), 3, dataset.splits)


def describe(choice: DatasetChoice, read: bool = True) -> DatasetInfo:
    """What the chosen detection dataset holds; DataError in one line if it is unusable.
    A folder is read once per change (``read`` False: DataPending until ``load`` read it)."""
    if not choice.path:
        return _info(choice, _demo_read(), "detection-demo", DEMO_TITLE,
                     sum(DEMO_IMAGES.values()))
    dataset = _folder_set(choice, read)
    _check_usable(dataset)
    return _info(choice, _set_read(dataset), str(dataset.root),
                 dataset.root.name or str(dataset.root), len(dataset))


def _check_usable(dataset: DetectionSet) -> None:
    """DataError in one line if the dataset's health keeps any detector from training on it:
    said before a model is checked against it, or a run is started."""
    blocking = dataset.health.blocking()
    if blocking:
        raise DataError(f"{dataset.root.name}: {blocking[0]}")


def load(choice: DatasetChoice, on_progress: Progress, stop: threading.Event) -> LoadedData:
    """Read the chosen detection dataset (drawing the demo set on first use) and split it;
    DataError in one line if it cannot be used."""
    if not choice.path:
        made = demo.demo_set(DEMO_IMAGES["train"], DEMO_IMAGES["validation"], on_progress,
                             stop)
        health = DetectionHealth(list(made.class_names))
        for boxes in made.labels:
            health.add_image(boxes, (demo.SIDE, demo.SIDE))
        read = _Read([(demo.SIDE, demo.SIDE)] * len(made), made.class_names, 1,
                     list(made.splits))
        info = _info(choice, read, "detection-demo", DEMO_TITLE, len(made))
        return LoadedData(info, ArraySamples(made.images[..., np.newaxis]),
                          BoxLabels.of(made.labels, [(demo.SIDE, demo.SIDE)] * len(made)),
                          layout_splits(read.named_splits, choice.validation_split,
                                        choice.test_split, choice.seed),
                          report=health.to_dict(), validation_split=choice.validation_split,
                          named_splits=read.named_splits)
    key = _key(choice)
    dataset = read_detection(Path(choice.path), _format_name(choice), on_progress, stop)
    if not dataset.health.cancelled:
        _sets.remember(key, dataset)
    _check_usable(dataset)
    info = _info(choice, _set_read(dataset), str(dataset.root),
                 dataset.root.name or str(dataset.root), len(dataset))
    labels = BoxLabels.of(dataset.labels, [(h, w) for w, h in dataset.sizes])
    return LoadedData(info, FileSamples(list(dataset.images)), labels,
                      layout_splits(dataset.splits, choice.validation_split, choice.test_split,
                                    choice.seed),
                      dataset.health.problems(), describe_dict(dataset),
                      validation_split=choice.validation_split, named_splits=dataset.splits)

