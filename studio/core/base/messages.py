"""Short text for plain-language messages: exceptions from libraries, counted nouns, sizes,
durations, and names that are not among the choices."""

from __future__ import annotations

import errno
import re
import reprlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

T = TypeVar("T")

QUOTE_LIMIT = 80
"""How many characters of a value a message quotes."""


_STREAMED = re.compile(r"Error in user-defined function passed to \S+ transformation with "
                       r"iterator: \S+: (?:[\w.]+: )?(.+)")
"""How TensorFlow words an error raised in Python while a ``tf.data`` map read a sample (a
file gone since the dataset was read): after its nodes' names, the iterator's, and the
Python error's type, the Python error's own line, its traceback on the lines after."""


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first line of ``exc``'s message, at most ``limit`` characters, or its type's name.
    For an error raised in Python while ``tf.data`` streamed samples, that error's line,
    without what TensorFlow wraps it in."""
    text = str(exc).strip()
    streamed = _STREAMED.search(text)
    lines = [streamed.group(1)] if streamed else text.splitlines()
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


def plural(n: int, one: str, many: str | None = None) -> str:
    """``one`` for 1, else ``many`` (``one`` with an ``s`` by default): ``was`` or ``were``."""
    return one if n == 1 else (many or one + "s")


def count(n: int, one: str, many: str | None = None) -> str:
    """``1 image``, ``2,000 images``: a number with its noun in the right form."""
    return f"{n:,} {plural(n, one, many)}"


def unknown_choice(what: str, name: Any, choices: Iterable[str]) -> str:
    """``Unknown export format 'pdf': choose one of keras, onnx.``"""
    return f"Unknown {what} {quoted(name)}: choose one of {', '.join(choices)}."


def look_up(table: Mapping[str, T], name: str, what: str, error: type[Exception]) -> T:
    """``table[name]``; raise ``error`` naming the choices (the table's keys) if it has none."""
    try:
        return table[name]
    except (KeyError, TypeError):  # TypeError: an unhashable name read from a file
        raise error(unknown_choice(what, name, table)) from None


def format_duration(seconds: float,
                    style: Literal["words", "fine", "rough", "clock"] = "words") -> str:
    """A duration for people. ``words``: ``42 s``, ``3 min 05 s``, ``2 h 04 min``; ``fine``
    gives tenths under a minute (``0.42 s``, ``12.3 s``), as ``words`` above; ``rough``
    rounds to minutes from a minute on (``40 s``, ``2 min``, ``1 h 20 min``); ``clock``:
    ``2:05``, ``1:02:03``. A negative duration counts as zero."""
    seconds = max(0.0, seconds)
    if style == "fine" and seconds < 60:
        return f"{seconds:.2g} s" if seconds < 1 else f"{seconds:.1f} s"
    if style == "rough":
        if seconds < 60:
            return f"{max(1, round(seconds))} s"
        hours, minutes = divmod(round(seconds / 60), 60)
        return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if style == "clock":
        return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


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
            # three significant digits, but never as 1e+03 (1,000 to 1,023 of a unit)
            return (f"{count:,.0f} {unit}" if unit == "bytes" or abs(count) >= 999.5
                    else f"{count:.3g} {unit}")
        count /= 1024
    raise AssertionError("unreachable")
