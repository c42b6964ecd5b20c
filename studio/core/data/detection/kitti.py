"""KITTI labels, the format DIGITS trains detectors on: one ``.txt`` per image, a line per
object of 15 values, ``type truncated occluded alpha x1 y1 x2 y2 h w l x y z ry`` (the box is
x1 y1 x2 y2 in pixels; a 16th value, a score, is allowed). ``DontCare`` regions are ignored and
counted. Layouts: ``image_2/`` and ``label_2/`` (KITTI's own), or ``images/`` and ``labels/``
(DIGITS's), in the root or in split folders (``train/images``, ``val/labels``).

KITTI names classes by their type; the class order is that of a ``classes.txt`` in the root if
there is one (the writer leaves one, to keep the order), else the types found, sorted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from studio.core.base.messages import quoted
from studio.core.data.detection.reading import (
    CLASS_LIST,
    Found,
    LabelError,
    RawBoxes,
    Size,
    class_list,
    first_label_fields,
    number,
    paired_entries,
    paired_folders,
    read_text,
)
from studio.core.data.detection.record import LabelledImage
from studio.core.data.detection.writing import save_image, split_folder, writing_folder
from studio.core.data.types import DataError

NAME = "kitti"
TITLE = "KITTI"
LAYOUTS = (("image_2", "label_2"), ("images", "labels"))
FIELDS = "type truncated occluded alpha x1 y1 x2 y2 h w l x y z ry"
DONT_CARE = "dontcare"


def _pairs(root: Path) -> list[tuple[Path, Path, str | None]]:
    for images, labels in LAYOUTS:
        pairs = paired_folders(root, images, labels)
        if pairs:
            return pairs
    return []


def misfit(root: Path) -> str | None:
    """Why ``root`` does not hold KITTI labels, or None if it does."""
    pairs = _pairs(root)
    if not pairs:
        return (f"{root} holds no KITTI labels: no image_2 and label_2 folders (nor images "
                "and labels).")
    fields = first_label_fields([labels for _, labels, _ in pairs])
    if fields is None or pairs[0][1].name == "label_2" or is_kitti_line(fields):
        return None
    return (f"{root}'s label files do not hold KITTI lines of 15 values ({FIELDS}): the first "
            f"reads {quoted(' '.join(fields))}.")


def is_kitti_line(fields: list[str]) -> bool:
    """Whether a label line's fields are KITTI's, not a YOLO polygon's (which may also have 15):
    15 or 16 fields, and a type that is a name, or a box corner past 1 (YOLO's are 0..1)."""
    if len(fields) not in (15, 16):
        return False
    try:
        corners = [float(text) for text in fields[4:8]]
        float(fields[0])
    except ValueError:
        return True
    return max(corners) > 1


def parse(text: str) -> RawBoxes:
    """The boxes of a KITTI label file's text; raise LabelError at a line that is not 15
    values (16 with a score)."""
    names, boxes, dont_care = [], [], 0
    for line, content in enumerate(text.splitlines(), 1):
        fields = content.split()
        if not fields:
            continue
        if len(fields) not in (15, 16):
            raise LabelError(f"line {line} has {len(fields)} values, not 15 ({FIELDS})")
        values = [number(text, f"line {line}") for text in fields[1:15]]
        if fields[0].lower() == DONT_CARE:
            dont_care += 1
            continue
        names.append(fields[0])
        boxes.append(values[3:7])
    return RawBoxes(np.asarray(boxes, np.float64).reshape(-1, 4), names,
                    {"dont_care": dont_care})


def _load_for(path: Path) -> Callable[[Size], RawBoxes]:
    return lambda size: parse(read_text(path))


def find(root: Path) -> Found:
    """The images and label files of a KITTI dataset in ``root``."""
    found = paired_entries(root, _pairs(root), ".txt", _load_for)
    found.class_names = class_list(root / CLASS_LIST)
    return found


def label_text(boxes: np.ndarray, classes: np.ndarray, class_names: list[str]) -> str:
    """KITTI lines for ``boxes`` (pixels) of ``classes``; the 3-D values, unknown, are 0."""
    return "".join(
        f"{class_names[cls]} 0.00 0 0.00 {x1:.2f} {y1:.2f} {x2:.2f} {y2:.2f} "
        "0.00 0.00 0.00 0.00 0.00 0.00 0.00\n"
        for (x1, y1, x2, y2), cls in zip(boxes.tolist(), classes.tolist(), strict=True))


def write(root: Path, images: list[LabelledImage], class_names: list[str]) -> None:
    """Write ``images`` as a KITTI dataset in ``root`` (a new folder), DIGITS style:
    ``<split>/images/NAME.png`` and ``<split>/labels/NAME.txt`` (no split: ``images/`` and
    ``labels/``), and a ``classes.txt`` keeping the class order. Class names must hold no
    spaces, as KITTI separates values by spaces."""
    spaced = [name for name in class_names if not name or len(name.split()) != 1]
    if spaced:
        raise DataError(f"KITTI cannot hold the class name {quoted(spaced[0])}: its names are "
                        "single words.")
    with writing_folder(root) as out:
        for item in images:
            folder = out / split_folder(item.split)
            save_image(folder / "images" / f"{item.name}.png", item.pixels)
            (folder / "labels").mkdir(exist_ok=True)  # the layout has it, even if empty
            if item.boxes is not None:
                text = label_text(item.boxes.boxes, item.boxes.classes, class_names)
                (folder / "labels" / f"{item.name}.txt").write_text(text, encoding="utf-8")
        (out / CLASS_LIST).write_text("".join(f"{name}\n" for name in class_names),
                                      encoding="utf-8")
