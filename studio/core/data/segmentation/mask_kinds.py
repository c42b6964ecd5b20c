"""The kinds of mask file, read as class indices, and the files that name the classes.

- Index masks: single-channel PNGs (mode L, 1, or a 16-bit PNG whose values fit 8 bits) and
  palette PNGs (mode P) read as the indices they store.
- Pascal VOC's palette PNGs: a mask whose palette is VOC's (``voc_palette``) stores VOC's
  classes by value, named by ``VOC_CLASSES``, 255 its outlines (IGNORE).
- Colour masks: RGB (or RGBA) PNGs, and palette PNGs when a colour table is given, mapped
  through the ``labelmap.txt`` that CVAT and VOC-style exports write (``name:r,g,b::`` lines).
  A colour the table lacks is IGNORE (counted), as is VOC's outline colour (224, 224, 192).

Reading one mask gives its ``RawMask``: index values (mapped to classes once the dataset's
class names are known, by a 256-entry table) or class indices already (colour masks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from studio.core.base.messages import count, quoted
from studio.core.data.detection.reading import LabelError, class_list, read_text
from studio.core.data.image_check import ImageHeader, UnusableImage, inspect_image
from studio.core.data.types import DataError
from studio.core.tasks.segmentation.masks import IGNORE, MAX_CLASSES, voc_palette

LABEL_MAP = "labelmap.txt"
CLASS_LIST = "classes.txt"
VOC_OUTLINE = (224, 224, 192)
"""VOC's colour of IGNORE: colour masks outline their objects with it, as its palette does."""
_COLOUR = re.compile(r"^\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*$")
_INDEX_MODES = frozenset({"L", "LA", "1", "P", "PA"})
_WIDE_MODES = frozenset({"I;16", "I;16B", "I;16L", "I;16N", "I"})
_COLOUR_MODES = frozenset({"RGB", "RGBA"})


class MaskError(Exception):
    """A mask cannot be read, in a few words for a person; ``fatal`` if the whole dataset
    cannot be read as it is (an RGB mask without a colour table)."""

    def __init__(self, detail: str, fatal: bool = False) -> None:
        super().__init__(detail)
        self.fatal = fatal


@dataclass(frozen=True)
class ColourTable:
    """The class names of a ``labelmap.txt`` in its order, and each class's colour."""

    names: list[str]
    colours: np.ndarray
    """uint8 C × 3, the colour of class i in row i."""

    def codes(self) -> np.ndarray:
        """Each class's colour as one integer (red × 65,536 + green × 256 + blue)."""
        return _codes(self.colours)


@dataclass(frozen=True)
class RawMask:
    """One mask as its file gives it: ``pixels`` (uint8 H × W) hold index values (``indices``
    True: mapped to classes once the class names are known) or class indices already."""

    pixels: np.ndarray
    indices: bool
    voc: bool = False
    """Whether the values are Pascal VOC's classes (its palette)."""
    wide: bool = False
    """Whether the file is a 16-bit mask (its values fit 8 bits)."""
    missing_colour: tuple[tuple[int, int, int], int] | None = None
    """The first colour the table lacks and how many pixels have a colour it lacks."""


def _codes(colours: np.ndarray) -> np.ndarray:
    colours = np.asarray(colours, np.int64).reshape(-1, 3)
    return (colours[:, 0] << 16) | (colours[:, 1] << 8) | colours[:, 2]


def _colour(code: int) -> tuple[int, int, int]:
    return (code >> 16) & 255, (code >> 8) & 255, code & 255


