"""A segmentation dataset as a project's data (``DatasetChoice`` source ``segmentation``): a
folder of images with masks in any layout ``layouts`` reads (its masks in ``mask_path`` if
that is given), or, with no folder, the bundled demo set.

``describe`` says what it holds for shape checks, ``load`` reads it into a ``LoadedData``
whose labels are the masks: ``FileMasks`` (the files, read when streamed) or ``ArrayMasks``
(the demo set's, in memory), which index, count and fingerprint as ``MaskLabels`` does and
give each mask with ``mask(i)``. Images keep the split the layout names (VOC's ImageSets,
``train``/``val`` folders, the demo set's); the others are split at random, seeded, by the
choice's fractions.
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
from studio.core.data.segmentation import demo
from studio.core.data.segmentation.health import SegmentationHealth
from studio.core.data.segmentation.mask_kinds import MaskDecoder
from studio.core.data.segmentation.reading import read_segmentation
from studio.core.data.segmentation.record import (
    ClassPixels,
    MaskLabels,
    SegmentationSet,
    describe_dict,
)
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

TASK = "segmentation"
DEMO_IMAGES = {"train": 4_000, "validation": 500}
"""The size of the demo set a project trains on."""
DEMO_TITLE = "Segmentation demo (digits)"
DEMO_NAME = "segmentation-demo"


@dataclass(frozen=True)
class FileMasks(MaskLabels):
    """``MaskLabels`` with the decoder that reads their files as masks."""

    decoder: MaskDecoder | None = None

    def __getitem__(self, indices: np.ndarray) -> FileMasks:
        part = super().__getitem__(indices)
        return FileMasks(part.masks, part.sizes, part.pixels, self.decoder)

    def mask(self, index: int) -> np.ndarray:
        """The mask of image ``index`` (uint8 H × W of class indices, IGNORE where none)."""
        assert self.decoder is not None
        return self.decoder.read(Path(self.masks[index]))


@dataclass(frozen=True)
class ArrayMasks(ClassPixels):
    """Masks held in memory (uint8 N × H × W, ``arrays``), indexed, counted and fingerprinted
    as ``MaskLabels`` are (``pixels``: int64 N × C)."""

    arrays: np.ndarray
    pixels: np.ndarray

    @staticmethod
    def of(masks: np.ndarray, num_classes: int) -> ArrayMasks:
        """The labels of ``masks`` (uint8 N × H × W) of ``num_classes`` classes."""
        masks = np.asarray(masks, np.uint8)
        rows = np.arange(len(masks), dtype=np.int64)[:, None] * 256
        values = np.bincount((rows + masks.reshape(len(masks), -1)).reshape(-1),
                             minlength=len(masks) * 256).reshape(len(masks), 256)
        return ArrayMasks(masks, values[:, :num_classes].astype(np.int64))

    @property
    def sizes(self) -> np.ndarray:
        """Each mask's height and width (int32 N × 2)."""
        return np.tile(np.asarray(self.arrays.shape[1:3], np.int32), (len(self), 1))

    def __len__(self) -> int:
        return len(self.arrays)

    def __getitem__(self, indices: np.ndarray) -> ArrayMasks:
        indices = np.asarray(indices, np.int64).reshape(-1)
        return ArrayMasks(self.arrays[indices], self.pixels[indices])

    def mask(self, index: int) -> np.ndarray:
        return self.arrays[index]

    def tobytes(self) -> bytes:
        return np.ascontiguousarray(self.arrays).tobytes()


_sets: Recent[SegmentationSet] = Recent(2)
"""The folders read last, by path, masks path and modification times."""


def _masks_folder(choice: DatasetChoice) -> Path | None:
    return Path(choice.mask_path) if choice.mask_path else None


def _key(choice: DatasetChoice) -> tuple[Any, ...]:
    key: list[Any] = []
    for path in filter(None, (choice.path, choice.mask_path)):
        try:
            changed = os.stat(path).st_mtime_ns
        except OSError:
            changed = None  # read_segmentation explains it
        key += [str(Path(path).resolve()), changed]
    return tuple(key)


