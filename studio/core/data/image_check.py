"""Checking that one image file will decode when training, and hashing its bytes.

Training tells files apart by their first bytes, whatever their names: TensorFlow decodes
PNG, JPEG and GIF (every frame, keeping the first), Pillow decodes BMP, TIFF and WebP (the
first frame). PNG and JPEG, nearly all files, are checked without decoding their pixels: PNG
by its chunks' checksums and, unless it is large, by inflating its pixel data; JPEG by its
end marker. The rare GIF, BMP, WebP and TIFF files have their first frame decoded. Nothing is
decoded before the bytes its pixels decode to (width × height × channels × bytes a sample, every
frame of a GIF) are known to be at most ``MAX_DECODED_BYTES``: a small 16-bit RGBA PNG with few
enough pixels can still decode to gigabytes.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
import struct
import threading
import warnings
import zlib
from dataclasses import dataclass

from PIL import (
    BmpImagePlugin,
    GifImagePlugin,
    Image,
    ImageMode,
    JpegImagePlugin,
    TiffImagePlugin,
    WebPImagePlugin,
)

MAX_DECODED_BYTES = 256 * 2**20
"""The most an image may decode to: an 8-bit RGB image at Pillow's limit of 89,478,485 pixels."""
READ_LIMIT = 128 * 2**20
INFLATE_LIMIT = 16 * 2**20

EMPTY = "empty file (0 bytes)"
NOT_IMAGE = "not a JPEG, PNG, GIF, BMP, WebP or TIFF image"
CORRUPT = "truncated or corrupt"
BOMB = "too large to decode (possible decompression bomb)"
TOO_LARGE = f"larger than {READ_LIMIT // 2**20} MB"
UNREADABLE = "could not be read (permissions or a disk error)"
BROKEN_LINK = "a link that leads to no file"
GONE = "removed while the folder was being scanned"
NOT_FILE = "not a regular file (a pipe, socket or device)"

_SIGNATURES = (
    ((b"\xff\xd8\xff",), "JPEG"),
    ((b"\x89PNG\r\n\x1a\n",), "PNG"),
    ((b"GIF87a", b"GIF89a"), "GIF"),
    ((b"BM",), "BMP"),
    (tuple(TiffImagePlugin.PREFIXES), "TIFF"),
)
_DECODED = {"GIF": GifImagePlugin.GifImageFile, "BMP": BmpImagePlugin.BmpImageFile,
            "WEBP": WebPImagePlugin.WebPImageFile, "TIFF": TiffImagePlugin.TiffImageFile}
_DECODING = threading.Lock()  # warnings filters are global: one full decode at a time
_PNG_MODES = {(1, 0): "1", (2, 0): "L", (4, 0): "L", (8, 0): "L", (16, 0): "I;16",
              (8, 2): "RGB", (16, 2): "RGB", (1, 3): "P", (2, 3): "P", (4, 3): "P",
              (8, 3): "P", (8, 4): "LA", (16, 4): "RGBA", (8, 6): "RGBA", (16, 6): "RGBA"}
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_PNG_DECODED_CHANNELS = {**_PNG_CHANNELS, 3: 3}  # a palette decodes to RGB
_PALETTE_BYTES = {"P": 3, "PA": 4}
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
          (0, 1, 1, 2))


class UnusableImage(Exception):
    """A file that cannot be used as an image; ``reason`` is meant for a person, one of the
    constants here (folder reports count files by it); ``detail`` says it for this file."""

    def __init__(self, reason: str, detail: str | None = None) -> None:
        super().__init__(detail or reason)
        self.reason = reason
        self.detail = detail or reason


@dataclass(frozen=True)
class ImageHeader:
    """An image's size (width, height), mode, format and frames, and a hash of its bytes."""

    size: tuple[int, int]
    mode: str
    format: str
    frames: int
    digest: bytes


def _open_error(path: str | os.PathLike, exc: OSError) -> UnusableImage:
    if exc.errno == errno.ENOENT:
        return UnusableImage(BROKEN_LINK if os.path.islink(path) else GONE)
    reason = {errno.ELOOP: BROKEN_LINK, errno.ENXIO: NOT_FILE}.get(exc.errno, UNREADABLE)
    return UnusableImage(reason)


