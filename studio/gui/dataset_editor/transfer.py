"""What a drag, a drop or the clipboard carries for the dataset editor: images of the dataset
being moved (its own MIME type, with their paths inside it), or local files and folders to
add, or a picture (pasted) to be saved as a PNG file first."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image
from PySide6.QtCore import QMimeData, QUrl
from PySide6.QtGui import QImage

IMAGES_MIME = "application/x-layer-studio-dataset-images"
"""A drag of images of an editable dataset: JSON ``{"root": …, "paths": [...]}``."""


def images_mime(root: Path, paths: list[str]) -> QMimeData:
    """A drag of the dataset images ``paths`` (relative to ``root``); it carries their file
    URLs too, so other applications take them as files."""
    mime = QMimeData()
    mime.setData(IMAGES_MIME, json.dumps({"root": str(root), "paths": paths}).encode())
    mime.setUrls([QUrl.fromLocalFile(str(root / path)) for path in paths])
    return mime


def dragged_images(mime: QMimeData, root: Path) -> list[str] | None:
    """The images of the dataset at ``root`` a drag moves; None if it moves none of them."""
    if not mime.hasFormat(IMAGES_MIME):
        return None
    try:
        data = json.loads(bytes(mime.data(IMAGES_MIME).data()).decode())
    except ValueError:
        return None
    if data.get("root") != str(root) or not data.get("paths"):
        return None
    return [str(path) for path in data["paths"]]


def local_files(mime: QMimeData) -> list[Path]:
    """The local files and folders a drop or the clipboard carries (URLs of other kinds
    are left out)."""
    if not mime.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]


def pasted_image(mime: QMimeData) -> QImage | None:
    """The picture the clipboard holds (copied from a browser or an image editor), if any."""
    if not mime.hasImage():
        return None
    image = QImage(mime.imageData())
    return None if image.isNull() else image


def save_png(image: QImage, folder: Path, name: str) -> Path:
    """Save ``image`` as ``folder/name.png``; OSError if it cannot be written."""
    path = folder / f"{name}.png"
    if not image.save(str(path), "PNG"):
        raise OSError(f"{path} could not be written")
    return path


def save_frames(frames: list[np.ndarray], folder: Path) -> list[Path]:
    """Save camera frames (uint8 H × W × C, C 1, 3 or 4) as PNG files in ``folder``, in
    order; runs on a worker thread."""
    paths = []
    for index, frame in enumerate(frames):
        array = np.ascontiguousarray(frame, np.uint8)
        path = folder / f"frame-{index:05d}.png"
        Image.fromarray(array[..., 0] if array.ndim == 3 and array.shape[2] == 1
                        else array).save(path)
        paths.append(path)
    return paths
