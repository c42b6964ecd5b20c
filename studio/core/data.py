"""Datasets: what each source holds, loading its samples and a seeded, stratified split.

Everything here is free of TensorFlow: ``describe`` says what a dataset holds (for shape
checks and the data panel) and ``load`` reads its samples and splits them. The ``tf.data``
pipelines that stream them to Keras live in ``studio.core.pipelines``.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.messages import count
from studio.core.project import DatasetChoice, absolute_data_path

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"
DEFAULT_IMAGE_SIZE = (64, 64)
"""The size folder images are read at when the project names none (height, width)."""
SPLITS = ("train", "validation", "test")

Progress = Callable[[str, int, int], None]
"""``on_progress(what, done, total)``: what is being done (for a person), and how far."""


class DataError(ValueError):
    """A dataset cannot be used; the message is meant for a person."""


class DataPending(DataError):
    """What a dataset holds is not known before its file is read, and the caller asked not to
    read it (``describe(choice, read=False)``): read it in the background, then ask again."""


@dataclass(frozen=True)
class DatasetInfo:
    """What a dataset holds, known without loading TensorFlow.

    ``kind`` is ``image``, ``table`` or ``text``; ``task`` is ``classification`` or
    ``regression`` (with no classes). ``num_samples`` is None until the samples are counted.
    ``vocabulary_size`` bounds the token ids of text samples.
    """

    name: str
    title: str
    sample_shape: tuple[int, ...]
    num_classes: int
    class_names: tuple[str, ...]
    num_samples: int | None
    credit: str = ""
    kind: str = "image"
    task: str = "classification"
    vocabulary_size: int | None = None


@dataclass
class ArraySamples:
    """Images held in memory: uint8, N × H × W × C."""

    x: np.ndarray

    def __len__(self) -> int:
        return len(self.x)


@dataclass
class FileSamples:
    """Image files, read when they are streamed."""

    paths: list[Path]

    def __len__(self) -> int:
        return len(self.paths)


@dataclass
class TableSamples:
    """Numeric features of a CSV, float32 N × F; NaN marks a missing value."""

    features: np.ndarray
    columns: list[str]

    def __len__(self) -> int:
        return len(self.features)


@dataclass
class TextSamples:
    """One text per sample."""

    texts: list[str]

    def __len__(self) -> int:
        return len(self.texts)


Samples = ArraySamples | FileSamples | TableSamples | TextSamples


@dataclass
class LoadedData:
    """A dataset's samples and labels, split into training, validation and test indices.

    ``notes`` tell the person what was skipped or changed while reading (with counts);
    ``report`` is the health report of a scanned folder.
    """

    info: DatasetInfo
    samples: Samples
    labels: np.ndarray
    splits: dict[str, np.ndarray]
    notes: list[str] = field(default_factory=list)
    report: dict[str, Any] | None = None
    digests: list[bytes] | None = None
    """A hash of each sample's file, to find copies that fall in different splits."""
    validation_start: int | None = None
    """Samples from this index on come from a separate validation folder."""
    validation_split: float = 0.0
    """The fraction of each class the choice asked to keep for validation."""

    def size(self, split: str) -> int:
        """How many samples a split holds."""
        return len(self.splits[split])

    def class_counts(self, split: str) -> list[int]:
        """Samples per class in a split (empty for regression)."""
        if self.info.task != "classification":
            return []
        counts = np.bincount(self.labels[self.splits[split]], minlength=self.info.num_classes)
        return [int(n) for n in counts]

    def leaks(self) -> list[list[int]]:
        """Groups of samples with identical files that fall in more than one split."""
        if self.digests is None:
            return []
        split_of = {int(i): name for name, indices in self.splits.items() for i in indices}
        groups: dict[bytes, list[int]] = {}
        for index, digest in enumerate(self.digests):
            groups.setdefault(digest, []).append(index)
        return [group for group in groups.values()
                if len({split_of.get(i) for i in group}) > 1]

    def split_notes(self) -> list[str]:
        """What the person should know about this split: validation asked for but not kept,
        copies across splits (leakage)."""
        notes = self._validation_notes()
        leaks = self.leaks()
        if not leaks:
            return notes
        first, second = (self.samples.paths[i].name for i in leaks[0][:2])
        return [*notes, f"{count(len(leaks), 'image has', 'images have')} exact copies in "
                "another split (for example "
                f"{first} and {second}), so validation partly measures memory: remove the "
                "copies for an honest score."]

    def _validation_notes(self) -> list[str]:
        """Validation asked for, but a class (or the whole set) too small to give any: the
        split keeps at least one sample of each class for training."""
        if self.validation_split <= 0 or self.validation_start is not None:
            return []
        if self.size("validation") == 0:
            each = ("every class has" if self.info.task == "classification"
                    else "the data has")
            return [f"No sample is kept for validation, as {each} a single one (training "
                    "keeps at least one): training reports no validation scores, and "
                    "settings that watch one (early stopping, best checkpoints) do nothing. "
                    "Add samples, or choose a validation folder."]
        if self.info.task != "classification":
            return []
        totals = np.bincount(self.labels, minlength=self.info.num_classes)
        single = [self.info.class_names[i] for i in np.flatnonzero(totals == 1)]
        if not single:
            return []
        return [f"{count(len(single), 'class has', 'classes have')} a single sample "
                f"({', '.join(repr(name[:80]) for name in single[:5])}"
                f"{', …' if len(single) > 5 else ''}), kept for training: validation scores "
                "leave it out."]

    def fingerprint(self) -> str:
        """A hash of the samples (their files' contents, for a scanned folder), labels and
        splits: two runs with the same fingerprint saw the same data."""
        digest = hashlib.blake2b(digest_size=16)
        samples = self.samples
        if self.digests is not None:
            parts: list[bytes] = list(self.digests)
        elif isinstance(samples, ArraySamples):
            parts = [np.ascontiguousarray(samples.x).tobytes()]
        elif isinstance(samples, TableSamples):
            parts = [np.ascontiguousarray(samples.features).tobytes(), *map(str.encode,
                                                                            samples.columns)]
        elif isinstance(samples, TextSamples):
            parts = [text.encode() for text in samples.texts]
        else:
            parts = [f"{p}:{p.stat().st_size}:{p.stat().st_mtime_ns}".encode()
                     for p in samples.paths]
        for part in parts:
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        digest.update(np.ascontiguousarray(self.labels).tobytes())
        for name in sorted(self.splits):
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(self.splits[name], dtype=np.int64).tobytes())
        return digest.hexdigest()

    def class_weights(self) -> dict[int, float]:
        """Weights that make every class count the same in training: n / (k × n_class)."""
        counts = self.class_counts("train")
        present = [n for n in counts if n]
        total = sum(present)
        return {i: total / (len(present) * n) for i, n in enumerate(counts) if n}


