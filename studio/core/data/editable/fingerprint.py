"""A dataset's fingerprint, the ids of each class's images, and what changed between two:
images added, removed and moved between classes (a relabelling), per class."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from studio.core.base.messages import count
from studio.core.data.editable.content import ImageIds, content_id, is_content_name
from studio.core.data.editable.dataset import EditableDataset
from studio.core.data.types import FileSamples, LoadedData

Fingerprint = dict[str, list[str]]
"""Each class's image ids, sorted (an image stored twice appears twice)."""


def fingerprint(root: Path, ids: ImageIds | None = None) -> Fingerprint:
    """The fingerprint of the image folder ``root``: app-added images cost nothing (their
    names are their ids), other files are hashed, once per (path, size, mtime) in ``ids``."""
    dataset = EditableDataset(root)
    if ids is not None:
        dataset.ids = ids
    out: Fingerprint = {}
    for name in dataset.classes():
        found = []
        for path in dataset.images(name):
            try:
                found.append(dataset.ids.of(path))
            except OSError:
                continue  # gone since the listing: not part of the dataset
        out[name] = sorted(found)
    return out


def loaded_fingerprint(loaded: LoadedData) -> Fingerprint | None:
    """The fingerprint of an image folder as loaded for training (its training folder, not
    a separate validation folder), from the hashes the scan took: nothing is read again.
    None for data that is not a scanned folder of classes."""
    if loaded.digests is None or not isinstance(loaded.samples, FileSamples):
        return None
    names = loaded.info.class_names
    out: Fingerprint = {name: [] for name in names}
    end = loaded.validation_start or len(loaded.samples.paths)
    for path, label, digest in zip(loaded.samples.paths[:end], loaded.labels[:end],
                                   loaded.digests[:end], strict=True):
        name = path.name
        out[names[int(label)]].append(Path(name).stem if is_content_name(name)
                                      else content_id(digest))
    return {name: sorted(found) for name, found in out.items()}


@dataclass
class ClassChanges:
    """How one class changed: images added and removed (new to or gone from the dataset),
    and moved in and out (from or to which class, per class: a count)."""

    added: int = 0
    removed: int = 0
    moved_in: Counter[str] = field(default_factory=Counter)
    moved_out: Counter[str] = field(default_factory=Counter)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.moved_in or self.moved_out)


@dataclass
class DatasetChanges:
    """What changed between two fingerprints: per class (only the classes that changed),
    and the moves as (image id, from class, to class)."""

    classes: dict[str, ClassChanges] = field(default_factory=dict)
    moves: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(c.added for c in self.classes.values())

    @property
    def removed(self) -> int:
        return sum(c.removed for c in self.classes.values())

    def text(self) -> str:
        """A paragraph for a person: totals, then each class's changes."""
        if not self.classes:
            return "The dataset did not change."
        parts = [f"{count(self.added, 'image')} added, {count(self.removed, 'image')} "
                 f"removed, {count(len(self.moves), 'image')} moved between classes."]
        for name, change in sorted(self.classes.items()):
            said = []
            if change.added:
                said.append(f"{change.added:,} added")
            if change.removed:
                said.append(f"{change.removed:,} removed")
            said += [f"{n:,} moved in from {other!r}" for other, n in
                     sorted(change.moved_in.items())]
            said += [f"{n:,} moved out to {other!r}" for other, n in
                     sorted(change.moved_out.items())]
            parts.append(f"{name!r}: {', '.join(said)}.")
        return " ".join(parts)


def dataset_changes(before: Fingerprint, after: Fingerprint) -> DatasetChanges:
    """What changed from ``before`` to ``after``. An image (by id) that left one class and
    arrived in another moved; one that only left was removed, one that only arrived was
    added (a class renamed shows as its images moving)."""
    was, now = _places(before), _places(after)
    changes = DatasetChanges()

    def of(name: str) -> ClassChanges:
        return changes.classes.setdefault(name, ClassChanges())

    for image_id in sorted(was.keys() | now.keys()):
        left = sorted((was.get(image_id, Counter()) - now.get(image_id, Counter())).elements())
        came = sorted((now.get(image_id, Counter()) - was.get(image_id, Counter())).elements())
        for source, target in zip(left, came, strict=False):
            of(source).moved_out[target] += 1
            of(target).moved_in[source] += 1
            changes.moves.append((image_id, source, target))
        for source in left[len(came):]:
            of(source).removed += 1
        for target in came[len(left):]:
            of(target).added += 1
    return changes


def _places(print_: Fingerprint) -> dict[str, Counter[str]]:
    """Each image id's classes (as a count: a copy may sit in two)."""
    places: dict[str, Counter[str]] = {}
    for name, ids in print_.items():
        for image_id in ids:
            places.setdefault(image_id, Counter())[name] += 1
    return places
