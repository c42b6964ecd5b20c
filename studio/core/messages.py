"""Turning exceptions from libraries into short text for plain-language messages."""

from __future__ import annotations


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first line of ``exc``'s message, at most ``limit`` characters, or its type's name."""
    lines = str(exc).strip().splitlines()
    if not lines:
        return type(exc).__name__
    line = lines[0].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"
