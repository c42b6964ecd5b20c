"""What the four label formats share when writing a dataset out: the whole folder appears at
once, or not at all."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from PIL import Image

from studio.core.data.detection.record import SPLIT_FOLDERS
from studio.core.data.types import DataError


@contextmanager
def writing_folder(root: Path) -> Iterator[Path]:
    """A temporary folder beside ``root`` to write a dataset into, renamed to ``root`` when the
    block ends normally and removed if it fails: nothing is left half-written. ``root`` must
    not exist yet, or be empty. Files are not synced one by one: the set is derived data, made
    again if a crash loses it, and syncing thousands of small files would take long."""
    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise DataError(f"{root} already exists and is not an empty folder: choose a new "
                        "folder to write the dataset to.")
    temp = root.with_name(f".{root.name}.partial-{os.getpid()}-{secrets.token_hex(4)}")
    temp.mkdir(parents=True)
    try:
        yield temp
        if root.exists():
            root.rmdir()
        os.replace(temp, root)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def split_folder(split: str | None) -> str:
    """The folder a split's files are written to ('' for no split)."""
    return SPLIT_FOLDERS[split] if split else ""


def save_image(path: Path, pixels: np.ndarray) -> None:
    """Write ``pixels`` (uint8, H × W or H × W × C) as the image format ``path``'s suffix names,
    making its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(np.asarray(pixels, np.uint8).squeeze(-1)
                            if np.ndim(pixels) == 3 and np.shape(pixels)[-1] == 1 else pixels)
    # PNG at zlib level 1: noisy images shrink little more at the default 6, written 3 times
    # slower; JPEG at quality 95, where its artefacts are too faint to move an object's edge.
    jpeg = path.suffix.lower() in (".jpg", ".jpeg")
    image.save(path, **({"quality": 95} if jpeg else {"compress_level": 1}))
