"""Datasets: what each source holds, loading its samples and a seeded, stratified split.

Everything here is free of TensorFlow: ``describe`` says what a dataset holds (for shape
checks and the data panel) and ``load`` reads its samples and splits them. The ``tf.data``
pipelines that stream them to Keras live in ``studio.core.data.pipelines``.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from studio.core.base.events import Progress
from studio.core.data.builtin import builtin_info, load_builtin
from studio.core.data.bundled import bundled_info, load_arrays
from studio.core.data.splits import layout_splits, stratified_split
from studio.core.data.tables import read_table, table_info
from studio.core.data.types import (
    DEFAULT_IMAGE_SIZE,
    ArraySamples,
    DataError,
    DatasetInfo,
    FileSamples,
    LoadedData,
)
from studio.core.project.document import DatasetChoice, absolute_data_path
from studio.core.tasks.registry import task_for

DETECTION_FOLDERS = frozenset({"labels", "annotations", "label_2", "train", "training", "val",
                               "valid", "validation", "test"})
DETECTION_FILES = frozenset({".json", ".yaml", ".yml", ".txt", ".xml"})
"""Entries of a folder that hint at detection labels in it (the folders and files of the YOLO,
Pascal VOC, COCO and KITTI layouts, and split folders, where COCO exports keep their JSON)."""


def _builtin_info(choice: DatasetChoice) -> DatasetInfo:

    return builtin_info(choice.name)


def _channels(choice: DatasetChoice, native: int) -> int:
    return {"grayscale": 1, "rgb": 3}.get(choice.color, native)


def _image_info(choice: DatasetChoice, native: DatasetInfo) -> DatasetInfo:
    """An in-memory image dataset as the choice reads it: its size and channels."""
    height, width, channels = native.sample_shape
    size = tuple(choice.image_size) if choice.image_size else (height, width)
    shape = (*size, _channels(choice, channels))
    return native if shape == native.sample_shape else replace(native, sample_shape=shape)


def _folder_classes(path: Path) -> list[str]:
    """The class folders directly inside ``path``, sorted; raise DataError if it is unusable."""
    from studio.core.data.image_folder import class_folders  # with Pillow: not at start-up

    if not path.is_dir():
        raise DataError(f"The image folder {path} does not exist or is not a folder.")
    try:
        return class_folders(path)
    except OSError as exc:
        raise DataError(f"The image folder {path} cannot be read ({exc.strerror}).") from None


def _folder_info(choice: DatasetChoice) -> DatasetInfo:
    path = Path(choice.path)
    if not choice.path:
        raise DataError("No image folder is chosen yet: pick a folder with one subfolder "
                        "per class.")
    classes = _folder_classes(path)
    _refuse_detection_folder(path)
    _refuse_segmentation_folder(path)
    size = tuple(choice.image_size) if choice.image_size else DEFAULT_IMAGE_SIZE
    return DatasetInfo(
        name=str(path),
        title=path.name or str(path),
        sample_shape=(*size, _channels(choice, 3)),
        num_classes=len(classes),
        class_names=tuple(classes),
        num_samples=None,
    )


def _may_hold_boxes(path: Path) -> bool:
    """Whether ``path``'s own entries hint at detection labels (a labels or annotations
    folder, a label, list or JSON file): only then is the folder searched for them, since a
    search walks every file and describing a folder must stay cheap."""
    with os.scandir(path) as entries:
        return any(entry.name.lower() in DETECTION_FOLDERS
                   or Path(entry.name).suffix.lower() in DETECTION_FILES for entry in entries)


@lru_cache(maxsize=8)
def _label_format(path: Path, changed: int) -> str | None:
    """``looks_like_detection`` for ``path`` as it was when its entries last ``changed``:
    a search walks every file (half a second for 10,000 images), and a folder is described
    on every edit."""
    from studio.core.data.detection.formats import looks_like_detection

    return looks_like_detection(path)


def _refuse_detection_folder(path: Path) -> None:
    """DataError in one line if ``path`` holds a detection dataset rather than a subfolder of
    images per class."""
    try:
        found = _may_hold_boxes(path) and _label_format(path, path.stat().st_mtime_ns)
    except OSError:
        return  # an unreadable folder is explained by the folder reader
    if found:
        raise DataError(f"{path} is a detection dataset ({found} labels), not a folder of "
                        "images per class: choose it as a detection dataset.")


def _refuse_segmentation_folder(path: Path) -> None:
    """DataError in one line if ``path`` holds a segmentation dataset (images with masks)
    rather than a subfolder of images per class."""
    from studio.core.data.segmentation.layouts import looks_like_segmentation  # with Pillow

    found = looks_like_segmentation(path)
    if found:
        raise DataError(f"{path} is a segmentation dataset ({found}), not a folder of images "
                        "per class: choose it as a segmentation dataset.")


def _csv_info(choice: DatasetChoice, read: bool = True) -> DatasetInfo:

    info = table_info(choice, read)
    return replace(info, vocabulary_size=choice.max_tokens) if info.kind == "text" else info


def describe(choice: DatasetChoice, read: bool = True) -> DatasetInfo:
    """What the chosen dataset holds, as the choice reads it; raise DataError if unusable.

    Cheap enough to call on every edit: a folder is only listed, a CSV read once per change.
    With ``read`` False a CSV not read yet is not read here (a window must not wait for it):
    DataPending says so until ``load`` has read it.
    """
    if choice.source == "bundled":
        return _image_info(choice, bundled_info(choice))
    if choice.source == "keras":
        return _image_info(choice, _builtin_info(choice))
    if choice.source == "folder":
        return _folder_info(choice)
    if choice.source == "csv":
        return _csv_info(choice, read)
    if choice.source == "detection":
        from studio.core.data.detection import source as detection  # it reads this module

        return detection.describe(choice, read)
    if choice.source == "segmentation":
        from studio.core.data.segmentation import source as segmentation  # with Pillow

        return segmentation.describe(choice, read)
    raise DataError(f"Unknown kind of dataset source {choice.source!r}.")


def _load_in_memory(choice: DatasetChoice, info: DatasetInfo, x: np.ndarray, y: np.ndarray
                    ) -> LoadedData:
    return LoadedData(info, ArraySamples(x), y, _splits(choice, y, info),
                      validation_split=choice.validation_split)


def _load_folder(choice: DatasetChoice, on_progress: Progress, stop: threading.Event
                 ) -> LoadedData:
    from studio.core.data.image_folder import health_report, scan_folder

    info = _folder_info(choice)
    scans = []
    for role, path in (("training", choice.path), ("validation", choice.validation_path)):
        if not path:
            continue
        scan = scan_folder(Path(path), lambda done, total, role=role: on_progress(
            f"Checking {role} images", done, total), stop)
        if scan.cancelled:
            raise DataError("Reading the image folder was cancelled.")
        scans.append(scan)
    main = scans[0]
    if main.blocking():
        raise DataError(main.blocking()[0])
    index = {name: i for i, name in enumerate(info.class_names)}
    paths, labels = [p for p, _ in main.images], [c for _, c in main.images]
    notes = main.problems()
    if len(scans) == 2:
        extra = scans[1]
        unknown = sorted(set(extra.classes) - set(index))
        if unknown:
            raise DataError(f"The validation folder has classes the training folder lacks: "
                            f"{', '.join(map(repr, unknown))}.")
        paths += [p for p, _ in extra.images]
        labels += [index[extra.classes[c]] for _, c in extra.images]
        notes += [f"Validation folder: {text}" for text in extra.problems()]
    y = np.asarray(labels, dtype=np.int32)
    info = replace(info, num_samples=len(y))
    start = len(main.images) if len(scans) == 2 else None
    report = health_report(main)
    loaded = LoadedData(info, FileSamples(paths), y, _splits(choice, y, info, start), notes,
                        report, [d for scan in scans for d in scan.digests], start,
                        choice.validation_split)
    report["duplicates"]["across_splits"] = len(loaded.leaks())
    return loaded


def _splits(choice: DatasetChoice, labels: np.ndarray, info: DatasetInfo,
            validation_start: int | None = None) -> dict[str, np.ndarray]:
    """The choice's split; samples from ``validation_start`` on are the validation split."""
    stratify = task_for(info.task).has_classes
    if validation_start is None:
        return stratified_split(labels, choice.validation_split, choice.test_split,
                                choice.seed, stratify)
    inner = stratified_split(labels[:validation_start], 0.0, choice.test_split, choice.seed,
                             stratify)
    return {"train": inner["train"], "test": inner["test"],
            "validation": np.arange(validation_start, len(labels), dtype=np.int64)}


