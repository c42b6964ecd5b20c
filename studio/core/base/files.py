"""Atomic file writing: a crash leaves either the old file or the new one, never half.

A file is written to a hidden temp file beside it, named ``.NAME.PID-TOKEN.tmp`` (or, for a
writer that needs the file's suffix, ``.partial-PID-TOKEN-NAME``) after the target and the
writing process, and renamed over the target once synced. Temp files are created with mode
0666, so the OS gives them (and the file they become) the user's umask, as any plain ``open``
would. A writer killed mid-save leaves its temp file; the next save of
the same target removes the leftovers whose writer is gone.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

import psutil

STALE_SECONDS = 60.0
"""A leftover temp file untouched for this long whose process is gone is removed. The wait
spares a writer on another host sharing the folder, whose pid means nothing here."""


@contextmanager
def atomic_file(path: Path) -> Iterator[IO[bytes]]:
    """A binary file to write that appears at ``path`` only when the block ends normally:
    written to a temp file in the same folder, synced, then renamed. An exception in the
    block leaves nothing behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    temp, fd = _create_temp(path)
    try:
        # Opened by name around the descriptor, so the handle's ``name`` is the temp file's
        # path, which writers that check what they wrote (downloads) read back.
        with open(temp, "wb", opener=lambda _path, _flags: fd) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path (same folder, same suffix) for a writer that wants a file name; what
    is written there replaces ``path`` only when the block ends normally, synced first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    temp = path.with_name(f".partial-{os.getpid()}-{secrets.token_hex(4)}-{path.name}")
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


def _temp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def _create_temp(path: Path) -> tuple[Path, int]:
    """A new temp file for ``path`` and its open descriptor, mode 0666 less the umask."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        temp = _temp_name(path)
        try:
            return temp, os.open(temp, flags, 0o666)
        except FileExistsError:
            continue


def _temp_pattern(path: Path) -> re.Pattern[str]:
    """Our temp files for ``path``: ``.NAME.PID-TOKEN.tmp`` and ``.partial-PID-TOKEN-NAME``,
    and the names earlier versions used (``.NAME.RANDOM.tmp``, ``.partial-PID-NAME``)."""
    name = re.escape(path.name)
    return re.compile(rf"\.{name}\.(?:(?P<pid>\d+)-[0-9a-f]{{8}}|[a-z0-9_]{{8}})\.tmp"
                      rf"|\.partial-(?P<partial_pid>\d+)-(?:[0-9a-f]{{8}}-)?{name}")


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temp files left beside ``path`` by writers that are gone (killed
    mid-save): those whose process no longer runs and which nobody touched for
    STALE_SECONDS. A temp file a live process is writing is never touched. Returns the paths
    removed."""
    pattern = _temp_pattern(Path(path))
    now = time.time()
    removed = []
    try:
        entries = list(os.scandir(Path(path).parent))
    except OSError:
        return removed
    for entry in entries:
        found = pattern.fullmatch(entry.name)
        if found is None:
            continue
        pid = found["pid"] or found["partial_pid"]
        with suppress(OSError):
            if pid is not None and psutil.pid_exists(int(pid)):
                continue
            if now - entry.stat(follow_symlinks=False).st_mtime < STALE_SECONDS:
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
