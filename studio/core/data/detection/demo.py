"""The offline detection demo set, made deterministically from the bundled MNIST-10k: 128 × 128
grey images of light noise with 1 to 5 dark digits each, each scaled so its larger side is 14
to 48 pixels, boxed tightly around its ink; the class is the digit.

The digits are drawn as ``digit_canvas`` draws them, their boxes overlapping at most a little
(IoU ≤ 0.1); see there for the seeds, the splits and the cache. VERSION is part of the cached
file's name, so a change to the drawing makes it anew.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.core.base.events import Progress
from studio.core.data import digit_canvas
from studio.core.data.detection.formats import write_detection
from studio.core.data.detection.record import LabelledImage
from studio.core.data.digit_canvas import BACKGROUND, TRAIN_DIGITS, Layout
from studio.core.data.digit_canvas import mnist_digits as _mnist
from studio.core.tasks.detection.boxes import ImageBoxes

__all__ = ["BACKGROUND", "TRAIN_DIGITS", "DemoSet", "cache_path", "demo_set", "generate",
           "write_demo"]

VERSION = 1
SEED = 23
SIDE = 128
DIGITS = (1, 5)
DIGIT_SIDE = (14, 48)
"""The smallest and largest larger side a digit is scaled to, in pixels."""
MAX_IOU = 0.1
LAYOUT = Layout(SIDE, DIGITS, DIGIT_SIDE, MAX_IOU)
WHAT = "Drawing the detection demo set"
CLASS_NAMES = tuple(str(digit) for digit in range(10))


@dataclass(frozen=True)
class DemoSet:
    """The demo set: images (uint8, N × 128 × 128), each one's boxes and split."""

    images: np.ndarray
    labels: list[ImageBoxes]
    splits: list[str]
    class_names: tuple[str, ...] = CLASS_NAMES

    def __len__(self) -> int:
        return len(self.images)


def _image(rng: np.random.Generator, crops: list[np.ndarray], y: np.ndarray, pool: range
           ) -> tuple[np.ndarray, ImageBoxes]:
    """One image of digits drawn from ``pool`` (indices into crops), and its boxes."""
    canvas, digits = digit_canvas.draw_canvas(rng, crops, y, pool, LAYOUT)
    return canvas, ImageBoxes(np.asarray([d.box for d in digits]), [d.label for d in digits])


def generate(train: int = 4_000, validation: int = 500, seed: int = SEED,
             on_progress: Progress | None = None, stop: threading.Event | None = None
             ) -> DemoSet:
    """Draw the demo set anew: ``train`` then ``validation`` images. ``on_progress(what, done,
    total)`` is called every PROGRESS_EVERY images; setting ``stop`` ends it with a DataError."""
    drawn, splits = digit_canvas.draw_splits(
        (train, validation), seed, _mnist(), _image,
        lambda done, total: _progress(on_progress, stop, done, total))
    images = [image for image, _ in drawn]
    return DemoSet(np.stack(images) if images else np.zeros((0, SIDE, SIDE), np.uint8),
                   [boxes for _, boxes in drawn], splits)


def _progress(on_progress: Progress | None, stop: threading.Event | None, done: int,
              total: int) -> None:
    digit_canvas.report_progress(on_progress, stop, WHAT, done, total)


def cache_path(train: int, validation: int) -> Path:
    """Where the detection demo set of this size is cached, its VERSION in the name."""
    return digit_canvas.cache_file(f"detection-demo-v{VERSION}", train, validation)


def _arrays(demo: DemoSet) -> dict[str, np.ndarray]:
    return {"images": demo.images,
            "counts": np.asarray([len(boxes) for boxes in demo.labels], np.int32),
            "boxes": np.concatenate([b.boxes for b in demo.labels] or [np.zeros((0, 4))]),
            "classes": np.concatenate([b.classes for b in demo.labels] or [np.zeros(0)]),
            "validation": np.asarray([split == "validation" for split in demo.splits])}


def _read(arrays: Mapping[str, np.ndarray], train: int, validation: int) -> DemoSet:
    images, counts = arrays["images"], arrays["counts"]
    boxes, classes = arrays["boxes"], arrays["classes"]
    if images.shape != (train + validation, SIDE, SIDE) or counts.sum() != len(boxes):
        raise ValueError("the cached demo set has the wrong shape")
    ends = np.cumsum(counts)
    labels = [ImageBoxes(boxes[end - n:end], classes[end - n:end])
              for n, end in zip(counts, ends, strict=True)]
    return DemoSet(images, labels, ["validation" if v else "train" for v in arrays["validation"]])


def demo_set(train: int = 4_000, validation: int = 500, on_progress: Progress | None = None,
             stop: threading.Event | None = None) -> DemoSet:
    """The demo set of ``train`` + ``validation`` images, read from the cache, or drawn (with
    progress; ``stop`` cancels it with a DataError) and cached on first use."""
    return digit_canvas.cached(
        cache_path(train, validation), lambda arrays: _read(arrays, train, validation),
        lambda: generate(train, validation, on_progress=on_progress, stop=stop), _arrays)


def write_demo(root: Path, format_name: str, demo: DemoSet) -> None:
    """Write the demo set as a dataset in ``format_name`` (``yolo``, ``voc``, ``coco`` or
    ``kitti``) in the new folder ``root``, images named by their index."""
    items = [LabelledImage(f"{index:06d}", image, boxes, split) for index, (image, boxes, split)
             in enumerate(zip(demo.images, demo.labels, demo.splits, strict=True))]
    write_detection(root, format_name, items, list(demo.class_names))
