"""The health report of a segmentation dataset: every file left out and every pixel ignored is
counted, with examples by file name and one plain-language sentence; plus each class's pixels
and images, and how imbalanced they are.

What is left out and what blocks: an image without a mask, or whose mask cannot be read or
differs from it in size, is left out and counted; a mask without an image is not used; pixels
whose value is no class, or whose colour the colour table lacks, are ignored (IGNORE) and
counted; a JPEG mask is read but warned about (its compression moves values at every edge).
Only a dataset left with no usable image, or with fewer than two classes in its masks, cannot
train (``blocking``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studio.core.base.messages import count, quoted
from studio.core.data.detection.health import Sentence, Tally, _first, _with_detail, checks_report
from studio.core.data.image_folder import IMBALANCE_RATIO

PIXEL_IMBALANCE_RATIO = 100
"""How many times more pixels the largest class may cover than the smallest before the report
calls it strongly imbalanced: background alone often covers most of every image, so the ratio
that matters for pixels is far larger than for images (IMBALANCE_RATIO)."""


def _them(tally: Tally, one: str, many: str) -> str:
    return one if tally.count == 1 else many


CHECKS: dict[str, Sentence] = {
    "unusable_images": lambda t: (
        f"{count(t.count, 'image file cannot', 'image files cannot')} be used and "
        f"{_them(t, 'is', 'are')} left out (e.g. {_with_detail(t)})."),
    "unusable_masks": lambda t: (
        f"{count(t.count, 'mask cannot', 'masks cannot')} be read as class indices, so "
        f"{_them(t, 'its image is', 'their images are')} left out (e.g. {_with_detail(t)})."),
    "missing_masks": lambda t: (
        f"{count(t.count, 'image has', 'images have')} no mask (e.g. {_first(t)}): left out."),
    "size_mismatch": lambda t: (
        f"{count(t.count, 'mask differs', 'masks differ')} in size from "
        f"{_them(t, 'its image', 'their images')}, so {_them(t, 'it is', 'they are')} left "
        f"out (e.g. {_with_detail(t)})."),
    "no_image": lambda t: (
        f"{count(t.count, 'mask has', 'masks have')} no image file (e.g. {_with_detail(t)}): "
        "not used."),
    "lossy_masks": lambda t: (
        f"{count(t.count, 'mask is a JPEG', 'masks are JPEGs')} (e.g. {_first(t)}): JPEG's "
        "lossy compression changes values along every edge, so some pixels have the wrong "
        f"class{', ' + t.detail if t.detail else ''}; save masks as PNG."),
    "wide_masks": lambda t: (
        f"{count(t.count, 'mask is', 'masks are')} 16-bit (e.g. {_first(t)}): "
        f"{_them(t, 'its values fit', 'their values fit')} 8 bits and are read as class "
        "indices."),
    "unknown_values": lambda t: (
        f"{count(t.count, 'mask holds', 'masks hold')} values that are no class (e.g. "
        f"{_with_detail(t)}): those pixels are ignored."),
    "unknown_colours": lambda t: (
        f"{count(t.count, 'mask holds', 'masks hold')} colours the colour table lacks (e.g. "
        f"{_with_detail(t)}): those pixels are ignored."),
    "empty_masks": lambda t: (
        f"{count(t.count, 'mask holds', 'masks hold')} nothing but background or ignored "
        f"pixels (e.g. {_first(t)})."),
    "absent_classes": lambda t: (
        f"{count(t.count, 'class has', 'classes have')} no pixel in any mask (e.g. "
        f"{_first(t)}): a model cannot learn {_them(t, 'it', 'them')}."),
}
"""Each check's sentence, most serious first."""
LEFT_OUT = ("unusable_masks", "unusable_images", "size_mismatch", "missing_masks")
"""The checks that leave images out: why a dataset holds no usable image, the first found."""
IGNORED = ("unknown_values", "unknown_colours")
"""The checks that ignore pixels: why masks may hold fewer than two classes."""


def _extremes(counts: np.ndarray, names: list[str]) -> dict[str, Any] | None:
    """The largest and smallest of the classes present by ``counts``, and their ratio."""
    present = np.flatnonzero(counts)
    if len(present) < 2:
        return None
    big = int(present[np.argmax(counts[present])])
    small = int(present[np.argmin(counts[present])])
    return {"largest": {"name": names[big], "count": int(counts[big])},
            "smallest": {"name": names[small], "count": int(counts[small])},
            "ratio": round(int(counts[big]) / int(counts[small]), 2)}


