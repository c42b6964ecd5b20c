"""Helpers for the editable dataset's tests: tiny images, and a listing of a folder."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
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


@contextmanager
def read_only(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``folder`` made read-only (mode 555). Modes do not stop root, so for root the OS's
    access check answers for ``folder`` as it would for anyone else: no writing."""
    os.chmod(folder, 0o555)
    if os.geteuid() == 0:
        real = os.access

        def access(path, mode, *args, **kwargs) -> bool:
            if Path(path) == folder and mode & os.W_OK:
                return False
            return real(path, mode, *args, **kwargs)

        monkeypatch.setattr(os, "access", access)
    try:
        yield
    finally:
        os.chmod(folder, 0o755)
