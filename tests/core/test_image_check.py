"""Checking single image files: what is accepted must decode when training, nothing else is."""

from __future__ import annotations

import io
import os
import struct
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from studio.core.data import image_check
from studio.core.data.image_check import UnusableImage, inspect_image

PNG_COLOR_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2))
RNG = np.random.default_rng(0)


def encode(image: Image.Image, fmt: str, **params) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **params)
    return buffer.getvalue()


def noise(width: int, height: int, mode: str = "RGB") -> Image.Image:
    pixels = RNG.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    return Image.fromarray(pixels).convert(mode)


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, depth: int = 8, color: int = 0, interlace: int = 0,
        filter_type: int = 0, missing: int = 0) -> bytes:
    """A PNG written by hand: random pixels, ``missing`` bytes short of complete rows."""
    bits = depth * PNG_CHANNELS[color]
    passes = ([(x, y, dx, dy) for x, y, dx, dy in ADAM7] if interlace else [(0, 0, 1, 1)])
    raw = b""
    for x0, y0, dx, dy in passes:
        columns, rows = len(range(x0, width, dx)), len(range(y0, height, dy))
        for _ in range(rows if columns else 0):
            row = RNG.integers(0, 256, size=(columns * bits + 7) // 8, dtype=np.uint8)
            raw += bytes([filter_type]) + row.tobytes()
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, interlace)
    palette = chunk(b"PLTE", bytes(range(256)) * 3) if color == 3 else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + palette
            + chunk(b"IDAT", zlib.compress(raw[:len(raw) - missing])) + chunk(b"IEND", b""))


