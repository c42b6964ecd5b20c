"""The health report of a detection dataset (``DetectionHealth.to_dict``, with the format and
folder of ``describe_dict``): every check counted and explained, and charts of the boxes per
class, boxes per image and box sizes relative to the image."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtWidgets import QGridLayout, QWidget

from studio.core.base.messages import count
from studio.core.data.detection.formats import FORMATS
from studio.core.data.types import LoadedData
from studio.gui.data.bars import BarChart, used

CHECKS: dict[str, tuple[str, str]] = {
    "unusable_images": ("Image files that cannot be used", "left out"),
    "unreadable_labels": ("Label files that cannot be read", "their images left out"),
    "missing_labels": ("Images without a label file", "used as background"),
    "empty_labels": ("Label files listing no object", "used as background"),
    "no_image": ("Label files without an image", "not used"),
    "non_finite": ("Boxes with NaN or infinite coordinates", "dropped"),
    "unknown_class": ("Boxes of an unknown class id", "dropped"),
    "empty_boxes": ("Boxes of zero or negative area", "dropped"),
    "outside": ("Boxes wholly outside their image", "dropped"),
    "clipped": ("Boxes reaching outside their image", "clipped to the edges"),
    "duplicates": ("Duplicate boxes (same class, same place)", "copies dropped"),
    "capped": ("Images with too many boxes", "first boxes kept"),
    "dont_care": ("KITTI DontCare regions", "ignored"),
    "crowd": ("COCO crowd annotations", "ignored"),
}
"""Each check of the core report: its title and what is done with what it finds."""
FORMAT_SPECIFIC = ("dont_care", "crowd")
"""Checks listed only when they find something (they concern one format)."""
OK = "#188038"
WARN = "#b06000"
CLASS_COLOUR = "#1a73e8"
PER_IMAGE_COLOUR = "#e8710a"
SIZE_COLOUR = "#9334e6"
TITLE_COLOUR = "#202124"
TITLE_SIZE = "10pt"


def format_title(name: str) -> str:
    """``YOLO`` for ``yolo``; the name itself for one the formats do not know."""
    return FORMATS[name].TITLE if name in FORMATS else name


def _summary(report: dict[str, Any]) -> str:
    where = (f"<b>{escape(report['root'])}</b> ({escape(format_title(report['format']))} "
             "labels): " if report.get("root") else "")
    splits = report.get("splits") or {}
    split_text = (" (" + ", ".join(f"{name} {n:,}" for name, n in splits.items()) + ")"
                  if splits else "")
    per_image = report["boxes_per_image"]
    text = (f"<p>{where}{count(report['total_images'], 'image')}{split_text} with "
            f"{count(report['total_boxes'], 'box', 'boxes')} in "
            f"{count(len(report['classes']), 'class', 'classes')}; "
            f"{count(report['background_images'], 'background image')} (no boxes).</p>"
            f"<p>Boxes per image: {per_image['min']:,} to {per_image['max']:,}, "
            f"{per_image['mean']:.2f} on average.</p>")
    return text


def checks_table(report: dict[str, Any], checks: dict[str, tuple[str, str]],
                 listed_if_found: tuple[str, ...] = ()) -> str:
    """The "What was checked" table of a report's ``checks``: each of ``checks`` (key: its
    title and what is done with what it finds) with its count, or a tick if it found nothing;
    those of ``listed_if_found`` only when they found something."""
    rows = []
    for key, (title, outcome) in checks.items():
        found = report["checks"].get(key, {"count": 0})["count"]
        if key in listed_if_found and not found:
            continue
        colour, shown = (WARN, f"{found:,}") if found else (OK, "✔ none")
        rows.append(f"<tr><td>{escape(title)}</td><td align='right' style='color:{colour}'>"
                    f"{shown}</td><td>{escape(outcome) if found else ''}</td></tr>")
    return ("<h3>What was checked</h3><table cellspacing='0' cellpadding='3'>"
            "<tr><th align='left'>Check</th><th align='right'>Found</th>"
            "<th align='left'>What happens</th></tr>" + "".join(rows) + "</table>")


def detection_html(report: dict[str, Any]) -> str:
    """The summary and the table of checks of a detection dataset's report as HTML (its
    problems, one sentence each, are the loaded data's notes, listed above it)."""
    return _summary(report) + checks_table(report, CHECKS, FORMAT_SPECIFIC)


def titled_chart(title: str, left: str) -> BarChart:
    """A bar chart titled ``title``, its left axis counting ``left``."""
    chart = BarChart(left)
    chart.setTitle(title, color=TITLE_COLOUR, size=TITLE_SIZE)
    return chart


class BoxCharts(QWidget):
    """Bars of a detection dataset's boxes: per class, per image, and by size."""

    def __init__(self) -> None:
        super().__init__()
        self.classes = titled_chart("Boxes per class", "boxes")
        self.classes.setObjectName("boxes-per-class")
        self.per_image = titled_chart("Boxes / image", "images")  # short: it shares a row
        self.per_image.setToolTip("How many images hold no box, 1 box, 2, 3 to 5, …")
        self.per_image.setObjectName("boxes-per-image")
        self.sizes = titled_chart("Box sizes", "boxes")
        self.sizes.setObjectName("box-sizes")
        self.sizes.setToolTip("The square root of a box's area over its image's: ≤1/8 means "
                              "a box about an eighth of the image across, or smaller")
        grid = QGridLayout(self)  # two rows, as the image folder's two charts
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.classes, 0, 0, 1, 2)
        grid.addWidget(self.per_image, 1, 0)
        grid.addWidget(self.sizes, 1, 1)

    def show_data(self, loaded: LoadedData) -> bool:
        """Chart the report of ``loaded`` (``DetectionHealth.to_dict``): always something."""
        report = loaded.report or {}
        classes = report["classes"]
        self.classes.show_bars([c["name"] for c in classes],
                               {"boxes": ([c["boxes"] for c in classes], CLASS_COLOUR)})
        bars = used(report["boxes_per_image"]["histogram"], "images")
        self.per_image.show_bars([b["boxes"] for b in bars],
                                 {"images": ([b["images"] for b in bars], PER_IMAGE_COLOUR)})
        sizes = used(report["box_sizes"], "boxes")
        self.sizes.show_bars([b["relative_side"] for b in sizes],
                             {"boxes": ([b["boxes"] for b in sizes], SIZE_COLOUR)})
        return True
