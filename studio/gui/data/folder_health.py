"""The health report of data whose labels are a class or a number per sample: a folder of
class folders, a CSV file or images held in memory; with charts of a folder's image sizes and
modes."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtWidgets import QVBoxLayout, QWidget

from studio.core.base.messages import count
from studio.core.data.types import LoadedData
from studio.core.model.params import format_shape
from studio.gui.data.bars import BarChart, used

SIZE_COLOUR = "#1a73e8"
MODE_COLOUR = "#9334e6"


def html_list(items: list[str]) -> str:
    """``items`` as an HTML bullet list, each escaped."""
    return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def _skipped(report: dict[str, Any]) -> str:
    if not report["skipped"]:
        return ""
    parts = [f"<h3>Skipped files ({report['total_skipped']:,})</h3>"]
    for reason, entry in report["skipped"].items():
        more = entry["count"] - len(entry["examples"])
        examples = entry["examples"] + ([f"… and {more:,} more"] if more > 0 else [])
        parts.append(f"<p><b>{escape(reason)}</b>: {entry['count']:,}</p>" + html_list(examples))
    return "".join(parts)


def _duplicates(report: dict[str, Any]) -> str:
    duplicates = report["duplicates"]
    if not duplicates["groups"]:
        return ""
    groups = duplicates["groups"]
    text = (f"<h3>Exact duplicates</h3><p>{count(groups, 'image')} "
            f"{'has' if groups == 1 else 'have'} copies "
            f"({count(duplicates['extra_copies'], 'extra file')}); "
            f"{duplicates['across_classes']:,} of them in more than one class.")
    if duplicates["across_splits"]:
        text += (f" {duplicates['across_splits']:,} fall in more than one split, so validation "
                 "or test see images that training saw (leakage).")
    groups = [" = ".join(group) for group in duplicates["examples"]]
    return text + "</p>" + html_list(groups)


def _folder_summary(report: dict[str, Any]) -> str:
    others = []
    if report["non_image_files"]:
        others.append(f"{count(report['non_image_files'], 'file')} that are not images")
    if report["loose_images"]:
        others.append(f"{count(report['loose_images'], 'image')} outside the class folders")
    text = (f"<p><b>{escape(report['root'])}</b>: {count(report['total_images'], 'image')} in "
            f"{count(len(report['classes']), 'class', 'classes')}, "
            f"{report['total_skipped']:,} skipped")
    text += (f"; also {' and '.join(others)}, ignored" if others else "") + ".</p>"
    sizes = ", ".join(f"{s['width']}×{s['height']} ({s['count']:,})" for s in report["sizes"])
    if sizes:
        text += f"<p>Most common sizes (width × height): {sizes}.</p>"
    folders = report.get("unreadable_folders") or []
    if folders:
        text += "<h3>Folders that could not be read</h3>" + html_list(folders)
    return text


def _table_summary(report: dict[str, Any]) -> str:
    skipped = report["rows_skipped"]
    text = (f"<p><b>{escape(report['file'])}</b>: {count(report['rows'], 'row')} read "
            f"({escape(report['encoding'])}, {escape(report['delimiter'])}-separated)")
    if skipped:
        text += "; skipped: " + ", ".join(f"{n:,} ({escape(k.replace('_', ' '))})"
                                          for k, n in skipped.items())
    text += (f".</p><p>Label: <b>{escape(report['label_column'])}</b>. Learning from: "
             f"{escape(', '.join(report['features']))}.</p>")
    if report["left_out"]:
        text += "<h3>Columns left out</h3>" + html_list(
            [f"{c['column']}: {c['reason']}" for c in report["left_out"]])
    if report["missing_values"]:
        text += "<h3>Missing values</h3>" + html_list(
            [f"{name}: {n:,}" for name, n in report["missing_values"].items()])
    if "label_range" in report:
        spread = report["label_range"]
        text += (f"<p>The label runs from {spread['min']:.4g} to {spread['max']:.4g} "
                 f"(mean {spread['mean']:.4g}, standard deviation {spread['std']:.4g}).</p>")
    return text


def samples_html(loaded: LoadedData) -> str:
    """The report of ``loaded`` (a folder's, a CSV file's or arrays') as HTML for a person."""
    report = loaded.report or {}
    if "root" in report:
        return _folder_summary(report) + _skipped(report) + _duplicates(report)
    if "file" in report:
        return _table_summary(report)
    return (f"<p>{count(len(loaded.labels), 'image')} of "
            f"{format_shape(loaded.samples.x.shape[1:])} held in memory: every image has "
            "the same size and none can be unreadable.</p>")


class FolderCharts(QWidget):
    """Bars of a folder's image sizes and modes."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes = BarChart("images")
        self.sizes.setTitle("Image sizes (larger side, pixels)", color="#202124", size="10pt")
        self.modes = BarChart("images")
        self.modes.setTitle("Image modes", color="#202124", size="10pt")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.sizes)
        column.addWidget(self.modes)

    def show_data(self, loaded: LoadedData) -> bool:
        """Chart the images of a folder; False for other data (nothing to chart)."""
        report = loaded.report or {}
        if not report.get("total_images"):
            return False
        buckets = used(report["size_histogram"], "count")
        self.sizes.show_bars([b["larger_side"] for b in buckets],
                             {"images": ([b["count"] for b in buckets], SIZE_COLOUR)})
        modes = report["modes"]
        self.modes.show_bars(list(modes), {"images": (list(modes.values()), MODE_COLOUR)})
        return True
