"""The dataset's trash: each deletion is an entry ``.trash/<entry>/`` holding what it
deleted at the same relative paths (``cats/…``, ``.originals/…``), so restoring needs no
record beyond the folder itself. Nothing leaves the disk until the trash is emptied."""

from __future__ import annotations

import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from studio.core.base.messages import count, unwritable
from studio.core.data.editable.dataset import TRASH, EditableDataset
from studio.core.data.editable.names import check_class_name
from studio.core.data.editable.steps import MakeFolder, Move, RemoveFolder, Step
from studio.core.data.types import DataError


@dataclass(frozen=True)
class TrashEntry:
    """One deletion waiting in the trash: its id (a time stamp and a token, so entries sort
    by age) and the files it holds, as their paths in the dataset."""

    id: str
    files: tuple[str, ...]


def new_entry_id() -> str:
    """A fresh trash entry's id: its time, then a token."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def trash_steps(dataset: EditableDataset, entry: str, paths: list[str]) -> list[Step]:
    """The steps that move ``paths`` (files or folders) into a new trash entry, making the
    folders they need."""
    base = f"{TRASH}/{entry}"
    made = [] if dataset.trash.exists() else [TRASH]
    made.append(base)
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = f"{base}/{'/'.join(parts[:depth])}"
            if folder not in made:
                made.append(folder)
    return [*map(MakeFolder, made), *(Move(path, f"{base}/{path}") for path in paths)]


def entries(dataset: EditableDataset) -> list[TrashEntry]:
    """The trash's entries, oldest first."""
    try:
        ids = sorted(e.name for e in os.scandir(dataset.trash) if e.is_dir())
    except FileNotFoundError:
        return []
    return [TrashEntry(entry, tuple(_files(dataset.trash / entry))) for entry in ids]


def restore_steps(dataset: EditableDataset, entry: str) -> list[Step]:
    """The steps that put back what the trash entry ``entry`` holds, where it was, making
    the folders it needs (a deleted class's folder), then removing the emptied entry."""
    base = dataset.trash / entry
    if not base.is_dir():
        raise DataError(f"The trash holds no entry {entry!r}.")
    moved: list[str] = []
    emptied: list[str] = []
    for folder, dirs, files in os.walk(base, topdown=True):
        relative = Path(folder).relative_to(base).as_posix()
        if relative != "." and not (dataset.root / relative).exists():
            if "/" not in relative and not relative.startswith("."):  # a deleted class
                check_class_name(relative, dataset.classes())
            moved.append(relative)  # a whole folder that is gone goes back at once
            dirs.clear()
            continue
        if relative != ".":
            emptied.append(relative)
        dirs.sort()
        moved += [f if relative == "." else f"{relative}/{f}" for f in sorted(files)]
    return [*(Move(f"{TRASH}/{entry}/{path}", path) for path in moved),
            *(RemoveFolder(f"{TRASH}/{entry}/{path}") for path in reversed(emptied)),
            RemoveFolder(f"{TRASH}/{entry}")]


def empty_trash(dataset: EditableDataset) -> int:
    """Delete everything in the trash for good; returns how many files were removed. This
    cannot be undone: ask first."""
    dataset.check_writable()
    removed = sum(len(entry.files) for entry in entries(dataset))
    try:
        if dataset.trash.exists():
            shutil.rmtree(dataset.trash)
        kept = dataset.flagged()
        present = {path.name for name in dataset.classes() for path in dataset.images(name)}
        if kept - present:
            dataset.write_flags(kept & present)
    except OSError as exc:
        raise DataError(unwritable(dataset.trash, exc)) from None
    return removed


def describe(entry: TrashEntry) -> str:
    """``3 images from 'cats'``: what an entry holds, in a few words."""
    classes = sorted({path.split("/")[0] for path in entry.files
                      if not path.startswith(".")})
    images = [path for path in entry.files if not path.startswith(".")]
    return f"{count(len(images), 'image')} from {', '.join(map(repr, classes)) or 'no class'}"


def _files(folder: Path) -> list[str]:
    found = []
    for parent, dirs, files in os.walk(folder):
        dirs.sort()
        relative = Path(parent).relative_to(folder)
        found += [(relative / f).as_posix() for f in sorted(files)]
    return found