MNIST_10K = DatasetInfo(
    name="mnist-10k",
    title="MNIST-10k",
    sample_shape=(28, 28, 1),
    num_classes=10,
    class_names=tuple(str(i) for i in range(10)),
    num_samples=10_000,
    credit="MNIST by Y. LeCun, C. Cortes and C. J. C. Burges, CC BY-SA 3.0.",
)

DATASETS: dict[str, DatasetInfo] = {MNIST_10K.name: MNIST_10K}
"""The bundled datasets, by name."""


def _bundled_info(choice: DatasetChoice) -> DatasetInfo:
    try:
        return DATASETS[choice.name]
    except KeyError:
        raise DataError(
            f"Unknown dataset {choice.name!r}; available: {', '.join(DATASETS)}."
        ) from None


def _builtin_info(choice: DatasetChoice) -> DatasetInfo:
    from studio.core.builtin_datasets import builtin_info

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
    from studio.core.image_folder import class_folders

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
    size = tuple(choice.image_size) if choice.image_size else DEFAULT_IMAGE_SIZE
    return DatasetInfo(
        name=str(path),
        title=path.name or str(path),
        sample_shape=(*size, _channels(choice, 3)),
        num_classes=len(classes),
        class_names=tuple(classes),
        num_samples=None,
    )


def _csv_info(choice: DatasetChoice, read: bool = True) -> DatasetInfo:
    from studio.core.table_data import table_info

    info = table_info(choice, read)
    return replace(info, vocabulary_size=choice.max_tokens) if info.kind == "text" else info


def describe(choice: DatasetChoice, read: bool = True) -> DatasetInfo:
    """What the chosen dataset holds, as the choice reads it; raise DataError if unusable.

    Cheap enough to call on every edit: a folder is only listed, a CSV read once per change.
    With ``read`` False a CSV not read yet is not read here (a window must not wait for it):
    DataPending says so until ``load`` has read it.
    """
    if choice.source == "bundled":
        return _image_info(choice, _bundled_info(choice))
    if choice.source == "keras":
        return _image_info(choice, _builtin_info(choice))
    if choice.source == "folder":
        return _folder_info(choice)
    if choice.source == "csv":
        return _csv_info(choice, read)
    raise DataError(f"Unknown kind of dataset source {choice.source!r}.")


