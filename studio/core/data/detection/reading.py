"""What the four label formats share when reading: listing files, reading a label file within
a size cap, and assembling the images and their boxes into a ``DetectionSet`` (checking every
image in a few threads, cleaning every box, counting what is dropped)."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from studio.core.base.events import Progress
from studio.core.base.messages import quoted
from studio.core.data.detection.health import DetectionHealth
from studio.core.data.detection.record import DetectionSet, split_named
from studio.core.data.image_check import ImageHeader, UnusableImage, inspect_image
from studio.core.data.image_folder import PROGRESS_EVERY, WORKERS, is_image_name
from studio.core.data.types import DataError
from studio.core.tasks.detection.boxes import ImageBoxes

LABEL_FILE_LIMIT = 8 * 2**20
"""The largest label file of one image read (8 MB: some 200,000 YOLO lines, far past the cap
of boxes an image keeps)."""
CLASS_LIST = "classes.txt"
Size = tuple[int, int]


class LabelError(Exception):
    """A label cannot be read; the message says why in a few words, for a person."""


@dataclass
class RawBoxes:
    """Boxes as a label file gives them: pixels x_min, y_min, x_max, y_max (float64 N × 4),
    unchecked, and each box's class (an index, or a name for formats that name classes);
    ``ignored`` counts boxes the format means to be skipped (KITTI DontCare, COCO crowds)."""

    boxes: np.ndarray
    classes: list[int] | list[str]
    ignored: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Entry:
    """An image, its split, and its label: ``label`` names it in messages and ``load`` reads
    it, given the image's size (both None for an image without a label file)."""

    image: Path
    split: str | None
    label: str | None
    load: Callable[[Size], RawBoxes] | None


@dataclass
class Found:
    """What a format found in a folder: its images with their labels, the labels that have
    no image (with why), the class names (None: named by the labels, sorted) and notes."""

    entries: list[Entry]
    no_image: list[tuple[str, str]] = field(default_factory=list)
    class_names: list[str] | None = None
    notes: list[str] = field(default_factory=list)
    class_ids: dict[int, int] | None = None
    """The class index of each id the labels use, where ids are not indices (COCO's)."""


def visible_files(folder: Path) -> Iterator[Path]:
    """The visible files under ``folder`` in sorted order, following links to folders but never
    into one twice; a folder that cannot be listed is passed over."""
    seen: set[str] = set()
    for path, folders, files in os.walk(folder, followlinks=True):
        real = os.path.realpath(path)
        if real in seen:
            folders[:] = []
            continue
        seen.add(real)
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(path, name)


def image_files(folder: Path) -> list[Path]:
    """The image files under ``folder``, sorted."""
    return [path for path in visible_files(folder) if is_image_name(path)]


def folder_split(relative: Path) -> str | None:
    """The split named by the first folder of a path relative to a dataset's image folder."""
    return split_named(relative.parts[0]) if len(relative.parts) > 1 else None


