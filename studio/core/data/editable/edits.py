"""The edits a person makes to a dataset's classes and images. Each checks its input, then
changes the disk all or nothing and returns the ``Edit`` it made, so the GUI can wrap each
in one undo command (``undo_edit`` / ``redo_edit``). Deleting moves to the trash."""

from __future__ import annotations

import filecmp
import os
import secrets
from pathlib import PurePosixPath

from studio.core.base.messages import count, quoted
from studio.core.data.editable.content import is_content_name
from studio.core.data.editable.dataset import ORIGINALS, EditableDataset
from studio.core.data.editable.names import check_class_name
from studio.core.data.editable.steps import (
    Edit,
    Flag,
    MakeFolder,
    Move,
    RemoveFolder,
    Step,
    apply_steps,
)
from studio.core.data.editable.trash import new_entry_id, restore_steps, trash_steps
from studio.core.data.types import DataError


def add_class(dataset: EditableDataset, name: str) -> Edit:
    """Make an empty class named ``name`` (checked by check_class_name)."""
    name = check_class_name(name, dataset.classes())
    return _done(dataset, f"Add class {quoted(name)}", [MakeFolder(name)])


def remove_class(dataset: EditableDataset, name: str) -> Edit:
    """Remove the empty class ``name``; one that holds files is deleted to the trash
    (delete_class)."""
    held = _files(dataset, name)
    if held:
        raise DataError(f"The class {quoted(name)} holds {count(len(held), 'file')}: delete "
                        "it to the trash instead.")
    return _done(dataset, f"Remove class {quoted(name)}", [RemoveFolder(name)])


def rename_class(dataset: EditableDataset, old: str, new: str) -> Edit:
    """Rename the class ``old`` to ``new``; a change of case only goes through a temporary
    name, as a case-insensitive disk sees one folder."""
    dataset.class_dir(old)
    new = check_class_name(new, [name for name in dataset.classes() if name != old])
    if new == old:
        raise DataError(f"The class is named {quoted(old)} already.")
    steps: list[Step] = [Move(old, new)]
    if new.casefold() == old.casefold():
        temporary = f".rename-{secrets.token_hex(4)}"
        steps = [Move(old, temporary), Move(temporary, new)]
    return _done(dataset, f"Rename class {quoted(old)} to {quoted(new)}", steps)


def merge_classes(dataset: EditableDataset, sources: list[str], into: str) -> Edit:
    """Move every file of the classes ``sources`` into the class ``into`` and remove their
    folders; a file identical to one there goes to the trash, one only named alike gets
    a new name."""
    dataset.class_dir(into)
    sources = [name for name in dict.fromkeys(sources) if name != into]
    if not sources:
        raise DataError(f"Choose classes to merge into {quoted(into)} other than itself.")
    files = [path for name in sources for path in _files(dataset, name)]
    steps, entry = _moves(dataset, files, into)
    for name in sources:
        folders = [name, *_subfolders(dataset, name)]
        steps += [RemoveFolder(folder) for folder in reversed(folders)]
    text = f"Merge {', '.join(map(quoted, sources))} into {quoted(into)}"
    return _done(dataset, text, steps, entry)


def delete_class(dataset: EditableDataset, name: str) -> Edit:
    """Move the class ``name``'s folder, with its files, to the trash."""
    dataset.class_dir(name)
    entry = new_entry_id()
    return _done(dataset, f"Delete class {quoted(name)}", trash_steps(dataset, entry, [name]),
                 entry)


def move_images(dataset: EditableDataset, paths: list[str], to_class: str) -> Edit:
    """Move the images ``paths`` into the class ``to_class`` (a relabelling): one already
    there stays; one identical to a file there goes to the trash instead, so the image
    ends up in ``to_class`` once; one only named like a file there gets a new name."""
    dataset.class_dir(to_class)
    paths = [_image(dataset, path) for path in dict.fromkeys(paths)]
    moving = [path for path in paths if PurePosixPath(path).parts[0] != to_class]
    steps, entry = _moves(dataset, moving, to_class)
    return _done(dataset, f"Move {count(len(paths), 'image')} to {quoted(to_class)}", steps,
                 entry)


def delete_images(dataset: EditableDataset, paths: list[str]) -> Edit:
    """Move the images ``paths``, with any originals kept for them, to the trash."""
    paths = [_image(dataset, path) for path in dict.fromkeys(paths)]
    if not paths:
        raise DataError("Choose images to delete.")
    entry = new_entry_id()
    steps = trash_steps(dataset, entry, paths + _originals(dataset, paths))
    return _done(dataset, f"Delete {count(len(paths), 'image')}", steps, entry)


