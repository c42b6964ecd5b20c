"""Sorting an image folder's samples from the Samples grid, as in the dataset editor: keys
1–9 move the selected cards' files to that class, F flags or unflags them, Delete sends them
to the trash, and the right-click menu does the same; each change is one step on the
document's undo stack. Other data (arrays, a CSV, detection or segmentation sets) cannot be
sorted here: the keys change nothing and say why, the menu's items are disabled saying
why."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QListWidgetItem

from studio.core.base.messages import count
from studio.core.data.types import FileSamples
from studio.gui.data.samples import SamplesView
from studio.gui.dataset_editor.sorting import sorting_actions, sorting_menu
from studio.gui.widgets.dataset_edits import FLAG_MARK, ProjectDataset
from studio.gui.widgets.document import ProjectDocument

SELECT = "Select samples first (Ctrl or Shift selects several)."


class SampleSorting(QObject):
    """The Samples grid's keys and menu that move, flag and delete the selected samples'
    files, through the project's dataset (``dataset``)."""

    def __init__(self, view: SamplesView, doc: ProjectDocument) -> None:
        super().__init__(view)
        self.view = view
        self.dataset = ProjectDataset(doc, self)
        self.dataset.said.connect(view.say)
        grid = view.grid
        self.flag_action, self.delete_action, self.move_actions = sorting_actions(
            grid, self.move_to_number, self.toggle_flags, self.delete)
        grid.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        grid.customContextMenuRequested.connect(self._menu)
        self.flag_action.setToolTip("Flag the selected samples' images to look at later, or "
                                    "unflag them if all are flagged")
        self.delete_action.setToolTip("Move the selected samples' images to the dataset's "
                                      "trash (undo restores them)")
        view.grid_filled.connect(self.mark)

    def why_not(self) -> str | None:
        """Why the samples shown cannot be sorted, or None if they can."""
        why = self.dataset.why_not()
        if why is None and self.view.loaded is not None and not isinstance(
                self.view.loaded.samples, FileSamples):
            why = "These samples are not files of the image folder."
        return why

    def selected_paths(self) -> list[Path]:
        """The image files of the selected cards, in grid order."""
        loaded = self.view.loaded
        if loaded is None or not isinstance(loaded.samples, FileSamples):
            return []
        return [loaded.samples.paths[index] for index in self.view.selected_samples()]

    def _chosen(self) -> list[Path]:
        """The selected files, if they can be sorted (else why not is said)."""
        why = self.why_not()
        paths = self.selected_paths() if why is None else []
        if why is not None or not paths:
            self.dataset.tell(why or SELECT, True)
        return paths

    def move(self, class_name: str) -> None:
        """Move the selected samples' files to ``class_name`` (one undoable step)."""
        paths = self._chosen()
        if paths and self.dataset.move(paths, class_name):
            self.view.grid.clearSelection()  # their cards show the old files until re-read

    def move_to_number(self, number: int) -> None:
        """Move the selected samples' files to the class with key ``number`` (the dataset's
        classes in their order, as the Edit tab's list numbers them)."""
        names = self.dataset.classes()
        if number <= len(names):
            self.move(names[number - 1])
        elif self._chosen():  # else it said why the samples cannot be sorted
            self.dataset.tell(f"The dataset has {count(len(names), 'class', 'classes')}: "
                              f"there is no class {number}.", True)

    def toggle_flags(self) -> None:
        """Flag the selected samples' files, or unflag them if all are flagged."""
        paths = self._chosen()
        if paths and self.dataset.flag(
                paths, not {path.name for path in paths} <= self.dataset.flagged()):
            self.mark()

    def delete(self) -> None:
        """Delete the selected samples' files to the dataset's trash (one undoable step)."""
        paths = self._chosen()
        if paths and self.dataset.delete(paths):
            self.view.grid.clearSelection()

    @Slot()
    def mark(self) -> None:
        """Write a flag before the label of each card whose file is flagged."""
        loaded, grid = self.view.loaded, self.view.grid
        if loaded is None or not isinstance(loaded.samples, FileSamples):
            return
        flagged = self.dataset.flagged() if self.dataset.why_not() is None else set()
        for row, index in enumerate(self.view.indices[:grid.count()]):
            label = self.view.views.label_text(loaded, index)
            marked = loaded.samples.paths[index].name in flagged
            item: QListWidgetItem = grid.item(row)
            item.setText(FLAG_MARK + label if marked else label)

    def _menu(self, pos) -> None:
        why = self.why_not()
        menu = sorting_menu(self.view, self.dataset.classes(), self.move,
                            [self.flag_action, self.delete_action],
                            why or (None if self.selected_paths() else SELECT))
        menu.exec(self.view.grid.viewport().mapToGlobal(pos))
