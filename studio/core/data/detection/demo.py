"""The offline detection demo set, made deterministically from the bundled MNIST-10k: 128 × 128
grey images of light noise with 1 to 5 dark digits each, each scaled so its larger side is 14
to 48 pixels, boxed tightly around its ink; the class is the digit.

Digits are placed at random with a retry, so boxes overlap at most a little (IoU ≤ 0.1); a
digit that finds no such place after a few tries is left out. Each image is drawn from its own
seed (the set's seed, its split and its index), so a smaller set is the start of a larger one;
training images take their digits from the first 9,000 of MNIST-10k, validation images from the
last 1,000, so no digit appears in both. Made once and cached in the workspace as an ``.npz``;
VERSION is part of the file's name, so a change to the drawing makes it anew.
"""

from __future__ import annotations

import threading
import zipfile
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image

from studio.core.base.events import Progress
from studio.core.base.files import atomic_file
from studio.core.data.builtin import datasets_dir
from studio.core.data.bundled import MNIST_10K, load_arrays
from studio.core.data.detection.formats import write_detection
from studio.core.data.detection.record import LabelledImage
from studio.core.data.image_folder import PROGRESS_EVERY
from studio.core.data.types import DataError
from studio.core.project.document import DatasetChoice
from studio.core.tasks.detection.boxes import ImageBoxes, iou_matrix

VERSION = 1
SEED = 23
SIDE = 128
DIGITS = (1, 5)
DIGIT_SIDE = (14, 48)
"""The smallest and largest larger side a digit is scaled to, in pixels."""
MAX_IOU = 0.1
TRIES = 20
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
CLASS_NAMES = tuple(str(digit) for digit in range(10))
SPLITS = ("train", "validation")


@dataclass(frozen=True)
class DemoSet:
    """The demo set: images (uint8, N × 128 × 128), each one's boxes and split."""

    images: np.ndarray
    labels: list[ImageBoxes]
    splits: list[str]
    class_names: tuple[str, ...] = CLASS_NAMES

    def __len__(self) -> int:
        return len(self.images)


@cache
def _mnist() -> tuple[list[np.ndarray], np.ndarray]:
    """MNIST-10k's digits, each cropped to its ink (its pixels of half intensity or more), and
    their labels; read as the bundled dataset is."""
    x, y = load_arrays(DatasetChoice(source="bundled", name=MNIST_10K.name))
    digits = x.reshape(len(x), 28, 28)
    rows, cols = (digits >= 128).any(axis=2), (digits >= 128).any(axis=1)
    top, left = rows.argmax(axis=1), cols.argmax(axis=1)
    bottom, right = 28 - rows[:, ::-1].argmax(axis=1), 28 - cols[:, ::-1].argmax(axis=1)
    return [digit[t:b, s:e] for digit, t, b, s, e
            in zip(digits, top, bottom, left, right, strict=True)], y


