"""The dataset's trash: each deletion waiting there, newest first, restored with one
undoable step; emptying it (asked first) deletes the files for good."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.data.editable.trash import TrashEntry, describe

ENTRY_ROLE = Qt.ItemDataRole.UserRole


def entry_title(entry: TrashEntry) -> str:
    """``3 images from 'cats', deleted 27 Nov 14:03``."""
    try:
        when = datetime.strptime(entry.id[:15], "%Y%m%d-%H%M%S").strftime("%d %b %H:%M")
    except ValueError:
        return describe(entry)
    return f"{describe(entry)}, deleted {when}"


class TrashView(QDialog):
    """Lists the trash's entries; ``restore(entry id)`` and ``empty()`` do the work."""

    def __init__(self, parent: QWidget, restore: Callable[[str], None],
                 empty: Callable[[], None]) -> None:
        super().__init__(parent)
        self.setWindowTitle("Dataset trash")
        self.setObjectName("dataset-trash")
        self.list = QListWidget()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setToolTip("Deleted classes and images, newest first; nothing here is gone "
                             "from the disk until the trash is emptied")
        self.list.itemDoubleClicked.connect(lambda _item: self._restore())
        self.caption = QLabel()
        self.restore_button = QPushButton("Restore")
        self.restore_button.setToolTip("Put the selected deletions back where they were "
                                       "(one undoable step each)")
        self.restore_button.clicked.connect(self._restore)
        self.empty_button = QPushButton("Empty trash…")
        self.empty_button.setToolTip("Delete everything in the trash from the disk, for good "
                                     "(asks first)")
        self.empty_button.clicked.connect(empty)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.restore_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.empty_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.caption)
        layout.addWidget(self.list, 1)
        layout.addWidget(buttons)
        self._restore_entry = restore
        self.resize(420, 320)

    def show_entries(self, entries: list[TrashEntry], writable: bool) -> None:
        """List ``entries`` (oldest first, shown newest first)."""
        self.list.clear()
        for entry in reversed(entries):
            item = QListWidgetItem(entry_title(entry))
            item.setData(ENTRY_ROLE, entry.id)
            item.setToolTip("\n".join(entry.files[:20]))
            self.list.addItem(item)
        self.caption.setText("The trash is empty." if not entries else
                             "Restore puts a deletion back; emptying the trash deletes its "
                             "files for good.")
        self.restore_button.setEnabled(bool(entries) and writable)
        self.empty_button.setEnabled(bool(entries) and writable)

    def _restore(self) -> None:
        for item in self.list.selectedItems():
            self._restore_entry(item.data(ENTRY_ROLE))
