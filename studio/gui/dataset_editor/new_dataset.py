"""*New image dataset…*: a name, where it goes (beside the project, or a folder the person
picks) and its first classes; the folder is made and becomes the project's dataset in one
undoable edit."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.paths import workspace
from studio.core.data.editable.dataset import EditableDataset
from studio.core.data.editable.names import ILLEGAL
from studio.core.data.types import DataError
from studio.core.project.document import absolute_data_path
from studio.core.tasks.registry import DEFAULT_TASK
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.forms import edit_dataset

DATASETS = "datasets"
FIRST_CLASSES = ("class 1", "class 2")
DEFAULT_NAME = "My images"
ERROR_STYLE = "color: #b3261e;"
DIALOG_WIDTH = 520


def datasets_folder(doc: ProjectDocument) -> Path:
    """Where new datasets go: a ``datasets`` folder beside a saved project, else in the
    workspace."""
    return (doc.path.parent if doc.path else workspace()) / DATASETS


def free_name(folder: Path, name: str) -> str:
    """``name``, or ``name 2``, ``name 3``… if a file of that name is in ``folder``."""
    candidate, number = name, 1
    while (folder / candidate).exists():
        number += 1
        candidate = f"{name} {number}"
    return candidate


def use_dataset(doc: ProjectDocument, root: Path) -> None:
    """Make the image folder ``root`` the project's dataset (one undoable edit)."""
    edit_dataset(doc, f"New image dataset {root.name}", source="folder",
                 path=absolute_data_path(root), validation_path="", mask_path="",
                 label_column="", text_column="", task=DEFAULT_TASK)


class NewDatasetDialog(QDialog):
    """Asks for the dataset's name, place and classes, then makes it and chooses it."""

    def __init__(self, doc: ProjectDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.setWindowTitle("New image dataset")
        self.setObjectName("new-dataset")
        self.setMinimumWidth(DIALOG_WIDTH)  # room for the folder's path
        self.folder = datasets_folder(doc)
        self.name = QLineEdit(free_name(self.folder, DEFAULT_NAME))
        self.name.setToolTip("The dataset's folder name")
        self.place = QLabel()
        self.place.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.place.setWordWrap(True)
        self.change = QPushButton("Change…")
        self.change.setToolTip("Make the dataset in another folder")
        self.change.clicked.connect(self._ask_folder)
        self.classes = QListWidget()
        self.classes.setToolTip("One folder per class; double-click or F2 renames. Classes can "
                                "be added, renamed and merged later too.")
        for name in FIRST_CLASSES:
            self._add(name)
        add = QPushButton("Add class")
        add.setToolTip("Add another class (Insert)")
        add.setShortcut("Insert")
        add.clicked.connect(lambda: self._add(f"class {self.classes.count() + 1}", edit=True))
        remove = QPushButton("Remove")
        remove.setToolTip("Remove the selected class from the list")
        remove.clicked.connect(lambda: self.classes.takeItem(self.classes.currentRow()))
        self.error = QLabel()
        self.error.setObjectName("new-dataset-error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet(ERROR_STYLE)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Create")
        self.buttons.accepted.connect(self.create)
        self.buttons.rejected.connect(self.reject)

        place = QHBoxLayout()
        place.addWidget(self.place, 1)
        place.addWidget(self.change)
        class_buttons = QHBoxLayout()
        class_buttons.addWidget(add)
        class_buttons.addWidget(remove)
        class_buttons.addStretch(1)
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("In", place)
        form.addRow("Classes", self.classes)
        form.addRow("", class_buttons)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.name.textChanged.connect(self._show_place)
        self._show_place()

    def root(self) -> Path:
        """The folder the dataset will be."""
        return self.folder / self.name.text().strip()

    def class_names(self) -> list[str]:
        """The classes listed."""
        return [self.classes.item(i).text() for i in range(self.classes.count())]

    def create(self) -> None:
        """Make the dataset and choose it; a bad name or place is said here, and the dialog
        stays open."""
        name = self.name.text().strip()
        bad = sorted({c for c in name if c in ILLEGAL})
        if not name or bad or name.startswith("."):
            self.error.setText("Name the dataset: a folder name without "
                               f"{' '.join(ILLEGAL)}, not starting with a dot.")
            return
        try:
            EditableDataset.create(self.root(), self.class_names())
        except DataError as exc:
            self.error.setText(str(exc))
            return
        use_dataset(self.doc, self.root())
        self.accept()

    def _add(self, name: str, edit: bool = False) -> None:
        item = QListWidgetItem(name)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self.classes.addItem(item)
        if edit:
            self.classes.setCurrentItem(item)
            self.classes.editItem(item)

    def _ask_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Make the dataset in", str(self.folder))
        if path:
            self.folder = Path(path)
            self._show_place()

    def _show_place(self) -> None:
        self.place.setText(str(self.root()))
        self.error.clear()
