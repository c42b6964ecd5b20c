"""YOLO labels: one ``.txt`` per image, a line ``class cx cy w h`` per box (centre and size
normalised to 0..1 by the image's width and height), class names from ``classes.txt`` or a
``data.yaml`` (``names:`` as a list or a mapping).

Layouts, as Ultralytics reads them: ``images/`` and ``labels/`` side by side (with or without
``train``/``val`` subfolders in both), split folders each holding ``images/`` and ``labels/``
(``train/images``), or each ``.txt`` beside its image. A line of a polygon (``class x1 y1 x2 y2
…``, Ultralytics segmentation labels) gives the box around its points, as Ultralytics does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from studio.core.base.messages import quoted
from studio.core.data.detection.kitti import is_kitti_line
from studio.core.data.detection.reading import (
    CLASS_LIST,
    Found,
    LabelError,
    RawBoxes,
    Size,
    class_list,
    first_label_fields,
    folder_split,
    image_files,
    labelled,
    number,
    paired_entries,
    paired_folders,
    read_text,
    relative_name,
    visible_files,
)
from studio.core.data.detection.record import LabelledImage
from studio.core.data.detection.writing import save_image, split_folder, writing_folder
from studio.core.data.types import DataError

NAME = "yolo"
TITLE = "YOLO"
YAML_NAMES = ("data.yaml", "dataset.yaml")
YAML_LIMIT = 2**20
LIST_FILES = frozenset({CLASS_LIST, "train.txt", "val.txt", "valid.txt", "test.txt",
                        "readme.txt"})
"""Text files in a dataset's root that are not labels: class names, Darknet's image lists."""
FIELDS = "class cx cy w h"


def _is_yolo_line(fields: list[str] | None) -> bool:
    try:
        return fields is not None and len(fields) >= 5 and float(fields[0]).is_integer()
    except ValueError:
        return False


def _side_by_side(root: Path) -> bool:
    """Whether some image under ``root`` has a ``.txt`` of the same name beside it."""
    return any(image.with_suffix(".txt").is_file() for image in image_files(root))


def misfit(root: Path) -> str | None:
    """Why ``root`` does not hold YOLO labels, or None if it does."""
    pairs = paired_folders(root, "images", "labels")
    if pairs:
        fields = first_label_fields([labels for _, labels, _ in pairs])
        if fields is None or (_is_yolo_line(fields) and not is_kitti_line(fields)):
            return None
        return (f"{root}'s label files do not hold YOLO lines ({FIELDS}): the first reads "
                f"{quoted(' '.join(fields))}.")
    if _side_by_side(root):
        return None
    return (f"{root} holds no YOLO labels: an images and a labels folder, or a .txt file "
            f"beside each image, with a line '{FIELDS}' per box.")


def _names_from_yaml(path: Path) -> list[str] | None:
    try:
        data: Any = yaml.safe_load(read_text(path, YAML_LIMIT))
    except LabelError as exc:
        raise DataError(f"{path} {exc}.") from None
    except yaml.YAMLError as exc:
        raise DataError(f"{path} is not valid YAML ({str(exc).splitlines()[0]}).") from None
    names = data.get("names") if isinstance(data, dict) else None
    if names is None:
        return None
    if isinstance(names, dict):
        if set(names) != set(range(len(names))):
            raise DataError(f"{path}: the keys of 'names' must be the class ids 0 to "
                            f"{len(names) - 1}, not {quoted(list(names))}.")
        names = [names[i] for i in range(len(names))]
    if not isinstance(names, list) or not all(isinstance(n, str | int | float) for n in names):
        raise DataError(f"{path}: 'names' must be a list of class names, or a mapping of class "
                        f"ids to names, not {quoted(names)}.")
    return [str(name) for name in names]


def class_names(root: Path, label_dirs: list[Path]) -> list[str] | None:
    """The class names of ``classes.txt`` (in the root or a label folder) or ``data.yaml``;
    None if there are none."""
    for folder in [root, *label_dirs]:
        names = class_list(folder / CLASS_LIST)
        if names is not None:
            return names
    for path in [*(root / name for name in YAML_NAMES), *sorted(root.glob("*.yaml"))]:
        names = _names_from_yaml(path) if path.is_file() else None
        if names is not None:
            return names
    return None


def _box(fields: list[str], line: int, size: Size) -> tuple[int, list[float]]:
    where = f"line {line}"
    cls = number(fields[0], where)
    if not cls.is_integer():
        raise LabelError(f"{where}: the class {quoted(fields[0])} is not a whole number")
    values = [number(text, where) for text in fields[1:]]
    width, height = size
    if len(values) == 4:
        cx, cy, w, h = values
        return int(cls), [(cx - w / 2) * width, (cy - h / 2) * height,
                          (cx + w / 2) * width, (cy + h / 2) * height]
    xs, ys = np.asarray(values[0::2]) * width, np.asarray(values[1::2]) * height
    return int(cls), [xs.min(), ys.min(), xs.max(), ys.max()]


def parse(text: str, size: Size) -> RawBoxes:
    """The boxes of a YOLO label file's text, in pixels of an image of ``size``; raise
    LabelError at a line that is not ``class cx cy w h`` (or a polygon)."""
    classes, boxes = [], []
    for line, content in enumerate(text.splitlines(), 1):
        fields = content.split()
        if not fields:
            continue
        if len(fields) != 5 and (len(fields) < 7 or len(fields) % 2 == 0):
            raise LabelError(f"line {line} has {len(fields)} values, not 5 ({FIELDS})")
        cls, box = _box(fields, line, size)
        classes.append(cls)
        boxes.append(box)
    return RawBoxes(np.asarray(boxes, np.float64).reshape(-1, 4), classes)


def _load_for(path: Path) -> Callable[[Size], RawBoxes]:
    return lambda size: parse(read_text(path), size)


def _side_by_side_entries(root: Path) -> Found:
    found = Found([])
    stems = set()
    for image in image_files(root):
        stems.add(image.with_suffix(""))
        found.entries.append(labelled(root, image, folder_split(image.relative_to(root)),
                                      image.with_suffix(".txt"), _load_for))
    for path in visible_files(root):
        if (path.suffix == ".txt" and path.with_suffix("") not in stems
                and path.name.lower() not in LIST_FILES):
            found.no_image.append((relative_name(root, path), "no image of that name beside it"))
    return found


def find(root: Path) -> Found:
    """The images and label files of a YOLO dataset in ``root``."""
    pairs = paired_folders(root, "images", "labels")
    found = (paired_entries(root, pairs, ".txt", _load_for) if pairs
             else _side_by_side_entries(root))
    found.class_names = class_names(root, [labels for _, labels, _ in pairs])
    return found


def label_text(boxes: np.ndarray, classes: np.ndarray, size: Size) -> str:
    """YOLO lines for ``boxes`` (pixels) of ``classes`` in an image of ``size``."""
    width, height = size
    lines = []
    for (x1, y1, x2, y2), cls in zip(boxes.tolist(), classes.tolist(), strict=True):
        lines.append(f"{cls} {(x1 + x2) / 2 / width:.6f} {(y1 + y2) / 2 / height:.6f} "
                     f"{(x2 - x1) / width:.6f} {(y2 - y1) / height:.6f}\n")
    return "".join(lines)


def write(root: Path, images: list[LabelledImage], class_names: list[str]) -> None:
    """Write ``images`` as a YOLO dataset in ``root`` (a new folder), Ultralytics style:
    ``images/<split>/NAME.png``, ``labels/<split>/NAME.txt`` and a ``data.yaml`` naming the
    classes and the split folders."""
    with writing_folder(root) as out:
        for item in images:
            folder = split_folder(item.split)
            save_image(out / "images" / folder / f"{item.name}.png", item.pixels)
            labels = out / "labels" / folder
            labels.mkdir(parents=True, exist_ok=True)  # the layout has it, even if empty
            if item.boxes is not None:
                height, width = item.pixels.shape[:2]
                text = label_text(item.boxes.boxes, item.boxes.classes, (width, height))
                (labels / f"{item.name}.txt").write_text(text, encoding="utf-8")
        splits = {item.split for item in images}
        data = {"train": f"images/{split_folder('train')}" if "train" in splits else "images",
                "val": (f"images/{split_folder('validation')}" if "validation" in splits
                        else "images"),
                "nc": len(class_names), "names": dict(enumerate(class_names))}
        if "test" in splits:
            data["test"] = f"images/{split_folder('test')}"
        (out / YAML_NAMES[0]).write_text(yaml.safe_dump(data, sort_keys=False,
                                                        allow_unicode=True), encoding="utf-8")
