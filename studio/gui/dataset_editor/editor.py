"""The Data view's Edit tab for an image folder: its classes on the left, the current class's
images on the right, and every change (classes, images added, moved, flagged, deleted to the
trash, restored) one step on the document's undo stack."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import ProgressEvent
from studio.core.base.messages import count, quoted
from studio.core.base.preferences import MAX_SIDE, MAX_SIDE_LIMIT
from studio.core.data.editable import edits, trash
from studio.core.data.editable.adding import AddReport
from studio.core.data.editable.dataset import EditableDataset
from studio.core.data.editable.steps import Edit
from studio.core.data.types import DataError
from studio.gui.camera.view import CameraView
from studio.gui.dataset_editor.adder import Adder, AddJob, one_line, temporary_folder
from studio.gui.dataset_editor.class_list import ClassList
from studio.gui.dataset_editor.image_grid import SIDE, ImageGrid, ImagesModel
from studio.gui.dataset_editor.sorting import key_action, sorting_actions, sorting_menu
from studio.gui.dataset_editor.thumbnails import Thumbnails
from studio.gui.dataset_editor.transfer import local_files, pasted_image, save_png
from studio.gui.dataset_editor.trash_view import TrashView
from studio.gui.widgets.dataset_edits import DatasetCommand, ProjectDataset, forget_trash
from studio.gui.widgets.document import ProjectDocument

IMAGE_FILTER = ("Images (*.png *.jpg *.jpeg *.bmp *.gif *.webp *.tif *.tiff);;"
                "All files (*)")
ERROR_STYLE = "color: #b3261e;"
PROGRESS_STEPS = 1000
CAMERA_WIDTH = 280
"""The camera pane's least width: its preview and two rows of recording controls."""


def confirmed(parent: QWidget, title: str, text: str) -> bool:
    """Whether the person answers Yes (No is the default)."""
    return QMessageBox.question(
        parent, title, text, QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No) == QMessageBox.StandardButton.Yes


