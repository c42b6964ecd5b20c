"""The offline segmentation demo set, made deterministically from the bundled MNIST-10k: 64 × 64
grey images of light noise with 1 to 3 dark digits each, each scaled so its larger side is 20
to 40 pixels; each digit's ink pixels are labelled with its class, the rest is background.

The mask values index CLASS_NAMES: 0 is the background, 1 + d the digit d. The digits are
drawn as ``digit_canvas`` draws them, with ink boxes that never overlap, so every ink pixel
belongs to one digit; see there for the seeds, the splits and the cache. VERSION is part of the
cached file's name, so a change to the drawing makes it anew.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.core.base.events import Progress
from studio.core.data import digit_canvas
from studio.core.data.detection.writing import save_image, split_folder, writing_folder
from studio.core.data.digit_canvas import Layout
from studio.core.data.digit_canvas import mnist_digits as _mnist

VERSION = 1
SEED = 24
SIDE = 64
LAYOUT = Layout(side=SIDE, digits=(1, 3), digit_side=(20, 40), max_iou=0.0)
WHAT = "Drawing the segmentation demo set"
CLASS_NAMES = ("background", *(str(digit) for digit in range(10)))
BACKGROUND = 0
"""The mask value of pixels no digit's ink covers."""
CLASSES_FILE = "classes.txt"
"""The file of a written demo set naming its classes, one a line in the order of their
values."""


@dataclass(frozen=True)
class DemoSet:
    """The demo set: images and their masks (uint8, N × 64 × 64 each), and each one's split."""

    images: np.ndarray
    masks: np.ndarray
    splits: list[str]
    class_names: tuple[str, ...] = CLASS_NAMES

    def __len__(self) -> int:
        return len(self.images)


def _image(rng: np.random.Generator, crops: list[np.ndarray], y: np.ndarray, pool: range
           ) -> tuple[np.ndarray, np.ndarray]:
    """One image of digits drawn from ``pool`` (indices into crops), and its mask."""
    canvas, digits = digit_canvas.draw_canvas(rng, crops, y, pool, LAYOUT)
    mask = np.full_like(canvas, BACKGROUND)
    for digit in digits:
        mask[digit.window()][digit.ink > 0] = 1 + digit.label
    return canvas, mask


def generate(train: int = 4_000, validation: int = 500, seed: int = SEED,
             on_progress: Progress | None = None, stop: threading.Event | None = None
             ) -> DemoSet:
    """The images and masks of ``train`` then ``validation`` canvases, drawn anew with
    ``seed``; progress and ``stop`` as ``digit_canvas.draw_splits`` and ``report_progress``
    take them (``stop`` ends it with a DataError)."""
    drawn, splits = digit_canvas.draw_splits(
        (train, validation), seed, _mnist(), _image,
        lambda done, total: digit_canvas.report_progress(on_progress, stop, WHAT, done, total))
    empty = np.zeros((0, SIDE, SIDE), np.uint8)
    return DemoSet(np.stack([image for image, _ in drawn]) if drawn else empty,
                   np.stack([mask for _, mask in drawn]) if drawn else empty, splits)


def cache_path(train: int, validation: int) -> Path:
    """Where the segmentation demo set of this size is cached, its VERSION in the name."""
    return digit_canvas.cache_file(f"segmentation-demo-v{VERSION}", train, validation)


def _arrays(demo: DemoSet) -> dict[str, np.ndarray]:
    return {"images": demo.images, "masks": demo.masks,
            "validation": np.asarray([split == "validation" for split in demo.splits])}


def _read(arrays: Mapping[str, np.ndarray], train: int, validation: int) -> DemoSet:
    images, masks, in_validation = arrays["images"], arrays["masks"], arrays["validation"]
    shape = (train + validation, SIDE, SIDE)
    if images.shape != shape or masks.shape != shape or in_validation.shape != shape[:1]:
        raise ValueError("the cached demo set has the wrong shape")
    return DemoSet(images, masks, ["validation" if v else "train" for v in in_validation])


def demo_set(train: int = 4_000, validation: int = 500, on_progress: Progress | None = None,
             stop: threading.Event | None = None) -> DemoSet:
    """The set ``generate`` draws, of this size, cached in the workspace on first use."""
    return digit_canvas.cached(
        cache_path(train, validation), lambda arrays: _read(arrays, train, validation),
        lambda: generate(train, validation, on_progress=on_progress, stop=stop), _arrays)


def write_demo(root: Path, demo: DemoSet) -> None:
    """Write the demo set as PNG files in the new folder ``root``: ``images/<split>/NAME.png``
    and its mask of class values ``masks/<split>/NAME.png`` (``train`` and ``val``; NAME is
    the image's index), and the class names in CLASSES_FILE. The folder appears whole or not
    at all."""
    with writing_folder(root) as temp:
        for index, (image, mask, split) in enumerate(
                zip(demo.images, demo.masks, demo.splits, strict=True)):
            name = f"{split_folder(split)}/{index:06d}.png"
            save_image(temp / "images" / name, image)
            save_image(temp / "masks" / name, mask)
        (temp / CLASSES_FILE).write_text("".join(f"{name}\n" for name in demo.class_names),
                                         encoding="utf-8")
