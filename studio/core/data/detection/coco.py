"""COCO labels: one or more instance files (JSON) listing ``images`` (an id and a file name),
``categories`` (an id and a name) and ``annotations`` (an image id, a category id and a
``bbox`` of x, y, width, height in pixels). Category ids may be sparse: they become the class
indices 0..K-1 in id order, keeping their names. Crowd annotations (``iscrowd`` 1) are ignored
and counted, as COCO training ignores them.

Files are looked for in ``annotations/``, the root and its split folders (Roboflow's
``train/_annotations.coco.json``); a file's split comes from its name (``instances_val2017``)
or its folder. Its images are looked for in the folder named after it (``train2017``), in
``images/`` and beside it. An image listed without annotations is a background image.
An annotation whose image id the file does not list makes the whole file unusable (a DataError
naming it): the file is inconsistent, and guessing which image was meant would mislabel one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.messages import count, quoted
from studio.core.data.detection.reading import (
    Entry,
    Found,
    LabelError,
    RawBoxes,
    Size,
    read_text,
    relative_name,
)
from studio.core.data.detection.record import LabelledImage, split_named
from studio.core.data.detection.writing import save_image, split_folder, writing_folder
from studio.core.data.image_folder import is_image_name
from studio.core.data.types import DataError

NAME = "coco"
TITLE = "COCO"
JSON_LIMIT = 2**30
"""The largest COCO file read (1 GB; COCO 2017's training instances are 448 MB)."""
PEEK = 2**20
SAMPLE = 20
"""How many of a file's images are looked for in each candidate folder to find theirs."""


def json_files(root: Path) -> list[Path]:
    """The JSON files that may hold COCO labels: in ``annotations/``, the root, and its split
    folders."""
    folders = [root / "annotations", root,
               *(path for path in sorted(root.iterdir()) if split_named(path.name))]
    return [path for folder in folders if folder.is_dir()
            for path in sorted(folder.glob("*.json")) if not path.name.startswith(".")]


def _looks_like_coco(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            head = file.read(PEEK)
    except OSError:
        return False
    return b'"images"' in head or b'"annotations"' in head or b'"categories"' in head


def misfit(root: Path) -> str | None:
    """Why ``root`` does not hold COCO labels, or None if it does."""
    if any(_looks_like_coco(path) for path in json_files(root)):
        return None
    return (f"{root} holds no COCO labels: no .json file with images and annotations in it, "
            "its annotations folder or its split folders.")


def _split(path: Path, root: Path) -> str | None:
    for word in re.split(r"[^a-z]+", path.stem.lower()):
        if split_named(word):
            return split_named(word)
    return split_named(path.parent.name) if path.parent != root else None


def _records(data: Any, key: str, path: Path) -> list[dict[str, Any]]:
    records = data.get(key)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise DataError(f"{path}: {key!r} is not a list of records, as COCO has it.")
    return records


def _load_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path, JSON_LIMIT))
    except LabelError as exc:
        raise DataError(f"{path} {exc}.") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}).") from None


@dataclass
class _Image:
    """One listed image's annotations, or why they cannot be read."""

    file_name: str
    boxes: list[list[float]] = field(default_factory=list)
    categories: list[int] = field(default_factory=list)
    crowd: int = 0
    error: str = ""

    def load(self, size: Size) -> RawBoxes:
        if self.error:
            raise LabelError(self.error)
        return RawBoxes(np.asarray(self.boxes, np.float64).reshape(-1, 4), self.categories,
                        {"crowd": self.crowd})


def _add_annotation(image: _Image, annotation: dict[str, Any]) -> None:
    bbox = annotation.get("bbox")
    if (not isinstance(bbox, list) or len(bbox) != 4
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in bbox)):
        image.error = image.error or (f"annotation {quoted(annotation.get('id'))}: bbox "
                                      f"{quoted(bbox)} is not 4 numbers (x, y, width, height)")
        return
    category = annotation.get("category_id")
    if not isinstance(category, int) or isinstance(category, bool):
        image.error = image.error or (f"annotation {quoted(annotation.get('id'))}: category_id "
                                      f"{quoted(category)} is not a whole number")
        return
    if annotation.get("iscrowd"):
        image.crowd += 1
        return
    x, y, w, h = (float(v) for v in bbox)
    image.boxes.append([x, y, x + w, y + h])
    image.categories.append(category)


def _images(data: dict[str, Any], path: Path) -> dict[Any, _Image]:
    """The file's images by id with their annotations; raise DataError if an annotation's
    image id is not listed."""
    images: dict[Any, _Image] = {}
    for record in _records(data, "images", path):
        if not isinstance(record.get("file_name"), str) or not isinstance(record.get("id"),
                                                                          int | str):
            raise DataError(f"{path}: the image record {quoted(record)} has no id or "
                            "file_name.")
        images[record["id"]] = _Image(record["file_name"])
    dangling = []
    for annotation in _records(data, "annotations", path):
        try:
            image = images.get(annotation.get("image_id"))
        except TypeError:  # an unhashable id: a list or a mapping
            image = None
        if image is None:
            dangling.append(annotation.get("image_id"))
        else:
            _add_annotation(image, annotation)
    if dangling:
        raise DataError(f"{path}: {count(len(dangling), 'annotation points', 'annotations point')}"
                        f" to an image id the file does not list (first: "
                        f"{quoted(dangling[0])}).")
    return images