def restore(dataset: EditableDataset, entry: str) -> Edit:
    """Put back what the trash entry ``entry`` holds, where it was; refused, with nothing
    changed, if a file of the same name is there now."""
    return _done(dataset, "Restore from the trash", restore_steps(dataset, entry))


def set_flags(dataset: EditableDataset, names: list[str], flagged: bool) -> Edit:
    """Flag (or unflag) the image files named ``names`` (file names, which moves keep)."""
    before = dataset.flagged()
    changed = tuple(sorted({name for name in names if (name in before) != flagged}))
    verb = "Flag" if flagged else "Unflag"
    return _done(dataset, f"{verb} {count(len(set(names)), 'image')}",
                 [Flag(changed, flagged)] if changed else [])


def _done(dataset: EditableDataset, text: str, steps: list[Step],
          entry: str | None = None) -> Edit:
    apply_steps(dataset, steps)
    return Edit(text, tuple(steps), entry)


def _files(dataset: EditableDataset, name: str) -> list[str]:
    """Every file in a class's folder, hidden ones too (all must go for it to go)."""
    found = []
    for folder, dirs, files in os.walk(dataset.class_dir(name)):
        dirs.sort()
        found += [dataset.relative(os.path.join(folder, f)) for f in sorted(files)]
    return found


def _subfolders(dataset: EditableDataset, name: str) -> list[str]:
    """The folders inside a class's folder, each before the folders inside it."""
    found = []
    for folder, dirs, _ in os.walk(dataset.class_dir(name)):
        dirs.sort()
        found += [dataset.relative(os.path.join(folder, d)) for d in dirs]
    return found


def _image(dataset: EditableDataset, path: str) -> str:
    """``path`` checked to be a file inside a class folder."""
    parts = PurePosixPath(path).parts
    if (len(parts) < 2 or parts[0] not in dataset.classes()
            or not (dataset.root / path).is_file()):
        raise DataError(f"{quoted(path)} is not an image in a class of {dataset.root}.")
    return PurePosixPath(path).as_posix()


def _originals(dataset: EditableDataset, paths: list[str]) -> list[str]:
    """The kept originals of the images ``paths`` (named by the same content id)."""
    ids = {PurePosixPath(p).stem for p in paths if is_content_name(PurePosixPath(p).name)}
    try:
        kept = sorted(e.name for e in os.scandir(dataset.originals))
    except FileNotFoundError:
        return []
    return [f"{ORIGINALS}/{name}" for name in kept if PurePosixPath(name).stem in ids]


def _moves(dataset: EditableDataset, paths: list[str], to_class: str
           ) -> tuple[list[Step], str | None]:
    """Steps moving the files ``paths`` (each in a class folder) into ``to_class``, at the
    same path inside it; identical files go to a trash entry (its id returned) instead."""
    steps: list[Step] = []
    folders: set[str] = set()
    taken: set[str] = set()
    identical: list[str] = []
    for path in paths:
        inside = PurePosixPath(*PurePosixPath(path).parts[1:])
        target = PurePosixPath(to_class, inside)
        on_disk = (dataset.root / target).is_file()
        if ((on_disk and _same(dataset, path, target.as_posix()))
                or (target.as_posix().casefold() in taken and is_content_name(target.name))):
            identical.append(path)
            continue
        for parent in reversed(target.parents[:-2]):
            if parent.as_posix() not in folders and not (dataset.root / parent).is_dir():
                folders.add(parent.as_posix())
                steps.append(MakeFolder(parent.as_posix()))
        target = _free(dataset, target, taken)
        taken.add(target.as_posix().casefold())
        steps.append(Move(path, target.as_posix()))
    entry = new_entry_id() if identical else None
    if entry is not None:
        steps += trash_steps(dataset, entry, identical)
    return steps, entry


def _same(dataset: EditableDataset, a: str, b: str) -> bool:
    name = PurePosixPath(a).name
    return is_content_name(name) or filecmp.cmp(dataset.root / a, dataset.root / b,
                                                shallow=False)


def _free(dataset: EditableDataset, target: PurePosixPath, taken: set[str]) -> PurePosixPath:
    """``target``, or ``name-2.ext``, ``name-3.ext``… if it is taken on disk or in this
    edit."""
    candidate, number = target, 1
    while (candidate.as_posix().casefold() in taken
           or os.path.lexists(dataset.root / candidate)):
        number += 1
        candidate = target.with_name(f"{target.stem}-{number}{target.suffix}")
    return candidate
