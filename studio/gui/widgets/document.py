"""The open project, its file path and the one undo stack that every edit goes through."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from studio.core.build.analysis import Analysis, analyze_project
from studio.core.data.sources import describe
from studio.core.data.types import DataError, DataPending, DatasetInfo
from studio.core.model.fixes import AnyFix, DataFix
from studio.core.model.layout import complete_positions, place_new_nodes
from studio.core.project.document import (
    DatasetChoice,
    Project,
    load_project,
    project_stem,
    save_project,
    weights_path_for,
)
from studio.core.project.weights import ImportedWeights, WeightsError, carry_weights
from studio.core.runs.folders import UNSAVED, scratch_project


class EditCommand(QUndoCommand):
    """One user edit, stored as snapshots of the project before and after it."""

    def __init__(self, doc: ProjectDocument, text: str, before: Project, after: Project,
                 merge_key: str | None) -> None:
        super().__init__(text)
        self._doc = doc
        self._before = before
        self._after = after
        self._merge_key = merge_key

    def id(self) -> int:  # noqa: A003 - Qt's name
        return 1 if self._merge_key else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt's name
        """Fold repeated edits of one field (e.g. spin-box steps) into one undo step."""
        if not isinstance(other, EditCommand) or other._merge_key != self._merge_key:
            return False
        self._after = other._after
        return True

    def redo(self) -> None:
        self._doc._restore(self._after)

    def undo(self) -> None:
        self._doc._restore(self._before)

    def snapshots(self) -> tuple[Project, Project]:
        """The project before and after the edit."""
        return self._before, self._after


class ProjectDocument(QObject):
    """Holds the project; ``edit`` applies a change as an undoable command."""

    changed = Signal()
    """The project changed (an edit, undo, redo or a newly opened file), or data its analysis
    waited for was read."""
    path_changed = Signal()
    """The file the project is saved to changed."""
    replaced = Signal()
    """Another project is shown (new, opened or a demo), not an edit of this one."""
    data_wanted = Signal()
    """The chosen data must be read before the analysis knows it (a CSV is never parsed on
    this thread): read it in the background, telling ``reading_started``/``reading_ended``."""
    dataset_files_changed = Signal()
    """An edit (or its undo) changed the chosen dataset's files on disk: what shows them reads
    them again."""

    def __init__(self, project: Project, path: Path | None = None) -> None:
        super().__init__()
        self.undo_stack = QUndoStack(self)
        self._project = project
        self._saved = project.copy()
        """The project as its file holds it (for an unsaved one: as it began)."""
        self._path = path
        self._scratch = scratch_project()
        self._analysis: Analysis | None = None
        self._waiting = False
        """Whether something was described as pending since the last change."""
        self._stopped: tuple[DatasetChoice, str] | None = None
        """Why reading the chosen data ended without it, for that choice."""

    @property
    def project(self) -> Project:
        """The current project. Change it only through ``edit``."""
        return self._project

    @property
    def path(self) -> Path | None:
        """The project file, or None for an unsaved project."""
        return self._path

    @property
    def place(self) -> Path:
        """The project file beside which its runs and searches are kept: its file, or for an
        unsaved project a scratch file of its own in the workspace (see scratch_project)."""
        return self._path or self._scratch

    def modified(self) -> bool:
        """Whether the project has changes to save: the undo stack left its clean state and
        the project differs from the saved one. A dataset correction is a step on the same
        stack, but it changes the dataset's files at once, not the project: alone, it leaves
        nothing to save."""
        return not self.undo_stack.isClean() and self._project != self._saved

    @property
    def title(self) -> str:
        """A short name for the window title."""
        return project_stem(self._path) if self._path else self._project.name

    def describe(self) -> DatasetInfo:
        """What the chosen dataset holds, never reading a CSV here: DataPending while it has
        to be read (``data_wanted`` asks for that), DataError if it is unusable."""
        try:
            return describe(self._project.dataset, read=False)
        except DataPending:
            self._waiting = True
            if self._stopped is not None:
                raise DataPending(self._stopped[1]) from None
            self.data_wanted.emit()
            raise

    def dataset(self) -> DatasetInfo | None:
        """The chosen dataset, or None if it is unknown (or still being read)."""
        try:
            return self.describe()
        except DataError:
            return None

    def analysis(self) -> Analysis:
        """Shapes, parameter counts and problems of the current model (cached per change);
        while the chosen data is being read, that is the problem."""
        if self._analysis is None:
            self._analysis = analyze_project(self._project, lambda _: self.describe())
        return self._analysis

    def reading_started(self) -> None:
        """A background reading of the chosen data started: no longer say why one stopped."""
        if self._stopped is not None:
            self._reading_told(None)

    def reading_ended(self, stopped: str = "") -> None:
        """A background reading of the chosen data ended: analyse again if that waited for it.

        ``stopped`` says why it ended without the data (it was cancelled, or failed): said
        instead of "being read" until a reading starts again or the dataset choice changes.
        """
        self._reading_told((copy.deepcopy(self._project.dataset), stopped) if stopped else None)

    def note_dataset_files_changed(self) -> None:
        """The app changed the dataset's files (its classes, say): analyse again, and have the
        views of the data read it again."""
        self._changed()
        self.dataset_files_changed.emit()

    def _reading_told(self, stopped: tuple[DatasetChoice, str] | None) -> None:
        self._stopped = stopped
        if self._waiting:
            self._changed()

    def edit(self, text: str, change: Callable[[Project], Any],
             merge_key: str | None = None) -> None:
        """Apply ``change`` to a copy of the project and push it as one undoable command.

        Snapshots are deep copies compared as dataclasses: JSON Schema validation is for
        files, and doing it twice per edit cost about 85 ms on a 300-layer model.
        """
        draft = self._project.copy()
        change(draft)
        if draft != self._project:
            self.undo_stack.push(EditCommand(self, text, self._project, draft, merge_key))

    def apply_fix(self, fix: AnyFix) -> None:
        """Apply a one-click fix as one undoable edit: to the model, placing any new layer
        below its input, or to how the data is read."""

        def change(project: Project) -> None:
            if isinstance(fix, DataFix):
                for name, value in fix.changes.items():
                    setattr(project.dataset, name, value)
                return
            project.positions = complete_positions(project.graph, project.positions)
            fix.apply(project.graph)
            place_new_nodes(project.graph, project.positions)
            project.prune_positions()

        self.edit(fix.label, change)

    def fixes_for(self, node_id: str) -> list[AnyFix]:
        """The one-click fixes offered for the problems at ``node_id``."""
        return [fix for problem in self.analysis().problems if problem.node_id == node_id
                for fix in problem.fixes]

    def replace(self, project: Project, path: Path | None, scratch: Path | None = None) -> None:
        """Show another project; the undo history starts afresh. An unsaved project keeps
        its runs (and an imported model's weights) beside ``scratch`` (a new scratch file by
        default, see ``scratch_project``)."""
        self.undo_stack.clear()
        self._project = project
        self._saved = project.copy()
        self._path = path
        self._scratch = scratch or scratch_project()
        self._changed()
        self.path_changed.emit()
        self.replaced.emit()

    def open(self, path: Path) -> None:
        """Load ``path``; raises ProjectFileError and leaves the current project as it was."""
        self.replace(load_project(path), path)

    def weights_to_carry(self, target: Path) -> ImportedWeights | None:
        """The project's imported weights if saving it at ``target`` copies them (they are
        not beside it yet: see ``save``), else None."""
        weights = self._project.weights
        if weights is None or weights.path == Path(os.path.abspath(weights_path_for(target))):
            return None
        return weights

    def save(self, path: Path | None = None, carried: ImportedWeights | None = None) -> None:
        """Save atomically to ``path`` (or the current file) and mark the stack clean. The
        project's imported weights go beside it first: ``carried``, already copied there
        (see ``weights_to_carry``), or copied here."""
        target = path or self._path
        if target is None:
            raise ValueError("No file to save to.")
        old = self._project.weights.file if self._project.weights else None
        new = self._carried_weights(Path(target), carried)
        try:
            save_project(self._project, target)
        except BaseException:
            if new != old:
                self._relocate_weights(new, old)
                Path(new).unlink(missing_ok=True)
            raise
        if new != old and Path(old).parent.parent.name == UNSAVED:
            Path(old).unlink(missing_ok=True)  # a scratch copy that no project uses now
        self._saved = self._project.copy()
        self.undo_stack.setClean()
        if target != self._path:
            self._path = target
            self.path_changed.emit()

    def _carried_weights(self, target: Path, carried: ImportedWeights | None) -> str | None:
        """Copy the project's imported weights beside ``target`` unless ``carried`` there
        already (or they are there), and return where they now are. Weights that are missing
        or changed stay where the project says: the project is still saved (the work is not
        lost for them), and training or answering from them says what is wrong."""
        weights = self._project.weights
        if weights is None:
            return None
        if carried is None:
            try:
                carried = carry_weights(weights, weights_path_for(target))
            except WeightsError:
                return weights.file
        self._relocate_weights(weights.file, carried.file)
        return carried.file

    def _relocate_weights(self, old: str, new: str) -> None:
        """Point the project, and every snapshot the undo stack holds, at the weights file
        ``new`` where they pointed at ``old``: undoing past a save keeps the weights."""
        projects = [self._project]
        for index in range(self.undo_stack.count()):
            command = self.undo_stack.command(index)
            if isinstance(command, EditCommand):
                projects += command.snapshots()
        for project in projects:
            if project.weights is not None and project.weights.file == old:
                project.weights.file = new

    def _restore(self, snapshot: Project) -> None:
        self._project = snapshot.copy()
        self._changed()

    def _changed(self) -> None:
        self._analysis = None
        self._waiting = False
        if self._stopped is not None and self._stopped[0] != self._project.dataset:
            self._stopped = None
        self.changed.emit()
