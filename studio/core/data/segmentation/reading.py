"""Reading a segmentation dataset: finding its layout and class names, checking every image
and reading every mask in a few threads, and assembling a ``SegmentationSet`` whose health
counts what was left out or ignored."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.core.base.events import Progress
from studio.core.base.messages import count, shortened
from studio.core.data.detection.reading import relative_name
from studio.core.data.image_check import ImageHeader, UnusableImage, inspect_image
from studio.core.data.image_folder import PROGRESS_EVERY, WORKERS
from studio.core.data.segmentation.health import SegmentationHealth
from studio.core.data.segmentation.layouts import Layout, Pair, find_layout
from studio.core.data.segmentation.mask_kinds import (
    CLASS_LIST,
    LABEL_MAP,
    ColourTable,
    MaskDecoder,
    MaskError,
    read_class_names,
    read_labelmap,
    read_raw,
    value_table,
    values_named,
)
from studio.core.data.segmentation.record import MaskLabels, SegmentationSet
from studio.core.data.types import DataError
from studio.core.tasks.segmentation.masks import VOC_CLASSES

CHECKING = "Checking images and masks"
VALUES_MADE_UP = ("and as the masks' values name the classes, the values it made up became "
                  "classes too (list the real ones in a classes.txt)")


@dataclass(frozen=True)
class MaskFacts:
    """What reading one mask found, without keeping its pixels: its size (width, height),
    format, the histogram of its values (int64 256: index values, or classes for a colour
    mask) and what its ``RawMask`` says of it."""

    size: tuple[int, int]
    format: str
    histogram: np.ndarray
    indices: bool
    voc: bool
    wide: bool
    missing_colour: tuple[tuple[int, int, int], int] | None


Loaded = tuple[ImageHeader | str, MaskFacts | MaskError | str | None]


def _load(pair: Pair, table: ColourTable | None) -> Loaded:
    """Check the image and read its mask (in a worker thread): the header or why the image is
    unusable, and the mask's facts, why it cannot be used, or None for no mask."""
    try:
        header: ImageHeader | str = inspect_image(pair.image)
    except UnusableImage as exc:
        header = exc.detail
    if pair.mask is None or isinstance(header, str):
        return header, None
    try:
        mask_header, raw = read_raw(pair.mask, table)
    except UnusableImage as exc:
        return header, exc.detail
    except MaskError as exc:
        return header, exc
    histogram = np.bincount(raw.pixels.reshape(-1), minlength=256).astype(np.int64)
    return header, MaskFacts(mask_header.size, mask_header.format, histogram, raw.indices,
                             raw.voc, raw.wide, raw.missing_colour)


def _load_all(pairs: list[Pair], table: ColourTable | None) -> list[Loaded]:
    return [_load(pair, table) for pair in pairs]


