"""The dataset's classes with their image counts and the number key (1–9) that moves
images to each; a class is renamed in place (double-click or F2), and takes images dragged
from the grid (a move) or files dropped on it (an add)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeWidget, QTreeWidgetItem

from studio.gui.dataset_editor.transfer import IMAGES_MIME, dragged_images, local_files

KEYS = 9
"""Classes 1 to 9 have a number key."""
KEY, NAME, IMAGES = range(3)


class ClassList(QTreeWidget):
    """One row per class: its key, its name (editable) and how many images it holds."""

    renamed = Signal(str, str)
    """The person typed a new name for a class: (old, new)."""
    images_dropped = Signal(str, list)
    """Images of the dataset dragged onto a class: (class, their paths)."""
    files_dropped = Signal(str, list)
    """Local files or folders dropped on a class: (class, [Path])."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("dataset-classes")
        self.root = Path()
        self.setColumnCount(3)
        self.setHeaderLabels(["Key", "Class", "Images"])
        self.headerItem().setToolTip(KEY, "Press this number in the images to move the "
                                          "selected ones to the class")
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(KEY, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(IMAGES, QHeaderView.ResizeMode.ResizeToContents)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAcceptDrops(True)
        self.setDropIndicatorShown(True)
        self.setToolTip("The classes (one folder each). Double-click or F2 renames; drop images "
                        "or files on a class to move or add them.")
        self.itemDoubleClicked.connect(lambda item, _column: self.rename(item))
        self.itemChanged.connect(self._edited)

    def show_classes(self, root: Path, counts: dict[str, int]) -> None:
        """List the classes of the dataset at ``root`` with their image counts, keeping the
        current and selected classes where they still are."""
        self.root = root
        current = self.current_class()
        selected = set(self.selected_classes())
        with QSignalBlocker(self):
            self.clear()
            for number, (name, images) in enumerate(counts.items(), 1):
                item = QTreeWidgetItem([str(number) if number <= KEYS else "", name,
                                        f"{images:,}"])
                item.setData(NAME, Qt.ItemDataRole.UserRole, name)
                item.setTextAlignment(IMAGES, Qt.AlignmentFlag.AlignRight
                                      | Qt.AlignmentFlag.AlignVCenter)
                item.setTextAlignment(KEY, Qt.AlignmentFlag.AlignCenter)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                item.setToolTip(NAME, f"{name}: {images:,} images"
                                + (f"; key {number} moves images here" if number <= KEYS
                                   else ""))
                self.addTopLevelItem(item)
                item.setSelected(name in selected)
            names = list(counts)
            chosen = current if current in names else (names[0] if names else None)
            if chosen is not None:
                self.setCurrentItem(self.item(chosen), NAME,
                                    self.selectionModel().SelectionFlag.NoUpdate)
                if not selected & set(names):
                    self.item(chosen).setSelected(True)
        self.currentItemChanged.emit(self.currentItem(), None)

    def names(self) -> list[str]:
        """The classes, in the list's order (their keys' order)."""
        return [self.topLevelItem(i).data(NAME, Qt.ItemDataRole.UserRole)
                for i in range(self.topLevelItemCount())]

    def item(self, name: str) -> QTreeWidgetItem | None:
        """The row of the class ``name``."""
        for i in range(self.topLevelItemCount()):
            if self.topLevelItem(i).data(NAME, Qt.ItemDataRole.UserRole) == name:
                return self.topLevelItem(i)
        return None

    def current_class(self) -> str | None:
        """The class whose images are shown."""
        item = self.currentItem()
        return None if item is None else item.data(NAME, Qt.ItemDataRole.UserRole)

    def selected_classes(self) -> list[str]:
        """The selected classes, in the list's order."""
        return [item.data(NAME, Qt.ItemDataRole.UserRole) for item in map(
            self.topLevelItem, range(self.topLevelItemCount())) if item.isSelected()]

    def choose(self, name: str) -> None:
        """Make ``name`` the current and only selected class."""
        item = self.item(name)
        if item is not None:
            self.setCurrentItem(item, NAME)

    def rename(self, item: QTreeWidgetItem | None = None) -> None:
        """Start typing a new name for the class (the current one by default)."""
        item = item or self.currentItem()
        if item is not None:
            self.editItem(item, NAME)

    def _edited(self, item: QTreeWidgetItem, column: int) -> None:
        if column != NAME:
            return
        old = item.data(NAME, Qt.ItemDataRole.UserRole)
        new = item.text(NAME)
        with QSignalBlocker(self):
            item.setText(NAME, old)  # shown as renamed once the folder is
        if new != old:  # after the item view is done with its editor: the list is rebuilt
            QTimer.singleShot(0, lambda: self.renamed.emit(old, new))

    def _target(self, event) -> str | None:
        item = self.itemAt(event.position().toPoint())
        return None if item is None else item.data(NAME, Qt.ItemDataRole.UserRole)

    def _takes(self, event) -> bool:
        mime = event.mimeData()
        if mime.hasFormat(IMAGES_MIME):
            return dragged_images(mime, self.root) is not None
        return bool(local_files(mime))

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Take the grid's images or files from outside."""
        if self._takes(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Only over a class: images are dropped on the class they go to."""
        if self._takes(event) and self._target(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Move the dragged images to the class under the pointer, or add the files to it."""
        target = self._target(event)
        if target is None or not self._takes(event):
            event.ignore()
            return
        mime = event.mimeData()
        images = dragged_images(mime, self.root)
        event.setDropAction(Qt.DropAction.MoveAction if images else Qt.DropAction.CopyAction)
        event.accept()
        if images:  # moved once the drag has ended: the grid it came from is redrawn
            QTimer.singleShot(0, lambda: self.images_dropped.emit(target, images))
        else:
            self.files_dropped.emit(target, local_files(mime))
