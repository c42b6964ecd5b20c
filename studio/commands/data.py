"""``studio data PATH``: the health report of an image folder (one subfolder per class), a
detection dataset, a segmentation dataset or a CSV file, as text or JSON; exit 1 if a problem
blocks training."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from studio.commands.ctrl_c import ctrl_c_stops
from studio.commands.errors import CliError, UsageError
from studio.core.base.messages import count


def add_parser(sub) -> None:
    """The ``data`` command's arguments."""
    data = sub.add_parser("data", help="check an image folder (one subfolder per class), a "
                          "detection or segmentation dataset or a CSV file and print its "
                          "health report",
                          description="Print the health report of an image folder (one "
                          "subfolder per class), a detection dataset (images with YOLO, "
                          "Pascal VOC, COCO or KITTI box labels, found by themselves), a "
                          "segmentation dataset (images with masks) or a CSV file.",
                          epilog="Exit code 0 when the data can be trained on (warnings may "
                          "be printed), 1 when a problem blocks training, 2 for a path or "
                          "arguments that cannot be used.")
    data.add_argument("path", type=Path)
    data.add_argument("--json", action="store_true", help="print the report as JSON")
    data.add_argument("--label", default="", help="CSV: the label column (default: the last)")
    data.add_argument("--text", default="", help="CSV: the column holding texts")
    data.add_argument("--regression", action="store_true",
                      help="CSV: the label is a number to predict, not a class")
    data.add_argument("--format", choices=("yolo", "voc", "coco", "kitti"), default=None,
                      help="a folder: read it as a detection dataset in this label format "
                      "(default: found by itself)")
    data.add_argument("--segmentation", action="store_true",
                      help="a folder: read it as a segmentation dataset (default: when it "
                      "holds masks and no box labels)")
    data.add_argument("--masks", type=Path, default=None,
                      help="segmentation: the separate folder of masks of the images in path")


def _with_problems(lines: list[str], report: dict) -> str:
    """``lines`` and a line per problem of ``report`` (or that there is none), as text."""
    lines += [f"Problem: {p}" for p in report["problems"]]
    if not report["problems"]:
        lines.append("No problems found.")
    return "\n".join(lines)


def _report_text(report: dict) -> str:
    lines = [f"{report['root']}: {report['total_images']} images in "
             f"{len(report['classes'])} classes"]
    lines += [f"  {c['name']}: {c['images']}" for c in report["classes"]]
    for reason, entry in report["skipped"].items():
        lines.append(f"Skipped {entry['count']}: {reason}, e.g. {entry['examples'][0]}")
    if report["non_image_files"]:
        lines.append(f"Other files (not images): {report['non_image_files']}")
    if report["modes"]:
        lines.append("Modes: " + ", ".join(f"{m} {n}" for m, n in report["modes"].items()))
    if report["sizes"]:
        lines.append("Sizes: " + ", ".join(f"{s['width']}x{s['height']} {s['count']}"
                                          for s in report["sizes"]))
        lines.append("Larger side: " + ", ".join(f"{b['larger_side']} {b['count']}"
                                                for b in report["size_histogram"] if b["count"]))
    return _with_problems(lines, report)


def _table_text(report: dict) -> str:
    lines = [f"{report['file']}: {report['rows']} rows, {report['kind']} {report['task']}"]
    if report["text_column"]:
        lines.append(f"Text column: {report['text_column']}")
    else:
        lines.append("Features: " + ", ".join(report["features"]))
    lines.append(f"Label column: {report['label_column']}")
    lines += [f"  {c['name']}: {c['rows']}" for c in report.get("classes", [])]
    if "label_range" in report:
        lines.append("  range " + ", ".join(f"{k} {v:.4g}"
                                            for k, v in report["label_range"].items()))
    lines += [f"Note: {n}" for n in report["notes"]]
    return _with_problems(lines, report)