def _info(choice: DatasetChoice, sizes: list[tuple[int, int]], channels: int,
          class_names: tuple[str, ...], name: str, title: str) -> DatasetInfo:
    """The dataset as the choice reads it: images at ``image_size`` if given, else at the most
    common size (height, width) of its images."""
    if choice.image_size:
        size = tuple(choice.image_size)
    else:
        size = Counter(sizes).most_common(1)[0][0] if sizes else (demo.SIDE, demo.SIDE)
    channels = {"grayscale": 1, "rgb": 3}.get(choice.color, channels)
    return DatasetInfo(name=name, title=title, sample_shape=(*size, channels),
                       num_classes=len(class_names), class_names=class_names,
                       num_samples=len(sizes), task=TASK)


def _set_info(choice: DatasetChoice, dataset: SegmentationSet) -> DatasetInfo:
    sizes = [(int(h), int(w)) for h, w in dataset.labels.sizes]
    return _info(choice, sizes, 3, tuple(dataset.class_names), str(dataset.root),
                 dataset.root.name or str(dataset.root))


def _demo_info(choice: DatasetChoice) -> DatasetInfo:
    sizes = [(demo.SIDE, demo.SIDE)] * sum(DEMO_IMAGES.values())
    return _info(choice, sizes, 1, demo.CLASS_NAMES, DEMO_NAME, DEMO_TITLE)


def describe(choice: DatasetChoice, read: bool = True) -> DatasetInfo:
    """What the chosen segmentation dataset holds; DataError in one line if it is unusable.
    A folder is read once per change (``read`` False: DataPending until ``load`` read it)."""
    if not choice.path:
        return _demo_info(choice)
    key = _key(choice)
    dataset = _sets.get(key)
    if dataset is None:
        if not read:
            raise DataPending(f"{Path(choice.path).name} is being read…")
        dataset = _sets.remember(key, read_segmentation(Path(choice.path), _masks_folder(choice)))
    _check_usable(dataset)
    return _set_info(choice, dataset)


def _check_usable(dataset: SegmentationSet) -> None:
    """DataError in one line if the dataset's health keeps any model from training on it:
    said before a model is checked against it, or a run is started."""
    blocking = dataset.health.blocking()
    if blocking:
        raise DataError(f"{dataset.root.name}: {blocking[0]}")


def _load_demo(choice: DatasetChoice, on_progress: Progress, stop: threading.Event
               ) -> LoadedData:
    made = demo.demo_set(DEMO_IMAGES["train"], DEMO_IMAGES["validation"], on_progress, stop)
    labels = ArrayMasks.of(made.masks, len(made.class_names))
    health = SegmentationHealth(list(made.class_names))
    for index, pixels in enumerate(labels.pixels):
        health.add_mask(f"{index:06d}.png", pixels)
    health.finish()
    splits = list(made.splits)
    return LoadedData(_demo_info(choice), ArraySamples(made.images[..., np.newaxis]), labels,
                      layout_splits(splits, choice.validation_split, choice.test_split,
                                    choice.seed),
                      report=health.to_dict(), validation_split=choice.validation_split,
                      named_splits=splits)


def load(choice: DatasetChoice, on_progress: Progress, stop: threading.Event) -> LoadedData:
    """Read the chosen segmentation dataset (drawing the demo set on first use) and split it;
    DataError in one line if it cannot be used."""
    if not choice.path:
        return _load_demo(choice, on_progress, stop)
    key = _key(choice)
    dataset = read_segmentation(Path(choice.path), _masks_folder(choice), on_progress, stop)
    if dataset.health.cancelled:
        raise DataError("Reading the segmentation dataset was cancelled.")
    _sets.remember(key, dataset)
    _check_usable(dataset)
    labels = FileMasks(dataset.labels.masks, dataset.labels.sizes, dataset.labels.pixels,
                       dataset.decoder)
    return LoadedData(_set_info(choice, dataset), FileSamples(list(dataset.images)), labels,
                      layout_splits(dataset.splits, choice.validation_split,
                                    choice.test_split, choice.seed),
                      dataset.health.problems(), describe_dict(dataset),
                      validation_split=choice.validation_split, named_splits=dataset.splits)
