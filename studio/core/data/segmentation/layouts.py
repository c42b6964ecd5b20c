"""Where a segmentation dataset keeps its images and masks, and which mask is whose.

Three layouts are read:

- ``images/`` and ``masks/`` folders side by side in the dataset's folder (splits, if any, in
  subfolders of both: ``images/train``, ``masks/train``; or in split folders of the dataset's
  folder: ``train/images``, ``train/masks``);
- a folder of images and a separate folder of masks, chosen one by one (splits, if any, in
  subfolders of the images folder);
- Pascal VOC's own: ``JPEGImages/`` and ``SegmentationClass/``, its splits listed in
  ``ImageSets/Segmentation/train.txt`` and ``val.txt`` (and ``test.txt``).

An image and its mask share their file stem (``a.jpg`` and ``a.png``), at the same place under
their folders or, failing that, anywhere under the masks folder if only one mask has that stem.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from studio.core.base.messages import count
from studio.core.data.detection.reading import (
    LabelError,
    folder_split,
    image_files,
    paired_folders,
    read_text,
    relative_name,
)
from studio.core.data.detection.record import split_named
from studio.core.data.image_folder import is_image_name
from studio.core.data.types import DataError

IMAGES = "images"
MASKS = "masks"
VOC_IMAGES = "JPEGImages"
VOC_MASKS = "SegmentationClass"
VOC_SETS = Path("ImageSets", "Segmentation")
VOC_SET_FILES = ("train.txt", "val.txt", "test.txt")
TITLES = {"folders": "images and masks folders", "separate": "a folder of masks",
          "voc": "Pascal VOC segmentation"}
"""How each layout is named to a person."""


@dataclass(frozen=True)
class Pair:
    """An image, its mask file (None: it has none) and its split (None: the layout names
    none)."""

    image: Path
    mask: Path | None
    split: str | None


@dataclass
class Layout:
    """What a layout found: its name (a key of TITLES), the image and mask pairs, the mask
    files that have no image (with why), the folders that may hold class names, and notes."""

    name: str
    pairs: list[Pair]
    no_image: list[tuple[Path, str]] = field(default_factory=list)
    name_folders: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Masks:
    """The mask files under a folder, looked up by their stem relative to it, or by their bare
    stem where only one mask has it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # a PNG before any other kind of file of the same stem: the lossless one is the mask
        files = sorted(image_files(folder), key=lambda p: p.suffix.lower() != ".png")
        self.by_path: dict[Path, Path] = {}
        for path in files:
            self.by_path.setdefault(path.relative_to(folder).with_suffix(""), path)
        stems: dict[str, list[Path]] = {}
        for key in self.by_path:
            stems.setdefault(key.name, []).append(key)
        self.by_stem = {stem: keys[0] for stem, keys in stems.items() if len(keys) == 1}
        self.used: set[Path] = set()

    def take(self, relative: Path) -> Path | None:
        """The mask of the image at ``relative`` (to its folder, without its suffix)."""
        key = relative if relative in self.by_path else self.by_stem.get(relative.name)
        if key is None:
            return None
        self.used.add(key)
        return self.by_path[key]

    def unused(self) -> list[Path]:
        return [path for key, path in self.by_path.items() if key not in self.used]


def _paired(root: Path, folders: Iterable[tuple[Path, Path, str | None]], name: str) -> Layout:
    """The pairs of each (images folder, masks folder, split) of ``folders``."""
    layout = Layout(name, [])
    for image_dir, mask_dir, split in folders:
        masks = _Masks(mask_dir)
        for image in image_files(image_dir):
            relative = image.relative_to(image_dir)
            layout.pairs.append(Pair(image, masks.take(relative.with_suffix("")),
                                     split or folder_split(relative)))
        layout.no_image += [(mask, f"no image of its name in {relative_name(root, image_dir)}")
                            for mask in masks.unused()]
        layout.name_folders += [mask_dir, mask_dir.parent]
    layout.name_folders.insert(0, root)
    return layout


