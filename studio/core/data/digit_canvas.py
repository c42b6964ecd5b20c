"""Digits of the bundled MNIST-10k drawn on grey canvases of light noise: what the offline demo
sets (detection's boxes in ``detection.demo``, segmentation's masks in ``segmentation.demo``)
share.

A canvas holds a few dark digits, each scaled so its larger side falls in a range and placed
at random with a retry, so that their ink boxes overlap at most a little; a digit that finds
no such place after a few tries is left out. Each image is drawn from its own seed (the set's
seed, its split and its index), so a smaller set is the start of a larger one; training images
take their digits from the first 9,000 of MNIST-10k, validation images from the last 1,000, so
no digit appears in both. A set is made once and cached in the workspace as an ``.npz``.
"""

from __future__ import annotations

import threading
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TypeVar

import numpy as np
from PIL import Image

from studio.core.base.events import Progress
from studio.core.base.files import atomic_file
from studio.core.data.builtin import datasets_dir
from studio.core.data.bundled import MNIST_10K, load_arrays
from studio.core.data.image_folder import PROGRESS_EVERY
from studio.core.data.types import DataError
from studio.core.project.document import DatasetChoice
from studio.core.tasks.detection.boxes import iou_matrix

INK = 0.35
"""A scaled digit's pixels fainter than this (0..1) are left out, so its box holds all its ink;
drawn over the lightest background, the faintest ink left is still darker than any noise."""
BACKGROUND = (215, 250, 5)
"""The background's noise: grey levels from, to (inclusive) and step; 8 levels, so that a
random byte modulo 8 draws each equally often."""
DARKEST = 60
"""The lightest a digit may be drawn: each digit's grey is drawn from 0 to this."""
TRAIN_DIGITS = 9_000
"""MNIST-10k's first digits draw training images, the rest validation images."""
SPLITS = ("train", "validation")

T = TypeVar("T")


@dataclass(frozen=True)
class Layout:
    """How a demo set's canvases are laid out: ``side`` pixels square, ``digits`` (fewest,
    most) digits each, a digit's larger side ``digit_side`` (smallest, largest) pixels, ink
    boxes overlapping by an IoU of at most ``max_iou``, found in ``tries`` tries."""

    side: int
    digits: tuple[int, int]
    digit_side: tuple[int, int]
    max_iou: float
    tries: int = 20


@dataclass(frozen=True)
class Digit:
    """A digit drawn on a canvas: its class, its ink box in the canvas (x_min, y_min, x_max,
    y_max), its ink (0..1, 0 where it has none) and that ink's top left corner in the canvas."""

    label: int
    box: np.ndarray
    ink: np.ndarray
    top: int
    left: int

    def window(self) -> tuple[slice, slice]:
        """The canvas's rows and columns under ``ink``."""
        return (slice(self.top, self.top + self.ink.shape[0]),
                slice(self.left, self.left + self.ink.shape[1]))


@cache
def mnist_digits() -> tuple[list[np.ndarray], np.ndarray]:
    """MNIST-10k's digits, each cropped to its ink (its pixels of half intensity or more), and
    their labels; read as the bundled dataset is."""
    x, y = load_arrays(DatasetChoice(source="bundled", name=MNIST_10K.name))
    digits = x.reshape(len(x), 28, 28)
    rows, cols = (digits >= 128).any(axis=2), (digits >= 128).any(axis=1)
    top, left = rows.argmax(axis=1), cols.argmax(axis=1)
    bottom, right = 28 - rows[:, ::-1].argmax(axis=1), 28 - cols[:, ::-1].argmax(axis=1)
    return [digit[t:b, s:e] for digit, t, b, s, e
            in zip(digits, top, bottom, left, right, strict=True)], y


