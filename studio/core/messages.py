"""Short text for plain-language messages: exceptions from libraries, counted nouns."""

from __future__ import annotations

import errno
from pathlib import Path


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first line of ``exc``'s message, at most ``limit`` characters, or its type's name."""
    lines = str(exc).strip().splitlines()
    if not lines:
        return type(exc).__name__
    line = lines[0].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def count(n: int, one: str, many: str | None = None) -> str:
    """``1 image``, ``2,000 images``: a number with its noun in the right form."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def unwritable(folder: Path, exc: OSError) -> str:
    """Why ``folder`` cannot be written to (``exc`` says), in plain words: a full disk, a
    read-only folder, or the system's reason."""
    if exc.errno == errno.ENOSPC:
        return (f"There is not enough free space in {folder}: free some space or choose "
                f"another folder. Nothing was written.")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (f"{folder} is read-only (you may not write to it): choose another folder. "
                f"Nothing was written.")
    return f"{folder} cannot be written to ({exc.strerror or exc}). Nothing was written."