def resplit(loaded: LoadedData, choice: DatasetChoice) -> LoadedData:
    """``loaded`` split again by the choice's fractions and seed, without reading it again."""
    if loaded.named_splits is not None:
        splits = layout_splits(loaded.named_splits, choice.validation_split, choice.test_split,
                               choice.seed)
    else:
        splits = _splits(choice, loaded.labels, loaded.info, loaded.validation_start)
    again = replace(loaded, splits=splits, validation_split=choice.validation_split)
    if loaded.report is not None and "duplicates" in loaded.report:
        again.report = {**loaded.report, "duplicates": {**loaded.report["duplicates"],
                                                        "across_splits": len(again.leaks())}}
    return again


def _load_csv(choice: DatasetChoice, on_progress: Progress, stop: threading.Event
              ) -> LoadedData:

    table = read_table(choice, on_progress, stop)
    info = _csv_info(choice)
    return LoadedData(info, table.samples, table.labels,
                      _splits(choice, table.labels, info), table.notes, table.report,
                      validation_split=choice.validation_split)


def load(choice: DatasetChoice, on_progress: Progress | None = None,
         stop: threading.Event | None = None) -> LoadedData:
    """Read the chosen dataset's samples and split them; raise DataError if unusable.

    May take long (a download, a folder scan): progress goes to ``on_progress`` and setting
    ``stop`` ends it with a DataError.
    """
    on_progress = on_progress or (lambda what, done, total: None)
    stop = stop or threading.Event()
    if choice.source == "bundled":
        x, y = load_arrays(choice)
        return _load_in_memory(choice, _image_info(choice, bundled_info(choice)), x, y)
    if choice.source == "keras":

        x, y = load_builtin(choice.name, on_progress, stop)
        return _load_in_memory(choice, _image_info(choice, _builtin_info(choice)), x, y)
    if choice.source == "folder":
        return _load_folder(choice, on_progress, stop)
    if choice.source == "csv":
        return _load_csv(choice, on_progress, stop)
    if choice.source == "detection":
        from studio.core.data.detection import source as detection  # it reads this module

        return detection.load(choice, on_progress, stop)
    if choice.source == "segmentation":
        from studio.core.data.segmentation import source as segmentation  # with Pillow

        return segmentation.load(choice, on_progress, stop)
    raise DataError(f"Unknown kind of dataset source {choice.source!r}.")


def choice_for_path(path: Path, current: DatasetChoice, input_shape: tuple[int, ...] | None
                    ) -> DatasetChoice:
    """A choice that reads ``path`` (an image folder or a CSV file) for a model whose input
    has ``input_shape``, keeping the split, seed, normalisation and augmentation of
    ``current``. Raise DataError if the path is neither."""
    kept = replace(current, path=absolute_data_path(path), validation_path="", image_size=None)
    if path.is_dir():
        choice = replace(kept, source="folder", label_column="", text_column="")
        if input_shape is not None and len(input_shape) == 3:
            height, width, channels = input_shape
            choice.image_size = [height, width]
            choice.color = {1: "grayscale", 3: "rgb"}.get(channels, "auto")
        return choice
    if path.suffix.lower() in (".csv", ".tsv", ".txt") and path.is_file():
        same = current.source == "csv"
        return replace(kept, source="csv", label_column=current.label_column if same else "",
                       text_column=current.text_column if same else "")
    raise DataError(f"{path} is neither a folder of images nor a CSV file.")
