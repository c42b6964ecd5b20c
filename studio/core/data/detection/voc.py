"""Pascal VOC labels: an XML file per image in ``Annotations/`` (``<object>`` elements with a
``<name>`` and a ``<bndbox>`` of ``xmin ymin xmax ymax``), images of the same name in
``JPEGImages/``, and splits in ``ImageSets/Main/train.txt``, ``val.txt`` and ``test.txt`` if
present. An XML without ``<object>`` labels a background image.

VOC's coordinates are 1-based pixel indices, both ends included, so a box covering a whole
image is (1, 1, W, H); here it is (0, 0, W, H), as Detectron2 reads it: xmin - 1, xmax as is.
The XML is parsed without any DOCTYPE or ENTITY declaration (refused, so no entity expands)
and within a size cap. The class order is that of a ``classes.txt`` in the root if there is
one (the writer leaves one, to keep the order), else the names found, sorted.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import numpy as np

from studio.core.data.detection.reading import (
    CLASS_LIST,
    Found,
    LabelError,
    RawBoxes,
    Size,
    class_list,
    image_files,
    labelled,
    number,
    read_text,
    relative_name,
    visible_files,
)
from studio.core.data.detection.record import SPLIT_FOLDERS, LabelledImage
from studio.core.data.detection.writing import save_image, writing_folder
from studio.core.data.types import DataError
from studio.core.tasks.detection.boxes import ImageBoxes

NAME = "voc"
TITLE = "Pascal VOC"
ANNOTATIONS = "Annotations"
IMAGES = "JPEGImages"
SETS = Path("ImageSets", "Main")
CORNERS = ("xmin", "ymin", "xmax", "ymax")


def misfit(root: Path) -> str | None:
    """Why ``root`` does not hold Pascal VOC labels, or None if it does."""
    folder = root / ANNOTATIONS
    if folder.is_dir() and any(path.suffix.lower() == ".xml" for path in visible_files(folder)):
        return None
    return f"{root} holds no Pascal VOC labels: no {ANNOTATIONS} folder of .xml files."


def _element_text(parent: ET.Element, tag: str, where: str) -> str:
    child = parent.find(tag)
    if child is None or child.text is None or not child.text.strip():
        raise LabelError(f"{where} has no <{tag}>")
    return child.text.strip()


def parse(text: str) -> RawBoxes:
    """The boxes of a VOC XML file's text, in pixels from 0; raise LabelError if it is not
    well-formed, declares a DOCTYPE or ENTITY, or an object lacks its name or a corner."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise LabelError("declares a DOCTYPE or ENTITY, which is not read (for safety)")
    try:
        tree = ET.fromstring(text)
    except ET.ParseError as exc:
        raise LabelError(f"is not well-formed XML ({exc})") from None
    names, boxes = [], []
    for index, element in enumerate(tree.iter("object"), 1):
        where = f"<object> {index}"
        names.append(_element_text(element, "name", where))
        box = element.find("bndbox")
        if box is None:
            raise LabelError(f"{where} has no <bndbox>")
        xmin, ymin, xmax, ymax = (number(_element_text(box, tag, where), f"{where} <{tag}>")
                                  for tag in CORNERS)
        boxes.append([xmin - 1, ymin - 1, xmax, ymax])
    return RawBoxes(np.asarray(boxes, np.float64).reshape(-1, 4), names)


def _load_for(path: Path) -> Callable[[Size], RawBoxes]:
    return lambda size: parse(read_text(path))


def _splits(root: Path) -> dict[str, str]:
    """The split of each image id the ImageSets lists name (the first list naming it wins)."""
    out: dict[str, str] = {}
    for split, word in SPLIT_FOLDERS.items():
        path = root / SETS / f"{word}.txt"
        try:
            ids = read_text(path).split() if path.is_file() else []
        except LabelError as exc:
            raise DataError(f"{path} {exc}.") from None
        for image_id in ids:
            out.setdefault(image_id, split)
    return out


def find(root: Path) -> Found:
    """The images and XML files of a VOC dataset in ``root``, matched by name."""
    labels = {path.stem: path for path in visible_files(root / ANNOTATIONS)
              if path.suffix.lower() == ".xml"}
    splits = _splits(root)
    found = Found([], class_names=class_list(root / CLASS_LIST))
    images = image_files(root / IMAGES) if (root / IMAGES).is_dir() else []
    for image in images:
        label = labels.pop(image.stem, root / ANNOTATIONS / f"{image.stem}.xml")
        found.entries.append(labelled(root, image, splits.get(image.stem), label, _load_for))
    found.no_image = [(relative_name(root, path), f"no image {stem}.* in {IMAGES}")
                      for stem, path in labels.items()]
    return found


def annotation(item: LabelledImage, boxes: ImageBoxes, file_name: str, class_names: list[str]
               ) -> bytes:
    """The VOC XML of one image: its size and objects, with integer 1-based corners."""
    height, width = item.pixels.shape[:2]
    depth = item.pixels.shape[2] if item.pixels.ndim == 3 else 1
    tree = ET.Element("annotation")
    ET.SubElement(tree, "folder").text = IMAGES
    ET.SubElement(tree, "filename").text = file_name
    size = ET.SubElement(tree, "size")
    for tag, value in (("width", width), ("height", height), ("depth", depth)):
        ET.SubElement(size, tag).text = str(value)
    ET.SubElement(tree, "segmented").text = "0"
    for (x1, y1, x2, y2), cls in zip(boxes.boxes.tolist(), boxes.classes.tolist(), strict=True):
        element = ET.SubElement(tree, "object")
        for tag, value in (("name", class_names[cls]), ("pose", "Unspecified"),
                           ("truncated", "0"), ("difficult", "0")):
            ET.SubElement(element, tag).text = value
        box = ET.SubElement(element, "bndbox")
        for tag, value in zip(CORNERS, (x1 + 1, y1 + 1, x2, y2), strict=True):
            ET.SubElement(box, tag).text = str(round(value))
    ET.indent(tree)
    return ET.tostring(tree, encoding="utf-8", xml_declaration=False) + b"\n"


def write(root: Path, images: list[LabelledImage], class_names: list[str]) -> None:
    """Write ``images`` as a VOC dataset in ``root`` (a new folder): ``JPEGImages/NAME.jpg``
    (JPEG, as VOC's tools expect), ``Annotations/NAME.xml`` (corners rounded to whole
    pixels, as VOC has them), ``ImageSets/Main/<split>.txt`` and a ``classes.txt`` keeping the
    class order."""
    with writing_folder(root) as out:
        lists: dict[str, list[str]] = {}
        (out / ANNOTATIONS).mkdir()
        for item in images:
            file_name = f"{item.name}.jpg"
            save_image(out / IMAGES / file_name, item.pixels)
            if item.boxes is not None:
                (out / ANNOTATIONS / f"{item.name}.xml").write_bytes(
                    annotation(item, item.boxes, file_name, class_names))
            if item.split:
                lists.setdefault(SPLIT_FOLDERS[item.split], []).append(item.name)
        for word, names in lists.items():
            (out / SETS).mkdir(parents=True, exist_ok=True)
            (out / SETS / f"{word}.txt").write_text("".join(f"{n}\n" for n in names),
                                                    encoding="utf-8")
        (out / CLASS_LIST).write_text("".join(f"{name}\n" for name in class_names),
                                      encoding="utf-8")
