"""The lock that says a process is training in a run folder: an OS advisory lock on a file
in the folder (``flock`` on POSIX, ``msvcrt.locking`` on Windows), so two processes can never
train the same run, and the OS releases it when its process ends, even by ``kill -9``."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import TracebackType
from typing import IO

LOCK_FILE = ".training.lock"
WAIT_SECONDS = 1.0
"""How long ``acquire`` retries: a reader checking the lock holds it for a moment."""

if os.name == "nt":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks bytes from the current position
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class RunLock:
    """The training lock of one run folder. Each instance is a holder of its own: a second
    instance (in this process or another) cannot take it while the first holds it. As a
    context manager it releases the lock when the block ends."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK_FILE
        self._file: IO[bytes] | None = None

    def acquire(self) -> bool:
        """Take the lock (retrying for WAIT_SECONDS); False if another holder keeps it.
        Raises OSError if the lock file cannot be opened."""
        if self._file is not None:
            return True
        handle = open(self.path, "a+b")  # noqa: SIM115 - held open as long as the lock
        deadline = time.monotonic() + WAIT_SECONDS
        while not _try_lock(handle.fileno()):
            if time.monotonic() > deadline:
                handle.close()
                return False
            time.sleep(0.02)
        self._file = handle
        return True

    def release(self) -> None:
        """Let the lock go (nothing if it is not held)."""
        if self._file is not None:
            handle, self._file = self._file, None
            _unlock(handle.fileno())
            handle.close()

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.release()


def is_locked(run_dir: Path) -> bool:
    """True while a process (this one included) trains in ``run_dir``: its lock cannot be
    taken. A folder without a lock file (never trained by this version) is not locked."""
    try:
        fd = os.open(Path(run_dir) / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return False
    try:
        if not _try_lock(fd):
            return True
        _unlock(fd)
        return False
    finally:
        os.close(fd)
