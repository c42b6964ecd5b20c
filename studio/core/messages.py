"""Short text for plain-language messages: exceptions from libraries, counted nouns, sizes."""

from __future__ import annotations


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


def format_bytes(count: float) -> str:
    """``1_300_000`` gives ``1.2 MB`` (units of 1024 bytes)."""
    for unit in ("bytes", "KB", "MB", "GB"):
        if abs(count) < 1024 or unit == "GB":
            return f"{count:,.0f} {unit}" if unit == "bytes" else f"{count:.3g} {unit}"
        count /= 1024
    raise AssertionError("unreachable")
