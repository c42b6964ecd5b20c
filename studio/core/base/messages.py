"""Short text for plain-language messages: exceptions from libraries, counted nouns, sizes."""

from __future__ import annotations

import errno
import reprlib
from pathlib import Path
from typing import Any

QUOTE_LIMIT = 80
"""How many characters of a value a message quotes."""


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first line of ``exc``'s message, at most ``limit`` characters, or its type's name."""
    lines = str(exc).strip().splitlines()
    if not lines:
        return type(exc).__name__
    return shortened(lines[0].strip(), limit)


def shortened(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text``, cut to ``limit`` characters with an ellipsis if it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``value`` as Python writes it (``'text'``, ``[1, 2]``), cut to ``limit`` characters;
    a huge or deeply nested value is abbreviated without writing it out whole first."""
    short = reprlib.Repr()
    short.maxstring = short.maxlong = short.maxother = limit
    return shortened(short.repr(value), limit)


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


def format_bytes(count: float) -> str:
    """``1_300_000`` gives ``1.2 MB`` (units of 1024 bytes)."""
    for unit in ("bytes", "KB", "MB", "GB"):
        if abs(count) < 1024 or unit == "GB":
            return f"{count:,.0f} {unit}" if unit == "bytes" else f"{count:.3g} {unit}"
        count /= 1024
    raise AssertionError("unreachable")
