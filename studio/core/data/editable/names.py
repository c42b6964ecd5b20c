"""Class names that work as folder names on every system: nothing illegal or reserved, and
no two that differ only in case (Windows and macOS would see one folder)."""

from __future__ import annotations

from collections.abc import Iterable

from studio.core.base.messages import quoted
from studio.core.data.types import DataError

MAX_LENGTH = 100
ILLEGAL = '/\\:*?"<>|'
RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                      *(f"LPT{i}" for i in range(1, 10))})
"""Names Windows keeps for devices, with any extension (``nul.txt`` too)."""


def check_class_name(name: str, existing: Iterable[str] = ()) -> str:
    """``name`` stripped of surrounding spaces, if it can name a new class beside
    ``existing``; else DataError saying why, in one line."""
    cleaned = name.strip()
    if not cleaned:
        raise DataError("A class name cannot be empty.")
    if len(cleaned) > MAX_LENGTH:
        raise DataError(f"The class name {quoted(cleaned)} is too long: at most {MAX_LENGTH} "
                        "characters.")
    bad = sorted({c for c in cleaned if c in ILLEGAL or ord(c) < 32})
    if bad:
        shown = " ".join(c if ord(c) >= 32 else repr(c) for c in bad)
        raise DataError(f"The class name {quoted(cleaned)} cannot hold {shown}: folder names "
                        "on Windows cannot.")
    if cleaned.startswith("."):
        raise DataError(f"The class name {quoted(cleaned)} cannot start with a dot: such "
                        "folders are hidden and ignored.")
    if cleaned.split(".")[0].rstrip().upper() in RESERVED:
        raise DataError(f"The class name {quoted(cleaned)} is reserved by Windows for a "
                        "device; choose another.")
    if cleaned.endswith((".", " ")):
        raise DataError(f"The class name {quoted(cleaned)} cannot end with a dot: Windows "
                        "drops it.")
    key = cleaned.casefold()
    for other in existing:
        if other.casefold() == key:
            raise DataError(f"A class named {quoted(other)} exists already; class names must "
                            "differ in more than case, so the dataset works on Windows and "
                            "macOS too.")
    return cleaned
