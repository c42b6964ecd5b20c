"""Content-hash names: an image the app adds is named after a hash of its bytes, so a copy
is known by its name alone, and an image keeps its identity when it moves.

The hash is the one ``inspect_image`` computes while checking a file (BLAKE2b, 16 bytes),
so checking an image also names it; the name holds its first ID_LENGTH hex digits.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from studio.core.data.image_folder import is_image_name

ID_LENGTH = 16
SUFFIXES = {"JPEG": ".jpg", "PNG": ".png", "GIF": ".gif", "BMP": ".bmp", "WEBP": ".webp",
            "TIFF": ".tif"}
"""The suffix a copied image gets, by the format its bytes are in."""
_ID = re.compile(f"[0-9a-f]{{{ID_LENGTH}}}")
_CHUNK = 2**20


def content_id(digest: bytes) -> str:
    """The id an image with this hash of its bytes has (``ImageHeader.digest``)."""
    return digest.hex()[:ID_LENGTH]


def is_content_name(name: str) -> bool:
    """Whether a file name is a content id with an image suffix (an image the app added)."""
    return _ID.fullmatch(os.path.splitext(name)[0]) is not None and is_image_name(Path(name))


def file_digest(path: Path) -> bytes:
    """The hash of a file's bytes, the same as ``inspect_image`` gives; raises OSError."""
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.digest()


class ImageIds:
    """Each image file's id: the stem of a content name, else the hash of its bytes, which
    is remembered by (path, size, mtime_ns) so a file unchanged is read once."""

    def __init__(self) -> None:
        self._hashed: dict[tuple[str, int, int], str] = {}

    def of(self, path: Path) -> str:
        """The id of the image at ``path``; raises OSError if it cannot be read."""
        name = os.path.basename(path)
        if is_content_name(name):
            return os.path.splitext(name)[0]
        info = os.stat(path)
        key = (os.fspath(path), info.st_size, info.st_mtime_ns)
        if key not in self._hashed:
            self._hashed[key] = content_id(file_digest(path))
        return self._hashed[key]
