"""The project's image-folder dataset as the app corrects it: images added (copied in the
background) or moved to a class, and flagged, each one step on the document's undo stack
that undoes and redoes the files on disk with the core's edits. (It reads images: import it
only once a view that corrects is built, not at start-up.)"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QUndoCommand, QUndoStack

from studio.core.base.events import progress_events
from studio.core.base.messages import count, plural, quoted
from studio.core.data.editable.adding import AddReport, add_images
from studio.core.data.editable.dataset import TRASH, EditableDataset
from studio.core.data.editable.edits import delete_images, move_images, set_flags
from studio.core.data.editable.steps import Edit, Move, Step, redo_edit, undo_edit
from studio.core.data.types import DataError
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.jobs import JobSlot

NOT_A_FOLDER = ("The project's data is not an image folder with a subfolder per class: "
                "choose one in the Data view to correct its labels from here.")
NO_FOLDER = "No image folder is chosen yet: choose one in the Data view first."
GONE = " (its files left the trash: it cannot be undone)"
FLAG_MARK = "⚑ "
"""Written before the caption of a flagged image in the grids that correct the dataset."""


class DatasetCommand(QUndoCommand):
    """One correction of a dataset, already made when pushed: the images ``added`` to it
    (undone by deleting them to the trash, redone by restoring them) and then ``edits``
    (moves, flags; undone and redone by the core)."""

    def __init__(self, owner: ProjectDataset, dataset: EditableDataset, text: str,
                 added: Sequence[str] = (), edits: Sequence[Edit] = ()) -> None:
        super().__init__(text)
        self._owner = owner
        self._dataset = dataset
        self._added = list(added)
        self._edits = list(edits)
        self._removal: Edit | None = None
        """The deletion that undid the add, which redoing undoes (from the trash)."""
        self._done = True

    def redo(self) -> None:
        if self._done:  # pushed: the change is on disk already
            return
        self._apply(self._redo, "Redone")

    def undo(self) -> None:
        self._apply(self._undo, "Undone")

    def _undo(self) -> None:
        for edit in reversed(self._edits):
            undo_edit(self._dataset, edit)
        if self._added:
            if self._removal is None:
                self._removal = delete_images(self._dataset, self._added)
            else:
                redo_edit(self._dataset, self._removal)

    def _redo(self) -> None:
        if self._removal is not None:
            undo_edit(self._dataset, self._removal)
        for edit in self._edits:
            redo_edit(self._dataset, edit)

    def _apply(self, change: Callable[[], None], done: str) -> None:
        """Undo or redo, and say so; one that fails (a file moved or changed outside the
        app) changes nothing, says why, and leaves the stack (it cannot be undone or redone
        any more)."""
        try:
            change()
        except DataError as exc:
            self.setObsolete(True)
            self._owner.tell(f"“{self.text()}” could not be {done.lower()}: {exc}", True)
        else:
            self._owner.changed.emit()
            self._owner.tell(f"{done}: {self.text()}.")
        self._done = not self._done

    def next_steps(self) -> list[Step]:
        """The steps the next undo (or, once undone, redo) applies."""
        removal = list(self._removal.steps) if self._removal is not None else []
        if self._done:
            steps = [step.inverse() for edit in reversed(self._edits)
                     for step in reversed(edit.steps)]
            return steps + (removal if self._added else [])
        return [step.inverse() for step in reversed(removal)] + [
            step for edit in self._edits for step in edit.steps]

    def takes_from_trash(self, root: Path) -> bool:
        """Whether the next undo or redo moves files out of the trash of the dataset at
        ``root`` (which emptying the trash makes impossible)."""
        return self._dataset.root == root and any(
            isinstance(step, Move) and step.source.startswith(f"{TRASH}/")
            for step in self.next_steps())


def takes_from_trash(command: QUndoCommand, root: Path) -> bool:
    """Whether ``command`` (or one it groups) would move files out of the trash of the
    dataset at ``root`` when next undone or redone."""
    return (isinstance(command, DatasetCommand) and command.takes_from_trash(root)) or any(
        takes_from_trash(command.child(i), root) for i in range(command.childCount()))


def forget_trash(stack: QUndoStack, root: Path) -> None:
    """After the trash of the dataset at ``root`` was emptied: the commands that would take
    files out of it are marked so, and leave the stack when next reached (those next to
    its index at once), without changing anything."""
    for index in range(stack.count()):
        command = stack.command(index)
        if takes_from_trash(command, root):
            command.setText(command.text() + GONE)
            command.setObsolete(True)
    while stack.index() > 0 and stack.command(stack.index() - 1).isObsolete():
        stack.undo()  # an obsolete command is dropped without being undone
    while stack.index() < stack.count() and stack.command(stack.index()).isObsolete():
        stack.redo()


class ProjectDataset(QObject):
    """The document's dataset, when it is an image folder, for corrections: ``add``,
    ``move``, ``flag`` and ``delete`` push one undoable step each on the document's undo
    stack."""

    changed = Signal()
    """The dataset's files changed: a correction, or one undone or redone."""
    said = Signal(str, bool)
    """A correction's result in one line, and whether it is an error."""
    progressed = Signal(str)
    """How far images being added have got, in words."""
    adding = Signal(bool)
    """Images started (True) or ended (False) being added in the background."""

    def __init__(self, doc: ProjectDocument, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.changed.connect(doc.note_dataset_files_changed)  # the Data view reads it again
        self._datasets: dict[str, EditableDataset] = {}
        """An EditableDataset per root, so the ids of files hashed once are remembered."""
        self.job = JobSlot(self)
        self.job.event.connect(self._progressed)
        self.job.succeeded.connect(lambda result: self._added(*result))
        self.job.failed.connect(lambda text: self.tell(f"No image was added: {text}", True))
        self.job.started.connect(lambda: self.adding.emit(True))
        self.job.finished.connect(lambda: self.adding.emit(False))

    def why_not(self) -> str | None:
        """Why the project's dataset cannot be corrected from here, or None if it can."""
        choice = self.doc.project.dataset
        if choice.source != "folder":
            return NOT_A_FOLDER
        if not choice.path:
            return NO_FOLDER
        if not Path(choice.path).is_dir():
            return f"The image folder {choice.path} does not exist or is not a folder."
        return None

    def dataset(self) -> EditableDataset | None:
        """The project's EditableDataset, or None (``why_not`` says why)."""
        if self.why_not() is not None:
            return None
        root = os.path.abspath(self.doc.project.dataset.path)
        if root not in self._datasets:
            self._datasets[root] = EditableDataset(Path(root))
        return self._datasets[root]

    def classes(self) -> list[str]:
        """The dataset's classes (none if it cannot be corrected or read)."""
        dataset = self.dataset()
        try:
            return dataset.classes() if dataset is not None else []
        except DataError:
            return []

    def inside(self, paths: Sequence[Path]) -> list[str | None]:
        """Each of ``paths`` as the dataset names it (``class/file.png``) if it is a file in
        one of its classes, else None."""
        dataset, classes = self.dataset(), set(self.classes())
        found: list[str | None] = []
        for path in paths:
            try:
                relative = dataset.relative(Path(path)) if dataset is not None else None
            except ValueError:  # outside the dataset's folder
                relative = None
            parts = PurePosixPath(relative).parts if relative else ()
            found.append(relative if len(parts) > 1 and parts[0] in classes
                         and Path(path).is_file() else None)
        return found

    def busy(self) -> bool:
        """True while images are being added."""
        return self.job.busy()

    def add(self, sources: Sequence[Path], class_name: str) -> None:
        """Put the images ``sources`` in the class ``class_name`` as one undoable step: those
        already in the dataset are moved there (a relabelling), the others copied in, in the
        background (``said`` tells the result)."""
        dataset = self.dataset()
        if dataset is None:
            self.tell(self.why_not() or NOT_A_FOLDER, True)
            return
        if self.job.busy():
            self.tell("Images are being added already: wait for them, or cancel.", True)
            return
        named = self.inside(sources)
        moving = [relative for relative in named if relative is not None]
        copying = [Path(p) for p, relative in zip(sources, named, strict=True)
                   if relative is None]

        def task(on_event, stop):
            report = add_images(dataset, class_name, copying, progress_events(on_event),
                                stop) if copying else None
            return dataset, class_name, moving, report

        self.job.start(task)

    def cancel(self) -> None:
        """Stop adding images; those added so far stay (one undoable step)."""
        self.job.stop()

    def _named(self, paths: Sequence[Path]) -> list[str]:
        """``paths`` as the dataset names them where they are its images (the others as
        they are, for the core to refuse)."""
        return [relative or str(p) for p, relative in zip(paths, self.inside(paths),
                                                             strict=True)]

    def move(self, paths: Sequence[Path], class_name: str) -> bool:
        """Move the dataset's images ``paths`` to ``class_name`` (one undoable step); False
        (``said`` tells why) if nothing moved."""
        return self._edit(lambda dataset: move_images(dataset, self._named(paths), class_name))

    def delete(self, paths: Sequence[Path]) -> bool:
        """Delete the dataset's images ``paths`` to its trash (one undoable step, which undo
        restores)."""
        return self._edit(lambda dataset: delete_images(dataset, self._named(paths)))

    def flag(self, paths: Sequence[Path], flagged: bool = True) -> bool:
        """Flag (or unflag) the images ``paths`` (one undoable step)."""
        return self._edit(lambda dataset: set_flags(dataset, [Path(p).name for p in paths],
                                                    flagged))

    def flagged(self) -> set[str]:
        """The names of the dataset's flagged images."""
        dataset = self.dataset()
        return dataset.flagged() if dataset is not None else set()

    def _edit(self, make: Callable[[EditableDataset], Edit]) -> bool:
        dataset = self.dataset()
        if dataset is None:
            self.tell(self.why_not() or NOT_A_FOLDER, True)
            return False
        try:
            edit = make(dataset)
        except DataError as exc:
            self.tell(str(exc), True)
            return False
        if not edit.steps:
            self.tell(f"{edit.text}: nothing to change, it is so already.", False)
            return False
        self.push(DatasetCommand(self, dataset, edit.text, edits=[edit]),
                   f"{edit.text}.")
        return True

    @Slot(object)
    def _progressed(self, event: dict) -> None:
        if event.get("type") == "progress":
            self.progressed.emit(f"{event['what']}: {event['done']:,} of {event['total']:,}…")

    def _added(self, dataset: EditableDataset, class_name: str, moving: list[str],
               report: AddReport | None) -> None:
        """An add ended (on the GUI thread): move the images that were in the dataset
        already, and push what changed as one step."""
        parts, edits = [], []
        if report is not None:
            parts.append(report.summary())
        there = [path for path in moving if PurePosixPath(path).parts[0] == class_name]
        moved = len(moving) - len(there)
        if moving:
            try:
                edits.append(move_images(dataset, moving, class_name))
            except DataError as exc:
                parts.append(f"Not moved: {exc}")
                moved = 0
        if moved:
            parts.append(f"{count(moved, 'image')} of the dataset moved to "
                         f"{quoted(class_name)}.")
        if there:
            parts.append(f"{count(len(there), 'image')} of the dataset "
                         f"{plural(len(there), 'was', 'were')} in it already.")
        added = report.added if report is not None else []
        error = report is not None and bool(report.error or report.refused)
        if added or moved:
            what = " and ".join(([f"add {count(len(added), 'image')}"] if added else [])
                                + ([f"move {count(moved, 'image')}"] if moved else []))
            self.push(DatasetCommand(self, dataset, f"{what.capitalize()} to "
                                      f"{quoted(class_name)}", added, edits), " ".join(parts),
                       error)
        else:
            self.tell(" ".join(parts), error)

    def push(self, command: DatasetCommand, text: str, error: bool = False) -> None:
        """Push ``command`` (made already) on the undo stack and say ``text``."""
        self.doc.undo_stack.push(command)
        self.changed.emit()
        self.tell(text + " Undo with Ctrl+Z.", error)

    def tell(self, text: str, error: bool = False) -> None:
        """Say ``text`` as a correction's result (an error is remembered for Copy
        Diagnostics)."""
        if error:
            note_error("Dataset", text)
        self.said.emit(text, error)
