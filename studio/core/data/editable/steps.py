"""Reversible steps on a dataset's folder (move, make or remove a folder, flag), applied all
or nothing, and the ``Edit`` an edit returns: its steps, so that undoing is applying their
inverses in reverse order, and redoing is applying them again."""

from __future__ import annotations

import os
from dataclasses import dataclass

from studio.core.base.messages import quoted, unwritable
from studio.core.data.editable.dataset import EditableDataset
from studio.core.data.types import DataError


@dataclass(frozen=True)
class Move:
    """Rename a file or folder ``source`` to ``target`` (which must not exist)."""

    source: str
    target: str

    def inverse(self) -> Move:
        return Move(self.target, self.source)


@dataclass(frozen=True)
class MakeFolder:
    """Make the folder ``path`` (which must not exist)."""

    path: str

    def inverse(self) -> RemoveFolder:
        return RemoveFolder(self.path)


@dataclass(frozen=True)
class RemoveFolder:
    """Remove the empty folder ``path``."""

    path: str

    def inverse(self) -> MakeFolder:
        return MakeFolder(self.path)


@dataclass(frozen=True)
class Flag:
    """Flag (or, with ``flagged`` False, unflag) the image files named ``names``."""

    names: tuple[str, ...]
    flagged: bool

    def inverse(self) -> Flag:
        return Flag(self.names, not self.flagged)


Step = Move | MakeFolder | RemoveFolder | Flag


@dataclass(frozen=True)
class Edit:
    """What one edit did: ``text`` names it (for an undo command), ``steps`` are what it
    changed, in order; ``trash_entry`` is the trash entry it filled, if any."""

    text: str
    steps: tuple[Step, ...]
    trash_entry: str | None = None


def apply_steps(dataset: EditableDataset, steps: tuple[Step, ...] | list[Step]) -> None:
    """Apply ``steps`` in order. A step that cannot be applied (a file gone, a name taken, a
    disk error) undoes the steps before it and raises DataError: all or nothing."""
    dataset.check_writable()
    done: list[Step] = []
    try:
        for step in steps:
            _apply(dataset, step)
            done.append(step)
    except (DataError, OSError) as exc:
        for step in reversed(done):
            _apply(dataset, step.inverse())
        if isinstance(exc, OSError):
            raise DataError(unwritable(dataset.root, exc)) from None
        raise


def undo_edit(dataset: EditableDataset, edit: Edit) -> None:
    """Undo ``edit``: its steps' inverses, last first (all or nothing)."""
    apply_steps(dataset, [step.inverse() for step in reversed(edit.steps)])


def redo_edit(dataset: EditableDataset, edit: Edit) -> None:
    """Apply ``edit``'s steps again after an undo (all or nothing)."""
    apply_steps(dataset, edit.steps)


def _apply(dataset: EditableDataset, step: Step) -> None:
    root = dataset.root
    if isinstance(step, Flag):
        flagged = dataset.flagged()
        dataset.write_flags(flagged | set(step.names) if step.flagged
                            else flagged - set(step.names))
        return
    if isinstance(step, RemoveFolder):
        os.rmdir(root / step.path)
        return
    target = root / (step.path if isinstance(step, MakeFolder) else step.target)
    if os.path.lexists(target):
        raise DataError(f"{quoted(target.relative_to(root).as_posix())} exists already in "
                        f"{root}: nothing was changed.")
    if isinstance(step, MakeFolder):
        target.mkdir()
        return
    source = root / step.source
    if not os.path.lexists(source):
        raise DataError(f"{quoted(step.source)} is no longer in {root} (moved or deleted "
                        "outside the app?): nothing was changed.")
    os.rename(source, target)
