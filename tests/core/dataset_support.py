"""Helpers for the editable dataset's tests: tiny images, and a listing of a folder."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from PIL import Image


def image(path: Path, color: int = 0, size: tuple[int, int] = (4, 4),
          fmt: str | None = None) -> Path:
    """Write a tiny RGB image (``color`` makes it differ from others), making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (color % 256, color // 256 % 256, 7)).save(path, fmt)
    return path


def listing(root: Path) -> dict[str, str]:
    """Every folder and file under ``root`` (hidden ones too), files with a hash of their
    bytes: equal listings mean equal trees."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            out[Path(folder, name).relative_to(root).as_posix() + "/"] = ""
        for name in files:
            path = Path(folder, name)
            out[path.relative_to(root).as_posix()] = hashlib.sha256(
                path.read_bytes()).hexdigest()
    return out
