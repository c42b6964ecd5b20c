"""The four label formats by name, finding which one a folder holds, and reading or writing a
detection dataset in any of them."""

from __future__ import annotations

import threading
from pathlib import Path
from types import ModuleType

from studio.core.base.events import Progress
from studio.core.base.messages import look_up
from studio.core.data.detection import coco, kitti, voc, yolo
from studio.core.data.detection.reading import assemble, image_files
from studio.core.data.detection.record import DetectionSet, LabelledImage
from studio.core.data.types import DataError

FORMATS: dict[str, ModuleType] = {module.NAME: module for module in (voc, coco, yolo, kitti)}
"""Each format's module (``NAME``, ``TITLE``, ``misfit``, ``find``, ``write``), in the order
``detect_format`` tries them: the most particular layouts first; YOLO before KITTI, which may
share the images and labels folders (their lines tell them apart)."""
LABEL_SUFFIXES = frozenset({".txt", ".xml", ".json"})


def _format(name: str) -> ModuleType:
    return look_up(FORMATS, name, "label format", DataError)


def _classification_folder(root: Path) -> bool:
    """Whether ``root`` is laid out as a classification folder: two or more subfolders holding
    images, and no label file in them or in the root."""
    folders = [path for path in root.iterdir() if path.is_dir() and not path.name.startswith(".")]
    with_images = [folder for folder in folders if image_files(folder)]
    labels = [path for folder in [root, *folders] for path in folder.iterdir()
              if path.suffix.lower() in LABEL_SUFFIXES]
    return len(with_images) >= 2 and not labels


def _check_folder(root: Path) -> None:
    if not root.is_dir():
        raise DataError(f"The detection dataset {root} does not exist or is not a folder.")


def detect_format(root: Path) -> str:
    """The name of the label format ``root`` holds (the first of FORMATS that fits); raise
    DataError in one line if it holds none, saying so plainly for a classification folder."""
    root = Path(root)
    _check_folder(root)
    try:
        for name, module in FORMATS.items():
            if module.misfit(root) is None:
                return name
        classification = _classification_folder(root)
    except OSError as exc:
        raise DataError(f"{root} cannot be read ({exc.strerror or exc}).") from None
    if classification:
        raise DataError(f"{root} is a classification folder (a subfolder of images per class, "
                        "no label files), not a detection dataset: choose it as an image "
                        "folder, or add box labels (YOLO, Pascal VOC, COCO or KITTI).")
    raise DataError(f"{root} holds no detection labels: no YOLO .txt files, Pascal VOC "
                    "Annotations, COCO .json or KITTI label_2 folder.")


def looks_like_detection(root: Path) -> str | None:
    """The title of the label format ``root`` holds (e.g. ``YOLO``), or None: for the
    classification folder reader, to say a detection dataset was chosen by mistake."""
    try:
        return FORMATS[detect_format(root)].TITLE
    except DataError:
        return None


def read_detection(root: Path, format_name: str | None = None,
                   on_progress: Progress | None = None,
                   stop: threading.Event | None = None) -> DetectionSet:
    """Read the detection dataset in ``root``, in ``format_name`` (detected if None); raise
    DataError in one line if it cannot be read as one (a format that does not fit says so)."""
    root = Path(root)
    _check_folder(root)
    module = _format(format_name or detect_format(root))
    try:
        why = module.misfit(root)
        if why:
            raise DataError(why)
        return assemble(root, module.NAME, module.find(root), on_progress, stop)
    except OSError as exc:
        raise DataError(f"{root} cannot be read ({exc.strerror or exc}).") from None


def write_detection(root: Path, format_name: str, images: list[LabelledImage],
                    class_names: list[str]) -> None:
    """Write ``images`` with their boxes as a dataset in ``format_name`` in the new folder
    ``root``, all at once or nothing."""
    _format(format_name).write(Path(root), images, class_names)