def write(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (folder / name).write_bytes(data)


def reason(path: Path) -> str | None:
    try:
        inspect_image(path)
    except UnusableImage as exc:
        return exc.reason
    return None


@pytest.mark.parametrize("interlace", [0, 1])
@pytest.mark.parametrize(("color", "depth"), [(c, d) for c, ds in PNG_COLOR_DEPTHS.items()
                                              for d in ds])
def test_every_kind_of_png_is_read_as_pillow_reads_it(tmp_path, color, depth, interlace):
    path = tmp_path / "x.png"
    path.write_bytes(png(13, 7, depth, color, interlace))
    with Image.open(path) as image:
        image.load()
        expected = image.size, image.mode
    header = inspect_image(path)
    assert (header.size, header.mode, header.format, header.frames) == (*expected, "PNG", 1)


def animated_gif(frames: int = 3) -> bytes:
    images = [noise(16, 16, "P") for _ in range(frames)]
    buffer = io.BytesIO()
    images[0].save(buffer, "GIF", save_all=True, append_images=images[1:])
    return buffer.getvalue()


def patched(data: bytes, offset: int, fmt: str, *values: int) -> bytes:
    return data[:offset] + struct.pack(fmt, *values) + data[offset + struct.calcsize(fmt):]


def jpeg_claiming(width: int, height: int) -> bytes:
    data = encode(noise(8, 8), "JPEG")
    return patched(data, data.index(b"\xff\xc0") + 5, ">HH", height, width)


def good_and_bad_files() -> dict[str, tuple[bytes, str | None]]:
    """Files by name, each with the reason it must be skipped (None: it must be accepted)."""
    rgb = noise(24, 20)
    jpeg, gif, bmp = encode(rgb, "JPEG"), animated_gif(), encode(rgb, "BMP")
    tiff, webp = encode(rgb, "TIFF"), encode(rgb, "WEBP", lossless=True)
    plain_png = png(9, 5, 8, 2)
    idat = plain_png.index(b"IDAT")
    corrupt = image_check.CORRUPT
    return {
        "plain.png": (plain_png, None),
        "flipped_byte.png": (plain_png[:idat + 6] + b"\0" + plain_png[idat + 7:], corrupt),
        "cut.png": (plain_png[:-20], corrupt),
        "short_rows.png": (png(9, 5, 8, 2, missing=3), corrupt),
        "bad_filter.png": (png(9, 5, 8, 2, filter_type=7), corrupt),
        "not_zlib.png": (patched(plain_png, idat - 4, ">I", 12)[:idat + 4] + b"\x78\x01junkjunk"
                         + struct.pack(">I", zlib.crc32(b"IDAT\x78\x01junkjunk"))
                         + chunk(b"IEND", b""), corrupt),
        "photo.jpg": (jpeg, None),
        "cmyk.jpg": (encode(rgb.convert("CMYK"), "JPEG"), None),
        "gray.jpeg": (encode(rgb.convert("L"), "JPEG"), None),
        "trailing_bytes.jpg": (jpeg + b"\0" * 100, None),
        "half.jpg": (jpeg[:len(jpeg) // 2], corrupt),
        "bomb.jpg": (jpeg_claiming(30000, 30000), image_check.BOMB),
        "animated.gif": (gif, None),
        "cut_last_frame.gif": (gif[:-40], None),
        "cut.gif": (encode(rgb.quantize(64), "GIF")[:-100], corrupt),
        "bomb.gif": (patched(gif, 6, "<HH", 30000, 30000), image_check.BOMB),
        "rgb.bmp": (bmp, None),
        "rgba.bmp": (encode(rgb.convert("RGBA"), "BMP"), None),
        "gray.bmp": (encode(rgb.convert("L"), "BMP"), None),
        "palette.bmp": (encode(rgb.quantize(16), "BMP"), None),
        "one_bit.bmp": (encode(rgb.convert("1"), "BMP"), None),
        "cut.bmp": (bmp[:-100], corrupt),
        "webp_inside.png": (webp, None),
        "tiff_inside.jpg": (tiff, None),
        "text.jpg": (b"this is not a picture", image_check.NOT_IMAGE),
        "icon.png": (encode(rgb, "ICO"), image_check.NOT_IMAGE),
        "zero.png": (b"", image_check.EMPTY),
        "lossless.webp": (webp, None),
        "cut.webp": (webp[:len(webp) // 2], corrupt),
        "png_inside.webp": (plain_png, None),
        "rgb.tif": (tiff, None),
        "deep.tiff": (encode(Image.new("I;16", (9, 4), 40000), "TIFF"), None),
        "float.tif": (encode(Image.new("F", (9, 4), 0.5), "TIFF"), None),
        "cmyk.tif": (encode(rgb.convert("CMYK"), "TIFF", compression="tiff_lzw"), None),
        "cut.tif": (tiff[:len(tiff) // 2], corrupt),
        "bmp_inside.tif": (encode(rgb.quantize(16), "BMP"), None),
        "gif_screen_smaller_than_frame.gif": (patched(gif, 6, "<HH", 4, 4), None),
    }


def test_good_and_bad_files_get_their_reasons(tmp_path):
    files = good_and_bad_files()
    write(tmp_path, {name: data for name, (data, _) in files.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = {name: reason(tmp_path / name) for name in files}
    assert found == {name: expected for name, (_, expected) in files.items()}


def test_training_decodes_what_is_accepted_and_fails_on_what_is_corrupt():
    """The training pipeline's own decoder, traced as in ``tf.data``, is the oracle."""
    import tensorflow as tf

    from studio.core.data.image_pipeline import decode_image

    decode = tf.function(decode_image)
    for name, (data, expected) in good_and_bad_files().items():
        if expected not in (None, image_check.CORRUPT):
            continue
        try:
            decode(tf.constant(data)).numpy()
        except tf.errors.OpError:
            decoded = False
        else:
            decoded = True
        assert decoded == (expected is None), name


def test_frames_are_counted(tmp_path):
    noise(4, 4).save(tmp_path / "pages.tif", save_all=True, append_images=[noise(4, 4)])
    (tmp_path / "animated.gif").write_bytes(animated_gif(5))
    assert inspect_image(tmp_path / "animated.gif").frames == 5
    assert inspect_image(tmp_path / "pages.tif").frames == 2


def test_same_bytes_same_digest_whatever_the_name(tmp_path):
    data = png(5, 5)
    write(tmp_path, {"a.png": data, "b c ü猫.png": data, "other.png": png(5, 5)})
    digests = [inspect_image(tmp_path / name).digest for name in ("a.png", "b c ü猫.png",
                                                                    "other.png")]
    assert digests[0] == digests[1] != digests[2]


def test_links_pipes_and_files_that_cannot_be_read(tmp_path):
    os.symlink(tmp_path / "nowhere.png", tmp_path / "broken.png")
    os.symlink(tmp_path / "loop.png", tmp_path / "loop.png")
    os.mkfifo(tmp_path / "pipe.png")
    assert reason(tmp_path / "broken.png") == image_check.BROKEN_LINK
    assert reason(tmp_path / "loop.png") == image_check.BROKEN_LINK
    assert reason(tmp_path / "pipe.png") == image_check.NOT_FILE
    assert reason(tmp_path / "never_there.png") == image_check.GONE


def unreadable_file(tmp_path: Path) -> Path:
    """A file this process may not read: without permissions, or (for root, who may read
    everything) a link to a write-only kernel setting."""
    path = tmp_path / "locked.png"
    if os.geteuid() != 0:
        path.write_bytes(png(4, 4))
        path.chmod(0)
    elif Path("/sys/bus/pci/rescan").exists():
        path.symlink_to("/sys/bus/pci/rescan")
    else:
        pytest.skip("no file here that root cannot read")
    return path


def test_file_without_permission_is_unreadable(tmp_path):
    assert reason(unreadable_file(tmp_path)) == image_check.UNREADABLE


@pytest.mark.parametrize(("data", "detail"), [
    (png(64, 64, 16, 6), "64 × 64 pixels in mode RGBA (16 bits a sample) decode to 32,768 "
                         "bytes"),
    (png(64, 64, 8, 3), "64 × 64 pixels in mode P decode to 12,288 bytes"),
    (encode(Image.new("I;16", (64, 64), 40000), "TIFF"), "64 × 64 pixels in mode I;16 decode "
                                                         "to 8,192 bytes"),
    (encode(noise(64, 64).convert("CMYK"), "JPEG"), "64 × 64 pixels in mode CMYK decode to "
                                                    "16,384 bytes"),
])
def test_the_limit_counts_the_bytes_pixels_decode_to(tmp_path, monkeypatch, data, detail):
    """An image with as many pixels as an accepted grey one is refused when its pixels decode
    to more bytes than the limit (a 16-bit RGBA PNG to 8 bytes a pixel), in one line."""
    from studio.core.inference.predictor import image_problem

    monkeypatch.setattr(image_check, "MAX_DECODED_BYTES", 64 * 64)
    write(tmp_path, {"grey.png": png(64, 64, 8, 0), "big": data})
    assert reason(tmp_path / "grey.png") is None
    assert reason(tmp_path / "big") == image_check.BOMB
    assert image_problem(tmp_path / "big") == (
        f"{detail}, more than the limit of 4,096 bytes (possible decompression bomb)")


def test_every_frame_of_a_gif_counts(tmp_path, monkeypatch):
    frames = [noise(24, 20).quantize(16) for _ in range(3)]
    write(tmp_path, {"a.gif": encode(frames[0], "GIF", save_all=True,
                                     append_images=frames[1:])})
    monkeypatch.setattr(image_check, "MAX_DECODED_BYTES", 24 * 20 * 3 * 2)
    with pytest.raises(UnusableImage) as refused:
        inspect_image(tmp_path / "a.gif")
    assert refused.value.detail.startswith("24 × 20 pixels × 3 frames in mode P decode to 4,320 "
                                           "bytes")