def _load_pairs(root: Path, pairs: list[Pair], table: ColourTable | None,
                on_progress: Progress, stop: threading.Event | None) -> list[Loaded]:
    """Every pair's image header and mask facts, in order, PROGRESS_EVERY at a time; fewer if
    ``stop`` is set. Raise DataError at the first mask that stops the reading."""
    out: list[Loaded] = []
    total = len(pairs)
    with ThreadPoolExecutor(WORKERS, thread_name_prefix="segmentation-scan") as pool:
        for start in range(0, total, PROGRESS_EVERY):
            on_progress(CHECKING, start, total)
            if stop is not None and stop.is_set():
                return out
            batch = pairs[start:start + PROGRESS_EVERY]
            step = -(-len(batch) // WORKERS)
            runs = pool.map(_load_all, [batch[i:i + step] for i in range(0, len(batch), step)],
                            [table] * WORKERS)
            loaded = [result for run in runs for result in run]
            for pair, (_, mask) in zip(batch, loaded, strict=True):
                if isinstance(mask, MaskError) and mask.fatal:
                    name = shortened(relative_name(root, pair.mask or pair.image))
                    raise DataError(f"{name} {mask}.")
            out += loaded
    on_progress(CHECKING, total, total)
    return out


def _names_file(layout: Layout, name: str) -> Path | None:
    return next((folder / name for folder in layout.name_folders
                 if (folder / name).is_file()), None)


def _class_names(layout: Layout, table: ColourTable | None, loaded: list[Loaded]
                 ) -> tuple[list[str], np.ndarray, bool]:
    """The dataset's class names and its decoder's ``values``: the colour table's names, a
    classes.txt's, VOC's for masks in VOC's palette, else the index values the masks hold
    (which adds a note to ``layout``); and whether they are those values."""
    facts = [mask for _, mask in loaded if isinstance(mask, MaskFacts)]
    if table is not None:
        return table.names, value_table(len(table.names)), False
    listed = _names_file(layout, CLASS_LIST)
    names = read_class_names(listed) if listed else None
    if names is not None:
        return names, value_table(len(names)), False
    if any(fact.voc for fact in facts):
        layout.notes.append("The masks use Pascal VOC's palette: its 21 class names are used.")
        return list(VOC_CLASSES), value_table(len(VOC_CLASSES)), False
    seen = np.zeros(256, bool)
    for fact in facts:
        if fact.indices:
            seen |= fact.histogram > 0
    names, values, note = values_named(seen)
    layout.notes.append(note)
    return names, values, True


def _colour_table(layout: Layout) -> ColourTable | None:
    path = _names_file(layout, LABEL_MAP)
    return read_labelmap(path) if path else None


def read_segmentation(root: Path, masks: Path | None = None,
                      on_progress: Progress | None = None,
                      stop: threading.Event | None = None) -> SegmentationSet:
    """Read the segmentation dataset in ``root`` (or the images folder ``root`` with the masks
    folder ``masks``): pair its images and masks, name its classes, read every mask, and count
    in its health what is left out or ignored.

    ``on_progress(what, done, total)`` is called every PROGRESS_EVERY images; once ``stop`` is
    set the reading ends with the set marked cancelled. Raise DataError in one line naming the
    file if the dataset cannot be read at all.
    """
    root = Path(root)
    layout = find_layout(root, None if masks is None else Path(masks))
    if not layout.pairs:
        raise DataError(f"{root} holds no images for its masks.")
    table = _colour_table(layout)
    try:
        loaded = _load_pairs(root, layout.pairs, table, on_progress or (lambda *_: None), stop)
    except OSError as exc:
        raise DataError(f"{root} cannot be read ({exc.strerror or exc}).") from None
    names, values, by_values = _class_names(layout, table, loaded)
    # JPEG's made-up values along edges are classes of their own when values name the classes
    lossy = VALUES_MADE_UP if by_values else ""
    decoder = MaskDecoder(table, values)
    health = SegmentationHealth(names, notes=layout.notes)
    health.cancelled = len(loaded) < len(layout.pairs)
    for mask, why in layout.no_image:
        health.checks["no_image"].add(relative_name(root, mask), detail=why)
    kept: list[tuple[Pair, ImageHeader, np.ndarray]] = []
    for pair, (header, facts) in zip(layout.pairs, loaded, strict=False):
        pixels = _check(root, pair, header, facts, decoder, health, lossy)
        if pixels is not None and isinstance(header, ImageHeader):
            kept.append((pair, header, pixels))
    health.finish()
    labels = MaskLabels(
        np.asarray([str(pair.mask) for pair, _, _ in kept], dtype=str),
        np.asarray([header.size[::-1] for _, header, _ in kept], np.int32).reshape(-1, 2),
        np.asarray([pixels for _, _, pixels in kept], np.int64).reshape(len(kept), len(names)))
    return SegmentationSet(root, layout.name, names, [pair.image for pair, _, _ in kept],
                           labels, [pair.split for pair, _, _ in kept], decoder, health)


def _check(root: Path, pair: Pair, header: ImageHeader | str,
           facts: MaskFacts | MaskError | str | None, decoder: MaskDecoder,
           health: SegmentationHealth, lossy: str) -> np.ndarray | None:
    """The pixels of each class in ``pair``'s mask (int64 C), or None if the pair is left out;
    what is left out or ignored is counted in ``health`` (a JPEG mask with ``lossy``, what
    else its compression does)."""
    image = relative_name(root, pair.image)
    if isinstance(header, str):
        health.checks["unusable_images"].add(image, detail=header)
        return None
    if pair.mask is None:
        health.checks["missing_masks"].add(image)
        return None
    mask = relative_name(root, pair.mask)
    if not isinstance(facts, MaskFacts):
        health.checks["unusable_masks"].add(mask, detail=str(facts))
        return None
    if facts.size != header.size:
        health.checks["size_mismatch"].add(
            mask, detail=f"{facts.size[0]}×{facts.size[1]} pixels, its image "
                         f"{header.size[0]}×{header.size[1]}")
        return None
    if facts.format == "JPEG":
        health.checks["lossy_masks"].add(mask, detail=lossy)
    if facts.wide:
        health.checks["wide_masks"].add(mask)
    if facts.missing_colour is not None:
        colour, pixels = facts.missing_colour
        health.checks["unknown_colours"].add(mask, detail=f"colour {colour}, "
                                                          f"{count(pixels, 'pixel')}")
    histogram = facts.histogram
    if facts.indices:
        value, pixels = decoder.unknown_values(histogram)
        if pixels:
            health.checks["unknown_values"].add(mask, detail=f"value {value}, "
                                                             f"{count(pixels, 'pixel')}")
        histogram = np.bincount(decoder.values, weights=histogram, minlength=256)
    classes = np.asarray(histogram[:len(health.class_names)], np.int64)
    health.add_mask(mask, classes)
    return classes