def read_text(path: Path, limit: int = LABEL_FILE_LIMIT) -> str:
    """A label file's text (UTF-8, a BOM allowed); raise LabelError if it is larger than
    ``limit``, not a regular file, unreadable or not text."""
    try:
        with open(path, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise LabelError("not a regular file")
            if info.st_size > limit:
                raise LabelError(f"larger than the limit of {limit // 2**20} MB for a label "
                                 "file")
            data = file.read(limit + 1)
    except OSError as exc:
        raise LabelError(f"cannot be read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LabelError("is not text (UTF-8)") from None


def relative_name(root: Path, path: Path) -> str:
    """``path`` relative to the dataset's root, with ``/``, for messages and examples."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def number(text: str, where: str) -> float:
    """``text`` as a number (NaN and inf included: the health report drops those boxes);
    raise LabelError naming ``where`` if it is not one."""
    try:
        return float(text)
    except (TypeError, ValueError):
        raise LabelError(f"{where}: {quoted(text)} is not a number") from None


Loaded = tuple[ImageHeader | str, RawBoxes | str | None]


def _load(entry: Entry) -> Loaded:
    """Check the image and read its label (in a worker thread): the header or why the image is
    unusable, and the boxes, why they cannot be read, or None for no label."""
    try:
        header: ImageHeader | str = inspect_image(entry.image)
    except UnusableImage as exc:
        return exc.detail, None
    if entry.load is None:
        return header, None
    try:
        return header, entry.load(header.size)
    except LabelError as exc:
        return header, str(exc)


def _load_all(entries: list[Entry]) -> list[Loaded]:
    return [_load(entry) for entry in entries]


def _load_batch(pool: ThreadPoolExecutor, entries: list[Entry]) -> list[Loaded]:
    step = -(-len(entries) // WORKERS)
    runs = pool.map(_load_all, [entries[i:i + step] for i in range(0, len(entries), step)])
    return [result for run in runs for result in run]


def _load_entries(entries: list[Entry], on_progress: Progress, stop: threading.Event | None
                  ) -> list[Loaded]:
    """Every entry's image header and label, in order, PROGRESS_EVERY at a time; fewer if
    ``stop`` is set."""
    out: list[Loaded] = []
    total = len(entries)
    with ThreadPoolExecutor(WORKERS, thread_name_prefix="detection-scan") as pool:
        for start in range(0, total, PROGRESS_EVERY):
            on_progress("Checking images and labels", start, total)
            if stop is not None and stop.is_set():
                return out
            out += _load_batch(pool, entries[start:start + PROGRESS_EVERY])
    on_progress("Checking images and labels", total, total)
    return out


def _class_names(found: Found, loaded: list[Loaded]) -> list[str]:
    """The class names the format gave, else the names the labels use, sorted (ids as names
    for labels that give only ids, which adds a note to ``found``)."""
    if found.class_names is not None:
        return found.class_names
    named: set[str] = set()
    top = -1
    for _, raw in loaded:
        if isinstance(raw, RawBoxes):
            named.update(c for c in raw.classes if isinstance(c, str))
            top = max([top, *(c for c in raw.classes if isinstance(c, int))])
    if top >= 0:
        found.notes.append("No class names are given (no classes.txt or data.yaml): the "
                           "classes are named by their ids.")
        return [str(i) for i in range(top + 1)]
    return sorted(named)


def _indices(raw: RawBoxes, index: dict[str, int], class_ids: dict[int, int] | None
             ) -> tuple[np.ndarray, Callable[[int], str]]:
    """The boxes' class indices (-1 for a class not among them) and how to name box i's class
    in a message."""
    if raw.classes and isinstance(raw.classes[0], str):
        ids = [index.get(name, -1) for name in raw.classes]
        return np.asarray(ids, np.int64), lambda i: f"class {quoted(raw.classes[i])}"
    if class_ids is not None:
        ids = [class_ids.get(cls, -1) for cls in raw.classes]
        return np.asarray(ids, np.int64), lambda i: f"category id {quoted(raw.classes[i])}"
    return np.asarray(raw.classes, np.int64), lambda i: f"class id {raw.classes[i]}"


def assemble(root: Path, format_name: str, found: Found, on_progress: Progress | None = None,
             stop: threading.Event | None = None) -> DetectionSet:
    """The dataset of ``found``'s entries: each image checked (size from its header), each
    label read and its boxes cleaned, everything left out or changed counted in its health.

    ``on_progress(what, done, total)`` is called every PROGRESS_EVERY images; once ``stop``
    is set the reading ends with the set marked cancelled. Raise DataError if no image is
    found at all.
    """
    if not found.entries:
        raise DataError(f"{root} holds no images for its labels.")
    loaded = _load_entries(found.entries, on_progress or (lambda *_: None), stop)
    names = _class_names(found, loaded)
    index = {name: i for i, name in enumerate(names)}
    health = DetectionHealth(names, notes=found.notes)
    health.cancelled = len(loaded) < len(found.entries)
    for label, why in found.no_image:
        health.checks["no_image"].add(label, detail=why)
    dataset = DetectionSet(root, format_name, names, [], [], [], [], health)
    for entry, (header, raw) in zip(found.entries, loaded, strict=False):
        _add(dataset, root, entry, header, raw, index, found.class_ids)
    return dataset


def _add(dataset: DetectionSet, root: Path, entry: Entry, header: ImageHeader | str,
         raw: RawBoxes | str | None, index: dict[str, int], class_ids: dict[int, int] | None
         ) -> None:
    """Add one image to the dataset, or count why it is left out."""
    health = dataset.health
    image = relative_name(root, entry.image)
    if isinstance(header, str):
        health.checks["unusable_images"].add(image, detail=header)
        return
    if isinstance(raw, str):
        health.checks["unreadable_labels"].add(entry.label or image, detail=raw)
        return
    labels: ImageBoxes | None = None
    if raw is None:
        health.checks["missing_labels"].add(image)
    else:
        for kind, n in raw.ignored.items():
            health.checks[kind].add(entry.label or image, n)
        ids, unknown = _indices(raw, index, class_ids)
        labels = health.clean(entry.label or image, raw.boxes, ids, header.size, unknown)
        if not len(raw.classes):
            health.checks["empty_labels"].add(entry.label or image)
    health.add_image(labels or ImageBoxes(), header.size)
    dataset.images.append(entry.image)
    dataset.labels.append(labels)
    dataset.sizes.append(header.size)
    dataset.splits.append(entry.split)


def class_list(path: Path) -> list[str] | None:
    """The class names a ``classes.txt`` lists, one a line (None if there is no such file);
    raise DataError if it cannot be read or lists a name twice."""
    if not path.is_file():
        return None
    try:
        names = [line.strip() for line in read_text(path).splitlines() if line.strip()]
    except LabelError as exc:
        raise DataError(f"{path} {exc}.") from None
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise DataError(f"{path} lists the class {quoted(twice[0])} more than once.")
    return names


def paired_folders(root: Path, images: str, labels: str) -> list[tuple[Path, Path, str | None]]:
    """The (image folder, label folder, split) pairs of a layout with an ``images`` folder and
    a ``labels`` folder side by side: in ``root`` itself (splits, if any, in subfolders of
    both), or in split folders of ``root`` (``train/images``, ``val/labels``)."""
    pairs: list[tuple[Path, Path, str | None]] = []
    if (root / images).is_dir() and (root / labels).is_dir():
        pairs.append((root / images, root / labels, None))
    with os.scandir(root) as it:
        for entry in sorted(it, key=lambda e: e.name):
            split = split_named(entry.name)
            folder = Path(entry.path)
            if split and (folder / images).is_dir() and (folder / labels).is_dir():
                pairs.append((folder / images, folder / labels, split))
    return pairs


LoadFor = Callable[[Path], Callable[[Size], RawBoxes]]
"""Given a label file, the function that reads its boxes for an image of a size."""


def paired_entries(root: Path, pairs: list[tuple[Path, Path, str | None]], suffix: str,
                   load_for: LoadFor) -> Found:
    """The images of each pair with the label file of the same relative path and ``suffix``
    in its label folder; label files without an image are counted."""
    found = Found([])
    for image_dir, label_dir, split in pairs:
        stems = set()
        for image in image_files(image_dir):
            relative = image.relative_to(image_dir)
            stems.add(relative.with_suffix(""))
            label = (label_dir / relative).with_suffix(suffix)
            found.entries.append(labelled(root, image, split or folder_split(relative), label,
                                          load_for))
        for label in visible_files(label_dir):
            relative = label.relative_to(label_dir)
            if (label.suffix == suffix and label.name != CLASS_LIST
                    and relative.with_suffix("") not in stems):
                found.no_image.append((relative_name(root, label),
                                       f"no image {relative.with_suffix('').as_posix()}.* in "
                                       f"{relative_name(root, image_dir)}"))
    return found


def labelled(root: Path, image: Path, split: str | None, label: Path, load_for: LoadFor
             ) -> Entry:
    """The entry of ``image`` labelled by the file ``label``: a background image if that file
    does not exist."""
    if not label.is_file():
        return Entry(image, split, None, None)
    return Entry(image, split, relative_name(root, label), load_for(label))


def first_label_fields(folders: list[Path], suffix: str = ".txt", files: int = 20
                       ) -> list[str] | None:
    """The fields of the first non-empty line among the first ``files`` label files in
    ``folders`` (to tell formats that share a layout apart), or None if there is none."""
    seen = 0
    for folder in folders:
        for path in visible_files(folder):
            if path.suffix != suffix or path.name == CLASS_LIST:
                continue
            seen += 1
            try:
                lines = read_text(path).split("\n", 50)
            except LabelError:
                lines = []
            for line in lines[:50]:
                if line.strip():
                    return line.split()
            if seen >= files:
                return None
    return None
