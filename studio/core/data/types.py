"""What a dataset is, whatever its source: its description (``DatasetInfo``), its samples
(arrays, files, table rows or texts), its labels split for training (``LoadedData``), and the
error a dataset that cannot be used raises (``DataError``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.messages import count
from studio.core.tasks.registry import DEFAULT_TASK, task_for

DEFAULT_IMAGE_SIZE = (64, 64)
"""The size folder images are read at when the project names none (height, width)."""
SPLITS = ("train", "validation", "test")


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
    task: str = DEFAULT_TASK
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
    labels: Any
    """An array (classes or numbers), or a task's record that indexes like one (the boxes of
    ``BoxLabels``)."""
    splits: dict[str, np.ndarray]
    notes: list[str] = field(default_factory=list)
    report: dict[str, Any] | None = None
    digests: list[bytes] | None = None
    """A hash of each sample's file, to find copies that fall in different splits."""
    validation_start: int | None = None
    """Samples from this index on come from a separate validation folder."""
    validation_split: float = 0.0
    """The fraction of each class the choice asked to keep for validation."""
    named_splits: list[str | None] | None = None
    """The split each sample's layout puts it in (``train``, ``validation``, ``test`` or
    None), for a dataset whose layout names them (a detection dataset's folders)."""

    def size(self, split: str) -> int:
        """How many samples a split holds."""
        return len(self.splits[split])

    def class_counts(self, split: str) -> list[int]:
        """Samples per class in a split (boxes per class for detection, empty for
        regression)."""
        return task_for(self.info.task).class_counts(self.labels[self.splits[split]],
                                                     self.info.num_classes)

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
            each = ("every class has" if task_for(self.info.task).has_classes
                    else "the data has")
            return [f"No sample is kept for validation, as {each} a single one (training "
                    "keeps at least one): training reports no validation scores, and "
                    "settings that watch one (early stopping, best checkpoints) do nothing. "
                    "Add samples, or choose a validation folder."]
        if not task_for(self.info.task).has_classes:
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
        digest.update(self.labels.tobytes())  # an array, or a task's record of labels
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
