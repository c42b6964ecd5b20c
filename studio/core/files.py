"""Atomic file writing: a crash leaves either the old file or the new one, never half."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def atomic_file(path: Path) -> Iterator[IO[bytes]]:
    """A binary file to write that appears at ``path`` only when the block ends normally:
    written to a temp file in the same folder, synced, then renamed. An exception in the
    block leaves nothing behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("wb", prefix=f".{path.name}.", suffix=".tmp",
                                         dir=path.parent, delete=False)
    try:
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path (same folder, same suffix) for a writer that wants a file name; what
    is written there replaces ``path`` only when the block ends normally, synced first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".partial-{os.getpid()}-{path.name}")
    try:
        yield temp
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as UTF-8 with ``\\n`` line ends, atomically (see atomic_file)."""
    with atomic_file(path) as handle:
        handle.write(text.encode("utf-8"))


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