@cache
def _load_npz(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path, allow_pickle=False) as archive:
        x, y = archive["x"], archive["y"]
    if x.ndim == 3:
        x = x[..., np.newaxis]
    x = np.ascontiguousarray(x)
    x.setflags(write=False)
    y = y.astype(np.int32)
    y.setflags(write=False)
    return x, y


def dataset_path(info: DatasetInfo) -> Path:
    """The bundled ``.npz`` file holding the dataset: arrays ``x`` (N × H × W, uint8) and ``y``."""
    return ASSETS_DIR / f"{info.name}.npz"


def load_arrays(choice: DatasetChoice) -> tuple[np.ndarray, np.ndarray]:
    """All samples (uint8, N × H × W × C) and integer labels of a bundled dataset."""
    path = dataset_path(_bundled_info(choice))
    if not path.exists():
        raise DataError(f"The dataset file {path} is missing; reinstall Layer Studio.")
    return _load_npz(path)


def stratified_split(labels: np.ndarray, validation: float, test: float, seed: int,
                     stratify: bool = True) -> dict[str, np.ndarray]:
    """Seeded indices for training, validation and test.

    With ``stratify``, each class is split by the same fractions (at least one validation
    sample per class that has two or more); otherwise the samples are split as one group.
    Each split's indices are sorted.
    """
    rng = np.random.default_rng(seed)
    groups = ([np.flatnonzero(labels == c) for c in np.unique(labels)] if stratify
              else [np.arange(len(labels))])
    parts: dict[str, list[np.ndarray]] = {name: [] for name in SPLITS}
    for group in groups:
        order = rng.permutation(group)
        n = len(order)
        n_val = min(max(1, round(n * validation)), n - 1) if n > 1 and validation > 0 else 0
        n_test = min(round(n * test), n - n_val - 1) if test > 0 else 0
        parts["validation"].append(order[:n_val])
        parts["test"].append(order[n_val:n_val + n_test])
        parts["train"].append(order[n_val + n_test:])
    return {name: np.sort(np.concatenate(chunks)).astype(np.int64)
            for name, chunks in parts.items()}


def _load_in_memory(choice: DatasetChoice, info: DatasetInfo, x: np.ndarray, y: np.ndarray
                    ) -> LoadedData:
    return LoadedData(info, ArraySamples(x), y, _splits(choice, y, info),
                      validation_split=choice.validation_split)


def _load_folder(choice: DatasetChoice, on_progress: Progress, stop: threading.Event
                 ) -> LoadedData:
    from studio.core.image_folder import health_report, scan_folder

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
    stratify = info.task == "classification"
    if validation_start is None:
        return stratified_split(labels, choice.validation_split, choice.test_split,
                                choice.seed, stratify)
    inner = stratified_split(labels[:validation_start], 0.0, choice.test_split, choice.seed,
                             stratify)
    return {"train": inner["train"], "test": inner["test"],
            "validation": np.arange(validation_start, len(labels), dtype=np.int64)}


def resplit(loaded: LoadedData, choice: DatasetChoice) -> LoadedData:
    """``loaded`` split again by the choice's fractions and seed, without reading it again."""
    splits = _splits(choice, loaded.labels, loaded.info, loaded.validation_start)
    again = replace(loaded, splits=splits, validation_split=choice.validation_split)
    if loaded.report is not None and "duplicates" in loaded.report:
        again.report = {**loaded.report, "duplicates": {**loaded.report["duplicates"],
                                                        "across_splits": len(again.leaks())}}
    return again


def _load_csv(choice: DatasetChoice, on_progress: Progress, stop: threading.Event
              ) -> LoadedData:
    from studio.core.table_data import read_table

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
        return _load_in_memory(choice, _image_info(choice, _bundled_info(choice)), x, y)
    if choice.source == "keras":
        from studio.core.builtin_datasets import load_builtin

        x, y = load_builtin(choice.name, on_progress, stop)
        return _load_in_memory(choice, _image_info(choice, _builtin_info(choice)), x, y)
    if choice.source == "folder":
        return _load_folder(choice, on_progress, stop)
    if choice.source == "csv":
        return _load_csv(choice, on_progress, stop)
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