def _digit(crop: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
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


def _place(box: np.ndarray, size: tuple[int, int], tries: np.ndarray, boxes: list[np.ndarray]
           ) -> np.ndarray | None:
    """Where a digit of ``size`` (height, width), its ink at ``box`` within it, goes: the
    first of ``tries`` (uniform 0..1, TRIES × 2) whose box overlaps none of ``boxes`` by an
    IoU over MAX_IOU; its box in the image, or None if no try fits."""
    height, width = size
    corners = np.floor(tries * [SIDE - width + 1, SIDE - height + 1])
    candidates = np.concatenate([corners + box[:2], corners + box[2:]], axis=1)
    if not boxes:
        return candidates[0]
    fits = np.flatnonzero(iou_matrix(candidates, np.stack(boxes)).max(axis=1) <= MAX_IOU)
    return candidates[fits[0]] if len(fits) else None


def _image(rng: np.random.Generator, crops: list[np.ndarray], y: np.ndarray, pool: range
           ) -> tuple[np.ndarray, ImageBoxes]:
    """One image of digits drawn from ``pool`` (indices into crops), and its boxes."""
    low, high, step = BACKGROUND
    levels = np.frombuffer(rng.bytes(SIDE * SIDE), np.uint8).reshape(SIDE, SIDE)
    canvas = levels % ((high - low) // step + 1) * step + low  # bytes: 6 times faster to draw
    n = int(rng.integers(DIGITS[0], DIGITS[1] + 1))
    indices = rng.integers(pool.start, pool.stop, n)
    sides = rng.integers(DIGIT_SIDE[0], DIGIT_SIDE[1] + 1, n)
    darks = rng.integers(0, DARKEST + 1, n)
    tries = rng.random((n, TRIES, 2))
    boxes: list[np.ndarray] = []
    classes: list[int] = []
    for index, side, dark, where in zip(indices, sides, darks, tries, strict=True):
        ink, box = _digit(crops[index], int(side))
        placed = _place(box, ink.shape, where, boxes)
        if placed is None:
            continue
        left, top = int(placed[0] - box[0]), int(placed[1] - box[1])
        patch = canvas[top:top + ink.shape[0], left:left + ink.shape[1]]
        patch[:] = np.round(patch * (1 - ink) + dark * ink)
        boxes.append(placed)
        classes.append(int(y[index]))
    return canvas, ImageBoxes(np.asarray(boxes), classes)


def generate(train: int = 4_000, validation: int = 500, seed: int = SEED,
             on_progress: Progress | None = None, stop: threading.Event | None = None
             ) -> DemoSet:
    """Draw the demo set anew: ``train`` then ``validation`` images. ``on_progress(what, done,
    total)`` is called every PROGRESS_EVERY images; setting ``stop`` ends it with a DataError."""
    crops, y = _mnist()
    images, labels, splits = [], [], []
    total = train + validation
    for split_index, (split, n) in enumerate(zip(SPLITS, (train, validation), strict=True)):
        pool = range(0, TRAIN_DIGITS) if split == "train" else range(TRAIN_DIGITS, len(y))
        for index in range(n):
            if len(images) % PROGRESS_EVERY == 0:
                _progress(on_progress, stop, len(images), total)
            image, boxes = _image(np.random.default_rng((seed, split_index, index)), crops, y,
                                  pool)
            images.append(image)
            labels.append(boxes)
            splits.append(split)
    _progress(on_progress, stop, total, total)
    return DemoSet(np.stack(images) if images else np.zeros((0, SIDE, SIDE), np.uint8),
                   labels, splits)


def _progress(on_progress: Progress | None, stop: threading.Event | None, done: int,
              total: int) -> None:
    if stop is not None and stop.is_set():
        raise DataError("Drawing the detection demo set was cancelled.")
    if on_progress is not None:
        on_progress("Drawing the detection demo set", done, total)


def cache_path(train: int, validation: int) -> Path:
    """Where the demo set of this size is cached: ``<workspace>/datasets/`` with the version
    and the size in its name."""
    return datasets_dir() / f"detection-demo-v{VERSION}-{train}-{validation}.npz"


def _save(path: Path, demo: DemoSet) -> None:
    counts = np.asarray([len(boxes) for boxes in demo.labels], np.int32)
    with atomic_file(path) as out:
        np.savez(  # uncompressed: noise hardly compresses, and this reads 20 times faster
            out, images=demo.images, counts=counts,
            boxes=np.concatenate([b.boxes for b in demo.labels] or [np.zeros((0, 4))]),
            classes=np.concatenate([b.classes for b in demo.labels] or [np.zeros(0)]),
            validation=np.asarray([split == "validation" for split in demo.splits]))


def _load(path: Path, train: int, validation: int) -> DemoSet | None:
    """The cached set, or None if there is none or it is damaged (then it is deleted)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as archive:
            images, counts = archive["images"], archive["counts"]
            boxes, classes = archive["boxes"], archive["classes"]
            in_validation = archive["validation"]
        if images.shape != (train + validation, SIDE, SIDE) or counts.sum() != len(boxes):
            raise ValueError("the cached demo set has the wrong shape")
    except (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile, zlib.error):
        path.unlink(missing_ok=True)
        return None
    ends = np.cumsum(counts)
    labels = [ImageBoxes(boxes[end - n:end], classes[end - n:end])
              for n, end in zip(counts, ends, strict=True)]
    return DemoSet(images, labels, ["validation" if v else "train" for v in in_validation])


def demo_set(train: int = 4_000, validation: int = 500, on_progress: Progress | None = None,
             stop: threading.Event | None = None) -> DemoSet:
    """The demo set of ``train`` + ``validation`` images, read from the cache, or drawn (with
    progress; ``stop`` cancels it with a DataError) and cached on first use."""
    path = cache_path(train, validation)
    demo = _load(path, train, validation)
    if demo is None:
        demo = generate(train, validation, on_progress=on_progress, stop=stop)
        _save(path, demo)
    return demo


def write_demo(root: Path, format_name: str, demo: DemoSet) -> None:
    """Write the demo set as a dataset in ``format_name`` (``yolo``, ``voc``, ``coco`` or
    ``kitti``) in the new folder ``root``, images named by their index."""
    items = [LabelledImage(f"{index:06d}", image, boxes, split) for index, (image, boxes, split)
             in enumerate(zip(demo.images, demo.labels, demo.splits, strict=True))]
    write_detection(root, format_name, items, list(demo.class_names))
