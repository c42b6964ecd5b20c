"""Checking one image file from its header, without decoding its pixels."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

MAX_PIXELS = 89_478_485  # Pillow's default limit
EMPTY = "empty file (0 bytes)"
NOT_IMAGE = "not an image that can be read"
CORRUPT = "truncated or corrupt"
BOMB = f"claims more than {MAX_PIXELS:,} pixels (possible decompression bomb)"
UNREADABLE = "could not be opened (permissions or a disk error)"
BROKEN_LINK = "a link to a file that does not exist"
_JPEG_END = b"\xff\xd9"


class UnusableImage(Exception):
    """A file that cannot be used as an image; ``reason`` is meant for a person."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ImageHeader:
    """What an image's header says, and a hash of the file's bytes."""

    size: tuple[int, int]
    mode: str
    format: str
    digest: str


def file_digest(path: Path) -> str:
    """A blake2b hash of the file's bytes."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "blake2b").hexdigest()


def _jpeg_complete(image: Image.Image, path: Path) -> bool:
    """Whether a JPEG ends properly; only if it does not, decode it at 1/8 scale to be sure."""
    with path.open("rb") as file:
        file.seek(-2, 2)
        if file.read(2) == _JPEG_END:
            return True
    image.draft(image.mode, (1, 1))
    try:
        image.load()
    except (OSError, SyntaxError, ValueError):
        return False
    return True


def _read_header(path: Path) -> tuple[tuple[int, int], str, str]:
    with path.open("rb") as file, warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(file)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise UnusableImage(BOMB) from None
        except UnidentifiedImageError:
            raise UnusableImage(NOT_IMAGE) from None
        except (OSError, SyntaxError, ValueError, EOFError):
            raise UnusableImage(CORRUPT) from None
        with image:
            size, mode, fmt = image.size, image.mode, image.format or "?"
            if size[0] * size[1] > MAX_PIXELS:
                raise UnusableImage(BOMB)
            if fmt == "JPEG" and not _jpeg_complete(image, path):
                raise UnusableImage(CORRUPT)
            try:
                image.verify()
            except Exception:  # Pillow's plugins raise many kinds on bad data
                raise UnusableImage(CORRUPT) from None
    return size, mode, fmt


def inspect_image(path: Path) -> ImageHeader:
    """Read an image's size, mode and format and check its integrity; raise UnusableImage."""
    if not path.exists():
        raise UnusableImage(BROKEN_LINK)
    try:
        if path.stat().st_size == 0:
            raise UnusableImage(EMPTY)
        size, mode, fmt = _read_header(path)
        return ImageHeader(size, mode, fmt, file_digest(path))
    except UnusableImage:
        raise
    except OSError:
        raise UnusableImage(UNREADABLE) from None