class DatasetEditor(QWidget):
    """Edits the class-folder image dataset the project reads (``show_folder``)."""

    class_changed = Signal(object)
    """The selected class (``selected_class``) changed: its name, or None."""
    adding_changed = Signal(int, bool)
    """The person chose how images are added: the largest side they are shrunk to (0: any)
    and whether originals are kept (to remember them for the next session)."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.dataset: EditableDataset | None = None
        self.writable = False
        self.trash_view: TrashView | None = None
        self.edits = ProjectDataset(doc, self)
        """Pushes the editor's steps on the undo stack and says how undoing them went."""
        self.edits.said.connect(self.say)
        self.refusal = ""
        """Why the dataset cannot be changed (read-only), if it cannot."""
        self._shown: tuple[Path, str | None] | None = None
        """The dataset and class whose images the grid shows."""

        self.notice = QLabel()
        self.notice.setObjectName("dataset-notice")
        self.notice.setWordWrap(True)
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.classes = ClassList()
        self.classes.currentItemChanged.connect(self._class_changed)
        self.classes.itemSelectionChanged.connect(self._enable)
        self.classes.renamed.connect(self.rename_class)
        self.classes.images_dropped.connect(self.move_images)
        self.classes.files_dropped.connect(self.add_files)
        self.add_class_button = self._button("Add class", "Add an empty class and name it (Insert)",
                                             self.add_class)
        self.rename_button = self._button("Rename", "Rename the current class (F2)",
                                          lambda: self.classes.rename())
        self.merge_button = self._button("Merge…", "Merge the selected classes into one of "
                                         "them (select two or more with Ctrl)",
                                         self.merge_classes)
        self.delete_class_button = self._button(
            "Delete…", "Delete the selected classes with their images, to the trash (asks "
            "first; Delete)", self.delete_classes)
        self.trash_button = self._button("Trash", "Deleted classes and images: restore them, "
                                         "or empty the trash", self.show_trash)

        self.thumbnails = Thumbnails(self, SIDE)
        self.model = ImagesModel(self.thumbnails)
        self.grid = ImageGrid(self.model)
        self.grid.files_dropped.connect(lambda files: self.add_files(
            self.selected_class(), files))
        self.grid.selectionModel().selectionChanged.connect(lambda *_: self._enable())
        self.caption = QLabel()
        self.add_button = QToolButton()
        self.add_button.setText("Add images…")
        self.add_button.setToolTip("Copy image files into the current class (Ctrl+Shift+O; "
                                   "you can also drop files or folders here, or paste with "
                                   "Ctrl+V)")
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.add_button.clicked.connect(self.ask_files)
        menu = QMenu(self.add_button)
        menu.addAction("Add images…", self.ask_files)
        menu.addAction("Add a folder of images…", self.ask_folder)
        self.add_button.setMenu(menu)
        self.max_side = QSpinBox()
        self.max_side.setRange(0, MAX_SIDE_LIMIT)
        self.max_side.setSingleStep(128)
        self.max_side.setValue(MAX_SIDE)
        self.max_side.setKeyboardTracking(False)  # a number typed counts once it is entered
        self.max_side.setSpecialValueText("Any size")
        self.max_side.setSuffix(" px")
        self.max_side.setToolTip("Images added that are larger than this on their longer side "
                                 "are shrunk to it (0: kept at any size)")
        self.keep_originals = QCheckBox("Keep originals")
        self.keep_originals.setToolTip("Keep the full-size original of each image shrunk, in "
                                       "the dataset's hidden .originals folder")
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.cancel = QPushButton("Cancel")
        self.cancel.setObjectName("dataset-add-cancel")
        self.cancel.setToolTip("Stop adding: the images added so far are kept (one undoable "
                               "step)")
        self.adder = Adder(self)
        self.adder.progress.connect(self._progress)
        self.adder.added.connect(self._added)
        self.adder.failed.connect(lambda message: self.say(message, error=True))
        self.adder.busy_changed.connect(self._adding)
        self.cancel.clicked.connect(self.adder.cancel)
        self.max_side.valueChanged.connect(self._adding_chosen)
        self.keep_originals.toggled.connect(self._adding_chosen)

        self.flag_action, self.delete_action, _ = sorting_actions(
            self.grid, self.move_to_number, self.toggle_flags, self.delete_images)
        key_action("Rename Class", "F2", lambda: self.classes.rename(), self.classes)
        key_action("Delete Classes…", "Delete", self.delete_classes, self.classes)
        for text, keys, slot in (("Paste Images", QKeySequence.StandardKey.Paste, self.paste),
                                 ("Add Images…", "Ctrl+Shift+O", self.ask_files),
                                 ("Add Class", "Insert", self.add_class)):
            key_action(text, keys, slot, self, Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.grid.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.grid.customContextMenuRequested.connect(self._grid_menu)

        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.classes, 1)
        # rows of two at most: the editor must fit a laptop's Data tab beside its form
        for row in ((self.add_class_button, self.rename_button),
                    (self.merge_button, self.delete_class_button), (self.trash_button,)):
            line = QHBoxLayout()
            for button in row:
                line.addWidget(button)
            column.addLayout(line)
        right = QWidget()
        side = QVBoxLayout(right)
        side.setContentsMargins(0, 0, 0, 0)
        self.caption.setMinimumWidth(1)  # a long class name is cut, not widening the view
        self.camera_toggle = QToolButton()
        self.camera_toggle.setText("Camera")
        self.camera_toggle.setObjectName("editor-camera")
        self.camera_toggle.setCheckable(True)
        self.camera_toggle.setToolTip("Show the camera beside the images: hold to record "
                                      "frames into the current class")
        self.camera_toggle.toggled.connect(self.show_camera)
        self.camera: CameraView | None = None
        """The camera beside the images, once first shown."""
        top = QHBoxLayout()
        top.addWidget(self.caption, 1)
        top.addWidget(self.camera_toggle)
        top.addWidget(self.add_button)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Largest side"))
        bar.addWidget(self.max_side)
        bar.addWidget(self.keep_originals)
        bar.addStretch(1)
        busy = QHBoxLayout()  # shown only while images are being added
        busy.addWidget(self.progress, 1)
        busy.addWidget(self.cancel)
        side.addLayout(top)
        side.addWidget(self.grid, 1)
        side.addLayout(bar)
        side.addLayout(busy)
        self.splitter = QSplitter()
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([220, 600])
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.notice)
        layout.addWidget(self.splitter, 1)
        self.class_changed.connect(self._aim_camera)
        self._adding(False)
        doc.dataset_files_changed.connect(self.refresh)

    def set_adding(self, max_side: int, keep_originals: bool) -> None:
        """Add images as chosen before: shrunk to ``max_side`` (0: any size), their originals
        kept or not."""
        self.max_side.setValue(max_side)
        self.keep_originals.setChecked(keep_originals)

    def _adding_chosen(self) -> None:
        self.adding_changed.emit(self.max_side.value(), self.keep_originals.isChecked())

    # --- what is shown ---------------------------------------------------------------

    def show_folder(self, path: str) -> None:
        """Edit the image folder ``path`` (empty: none)."""
        root = Path(path) if path else None
        if root == (self.dataset.root if self.dataset else None):
            return
        self.dataset = EditableDataset(root) if root else None
        self.notice.clear()
        self.refresh()

    def refresh(self) -> None:
        """Read the folder again: its classes, counts, images and flags."""
        counts: dict[str, int] = {}
        self.refusal = "No dataset is chosen." if self.dataset is None else ""
        if self.dataset is not None:
            try:
                counts = {name: len(self.dataset.images(name))
                          for name in self.dataset.classes()}
                self.dataset.check_writable()
            except DataError as exc:
                self.refusal = str(exc)
                self.say(self.refusal, error=True)
        self.writable = not self.refusal
        self._aim_camera()
        self.classes.show_classes(self.dataset.root if self.dataset else Path(), counts)
        entries = self._trash_entries()  # read once: the button counts what the view lists
        self.trash_button.setText(f"Trash ({len(entries)})")
        if self.trash_view is not None:
            self.trash_view.show_entries(entries, self.writable)

    def show_camera(self, shown: bool) -> None:
        """Show the camera beside the images, or hide it (which stops it). It is made when
        first shown: looking for a camera loads Qt Multimedia."""
        if shown and self.camera is None:
            self.camera = CameraView()
            self.camera.setMinimumWidth(CAMERA_WIDTH)
            self.camera.captured.connect(self.add_frames)
            self.splitter.addWidget(self.camera)
            self._aim_camera()
        if self.camera is not None:
            self.camera.setVisible(shown)
        if self.camera_toggle.isChecked() != shown:
            self.camera_toggle.setChecked(shown)

    def _aim_camera(self) -> None:
        """Let the camera record only into a class that can take its frames, saying where."""
        if self.camera is None:
            return
        target = self.selected_class()
        self.camera.refuse_recording(self.refusal or (
            "Choose a class to record into." if target is None else ""))
        if target is not None:
            self.camera.hold_button.setToolTip(
                f"Record frames into {quoted(target)} while the button is held down")

    def selected_class(self) -> str | None:
        """The class whose images are shown (where the camera records to)."""
        return self.classes.current_class()

    def say(self, text: str, error: bool = False) -> None:
        """Say what happened (or why not) in one line above the lists."""
        self.notice.setStyleSheet(ERROR_STYLE if error else "")
        self.notice.setText(text)

    def _class_changed(self) -> None:
        self._show_images()
        self.class_changed.emit(self.selected_class())

    def _show_images(self) -> None:
        name = self.selected_class()
        paths: list[str] = []
        flagged: set[str] = set()
        if self.dataset is not None and name is not None:
            try:
                paths = [self.dataset.relative(p) for p in self.dataset.images(name)]
            except DataError as exc:
                self.say(str(exc), error=True)
            flagged = self.dataset.flagged()
        shown = (self.dataset.root if self.dataset else Path(), name)
        self.grid.show_images(shown[0], paths, flagged, again=shown == self._shown)
        self._shown = shown
        self.caption.setText("" if name is None else
                             f"{quoted(name)}: {count(len(paths), 'image')}"
                             + (f", {len(flagged & {Path(p).name for p in paths})} flagged"
                                if flagged else ""))
        self._enable()

    def _enable(self) -> None:
        has_class = self.selected_class() is not None
        self.add_class_button.setEnabled(self.writable)
        self.add_button.setEnabled(self.writable and has_class)
        free = self.writable and not self.adder.busy()  # an add writes into a class folder
        for widget in (self.rename_button, self.delete_class_button):
            widget.setEnabled(free and has_class)
        self.merge_button.setEnabled(free and len(self.classes.selected_classes()) > 1)
        self.classes.setEnabled(self.dataset is not None)
        self.grid.setEnabled(has_class)
        self.trash_button.setEnabled(self.dataset is not None)

    # --- edits -----------------------------------------------------------------------

    def _edit(self, change: Callable[[EditableDataset], Edit]) -> Edit | None:
        """Make an edit and push it as one undo command; a refusal is said in one line."""
        if self.dataset is None:
            return None
        try:
            edit = change(self.dataset)
        except DataError as exc:
            self.say(str(exc), error=True)
            return None
        self.edits.push(DatasetCommand(self.edits, self.dataset, edit.text, edits=[edit]),
                        f"{edit.text}.")
        return edit

    def add_class(self) -> None:
        """Add a class named ``class N`` and start renaming it."""
        if self.dataset is None:
            return
        names = {name.casefold() for name in self.classes.names()}
        number = len(names) + 1
        while f"class {number}" in names:
            number += 1
        name = f"class {number}"
        if self._edit(lambda ds: edits.add_class(ds, name)):
            self.classes.choose(name)
            self.classes.rename()

    def rename_class(self, old: str, new: str) -> None:
        """Rename a class (a refused name is said, and the old one stays)."""
        if self._adding_now():
            return
        edit = self._edit(lambda ds: edits.rename_class(ds, old, new))
        if edit is not None:
            self.classes.choose(new.strip())

    def merge_classes(self) -> None:
        """Ask which of the selected classes to keep, and merge the others into it."""
        chosen = self.classes.selected_classes()
        if self._adding_now():
            return
        if len(chosen) < 2:
            self.say("Select two or more classes to merge (Ctrl+click).", error=True)
            return
        current = self.selected_class()
        into, ok = QInputDialog.getItem(
            self, "Merge classes", f"Merge {', '.join(map(quoted, chosen))} into:", chosen,
            chosen.index(current) if current in chosen else 0, False)
        if ok and self._edit(lambda ds: edits.merge_classes(ds, chosen, into)):
            self.classes.choose(into)

    def delete_classes(self) -> None:
        """Ask, then delete the selected classes (with their images) to the trash, one
        undoable step each."""
        chosen = self.classes.selected_classes()
        if not chosen or self._adding_now():
            return
        images = sum(len(self.dataset.images(name)) for name in chosen)
        if not confirmed(self, "Delete classes", f"Delete {', '.join(map(quoted, chosen))} "
                         f"with {count(images, 'image')}? They go to the dataset's trash, "
                         "where you can restore them until it is emptied."):
            return
        self.doc.undo_stack.beginMacro(f"Delete {count(len(chosen), 'class', 'classes')}")
        for name in chosen:
            self._edit(lambda ds, name=name: edits.delete_class(ds, name))
        self.doc.undo_stack.endMacro()

    def move_images(self, to_class: str, paths: list[str]) -> None:
        """Move images (paths in the dataset) to ``to_class``."""
        if paths and self._edit(lambda ds: edits.move_images(ds, paths, to_class)):
            self.say(f"Moved {count(len(paths), 'image')} to {quoted(to_class)}.")

    def move_to_number(self, number: int) -> None:
        """Move the selected images to the class with key ``number``."""
        names = self.classes.names()
        if self.writable and number <= len(names):
            self.move_images(names[number - 1], self.grid.selected_paths())

    def delete_images(self) -> None:
        """Delete the selected images to the trash (undoable: no question asked)."""
        paths = self.grid.selected_paths()
        if paths and self.writable:
            self._edit(lambda ds: edits.delete_images(ds, paths))

    def toggle_flags(self) -> None:
        """Flag the selected images, or unflag them if all are flagged."""
        names = [Path(path).name for path in self.grid.selected_paths()]
        if names and self.writable:
            flagged = not set(names) <= self.model.flagged
            self._edit(lambda ds: edits.set_flags(ds, names, flagged))

    # --- the trash -------------------------------------------------------------------

    def _trash_entries(self) -> list[trash.TrashEntry]:
        return trash.entries(self.dataset) if self.dataset is not None else []

    def show_trash(self) -> None:
        """Show the trash's entries, to restore or empty."""
        if self.trash_view is None:
            self.trash_view = TrashView(self, self.restore, self.empty_trash)
        self.trash_view.show_entries(self._trash_entries(), self.writable)
        self.trash_view.show()
        self.trash_view.raise_()

    def restore(self, entry: str) -> None:
        """Put back what the trash entry ``entry`` holds (one undoable step); why not, if
        it cannot be, is said in the trash's window too."""
        if self._edit(lambda ds: edits.restore(ds, entry)) is None and self.trash_view:
            self.trash_view.caption.setText(self.notice.text())

    def empty_trash(self) -> None:
        """Ask, then delete the trash's files for good; the steps that would need them
        leave the undo history."""
        if self.dataset is None:
            return
        files = sum(len(entry.files) for entry in self._trash_entries())
        if not confirmed(self.trash_view or self, "Empty trash",
                         f"Delete the {count(files, 'file')} in the trash from the disk for "
                         "good? This cannot be undone, and the deletions before it can no "
                         "longer be undone either."):
            return
        try:
            removed = trash.empty_trash(self.dataset)
        except DataError as exc:
            self.say(str(exc), error=True)
            return
        forget_trash(self.doc.undo_stack, self.dataset.root)
        self.say(f"The trash was emptied: {count(removed, 'file')} deleted for good.")
        self.doc.note_dataset_files_changed()

    # --- adding ----------------------------------------------------------------------

    def ask_files(self) -> None:
        """Ask for image files to add to the current class."""
        paths, _ = QFileDialog.getOpenFileNames(self, "Add images", "", IMAGE_FILTER)
        if paths:
            self.add_files(self.selected_class(), [Path(p) for p in paths])

    def ask_folder(self) -> None:
        """Ask for a folder whose images (searched inside) are added to the current class."""
        path = QFileDialog.getExistingDirectory(self, "Add a folder of images")
        if path:
            self.add_files(self.selected_class(), [Path(path)])

    def add_files(self, class_name: str | None, sources: list[Path], temporary=None,
                  frames: list[np.ndarray] | None = None) -> None:
        """Copy the files and folders ``sources`` (and ``frames``) into ``class_name`` in the
        background; the add is one undoable step."""
        refusal = self.refusal or ("Choose a class to add images to." if class_name is None
                                   else "")
        if refusal:
            if temporary is not None:
                temporary.cleanup()
            self.say(refusal, error=True)
            return
        side = self.max_side.value()
        self.adder.add(AddJob(self.dataset, class_name, sources, frames or [], temporary,
                              side or None, self.keep_originals.isChecked()))

    def add_frames(self, frames: list[np.ndarray]) -> None:
        """Add camera frames (uint8 H × W × C) to the selected class, as PNG files: one
        undoable step per call (a recording)."""
        if frames:
            self.add_files(self.selected_class(), [], temporary_folder(), list(frames))

    def paste(self) -> None:
        """Add the files, or the picture, the clipboard holds to the current class."""
        mime = QApplication.clipboard().mimeData()
        files = local_files(mime)
        if files:
            self.add_files(self.selected_class(), files)
            return
        image = pasted_image(mime)
        if image is None:
            self.say("The clipboard holds no image or image file to paste.", error=True)
            return
        folder = temporary_folder()
        try:
            path = save_png(image, Path(folder.name), "pasted")
        except OSError as exc:
            folder.cleanup()
            self.say(f"The pasted image could not be saved to add it: {exc}.", error=True)
            return
        self.add_files(self.selected_class(), [path], folder)

    def _adding(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel.setVisible(busy)
        if busy:
            self.progress.setRange(0, 0)
            self.progress.setFormat("Adding images…")
        self._enable()

    def _adding_now(self) -> bool:
        """Whether images are being added, which a class renamed, merged or deleted would
        break (said if so)."""
        if self.adder.busy():
            self.say("Images are being added: wait for them (or cancel) before renaming, "
                     "merging or deleting classes.", error=True)
        return self.adder.busy()

    def _progress(self, event: ProgressEvent) -> None:
        total = max(event["total"], 1)
        self.progress.setRange(0, PROGRESS_STEPS)
        self.progress.setValue(round(PROGRESS_STEPS * event["done"] / total))
        self.progress.setFormat(f"{event['what']}: {event['done']:,} of {event['total']:,}")

    def _added(self, job: AddJob, report: AddReport) -> None:
        text, error = one_line(report), bool(report.refused or report.error)
        if not report.added:
            self.say(text, error)
            return
        what = f"Add {count(len(report.added), 'image')} to {quoted(report.class_name)}"
        self.edits.push(DatasetCommand(self.edits, job.dataset, what, added=report.added),
                        text, error)

    # --- helpers ---------------------------------------------------------------------

    def _grid_menu(self, pos) -> None:
        if not self.grid.selected_paths() or not self.writable:
            return
        sorting_menu(self, self.classes.names(), lambda name: self.move_images(
            name, self.grid.selected_paths()), [self.flag_action, self.delete_action]).exec(
            self.grid.viewport().mapToGlobal(pos))

    @staticmethod
    def _button(text: str, tip: str, slot) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.clicked.connect(lambda _=False: slot())
        return button