@dataclass
class SegmentationHealth:
    """What reading a segmentation dataset found: each check's tally (the keys of CHECKS),
    notes, and each class's pixels and images, filled by ``add_mask``."""

    class_names: list[str]
    checks: dict[str, Tally] = field(default_factory=lambda: {key: Tally() for key in CHECKS})
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False
    images: int = 0
    class_pixels: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    class_images: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __post_init__(self) -> None:
        self.class_pixels = np.zeros(len(self.class_names), np.int64)
        self.class_images = np.zeros(len(self.class_names), np.int64)

    def add_mask(self, name: str, pixels: np.ndarray) -> None:
        """Count a kept mask (the file ``name``) holding ``pixels`` of each class (int64 C)."""
        self.images += 1
        self.class_pixels += pixels
        self.class_images += pixels > 0
        if not pixels[1:].any():
            self.checks["empty_masks"].add(name)

    def finish(self) -> None:
        """Count the classes no mask holds, once every mask is added."""
        for index in np.flatnonzero(self.class_pixels == 0):
            self.checks["absent_classes"].add(self.class_names[index])

    def imbalance(self) -> dict[str, dict[str, Any] | None]:
        """The largest and smallest class (among those present) by pixels and by images, their
        ratio, and whether it is strong."""
        out: dict[str, dict[str, Any] | None] = {}
        for key, counts, ratio in (("pixels", self.class_pixels, PIXEL_IMBALANCE_RATIO),
                                   ("images", self.class_images, IMBALANCE_RATIO)):
            extremes = _extremes(counts, self.class_names)
            out[key] = extremes and {**extremes, "strong": extremes["ratio"] >= ratio}
        return out

    def imbalance_sentences(self) -> list[str]:
        """A sentence for each strong imbalance, in pixels and in images."""
        sentences = []
        for key, found in self.imbalance().items():
            if found and found["strong"]:
                big, small = found["largest"], found["smallest"]
                sentences.append(
                    f"The classes are strongly imbalanced in {key}: {quoted(big['name'])} has "
                    f"{big['count']:,} {key}, {quoted(small['name'])} only {small['count']:,} "
                    f"({found['ratio']:,.0f} times fewer): weight the loss by class, or add "
                    "images of the rare class.")
        return sentences

    def _cause(self, keys: tuple[str, ...]) -> str | None:
        """The first of the checks ``keys`` that found something: why the dataset blocks."""
        return next((key for key in keys if self.checks[key].count), None)

    def _blocking(self) -> tuple[str, str | None]:
        """What keeps a segmentation model from training on the dataset ("" if nothing
        does), and the check whose sentence says why, if one does (said after it)."""
        if self.cancelled:
            return "Reading the segmentation dataset was cancelled.", None
        if not self.images:
            return "The dataset holds no usable image with a mask.", self._cause(LEFT_OUT)
        present = int((self.class_pixels > 0).sum())
        if present < 2:
            return (f"The masks hold {'one class' if present else 'no class'} only: "
                    "segmentation needs pixels of two classes or more.",
                    self._cause(IGNORED))
        return "", None

    def blocking(self) -> list[str]:
        """What keeps a segmentation model from training on the dataset, on one line with the
        check that says why, if one does (empty if nothing keeps it)."""
        what, cause = self._blocking()
        if not what:
            return []
        return [f"{what} {CHECKS[cause](self.checks[cause])}" if cause else what]

    def problems(self) -> list[str]:
        """One sentence for each check that found something, most serious first (the one a
        blocking sentence says is not said again), then the imbalances."""
        cause = self._blocking()[1]
        return [*self.blocking(), *(sentence(self.checks[key]) for key, sentence
                                    in CHECKS.items() if self.checks[key].count
                                    and key != cause),
                *self.imbalance_sentences()]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-serialisable data."""
        return {
            "total_images": self.images,
            "total_pixels": int(self.class_pixels.sum()),
            "classes": [{"name": name, "pixels": int(pixels), "images": int(images)}
                        for name, pixels, images in zip(self.class_names, self.class_pixels,
                                                        self.class_images, strict=True)],
            "imbalance": self.imbalance(),
            **checks_report(self.checks, CHECKS, self.cancelled, self.notes, self.problems(),
                            self.blocking()),
        }