def read_labelmap(path: Path) -> ColourTable:
    """The colour table of a ``labelmap.txt`` (``# label:color_rgb:parts:actions`` header,
    then lines like ``background:0,0,0::``); raise DataError in one line naming the file and
    line if it cannot be read, names a class or a colour twice, or names none."""
    try:
        text = read_text(path)
    except LabelError as exc:
        raise DataError(f"{path} {exc}.") from None
    names: list[str] = []
    colours: list[tuple[int, ...]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.rsplit(":", 3) if line.count(":") >= 3 else line.split(":")
        match = _COLOUR.match(fields[1]) if len(fields) >= 2 else None
        colour = tuple(int(v) for v in match.groups()) if match else ()
        if not fields[0].strip() or not colour or max(colour) > 255:
            raise DataError(f"{path} line {number}: {quoted(line.strip())} is not a class and "
                            "its colour (like background:0,0,0::).")
        if fields[0].strip() in names:
            raise DataError(f"{path} names the class {quoted(fields[0].strip())} twice.")
        if colour in colours:
            raise DataError(f"{path} gives the colour {colour} to both "
                            f"{quoted(names[colours.index(colour)])} and "
                            f"{quoted(fields[0].strip())}.")
        names.append(fields[0].strip())
        colours.append(colour)
    _check_count(path, names)
    return ColourTable(names, np.asarray(colours, np.uint8).reshape(-1, 3))


def _check_count(path: Path, names: list[str]) -> None:
    if not names:
        raise DataError(f"{path} names no class.")
    if len(names) > MAX_CLASSES:
        raise DataError(f"{path} names {len(names):,} classes, more than the {MAX_CLASSES} a "
                        "mask can hold.")


def read_class_names(path: Path) -> list[str] | None:
    """The class names of index masks a ``classes.txt`` lists, one a line in index order
    (None if there is no such file); raise DataError if it cannot be used."""
    names = class_list(path)
    if names is not None:
        _check_count(path, names)
    return names


def _is_voc_palette(image: Image.Image) -> bool:
    palette = np.asarray(image.getpalette("RGB") or [], np.uint8).reshape(-1, 3)
    return len(palette) >= 2 and bool((palette == voc_palette(len(palette))).all())


def _through_table(codes: np.ndarray, table: ColourTable) -> RawMask:
    """The classes of pixels given as colour ``codes`` (int64 H × W), IGNORE where the table
    lacks their colour (VOC's outline colour is IGNORE without being counted)."""
    known = table.codes()
    order = np.argsort(known)
    at = np.clip(np.searchsorted(known[order], codes), 0, len(known) - 1)
    found = known[order][at] == codes
    classes = np.where(found, order[at], IGNORE).astype(np.uint8)
    lacking = ~found & (codes != _codes(np.asarray(VOC_OUTLINE))[0])
    missing = None
    if lacking.any():
        missing = (_colour(int(codes[lacking][0])), int(lacking.sum()))
    return RawMask(classes, indices=False, missing_colour=missing)


def _palette_codes(image: Image.Image, indices: np.ndarray) -> np.ndarray:
    """The colour code of each pixel of a palette image whose palette ``indices`` they hold."""
    palette = np.zeros((256, 3), np.uint8)
    entries = np.asarray(image.getpalette("RGB") or [], np.uint8).reshape(-1, 3)[:256]
    palette[:len(entries)] = entries
    return _codes(palette)[indices]


def _wide(values: np.ndarray) -> RawMask:
    """A 16-bit mask as index values, if they fit 8 bits; else MaskError saying why they are
    not class indices."""
    top = int(values.max(initial=0))
    if values.min(initial=0) >= 0 and top <= IGNORE:
        return RawMask(values.astype(np.uint8), indices=True, wide=True)
    distinct = len(np.unique(values))
    if distinct > MAX_CLASSES + 1:
        raise MaskError(f"holds {distinct:,} distinct values, more than a mask's {MAX_CLASSES} "
                        "classes: not class indices (an instance or depth map?)")
    raise MaskError(f"is a 16-bit mask with values up to {top:,}, but masks must be 8-bit, a "
                    f"class index (0 to {MAX_CLASSES - 1}) per pixel: save it as an 8-bit PNG of "
                    "class indices")


def _colour_mask(pixels: np.ndarray, table: ColourTable | None) -> RawMask:
    """An RGB mask's classes through ``table``; without one, a grey mask stored as RGB is read
    as index values, anything else is a MaskError that stops the reading."""
    rgb = pixels[..., :3].astype(np.int64)
    if table is not None:
        return _through_table((rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2], table)
    if (rgb[..., 0] == rgb[..., 1]).all() and (rgb[..., 1] == rgb[..., 2]).all():
        return RawMask(pixels[..., 0].copy(), indices=True)
    colours = len(np.unique((rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]))
    if colours > MAX_CLASSES + 1:
        raise MaskError(f"is an RGB image of {colours:,} colours, more than a mask's "
                        f"{MAX_CLASSES} classes: a photo rather than a mask?", fatal=True)
    raise MaskError(f"is a colour (RGB) mask, but no {LABEL_MAP} gives the class of each "
                    f"colour: put a {LABEL_MAP} in the dataset's folder, one line per class "
                    "with its colour (like background:0,0,0:: and road:128,64,128::), or save "
                    "masks of class indices", fatal=True)


def decode(image: Image.Image, table: ColourTable | None) -> RawMask:
    """The raw mask of an opened mask file, read by its mode; raise MaskError if it holds no
    class indices."""
    mode = image.mode
    if mode in ("P", "PA"):
        indices = np.asarray(image.getchannel(0) if mode == "PA" else image, np.uint8)
        if table is not None:
            return _through_table(_palette_codes(image, indices), table)
        return RawMask(indices, indices=True, voc=_is_voc_palette(image))
    if mode in _INDEX_MODES:
        pixels = np.asarray(image)
        return RawMask((pixels[..., 0] if pixels.ndim == 3 else pixels).astype(np.uint8),
                       indices=True)
    if mode in _WIDE_MODES:
        return _wide(np.asarray(image).astype(np.int64))
    if mode in _COLOUR_MODES:
        return _colour_mask(np.asarray(image), table)
    if mode == "F":
        raise MaskError("holds floating-point values (mode F), not class indices")
    raise MaskError(f"is a {mode} image, not a mask of class indices")


def read_raw(path: Path, table: ColourTable | None) -> tuple[ImageHeader, RawMask]:
    """A mask file's header and raw mask, within the caps every image is read within (file
    size, decoded bytes); raise UnusableImage or MaskError."""
    header = inspect_image(path)
    try:
        with Image.open(path, formats=[header.format]) as image:
            image.load()
            return header, decode(image, table)
    except (MaskError, UnusableImage):
        raise
    except Exception:  # Pillow raises many kinds on bad data
        raise UnusableImage("truncated or corrupt") from None


@dataclass(frozen=True)
class MaskDecoder:
    """How every mask file of a dataset becomes a mask (uint8 H × W of class indices, IGNORE
    where none): its colour table, if any, and ``values``, the class (or IGNORE) of each index
    value (uint8 256)."""

    table: ColourTable | None
    values: np.ndarray

    def classes(self, raw: RawMask) -> np.ndarray:
        """The mask of a raw mask read from a file."""
        return self.values[raw.pixels] if raw.indices else raw.pixels

    def read(self, path: Path) -> np.ndarray:
        """The mask of the file ``path``; raise UnusableImage or MaskError if it has none."""
        return self.classes(read_raw(path, self.table)[1])

    def unknown_values(self, histogram: np.ndarray) -> tuple[int, int]:
        """The first index value of a raw mask's ``histogram`` (256 counts) that is no class
        and how many pixels hold such values (0, 0 if none)."""
        stray = (self.values == IGNORE) & (np.arange(256) != IGNORE) & (histogram > 0)
        if not stray.any():
            return 0, 0
        return int(np.flatnonzero(stray)[0]), int(histogram[stray].sum())


def value_table(num_classes: int) -> np.ndarray:
    """The ``MaskDecoder.values`` of index masks whose values are the classes' indices."""
    values = np.full(256, IGNORE, np.uint8)
    values[:num_classes] = np.arange(num_classes)
    return values


def values_named(seen: np.ndarray) -> tuple[list[str], np.ndarray, str]:
    """Class names and ``MaskDecoder.values`` for index masks without names, from the values
    ``seen`` in them (bool 256): each value a class named by it, in order; masks of 0 and 255
    alone are read as two classes (255, usually IGNORE, is their foreground). Also a note
    saying so."""
    classes = np.flatnonzero(seen[:IGNORE])
    note = (f"No class names are given ({CLASS_LIST} or {LABEL_MAP}): the classes are named "
            "by their mask values.")
    if len(classes) <= 1 and seen[IGNORE]:
        classes = np.flatnonzero(seen)
        note = (f"The masks hold only the values {' and '.join(map(str, classes))}, read as "
                f"{count(len(classes), 'class', 'classes')} (255 is the foreground, not "
                "ignored); name them in a classes.txt.")
    values = np.full(256, IGNORE, np.uint8)
    values[classes] = np.arange(len(classes))
    return [str(v) for v in classes], values, note
