"""An editable dataset's folder: one visible subfolder per class, as every image-folder
reader expects, and hidden bookkeeping beside them (``.trash``, ``.originals``,
``.flags.json``), which readers skip as they skip every name starting with a dot."""

from __future__ import annotations

import json
import os
from pathlib import Path

from studio.core.base.files import atomic_write_text
from studio.core.base.messages import quoted
from studio.core.data.editable.content import ImageIds
from studio.core.data.editable.names import check_class_name
from studio.core.data.image_folder import class_folders, is_image_name
from studio.core.data.types import DataError

TRASH = ".trash"
ORIGINALS = ".originals"
"""Where the untouched original of an image resized on adding is kept, if asked."""
FLAGS = ".flags.json"
FLAGS_VERSION = 1


class EditableDataset:
    """A class-folder image dataset at ``root`` that edits change in place; paths in edits
    are POSIX paths relative to ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.ids = ImageIds()
        """Images' ids, with hashed files remembered across calls."""

    @classmethod
    def create(cls, root: Path, classes: list[str]) -> EditableDataset:
        """A new dataset at ``root`` (a new or empty folder) with a folder for each class."""
        root = Path(root)
        names: list[str] = []
        for name in classes:
            names.append(check_class_name(name, names))
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise DataError(f"{root} exists already and is not an empty folder: choose a "
                            "new one.")
        parent = root if root.exists() else root.parent
        while not parent.exists():
            parent = parent.parent
        _check_folder(parent)
        try:
            for name in names:
                (root / name).mkdir(parents=True)
            root.mkdir(exist_ok=True)
        except OSError as exc:
            raise DataError(f"{root} could not be made: {exc.strerror or exc}.") from None
        return cls(root)

    @property
    def trash(self) -> Path:
        """The folder deleted classes and images wait in until the trash is emptied."""
        return self.root / TRASH

    @property
    def originals(self) -> Path:
        """The folder of originals kept when images were resized on adding."""
        return self.root / ORIGINALS

    def classes(self) -> list[str]:
        """The class names, sorted (the visible folders in the root)."""
        try:
            return class_folders(self.root)
        except OSError as exc:
            raise DataError(f"The dataset folder {self.root} cannot be read: "
                            f"{exc.strerror or exc}.") from None

    def class_dir(self, name: str) -> Path:
        """The folder of class ``name``; DataError if there is no such class."""
        if name not in self.classes():
            raise DataError(f"The dataset has no class {quoted(name)}.")
        return self.root / name

    def images(self, name: str) -> list[Path]:
        """The image files of class ``name``, in its folder and the visible folders inside,
        sorted."""
        found = []
        for folder, dirs, files in os.walk(self.class_dir(name)):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += [Path(folder, f) for f in files
                      if not f.startswith(".") and is_image_name(Path(f))]
        return sorted(found)

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, as a POSIX path (the form edits use)."""
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(self.root)).as_posix()

    def check_writable(self) -> None:
        """DataError if the root or a class folder is read-only, before anything changes."""
        for folder in [self.root, *(self.root / name for name in self.classes())]:
            _check_folder(folder, self.root)

    def flagged(self) -> set[str]:
        """The names of the flagged image files (flags follow a file's name, so a move keeps
        them); an unreadable flags file counts as none flagged."""
        try:
            data = json.loads((self.root / FLAGS).read_text(encoding="utf-8"))
            return {name for name in data["flagged"] if isinstance(name, str)}
        except (OSError, ValueError, KeyError, TypeError):
            return set()

    def write_flags(self, names: set[str]) -> None:
        """Save the flagged names, atomically; with none flagged, no file is left."""
        if not names:
            (self.root / FLAGS).unlink(missing_ok=True)
            return
        atomic_write_text(self.root / FLAGS, json.dumps(
            {"version": FLAGS_VERSION, "flagged": sorted(names)}, indent=1))


def _check_folder(folder: Path, dataset: Path | None = None) -> None:
    if not os.access(folder, os.W_OK | os.X_OK):
        where = "The dataset folder" if folder == dataset else "The folder"
        raise DataError(f"{where} {folder} is read-only (you may not write to it): make it "
                        "writable to change the dataset. Nothing was changed.")
