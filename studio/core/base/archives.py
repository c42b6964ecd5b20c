"""Reading zip archives that come from users (``.keras`` model files) without inflating bombs.

A member may claim any size in its header and inflate to far more than it stores: a 2 MB file
can hold a 2 GB ``config.json``. Members are refused when they inflate more than ``MAX_RATIO``
times their stored size, and nothing larger than ``MAX_MEMBER_BYTES`` is read.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from studio.core.base.messages import format_bytes

MAX_MEMBER_BYTES = 64 * 2**20
"""The most that is read of one member (or of a model config stored elsewhere)."""
MAX_RATIO = 1000
"""How many times its stored size a member may inflate to; deflate reaches about 1032 only on
data that is all the same byte, which no model file holds."""


class ArchiveRefused(ValueError):
    """An archive member is too large or inflates too much; the message names file and limit."""


def check_size(path: Path, what: str, size: int) -> None:
    """Raise ArchiveRefused if ``what`` of ``path``, ``size`` bytes, is over MAX_MEMBER_BYTES."""
    if size > MAX_MEMBER_BYTES:
        raise ArchiveRefused(f"{path.name}: its {what} is larger than "
                             f"{format_bytes(MAX_MEMBER_BYTES)}, the most Layer Studio reads.")


def check_archive(archive: zipfile.ZipFile, path: Path) -> None:
    """Raise ArchiveRefused if a member of ``archive`` (opened from ``path``) inflates more
    than MAX_RATIO times its stored size."""
    for info in archive.infolist():
        if info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise ArchiveRefused(
                f"{path.name}: its {info.filename[:80]} inflates from "
                f"{format_bytes(info.compress_size)} to {format_bytes(info.file_size)}, more than "
                f"{MAX_RATIO} times (a decompression bomb).")


def check_member(archive: zipfile.ZipFile, path: Path, name: str) -> zipfile.ZipInfo:
    """The entry of member ``name`` after checking the archive and the size the member claims;
    KeyError if there is none. Reading it with ``zipfile`` stops at that size."""
    check_archive(archive, path)
    info = archive.getinfo(name)
    check_size(path, name, info.file_size)
    return info


def read_member(path: Path, name: str) -> bytes:
    """The bytes of member ``name`` of the zip archive at ``path``, at most MAX_MEMBER_BYTES;
    ArchiveRefused if larger or a bomb, KeyError if missing, BadZipFile if not an archive."""
    with zipfile.ZipFile(path) as archive:
        info = check_member(archive, path, name)
        with archive.open(info) as member:
            data = member.read(MAX_MEMBER_BYTES + 1)  # whatever the header claims
    check_size(path, name, len(data))
    return data