def _set_names(path: Path) -> list[str]:
    """The image stems a VOC split file lists (the first word of each line)."""
    try:
        return [line.split()[0] for line in read_text(path).splitlines() if line.split()]
    except LabelError as exc:
        raise DataError(f"{path} {exc}.") from None


def _voc(root: Path) -> Layout:
    """VOC's layout: the images its split files list (or else every image with a mask), each
    in its split."""
    images = {path.stem: path for path in image_files(root / VOC_IMAGES)}
    masks = _Masks(root / VOC_MASKS)
    sets = [(split_named(name[:-4]), root / VOC_SETS / name) for name in VOC_SET_FILES]
    listed = [(split, stem) for split, path in sets if path.is_file() for stem in
              _set_names(path)]
    layout = Layout("voc", [], name_folders=[root, root / VOC_MASKS])
    if not listed:
        listed = [(None, key.as_posix()) for key in masks.by_path]
    for split, stem in listed:
        if stem in images:
            layout.pairs.append(Pair(images.pop(stem), masks.take(Path(stem)), split))
    layout.no_image = [(mask, f"no image of its name in {VOC_IMAGES}")
                       for mask in masks.unused()]
    if images:
        layout.notes.append(f"{count(len(images), 'image')} of {VOC_IMAGES} "
                            f"{'is' if len(images) == 1 else 'are'} in no segmentation split "
                            "(VOC's other tasks use them): not read.")
    return layout


def _holds_images(folder: Path) -> bool:
    with os.scandir(folder) as entries:
        return any(entry.is_file() and is_image_name(Path(entry.name)) for entry in entries)


def _classification_folder(root: Path) -> bool:
    """Whether ``root`` holds two or more subfolders of images (class folders), and no
    masks."""
    with os.scandir(root) as entries:
        folders = [Path(e.path) for e in entries if e.is_dir() and not e.name.startswith(".")]
    return sum(_holds_images(folder) for folder in folders) >= 2


def looks_like_segmentation(root: Path) -> str | None:
    """The title of the segmentation layout ``root`` holds, or None: for the classification
    folder reader, to say a segmentation dataset was chosen by mistake. Cheap: only the
    folder's own entries (and its split folders') are looked at."""
    try:
        if (root / VOC_IMAGES).is_dir() and (root / VOC_MASKS).is_dir():
            return TITLES["voc"]
        return TITLES["folders"] if paired_folders(root, IMAGES, MASKS) else None
    except OSError:
        return None


def find_layout(root: Path, masks: Path | None = None) -> Layout:
    """The images and masks of the dataset in ``root`` (or of the images folder ``root`` and
    the masks folder ``masks``); raise DataError in one line if it holds no segmentation
    layout, saying so plainly for a classification folder."""
    for folder, what in ((root, "segmentation dataset" if masks is None else "image folder"),
                         (masks, "mask folder")):
        if folder is not None and not folder.is_dir():
            raise DataError(f"The {what} {folder} does not exist or is not a folder.")
    try:
        layout = _layout(root, masks)
        if layout is not None:
            return layout
        classification = _classification_folder(root)
    except OSError as exc:
        raise DataError(f"{root} cannot be read ({exc.strerror or exc}).") from None
    raise DataError(
        f"{root} is a classification folder (a subfolder of images per class, no masks), not "
        f"a segmentation dataset: choose it as an image folder, or add masks ({IMAGES}/ and "
        f"{MASKS}/ folders side by side)." if classification else
        f"{root} holds no segmentation masks: no {IMAGES}/ and {MASKS}/ folders, nor Pascal "
        f"VOC's {VOC_IMAGES}/ and {VOC_MASKS}/.")


def _layout(root: Path, masks: Path | None) -> Layout | None:
    """The layout of ``root`` (with the masks folder ``masks``), or None if it has none."""
    if masks is not None:
        return _paired(root, [(root, masks, None)], "separate")
    if (root / VOC_IMAGES).is_dir() and (root / VOC_MASKS).is_dir():
        return _voc(root)
    folders = paired_folders(root, IMAGES, MASKS)
    return _paired(root, folders, "folders") if folders else None
