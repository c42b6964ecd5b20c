"""The health report of a segmentation dataset (``SegmentationHealth.to_dict``, with the folder
and layout of ``describe_dict``): every check counted and explained, and charts of each class's
pixels and of the images holding it."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtWidgets import QVBoxLayout, QWidget

from studio.core.base.messages import count
from studio.core.data.types import LoadedData
from studio.core.inference.mask_files import is_background
from studio.gui.data.detection_health import TITLE_COLOUR, TITLE_SIZE, checks_table, titled_chart

CHECKS: dict[str, tuple[str, str]] = {
    "unusable_images": ("Image files that cannot be used", "left out"),
    "unusable_masks": ("Masks that cannot be read as classes", "their images left out"),
    "missing_masks": ("Images without a mask", "left out"),
    "size_mismatch": ("Masks of another size than their image", "their images left out"),
    "no_image": ("Masks without an image", "not used"),
    "lossy_masks": ("JPEG masks (edges change classes)", "read, but save them as PNG"),
    "wide_masks": ("16-bit masks", "read as class indices"),
    "unknown_values": ("Masks with values that are no class", "those pixels ignored"),
    "unknown_colours": ("Masks with colours the table lacks", "those pixels ignored"),
    "empty_masks": ("Masks holding only background", "used: they teach background"),
    "absent_classes": ("Classes with no pixel in any mask", "cannot be learnt"),
}
"""Each check of the core report: its title and what is done with what it finds."""
PIXEL_COLOUR = "#1a73e8"
IMAGE_COLOUR = "#e8710a"
PIXELS_TIP = "How many mask pixels each class covers, over every image"
IMAGES_TIP = "How many images hold at least one pixel of each class"


def _summary(report: dict[str, Any]) -> str:
    where = (f"<b>{escape(report['root'])}</b> ({escape(report['layout_title'])}): "
             if report.get("root") else "")
    splits = {name: n for name, n in (report.get("splits") or {}).items() if n}
    split_text = (" (" + ", ".join(f"{name} {n:,}" for name, n in splits.items()) + ")"
                  if splits else "")
    total = max(report["total_pixels"], 1)
    shares = sorted(report["classes"], key=lambda c: -c["pixels"])
    listed = ", ".join(f"{escape(c['name'])} {100 * c['pixels'] / total:.1f} %"
                       for c in shares if c["pixels"])
    return (f"<p>{where}{count(report['total_images'], 'image')}{split_text}, each with its "
            f"mask, in {count(len(report['classes']), 'class', 'classes')}: "
            f"{report['total_pixels']:,} pixels labelled.</p>"
            f"<p>Share of the pixels: {listed}.</p>")


def segmentation_html(report: dict[str, Any]) -> str:
    """The summary and the table of checks of a segmentation dataset's report as HTML (its
    problems, one sentence each, are the loaded data's notes, listed above it)."""
    return _summary(report) + checks_table(report, CHECKS)


class MaskCharts(QWidget):
    """Bars of a segmentation dataset's classes: their pixels, and the images holding them.
    Background classes are left out (named in the titles): covering most of every image,
    their bars would flatten the others'."""

    def __init__(self) -> None:
        super().__init__()
        self.pixels = titled_chart("Pixels per class", "pixels")
        self.pixels.setObjectName("class-pixels")
        self.images = titled_chart("Images per class", "images")
        self.images.setObjectName("class-images")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.pixels)
        column.addWidget(self.images)

    def show_data(self, loaded: LoadedData) -> bool:
        """Chart the report of ``loaded`` (``SegmentationHealth.to_dict``): always something."""
        classes = (loaded.report or {})["classes"]
        shown = [c for c in classes if not is_background(c["name"])] or classes
        left_out = [c for c in classes if c not in shown]
        total = max(sum(c["pixels"] for c in classes), 1)
        aside = " (" + ", ".join(c["name"] for c in left_out) + " left out)" if left_out else ""
        names = [c["name"] for c in shown]
        for chart, key, colour, title, tip in (
                (self.pixels, "pixels", PIXEL_COLOUR, "Pixels per class", PIXELS_TIP),
                (self.images, "images", IMAGE_COLOUR, "Images per class", IMAGES_TIP)):
            chart.setTitle(title + aside, color=TITLE_COLOUR, size=TITLE_SIZE)
            chart.setToolTip(tip + "".join(
                f"; {c['name']} ({c[key]:,} {key}, {100 * c['pixels'] / total:.0f} % of the "
                "pixels) is left out: it would dwarf the others" for c in left_out))
            chart.show_bars(names, {key: ([c[key] for c in shown], colour)})
        return True
