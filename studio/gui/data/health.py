"""The data health report: problems to look at, skipped files, duplicates, sizes and modes."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QTextBrowser, QVBoxLayout, QWidget

from studio.core.base.messages import count
from studio.core.data.types import LoadedData
from studio.core.model.params import format_shape
from studio.gui.data.charts import BarChart
from studio.gui.data.detection_health import BoxCharts, detection_html, used
from studio.gui.data.samples import has_boxes

SIZE_COLOUR = "#1a73e8"
MODE_COLOUR = "#9334e6"
OK = "#188038"
WARN = "#b06000"


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def _problems(notes: list[str]) -> str:
    if not notes:
        return f"<p style='color:{OK}'>✔ No problems found.</p>"
    return (f"<h3 style='color:{WARN}'>⚠ {count(len(notes), 'thing')} to look at</h3>"
            + _list(notes))


def _skipped(report: dict[str, Any]) -> str:
    if not report["skipped"]:
        return ""
    parts = [f"<h3>Skipped files ({report['total_skipped']:,})</h3>"]
    for reason, entry in report["skipped"].items():
        more = entry["count"] - len(entry["examples"])
        examples = entry["examples"] + ([f"… and {more:,} more"] if more > 0 else [])
        parts.append(f"<p><b>{escape(reason)}</b>: {entry['count']:,}</p>" + _list(examples))
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
    return text + "</p>" + _list(groups)


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
        text += "<h3>Folders that could not be read</h3>" + _list(folders)
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
        text += "<h3>Columns left out</h3>" + _list(
            [f"{c['column']}: {c['reason']}" for c in report["left_out"]])
    if report["missing_values"]:
        text += "<h3>Missing values</h3>" + _list(
            [f"{name}: {n:,}" for name, n in report["missing_values"].items()])
    if "label_range" in report:
        spread = report["label_range"]
        text += (f"<p>The label runs from {spread['min']:.4g} to {spread['max']:.4g} "
                 f"(mean {spread['mean']:.4g}, standard deviation {spread['std']:.4g}).</p>")
    return text


def report_html(loaded: LoadedData) -> str:
    """The health report of ``loaded`` as HTML for a person."""
    report = loaded.report or {}
    if has_boxes(loaded):
        parts = [detection_html(report)]
    elif "root" in report:
        parts = [_folder_summary(report), _skipped(report), _duplicates(report)]
    elif "file" in report:
        parts = [_table_summary(report)]
    else:
        parts = [f"<p>{count(len(loaded.labels), 'image')} of "
                 f"{format_shape(loaded.samples.x.shape[1:])} held in memory: every image has "
                 "the same size and none can be unreadable.</p>"]
    return _problems(loaded.notes + loaded.split_notes()) + "".join(parts)


class HealthView(QWidget):
    """The report as text, with histograms of image sizes and modes for a folder."""

    def __init__(self) -> None:
        super().__init__()
        self.text = QTextBrowser()
        self.text.setObjectName("health-report")
        self.text.setOpenLinks(False)
        self.sizes = BarChart("images")
        self.sizes.setTitle("Image sizes (larger side, pixels)", color="#202124", size="10pt")
        self.modes = BarChart("images")
        self.modes.setTitle("Image modes", color="#202124", size="10pt")
        self.charts = QWidget()
        column = QVBoxLayout(self.charts)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.sizes)
        column.addWidget(self.modes)
        self.box_charts = BoxCharts()
        layout = QHBoxLayout(self)
        layout.addWidget(self.text, 3)
        layout.addWidget(self.charts, 2)
        layout.addWidget(self.box_charts, 3)
        self.clear("No data yet.")

    def clear(self, message: str) -> None:
        """Show ``message`` instead of a report."""
        self.text.setPlainText(message)
        self.charts.hide()
        self.box_charts.hide()

    def show_data(self, loaded: LoadedData) -> None:
        """Show the report of ``loaded``."""
        self.text.setHtml(report_html(loaded))
        report = loaded.report or {}
        boxes = has_boxes(loaded)
        self.box_charts.setVisible(boxes)
        if boxes:
            self.charts.hide()
            self.box_charts.show_report(report)
            return
        self.charts.setVisible(bool(report.get("total_images")))
        if self.charts.isVisibleTo(self):
            buckets = used(report["size_histogram"], "count")
            self.sizes.show_bars([b["larger_side"] for b in buckets],
                                 {"images": ([b["count"] for b in buckets], SIZE_COLOUR)})
            modes = report["modes"]
            self.modes.show_bars(list(modes), {"images": (list(modes.values()), MODE_COLOUR)})
