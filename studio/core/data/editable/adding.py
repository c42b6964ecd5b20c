"""Adding images to a class: files and folders are copied in (never moved), each copy
checked to decode, named by its content id (so a copy of an image already there, or earlier
in the same batch, is caught at once), optionally shrunk to a largest side, and written
atomically; a file that cannot be used is refused with its reason while the others go on."""

from __future__ import annotations

import errno
import io
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from studio.core.base.events import Progress
from studio.core.base.files import atomic_file
from studio.core.base.messages import count
from studio.core.data.editable.content import SUFFIXES, content_id
from studio.core.data.editable.dataset import EditableDataset
from studio.core.data.image_check import (
    CORRUPT,
    GONE,
    NOT_IMAGE,
    UNREADABLE,
    ImageHeader,
    UnusableImage,
    inspect_image,
)
from studio.core.data.image_folder import is_image_name
from studio.core.data.types import DataError

PROGRESS_EVERY = 25
"""Files between progress reports: each is a synced write, so fewer than a scan's."""
JPEG_QUALITY = 95
_PNG_MODES = frozenset({"1", "L", "LA", "I", "I;16", "P", "RGB", "RGBA"})


@dataclass
class AddReport:
    """What an add did. ``added``: the new images' paths in the dataset; ``duplicates``:
    (source, where the same image already is: a path in the dataset or an earlier source);
    ``refused``: (source, why); ``stopped``: the stop event ended it early; ``error``: the
    one-line reason writing stopped (a full disk), if it did."""

    class_name: str
    total: int = 0
    added: list[str] = field(default_factory=list)
    duplicates: list[tuple[Path, str]] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)
    stopped: bool = False
    error: str | None = None

    def summary(self) -> str:
        """The add in a sentence or two, for a person."""
        text = f"{count(len(self.added), 'image')} added to {self.class_name!r}"
        if self.duplicates:
            text += f"; {count(len(self.duplicates), 'copy', 'copies')} of images already " \
                    "there skipped"
        if self.refused:
            text += f"; {count(len(self.refused), 'file')} refused (not usable images)"
        text += "."
        if self.error:
            text += " " + self.error
        elif self.stopped:
            seen = len(self.added) + len(self.duplicates) + len(self.refused)
            text += (f" Stopped after {seen:,} of {self.total:,} files: the images added are "
                     "kept, the rest were not added.")
        return text


def add_images(dataset: EditableDataset, class_name: str, sources: list[Path],
               on_progress: Progress | None = None, stop: threading.Event | None = None,
               *, max_side: int | None = None, keep_originals: bool = False) -> AddReport:
    """Copy the image files ``sources`` (files, and folders searched for image files) into
    the class ``class_name``.

    An image larger than ``max_side`` on its longer side is shrunk to it (PNG stays PNG,
    JPEG is saved at quality JPEG_QUALITY, others become PNG), its original kept in
    ``.originals`` if ``keep_originals``. ``on_progress(what, done, total)`` is called every
    PROGRESS_EVERY files and at the end; ``stop`` is checked before each file. Raises
    DataError, before any change, for an unknown class or a read-only dataset. Undo an add
    with ``delete_images(dataset, report.added)``.
    """
    folder = dataset.class_dir(class_name)
    if max_side is not None and max_side < 1:
        raise DataError(f"The largest side must be at least 1 pixel, not {max_side}.")
    dataset.check_writable()
    report = AddReport(class_name)
    files = _files(sources, report)
    report.total = len(files) + len(report.refused)
    index = _index(dataset)
    progress = on_progress or (lambda what, done, total: None)
    what = f"Adding images to {class_name!r}"
    for done, path in enumerate(files):
        if done % PROGRESS_EVERY == 0:
            progress(what, done, len(files))
        if stop is not None and stop.is_set():
            report.stopped = True
            break
        try:
            header = inspect_image(path)
            data = _read(path)
        except UnusableImage as exc:
            report.refused.append((path, exc.detail))
            continue
        image_id = content_id(header.digest)
        if image_id in index:
            report.duplicates.append((path, index[image_id]))
            continue
        try:
            name = _store(dataset, folder, image_id, data, header, max_side, keep_originals)
        except UnusableImage as exc:
            report.refused.append((path, exc.detail))
            continue
        except OSError as exc:
            report.error = _stopped_writing(folder, exc, len(report.added))
            break
        report.added.append(f"{class_name}/{name}")
        index[image_id] = str(path)
    else:
        progress(what, len(files), len(files))
    return report


