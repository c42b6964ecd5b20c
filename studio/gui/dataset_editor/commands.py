"""Dataset edits on the document's undo stack: each command wraps one core ``Edit`` already
made on disk, so pushing it changes nothing more, and undo / redo apply its steps backwards
or again. A step that cannot be applied (a file gone since) says why and leaves the stack."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QUndoCommand, QUndoStack

from studio.core.base.messages import count, quoted
from studio.core.data.editable.adding import AddReport
from studio.core.data.editable.dataset import TRASH, EditableDataset
from studio.core.data.editable.edits import delete_images
from studio.core.data.editable.steps import Edit, Move, Step, redo_edit, undo_edit
from studio.core.data.types import DataError
from studio.gui.widgets.document import ProjectDocument

Report = Callable[[str], None]
"""Where a command says, in one line, why it could not be undone or redone."""
GONE = " (its files left the trash: it cannot be undone)"


class DatasetCommand(QUndoCommand):
    """One edit of a dataset's folder (made before the command is pushed)."""

    def __init__(self, doc: ProjectDocument, dataset: EditableDataset, edit: Edit,
                 report: Report) -> None:
        super().__init__(edit.text)
        self.doc, self.dataset, self.edit = doc, dataset, edit
        self.report = report
        self.done = True
        """Whether the edit is applied now (the command is below the stack's index)."""
        self._pushed = False

    def redo(self) -> None:
        if self._pushed:
            self._apply(self._forward)
        self._pushed = True
        self.doc.note_dataset_files_changed()

    def undo(self) -> None:
        self._apply(self._backward)
        self.doc.note_dataset_files_changed()

    def _forward(self) -> None:
        redo_edit(self.dataset, self.edit)

    def _backward(self) -> None:
        undo_edit(self.dataset, self.edit)

    def _apply(self, change: Callable[[], None]) -> None:
        try:
            change()
        except DataError as exc:
            self.report(f"Could not {'undo' if self.done else 'redo'} "
                        f"“{self.text()}”: {exc}")
            self.setObsolete(True)  # the stack drops it: nothing on disk to step over
            return
        self.done = not self.done

    def next_steps(self) -> list[Step]:
        """The steps the next undo (or redo, if undone) applies."""
        if self.done:
            return [step.inverse() for step in reversed(self.edit.steps)]
        return list(self.edit.steps)


class AddCommand(DatasetCommand):
    """Images added (``AddReport.added``): undoing deletes them to the trash, redoing
    restores them from it."""

    def __init__(self, doc: ProjectDocument, dataset: EditableDataset, added: AddReport,
                 report: Report) -> None:
        text = f"Add {count(len(added.added), 'image')} to {quoted(added.class_name)}"
        super().__init__(doc, dataset, Edit(text, ()), report)
        self.added = list(added.added)
        self._deleted: Edit | None = None

    def _backward(self) -> None:
        if self._deleted is None:
            self._deleted = delete_images(self.dataset, self.added)
        else:
            redo_edit(self.dataset, self._deleted)

    def _forward(self) -> None:
        undo_edit(self.dataset, self._deleted)

    def next_steps(self) -> list[Step]:
        if self._deleted is None:
            return []
        if self.done:
            return list(self._deleted.steps)
        return [step.inverse() for step in reversed(self._deleted.steps)]


def takes_from_trash(command: QUndoCommand, root: str) -> bool:
    """Whether ``command``'s next undo or redo (or one of the commands it groups) moves
    files out of the trash of the dataset at ``root`` (which emptying the trash makes
    impossible)."""
    if any(takes_from_trash(command.child(i), root) for i in range(command.childCount())):
        return True
    return (isinstance(command, DatasetCommand) and str(command.dataset.root) == root
            and any(isinstance(step, Move) and step.source.startswith(f"{TRASH}/")
                    for step in command.next_steps()))


def forget_trash(stack: QUndoStack, root: str) -> None:
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