def scaled_digit(crop: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
    """A digit's crop scaled so its larger side is ``side``: its ink (0..1, the darkest 1,
    fainter than INK set to 0) and its ink's box within it, a pixel or two smaller where a thin
    stroke's end fades."""
    scale = side / max(crop.shape)
    size = (max(1, round(crop.shape[1] * scale)), max(1, round(crop.shape[0] * scale)))
    ink = np.asarray(Image.fromarray(crop).resize(size, Image.Resampling.BILINEAR), np.float32)
    ink /= ink.max()
    ink[ink < INK] = 0
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    return ink, np.asarray([cols[0], rows[0], cols[-1] + 1, rows[-1] + 1], np.float32)


def _place(box: np.ndarray, size: tuple[int, int], tries: np.ndarray, boxes: list[np.ndarray],
           layout: Layout) -> np.ndarray | None:
    """Where a digit of ``size`` (height, width), its ink at ``box`` within it, goes: the
    first of ``tries`` (uniform 0..1, tries × 2) whose box overlaps none of ``boxes`` by an
    IoU over the layout's most; its box in the canvas, or None if no try fits."""
    height, width = size
    corners = np.floor(tries * [layout.side - width + 1, layout.side - height + 1])
    candidates = np.concatenate([corners + box[:2], corners + box[2:]], axis=1)
    if not boxes:
        return candidates[0]
    fits = np.flatnonzero(iou_matrix(candidates, np.stack(boxes)).max(axis=1) <= layout.max_iou)
    return candidates[fits[0]] if len(fits) else None


def draw_canvas(rng: np.random.Generator, crops: list[np.ndarray], labels: np.ndarray,
                pool: range, layout: Layout) -> tuple[np.ndarray, list[Digit]]:
    """One canvas (uint8, side × side) of digits drawn from ``pool`` (indices into ``crops``
    and ``labels``), and the digits as drawn, in drawing order."""
    low, high, step = BACKGROUND
    side = layout.side
    levels = np.frombuffer(rng.bytes(side * side), np.uint8).reshape(side, side)
    canvas = levels % ((high - low) // step + 1) * step + low  # bytes: 6 times faster to draw
    n = int(rng.integers(layout.digits[0], layout.digits[1] + 1))
    indices = rng.integers(pool.start, pool.stop, n)
    sides = rng.integers(layout.digit_side[0], layout.digit_side[1] + 1, n)
    darks = rng.integers(0, DARKEST + 1, n)
    tries = rng.random((n, layout.tries, 2))
    digits: list[Digit] = []
    for index, digit_side, dark, where in zip(indices, sides, darks, tries, strict=True):
        ink, box = scaled_digit(crops[index], int(digit_side))
        placed = _place(box, ink.shape, where, [d.box for d in digits], layout)
        if placed is None:
            continue
        digit = Digit(int(labels[index]), placed, ink, int(placed[1] - box[1]),
                      int(placed[0] - box[0]))
        patch = canvas[digit.window()]
        patch[:] = np.round(patch * (1 - ink) + dark * ink)
        digits.append(digit)
    return canvas, digits


def draw_splits(counts: Sequence[int], seed: int, digits: tuple[list[np.ndarray], np.ndarray],
                draw: Callable[[np.random.Generator, list[np.ndarray], np.ndarray, range], T],
                report: Callable[[int, int], None]) -> tuple[list[T], list[str]]:
    """``counts`` (train, validation) images, each ``draw(rng, crops, labels, pool)`` with its
    own generator, ``digits`` (crops and labels, as ``mnist_digits`` gives them) and the
    indices of the digits its split may use; and each one's split. ``report(done, total)`` is
    called every PROGRESS_EVERY images and at the end."""
    crops, labels = digits
    items: list[T] = []
    splits: list[str] = []
    total = sum(counts)
    for split_index, (split, n) in enumerate(zip(SPLITS, counts, strict=True)):
        pool = range(0, TRAIN_DIGITS) if split == "train" else range(TRAIN_DIGITS, len(labels))
        for index in range(n):
            if len(items) % PROGRESS_EVERY == 0:
                report(len(items), total)
            rng = np.random.default_rng((seed, split_index, index))
            items.append(draw(rng, crops, labels, pool))
            splits.append(split)
    report(total, total)
    return items, splits


def report_progress(on_progress: Progress | None, stop: threading.Event | None, what: str,
                    done: int, total: int) -> None:
    """Tell ``on_progress`` that ``what`` is at ``done`` of ``total``; if ``stop`` is set, end
    it with a DataError instead."""
    if stop is not None and stop.is_set():
        raise DataError(f"{what} was cancelled.")
    if on_progress is not None:
        on_progress(what, done, total)


def cache_file(name: str, train: int, validation: int) -> Path:
    """Where the demo set ``name`` (its kind and version) of this size is cached:
    ``<workspace>/datasets/`` with the size in its name."""
    return datasets_dir() / f"{name}-{train}-{validation}.npz"


def cached(path: Path, read: Callable[[Mapping[str, np.ndarray]], T], draw: Callable[[], T],
           arrays: Callable[[T], dict[str, np.ndarray]]) -> T:
    """The set cached at ``path`` (an ``.npz``) as ``read`` makes it from the file's arrays;
    or, if there is none or it is damaged (``read`` raises ValueError on arrays of the wrong
    shape), ``draw()``'s, saved there as ``arrays`` gives it."""
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as archive:
                return read({name: archive[name] for name in archive.files})
        except (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile, zlib.error):
            path.unlink(missing_ok=True)
    made = draw()
    with atomic_file(path) as out:
        np.savez(out, **arrays(made))  # uncompressed: noise hardly compresses; reads 20× faster
    return made