def _scan_report(path: Path, label_format: str | None, segmentation: bool = False,
                 masks: Path | None = None) -> tuple[dict, Callable[[dict], str]]:
    """The health report of the folder ``path`` and how to print it: a segmentation dataset's
    if ``segmentation`` or ``masks`` (its separate masks folder) say so, a detection
    dataset's if it holds box labels (or ``label_format`` says it does), a segmentation
    dataset's if it holds masks, else an image folder's."""
    from studio.core.data.detection.formats import looks_like_detection, read_detection
    from studio.core.data.detection.record import describe_dict
    from studio.core.data.image_folder import health_report, scan_folder
    from studio.core.data.segmentation.layouts import looks_like_segmentation
    from studio.core.data.segmentation.reading import read_segmentation
    from studio.core.data.segmentation.record import describe_dict as describe_masks
    from studio.core.data.types import DataError

    with ctrl_c_stops() as stop:
        try:
            if segmentation or masks is not None:
                return describe_masks(read_segmentation(path, masks, stop=stop)), _masks_text
            if label_format or looks_like_detection(path):
                return (describe_dict(read_detection(path, label_format, stop=stop)),
                        _detection_text)
            if looks_like_segmentation(path):
                return describe_masks(read_segmentation(path, stop=stop)), _masks_text
            return health_report(scan_folder(path, stop=stop)), _report_text
        except DataError as exc:
            raise CliError(str(exc)) from None
        except OSError as exc:
            raise CliError(f"{path} cannot be read: {exc.strerror or exc}") from None


def _detection_text(report: dict) -> str:
    boxes = report["boxes_per_image"]
    splits = ", ".join(f"{name} {n}" for name, n in report["splits"].items())
    lines = [f"{report['root']}: {report['format']} detection dataset, "
             f"{count(report['total_images'], 'image')} ({report['background_images']:,} "
             f"without boxes), {count(report['total_boxes'], 'box', 'boxes')} in "
             f"{count(len(report['classes']), 'class', 'classes')}; {splits}"]
    lines += [f"  {c['name']}: {count(c['boxes'], 'box', 'boxes')} in "
              f"{count(c['images'], 'image')}" for c in report["classes"]]
    lines.append(f"Boxes per image: {boxes['min']} to {boxes['max']}, mean {boxes['mean']}")
    lines.append("Box side / image side: " + ", ".join(
        f"{b['relative_side']} {b['boxes']}" for b in report["box_sizes"] if b["boxes"]))
    return _with_problems(lines, report)


def _masks_text(report: dict) -> str:
    splits = ", ".join(f"{name} {n}" for name, n in report["splits"].items())
    lines = [f"{report['root']}: segmentation dataset ({report['layout_title']}), "
             f"{count(report['total_images'], 'image')}, "
             f"{count(report['total_pixels'], 'pixel')} in "
             f"{count(len(report['classes']), 'class', 'classes')}"
             + (f"; {splits}" if splits else "")]
    lines += [f"  {c['name']}: {count(c['pixels'], 'pixel')} in {count(c['images'], 'image')}"
              for c in report["classes"]]
    lines += [f"Note: {n}" for n in report["notes"]]
    return _with_problems(lines, report)


def cmd_data(args: argparse.Namespace) -> int:
    """Print the health report of an image folder, a detection dataset or a CSV file; exit 1
    if a problem blocks training."""
    from studio.core.data.tables import table_report
    from studio.core.data.types import DataError
    from studio.core.project.document import DatasetChoice

    path: Path = args.path
    if path.is_dir():
        report, text = _scan_report(path, args.format, args.segmentation, args.masks)
    elif path.is_file():
        choice = DatasetChoice(source="csv", path=str(path), label_column=args.label,
                               text_column=args.text,
                               task="regression" if args.regression else "classification")
        try:
            report = table_report(choice)
        except DataError as exc:
            raise CliError(str(exc)) from None
        text = _table_text
    else:
        raise UsageError(f"{path} does not exist.")
    print(json.dumps(report, ensure_ascii=False, indent=2) if args.json else text(report))
    return 1 if report.get("blocking") else 0