def _categories(data: dict[str, Any], path: Path, known: dict[int, str]) -> None:
    """Add the file's categories to ``known`` (id: name); raise DataError if a record is not
    an id and a name, or names an id differently from another file."""
    for record in _records(data, "categories", path):
        cat_id, name = record.get("id"), record.get("name")
        if not isinstance(cat_id, int) or isinstance(cat_id, bool) or not isinstance(name, str):
            raise DataError(f"{path}: the category {quoted(record)} has no whole-number id and "
                            "name.")
        if known.setdefault(cat_id, name) != name:
            raise DataError(f"{path} names category {cat_id} {quoted(name)}, another file "
                            f"{quoted(known[cat_id])}.")


def _image_folder(path: Path, root: Path, images: dict[Any, _Image]) -> Path:
    """The folder the file's images are in: of the candidates, the one holding most of the
    first few file names (the first candidate if none holds any)."""
    word = path.stem.removeprefix("instances_")
    candidates = list(dict.fromkeys([root / word, root / "images" / word, path.parent / word,
                                     path.parent, root / "images", root]))
    sample = [image.file_name for image in list(images.values())[:SAMPLE]]
    return max(candidates, key=lambda folder: sum((folder / name).is_file() for name in sample))


def find(root: Path) -> Found:
    """The images and annotations of the COCO files in ``root``."""
    found = Found([])
    categories: dict[int, str] = {}
    listed: set[Path] = set()
    folders: set[Path] = set()
    for path in json_files(root):
        data = _load_json(path)
        if not isinstance(data, dict) or not {"images", "annotations", "categories"} <= set(data):
            found.notes.append(f"{relative_name(root, path)} is not a COCO instances file (it "
                               "lacks images, annotations or categories): not read.")
            continue
        _categories(data, path, categories)
        images = _images(data, path)
        folder = _image_folder(path, root, images)
        folders.add(folder)
        split, name = _split(path, root), relative_name(root, path)
        for image in images.values():
            file = folder / image.file_name
            where = f"{name}: {image.file_name}"
            if not file.is_file():
                found.no_image.append((where, f"not found in {relative_name(root, folder)}"))
                continue
            listed.add(file)
            found.entries.append(Entry(file, split, where, image.load))
    if not folders:
        raise DataError(f"{root} holds no COCO instances file: its .json files lack images, "
                        "annotations or categories.")
    ids = sorted(categories)
    found.class_names = [categories[i] for i in ids]
    found.class_ids = {cat_id: index for index, cat_id in enumerate(ids)}
    _note_unlisted(found, root, folders, listed)
    return found


def _note_unlisted(found: Found, root: Path, folders: set[Path], listed: set[Path]) -> None:
    unlisted = sorted(path for folder in folders if folder.is_dir() for path in folder.iterdir()
                      if is_image_name(path) and path not in listed)
    if unlisted:
        found.notes.append(f"{count(len(unlisted), 'image file', 'image files')} in the images' "
                           f"folders {'is' if len(unlisted) == 1 else 'are'} listed in no COCO "
                           f"file (e.g. {quoted(relative_name(root, unlisted[0]))}): not used.")


def instances(items: list[tuple[LabelledImage, str]], class_names: list[str],
              first_ids: tuple[int, int]) -> dict[str, Any]:
    """A COCO instances file for ``items`` (image, file name): image and annotation ids
    counted from ``first_ids``, category ids from 1 in class order, bbox rounded to 1/1000."""
    image_id, annotation_id = first_ids
    images, annotations = [], []
    for offset, (item, file_name) in enumerate(items):
        height, width = item.pixels.shape[:2]
        images.append({"id": image_id + offset, "file_name": file_name, "width": width,
                       "height": height})
        boxes = item.boxes.boxes.tolist() if item.boxes is not None else []
        classes = item.boxes.classes.tolist() if item.boxes is not None else []
        for (x1, y1, x2, y2), cls in zip(boxes, classes, strict=True):
            w, h = x2 - x1, y2 - y1
            annotations.append({"id": annotation_id + len(annotations),
                                "image_id": image_id + offset, "category_id": cls + 1,
                                "bbox": [round(v, 3) for v in (x1, y1, w, h)],
                                "area": round(w * h, 3), "iscrowd": 0})
    return {"info": {"description": "Written by Layer Studio"}, "licenses": [],
            "images": images, "annotations": annotations,
            "categories": [{"id": i + 1, "name": name, "supercategory": "none"}
                           for i, name in enumerate(class_names)]}


def write(root: Path, images: list[LabelledImage], class_names: list[str]) -> None:
    """Write ``images`` as a COCO dataset in ``root`` (a new folder): per split
    ``annotations/instances_<split>.json`` with the images in ``<split>/`` (no split:
    ``annotations/instances.json`` and ``images/``)."""
    groups: dict[str | None, list[LabelledImage]] = {}
    for item in images:
        groups.setdefault(item.split, []).append(item)
    with writing_folder(root) as out:
        first = (1, 1)
        for split, items in groups.items():
            word = split_folder(split)
            named = [(item, f"{item.name}.png") for item in items]
            for item, file_name in named:
                save_image(out / (word or "images") / file_name, item.pixels)
            data = instances(named, class_names, first)
            first = (first[0] + len(items), first[1] + len(data["annotations"]))
            target = out / "annotations" / f"instances{'_' + word if word else ''}.json"
            target.parent.mkdir(exist_ok=True)
            target.write_text(json.dumps(data), encoding="utf-8")
