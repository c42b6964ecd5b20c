"""Image-folder datasets: one subfolder per class, scanned for problems before training."""

from __future__ import annotations

import os
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.image_check import UnusableImage, inspect_image

IMAGE_EXTENSIONS = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff"})
PROGRESS_EVERY = 200
IMBALANCE_RATIO = 5
EXAMPLES = 10
Labelled = tuple[Path, int]


def is_image_name(path: Path) -> bool:
    """Whether the file's extension is one of the image extensions, in any case."""
    return path.suffix.lower() in IMAGE_EXTENSIONS


@dataclass
class FolderScan:
    """What a scan of an image folder found; paths are as found under ``root``."""

    root: Path
    classes: list[str] = field(default_factory=list)
    images: list[Labelled] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    non_image_files: list[Path] = field(default_factory=list)
    loose_images: int = 0
    sizes: Counter[tuple[int, int]] = field(default_factory=Counter)
    modes: Counter[str] = field(default_factory=Counter)
    duplicates: list[list[Path]] = field(default_factory=list)
    cancelled: bool = False

    @property
    def non_images(self) -> int:
        """How many files inside class folders do not have an image extension."""
        return len(self.non_image_files)

    @property
    def class_counts(self) -> list[int]:
        """Valid images per class, in the order of ``classes``."""
        counts = Counter(index for _, index in self.images)
        return [counts[i] for i in range(len(self.classes))]

    def cross_class_duplicates(self) -> int:
        """How many duplicate groups hold files from more than one class."""
        label = dict(self.images)
        return sum(len({label[p] for p in group}) > 1 for group in self.duplicates)

    def problems(self) -> list[str]:
        """Plain-language warnings about the folder, most serious first."""
        out: list[str] = []
        if self.cancelled:
            out.append("The scan was cancelled: these numbers cover only part of the folder.")
        if not self.classes:
            out.append(f"{self.root} holds no class folders: put each class's images in its "
                       "own subfolder.")
        elif len(self.classes) == 1:
            out.append(f"{self.root} has one class folder ({self.classes[0]!r}); a classifier "
                       "needs at least two classes.")
        counts = self.class_counts
        out += [f"The class folder {name!r} holds no images."
                for name, n in zip(self.classes, counts, strict=True) if n == 0]
        out += self._imbalance(counts)
        if self.loose_images:
            out.append(f"{self.loose_images} images sit directly in {self.root}, outside any "
                       "class folder; they are ignored.")
        if self.skipped:
            reasons = Counter(reason for _, reason in self.skipped)
            parts = ", ".join(f"{n} {reason}" for reason, n in reasons.most_common())
            out.append(f"{len(self.skipped)} files were skipped: {parts}.")
        if self.duplicates:
            copies = sum(len(g) - 1 for g in self.duplicates)
            text = f"{len(self.duplicates)} images have exact copies ({copies} extra files)"
            cross = self.cross_class_duplicates()
            if cross:
                text += (f"; {cross} of them appear in more than one class, so the same image "
                         "carries different labels")
            out.append(text + ".")
        return out

    def _imbalance(self, counts: list[int]) -> list[str]:
        present = [(n, name) for name, n in zip(self.classes, counts, strict=True) if n]
        if len(present) < 2:
            return []
        (small, small_name), (big, big_name) = min(present), max(present)
        if big < IMBALANCE_RATIO * small:
            return []
        return [f"The classes are strongly imbalanced: {big_name!r} has {big} images, "
                f"{small_name!r} only {small}."]


def _visible(entries: Iterator[os.DirEntry]) -> list[os.DirEntry]:
    return sorted((e for e in entries if not e.name.startswith(".")), key=lambda e: e.name)


def _walk(folder: Path, seen: set[str], stop: threading.Event | None) -> Iterator[Path]:
    """Files under ``folder``, following links to folders but never into one seen before."""
    real = os.path.realpath(folder)
    if real in seen or (stop is not None and stop.is_set()):
        return
    seen.add(real)
    try:
        with os.scandir(folder) as it:
            entries = _visible(it)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        if entry.is_dir():
            yield from _walk(path, seen, stop)
        else:
            yield path


def _list_files(root: Path, scan: FolderScan, stop: threading.Event | None) -> list[Labelled]:
    """Find the classes and the candidate images of each; record the other files."""
    with os.scandir(root) as it:
        entries = _visible(it)
    root_real = os.path.realpath(root)
    found: list[Labelled] = []
    for entry in entries:
        if not entry.is_dir():
            scan.loose_images += is_image_name(Path(entry.name))
            continue
        index = len(scan.classes)
        scan.classes.append(entry.name)
        for path in _walk(Path(entry.path), {root_real}, stop):
            if is_image_name(path):
                found.append((path, index))
            else:
                scan.non_image_files.append(path)
    return found


def _group_duplicates(digests: dict[str, list[Path]]) -> list[list[Path]]:
    return [paths for paths in digests.values() if len(paths) > 1]


def scan_folder(root: Path, on_progress: Callable[[int, int], None] | None = None,
                stop: threading.Event | None = None) -> FolderScan:
    """Scan an image folder (one subfolder per class) reading only each image's header.

    ``on_progress(done, total)`` is called before the first file, every PROGRESS_EVERY files
    and at the end; once ``stop`` is set the scan returns what it has, marked cancelled.
    Raises OSError if ``root`` cannot be listed.
    """
    scan = FolderScan(Path(root))
    files = _list_files(scan.root, scan, stop)
    digests: dict[str, list[Path]] = defaultdict(list)
    total = len(files)
    for done, (path, index) in enumerate(files):
        if done % PROGRESS_EVERY == 0 and on_progress is not None:
            on_progress(done, total)
        if stop is not None and stop.is_set():
            break
        try:
            header = inspect_image(path)
        except UnusableImage as exc:
            scan.skipped.append((path, exc.reason))
            continue
        scan.images.append((path, index))
        scan.sizes[header.size] += 1
        scan.modes[header.mode] += 1
        digests[header.digest].append(path)
    else:
        if on_progress is not None:
            on_progress(total, total)
    scan.cancelled = stop is not None and stop.is_set()
    scan.duplicates = _group_duplicates(digests)
    return scan


def _relative(scan: FolderScan, path: Path) -> str:
    try:
        return path.relative_to(scan.root).as_posix()
    except ValueError:
        return str(path)


def health_report(scan: FolderScan) -> dict[str, Any]:
    """A JSON-serialisable summary of a scan: counts, skipped files, sizes, modes, problems."""
    skipped: dict[str, dict[str, Any]] = {}
    for path, reason in scan.skipped:
        entry = skipped.setdefault(reason, {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < EXAMPLES:
            entry["examples"].append(_relative(scan, path))
    return {
        "root": str(scan.root),
        "cancelled": scan.cancelled,
        "classes": [{"name": name, "images": n}
                    for name, n in zip(scan.classes, scan.class_counts, strict=True)],
        "total_images": len(scan.images),
        "total_skipped": len(scan.skipped),
        "non_image_files": scan.non_images,
        "loose_images": scan.loose_images,
        "skipped": skipped,
        "modes": dict(scan.modes.most_common()),
        "sizes": [{"width": w, "height": h, "count": n}
                  for (w, h), n in scan.sizes.most_common(EXAMPLES)],
        "duplicates": {
            "groups": len(scan.duplicates),
            "extra_copies": sum(len(g) - 1 for g in scan.duplicates),
            "across_classes": scan.cross_class_duplicates(),
            "examples": [[_relative(scan, p) for p in g] for g in scan.duplicates[:EXAMPLES]],
        },
        "problems": scan.problems(),
    }