def _files(sources: list[Path], report: AddReport) -> list[Path]:
    """The files to add: each file given, and the image files in each folder given (hidden
    ones skipped); other files in those folders, and missing sources, go to refused."""
    found: list[Path] = []
    for source in map(Path, sources):
        if not source.is_dir():
            if os.path.lexists(source):
                found.append(source)
            else:
                report.refused.append((source, GONE))
            continue
        for parent, dirs, files in os.walk(source):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(f for f in files if not f.startswith(".")):
                path = Path(parent, name)
                if is_image_name(path):
                    found.append(path)
                else:
                    report.refused.append((path, NOT_IMAGE))
    return found


def _index(dataset: EditableDataset) -> dict[str, str]:
    """Every image in the dataset by its id, built once per add (content names cost
    nothing; other files are hashed once and remembered by ``dataset.ids``)."""
    index: dict[str, str] = {}
    for name in dataset.classes():
        for path in dataset.images(name):
            try:
                index.setdefault(dataset.ids.of(path), dataset.relative(path))
            except OSError:
                continue  # gone or unreadable: it cannot be a copy's original
    return index


def _read(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        raise UnusableImage(UNREADABLE) from None


def _store(dataset: EditableDataset, folder: Path, image_id: str, data: bytes,
           header: ImageHeader, max_side: int | None, keep_originals: bool) -> str:
    """Write one image (shrunk if asked) into ``folder``, and its original if kept; returns
    its file name. Raises OSError with nothing of it left on disk."""
    original = image_id + SUFFIXES[header.format]
    if max_side is None or max(header.size) <= max_side:
        _write(folder / original, data)
        return original
    stored, suffix = _shrunk(data, header, max_side)
    kept = dataset.originals / original if keep_originals else None
    if kept is not None:
        _write(kept, data)
    try:
        _write(folder / (image_id + suffix), stored)
    except OSError:
        if kept is not None:
            kept.unlink(missing_ok=True)
        raise
    return image_id + suffix


def _write(path: Path, data: bytes) -> None:
    with atomic_file(path) as handle:
        handle.write(data)


def _shrunk(data: bytes, header: ImageHeader, max_side: int) -> tuple[bytes, str]:
    """The image's first frame with its longer side made ``max_side``, encoded, and the
    suffix for its format."""
    width, height = header.size
    scale = max_side / max(width, height)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            if image.mode in ("P", "PA", "1"):
                image = image.convert("RGBA" if image.has_transparency_data else "RGB")
            image = image.resize(size, Image.Resampling.LANCZOS)
    except Exception:  # Pillow's plugins raise many kinds on bad data
        raise UnusableImage(CORRUPT) from None
    out = io.BytesIO()
    if header.format == "JPEG":
        image.save(out, "JPEG", quality=JPEG_QUALITY)
        return out.getvalue(), ".jpg"
    if image.mode not in _PNG_MODES:
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    image.save(out, "PNG")
    return out.getvalue(), ".png"


def _stopped_writing(folder: Path, exc: OSError, added: int) -> str:
    """Why an add stopped writing, in one line."""
    kept = f"the {count(added, 'image')} added before it are kept, nothing is half-written"
    if exc.errno == errno.ENOSPC:
        return f"Stopped: the disk holding {folder} is full; {kept}. Free some space and " \
               "add the rest."
    return f"Stopped: {folder} could not be written to ({exc.strerror or exc}); {kept}."