def _read_file(path: str | os.PathLike) -> bytes:
    """The bytes of a regular, non-empty file of at most READ_LIMIT; raise UnusableImage."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe must not block the scan
    except OSError as exc:
        raise _open_error(path, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnusableImage(NOT_FILE)
        if info.st_size == 0:
            raise UnusableImage(EMPTY)
        if info.st_size > READ_LIMIT:
            raise UnusableImage(TOO_LARGE)
        data = os.read(fd, info.st_size)
        while len(data) < info.st_size and (more := os.read(fd, info.st_size - len(data))):
            data += more
        return data
    except OSError:
        raise UnusableImage(UNREADABLE) from None
    finally:
        os.close(fd)


def _format(data: bytes) -> str:
    for prefixes, name in _SIGNATURES:
        if data.startswith(prefixes):
            return name
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    raise UnusableImage(NOT_IMAGE)


def _check_size(size: tuple[int, int], mode: str, pixel_bytes: int, frames: int = 1) -> None:
    """UnusableImage if ``frames`` of ``size`` pixels of ``pixel_bytes`` each decode to more
    than MAX_DECODED_BYTES."""
    width, height = size
    decoded = width * height * pixel_bytes * frames
    if decoded > MAX_DECODED_BYTES:
        pixels = f"{width:,} × {height:,} pixels{f' × {frames} frames' if frames > 1 else ''}"
        raise UnusableImage(BOMB, f"{pixels} in mode {mode} decode to {_megabytes(decoded)}, "
                                  f"more than the limit of {_megabytes(MAX_DECODED_BYTES)} "
                                  "(possible decompression bomb)")


def _megabytes(count: int) -> str:
    return f"{count / 2**20:,.0f} MB" if count >= 2**20 else f"{count:,} bytes"


def _pixel_bytes(mode: str) -> int:
    """Bytes a pixel of a Pillow mode decodes to (a palette decodes to RGB or RGBA)."""
    if mode in _PALETTE_BYTES:
        return _PALETTE_BYTES[mode]
    info = ImageMode.getmode(mode)
    return len(info.bands) * int(info.typestr[-1])


def _png_rows(width: int, height: int, interlaced: bool) -> list[tuple[int, int]]:
    """(width, rows) of each pass of a PNG's pixel data."""
    if not interlaced:
        return [(width, height)]
    sizes = [(-(-(width - x) // dx), -(-(height - y) // dy)) for x, y, dx, dy in _ADAM7]
    return [(w, h) for w, h in sizes if w > 0 and h > 0]


def _inflates_to(data: bytes, expected: int, stride: int | None) -> bool:
    """Whether zlib ``data`` inflates to ``expected`` bytes whose rows (if ``stride``) start
    with a valid PNG filter type."""
    try:
        raw = zlib.decompressobj().decompress(data, expected + 1)
    except zlib.error:
        return False
    return len(raw) == expected and (stride is None or max(raw[::stride]) <= 4)


def _png(data: bytes) -> tuple[tuple[int, int], str]:
    """A PNG's size and mode, after checking its chunks' checksums and its pixel data."""
    view, pos, parts = memoryview(data), 8, []
    header: tuple[int, ...] = ()
    while True:
        if pos + 12 > len(data):
            raise UnusableImage(CORRUPT)
        length, kind = struct.unpack_from(">I4s", data, pos)
        end = pos + 12 + length
        if end > len(data) or zlib.crc32(view[pos + 4:end - 4]) != struct.unpack_from(
                ">I", data, end - 4)[0]:
            raise UnusableImage(CORRUPT)
        if not header:
            if kind != b"IHDR" or length != 13:
                raise UnusableImage(CORRUPT)
            header = struct.unpack_from(">IIBBBBB", data, pos + 8)
            if (header[2], header[3]) not in _PNG_MODES or not header[0] or not header[1]:
                raise UnusableImage(CORRUPT)
            _check_png_size(*header[:4])
        elif kind == b"IDAT":
            parts.append(view[pos + 8:end - 4])
        elif kind == b"IEND":
            break
        pos = end
    width, height, depth, color, _, _, interlaced = header
    bits = depth * _PNG_CHANNELS[color]
    rows = _png_rows(width, height, bool(interlaced))
    expected = sum(h * (1 + (w * bits + 7) // 8) for w, h in rows)
    stride = None if interlaced else 1 + (width * bits + 7) // 8
    if not parts or (expected <= INFLATE_LIMIT
                     and not _inflates_to(b"".join(parts), expected, stride)):
        raise UnusableImage(CORRUPT)
    return (width, height), _PNG_MODES[depth, color]


def _check_png_size(width: int, height: int, depth: int, color: int) -> None:
    mode = _PNG_MODES[depth, color] + (" (16 bits a sample)" if depth == 16 else "")
    _check_size((width, height), mode, _PNG_DECODED_CHANNELS[color] * (2 if depth == 16 else 1))


def _jpeg(data: bytes) -> tuple[tuple[int, int], str]:
    """A JPEG's size and mode; one that does not end properly is decoded at 1/8 scale."""
    try:
        image = JpegImagePlugin.JpegImageFile(io.BytesIO(data))
    except Exception:  # Pillow's plugins raise many kinds on bad data
        raise UnusableImage(CORRUPT) from None
    with image:
        _check_size(image.size, image.mode, _pixel_bytes(image.mode))
        if not data.endswith(b"\xff\xd9"):
            image.draft(image.mode, (1, 1))
            try:
                image.load()
            except Exception:
                raise UnusableImage(CORRUPT) from None
        return image.size, image.mode


def _frames(image: Image.Image) -> int:
    """How many frames an open image has; a damaged later frame ends the count (training
    reads only the first)."""
    count = 1
    try:
        while True:
            image.seek(count)
            count += 1
    except Exception:  # EOFError after the last frame, anything on a damaged one
        return count


def _decode(data: bytes, fmt: str) -> tuple[tuple[int, int], str, int]:
    """Decode the first frame of a GIF, BMP, WebP or TIFF; count its frames."""
    with _DECODING, warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with _DECODED[fmt](io.BytesIO(data)) as image:
                size, mode = image.size, image.mode
                _check_size(size, mode, _pixel_bytes(mode))
                image.load()
                frames = _frames(image)
        except UnusableImage:
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise UnusableImage(BOMB) from None
        except Exception:
            raise UnusableImage(CORRUPT) from None
    if fmt == "GIF":  # TensorFlow decodes every frame at once
        _check_size(size, mode, _pixel_bytes(mode), frames)
    return size, mode, frames


def inspect_image(path: str | os.PathLike) -> ImageHeader:
    """Check that an image file will decode when training; raise UnusableImage if not."""
    data = _read_file(path)
    fmt = _format(data)
    frames = 1
    if fmt == "PNG":
        size, mode = _png(data)
    elif fmt == "JPEG":
        size, mode = _jpeg(data)
    else:
        size, mode, frames = _decode(data, fmt)
    return ImageHeader(size, mode, fmt, frames, hashlib.blake2b(data, digest_size=16).digest())

