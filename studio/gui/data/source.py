"""Choosing where the data comes from: a bundled or Keras dataset, an image folder, a CSV, a
detection dataset (a folder of images with box labels, or the detection demo set), or a
segmentation dataset (a folder of images with masks, its masks maybe in a folder of their own,
or the segmentation demo set)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyle,
    QToolButton,
    QWidget,
)

from studio.core.base.messages import count
from studio.core.data.builtin import BUILTINS, builtin_info, is_cached
from studio.core.data.bundled import DATASETS
from studio.core.data.detection import demo
from studio.core.data.detection.formats import FORMATS
from studio.core.data.detection.source import DEMO_IMAGES, DEMO_TITLE
from studio.core.data.detection.source import TASK as DETECTION
from studio.core.data.segmentation import demo as segmentation_demo
from studio.core.data.segmentation import source as segmentation
from studio.core.data.tables import csv_columns
from studio.core.data.types import DataError, DatasetInfo
from studio.core.model.params import format_shape
from studio.core.project.document import DatasetChoice, absolute_data_path
from studio.core.tasks.registry import DEFAULT_TASK, TASKS
from studio.gui.dataset_editor.new_dataset import NewDatasetDialog
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.forms import choice_box, edit_dataset, hint, narrow_box, show_choice

CSV_FILTER = "CSV files (*.csv *.tsv *.txt);;All files (*)"
LABEL_NAMES = ("label", "labels", "class", "target", "y")
"""Column names taken as the label when a CSV is picked (else its last column)."""
ERROR_STYLE = "color: #b3261e;"
CLASSES_LISTED = 8
PICKED_BY_PATH = ("folder", "csv", "detection", "segmentation")
"""Sources whose data is a folder or file the person picks."""
NEW_DATASET = "new"
"""The source box's entry that makes a new image dataset."""
DEMO_KEY = "detection:demo"
SEGMENTATION_DEMO_KEY = "segmentation:demo"
DEMO_TASKS = {"detection": DETECTION, "segmentation": segmentation.TASK}
"""The task of each source whose demo set has an entry of its own."""
AUTO_FORMAT = "Auto (from the files)"
FORMAT_TIPS = {
    "auto": "Find the format from the folder's layout and files",
    "yolo": "One .txt per image, a line “class cx cy w h” per box, normalised to 0..1; the "
            "class names in classes.txt or data.yaml",
    "voc": "One Pascal VOC .xml per image (in Annotations/), an <object> per box, in pixels",
    "coco": "One COCO .json (instances_train.json, …) listing the images, the categories and "
            "every box (x, y, width, height in pixels)",
    "kitti": "One KITTI .txt per image (in label_2/), a line per object: its type, then its "
             "box in pixels (the format DIGITS trained detectors on)",
}
"""What each label format looks like on disk, for the format picker's tooltips."""


def _default_label(columns: list[str]) -> str:
    named = [c for c in columns if c.lower() in LABEL_NAMES]
    return named[0] if named else ""


def _sources() -> list[tuple[str, str, str]]:
    entries = [(f"{info.title} (bundled, offline)", f"bundled:{name}",
                f"{info.num_samples:,} images shipped with Layer Studio; works offline")
               for name, info in DATASETS.items()]
    for name in BUILTINS:
        info = builtin_info(name)
        where = ("downloaded already" if is_cached(name)
                 else "downloaded from the internet on first use, then kept")
        entries.append((f"{info.title} (Keras)", f"keras:{name}",
                        f"{info.num_samples:,} images of {format_shape(info.sample_shape)}, "
                        f"{info.num_classes} classes; {where}"))
    entries += [(f"{DEMO_TITLE} (bundled, offline)", DEMO_KEY,
                 f"{sum(DEMO_IMAGES.values()):,} images of {demo.SIDE}×{demo.SIDE} with 1 to "
                 "5 digits each, boxed: drawn from MNIST-10k on first use; works offline"),
                (f"{segmentation.DEMO_TITLE} (bundled, offline)", SEGMENTATION_DEMO_KEY,
                 f"{sum(segmentation.DEMO_IMAGES.values()):,} grey images of "
                 f"{segmentation_demo.SIDE}×{segmentation_demo.SIDE} with 1 to 3 digits each, "
                 "every pixel labelled with its digit or background: drawn from MNIST-10k on "
                 "first use; works offline"),
                ("Image folder…", "folder",
                 "Your own images: a folder with one subfolder of images per class"),
                ("New image dataset…", NEW_DATASET,
                 "Make an image dataset here: name its classes, then add images by dropping, "
                 "pasting or from the camera, on the Edit tab"),
                ("Detection folder…", "detection",
                 "Your own images with boxes: labels in YOLO, Pascal VOC, COCO or KITTI "
                 "format"),
                ("Segmentation folder…", "segmentation",
                 "Your own images with masks (a class per pixel): images/ and masks/ folders, "
                 "Pascal VOC's JPEGImages/ and SegmentationClass/, or a folder of images whose "
                 "masks you choose next"),
                ("CSV file…", "csv",
                 "A table with a header row: numeric columns or a text column, and a label")]
    return entries


def _formats() -> list[tuple[str, str, str]]:
    return [(AUTO_FORMAT, "auto", FORMAT_TIPS["auto"])] + [
        (module.TITLE, name, FORMAT_TIPS[name]) for name, module in FORMATS.items()]


def source_key(choice: DatasetChoice) -> str:
    """The source box's value for a choice."""
    if choice.source in DEMO_TASKS:
        return choice.source if choice.path else f"{choice.source}:demo"
    return choice.source if choice.source in ("folder", "csv") else f"{choice.source}:{choice.name}"


def _path_row(edit: QLineEdit, *buttons: QAbstractButton) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(edit, 1)
    for button in buttons:
        layout.addWidget(button)
    return row


def _readonly(placeholder: str, tip: str) -> QLineEdit:
    edit = QLineEdit()
    edit.setReadOnly(True)
    edit.setPlaceholderText(placeholder)
    edit.setToolTip(tip)
    return edit


def _optional_folder(tips: tuple[str, str, str], ask, clear
                     ) -> tuple[QLineEdit, QToolButton, QToolButton]:
    """An optional folder's read-only field, its "…" button calling ``ask`` and its clear
    button calling ``clear`` (``tips``: each one's tooltip)."""
    browse, forget = QToolButton(), QToolButton()
    browse.setText("…")
    forget.setIcon(forget.style().standardIcon(QStyle.StandardPixmap.SP_LineEditClearButton))
    for button, tip, clicked in ((browse, tips[1], ask), (forget, tips[2], clear)):
        button.setToolTip(tip)
        button.clicked.connect(clicked)
    return _readonly("Optional", tips[0]), browse, forget


class SourceForm(QGroupBox):
    """Picks the source; every change is one undoable edit of the project's dataset."""

    dataset_created = Signal()
    """A new image dataset was made and chosen."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__("Source")
        self.doc = doc
        self.source = choice_box(_sources(), "Where the samples come from")
        self.source.setObjectName("data-source")
        self.source.activated.connect(self._source_chosen)
        self.path = _readonly("No folder chosen", "The folder or file the samples are read from")
        self.browse = QPushButton("Browse…")
        self.browse.setToolTip("Choose another folder or file (you can also drop one here)")
        self.browse.clicked.connect(self.ask_path)
        self.validation_path, self.validation_browse, self.validation_clear = (
            _optional_folder(
                ("Optional: a folder with the same class subfolders, used for validation "
                 "instead of a share of the training folder",
                 "Choose a separate validation folder",
                 "Split validation off the training folder instead"),
                self._ask_validation,
                lambda: edit_dataset(doc, "Clear validation folder", validation_path="")))
        self.mask_path, self.mask_browse, self.mask_clear = _optional_folder(
            ("Optional: a folder holding the masks, when they are not beside the images (a "
             "mask shares its image's file name)",
             "Choose the folder holding the masks",
             "Find the masks beside the images instead"),
            self._ask_masks,
            lambda: edit_dataset(doc, "Find masks beside the images", mask_path=""))
        self.mask_path.setPlaceholderText("With the images")
        self.label_column = narrow_box()
        self.label_column.setToolTip("The column holding what the model should predict")
        self.label_column.activated.connect(self._label_chosen)
        self.text_column = narrow_box()
        self.text_column.setToolTip("A column of free text to learn from (Embedding, LSTM, "
                                    "GRU models); none reads the numeric columns as features")
        self.text_column.activated.connect(self._text_chosen)
        self.task = choice_box(
            tuple((task.title, task.name, task.description) for task in TASKS.values()),
            "Whether the label is a category or a quantity")
        self.task.activated.connect(lambda _: edit_dataset(
            doc, "Set task", task=self.task.currentData()))
        self.label_format = choice_box(_formats(), "How the folder's files hold the boxes")
        self.label_format.setObjectName("data-label-format")
        self.label_format.activated.connect(self._format_chosen)
        self.facts = QLabel()
        self.facts.setObjectName("data-facts")
        self.facts.setWordWrap(True)
        self.credit = hint()
        self._columns_of: tuple[str, list[str]] = ("", [])
        self.new_dialog: NewDatasetDialog | None = None

        self.form = QFormLayout(self)
        self.form.addRow("Dataset", self.source)
        self.form.addRow("Location", _path_row(self.path, self.browse))
        self.form.addRow("Label format", self.label_format)
        self.form.addRow("Validation",
                         _path_row(self.validation_path, self.validation_browse,
                                   self.validation_clear))
        self.form.addRow("Masks", _path_row(self.mask_path, self.mask_browse, self.mask_clear))
        self.form.addRow("Label column", self.label_column)
        self.form.addRow("Text column", self.text_column)
        self.form.addRow("Task", self.task)
        self.form.addRow(self.facts)
        self.form.addRow(self.credit)

    def refresh(self, choice: DatasetChoice, info: DatasetInfo | None, error: str,
                pending: bool = False) -> None:
        """Show ``choice``; ``info`` is what it holds, or ``error`` says why it is unusable
        (or, if ``pending``, that it is being read)."""
        show_choice(self.source, source_key(choice))
        folder, table = choice.source == "folder", choice.source == "csv"
        boxes = choice.source == "detection" and bool(choice.path)
        masks = choice.source == "segmentation" and bool(choice.path)
        self.form.setRowVisible(1, folder or table or boxes or masks)
        self.form.setRowVisible(self.label_format, boxes)
        self.form.setRowVisible(self.validation_path.parentWidget(), folder)
        self.form.setRowVisible(self.mask_path.parentWidget(), masks)
        for box in (self.label_column, self.text_column, self.task):
            self.form.setRowVisible(box, table)
        self.path.setPlaceholderText("No CSV file chosen" if table else "No folder chosen")
        show_choice(self.label_format, choice.label_format)
        self.path.setText(choice.path)
        self.path.setToolTip(choice.path or "The folder or file the samples are read from")
        self.validation_path.setText(choice.validation_path)
        self.validation_clear.setEnabled(bool(choice.validation_path))
        self.mask_path.setText(choice.mask_path)
        self.mask_path.setToolTip(choice.mask_path or self.mask_path.placeholderText())
        self.mask_clear.setEnabled(bool(choice.mask_path))
        if table:
            self._show_columns(choice)
        show_choice(self.task, choice.task)
        self.facts.setStyleSheet(ERROR_STYLE if error and not pending else "")
        self.facts.setText(error or self._facts(choice, info))
        self.credit.setText(info.credit if info else "")
        self.credit.setVisible(bool(info and info.credit))

    @staticmethod
    def _facts(choice: DatasetChoice, info: DatasetInfo) -> str:
        what = {"image": "image", "table": "row", "text": "text"}[info.kind]
        size = count(info.num_samples, what) if info.num_samples is not None else f"{what}s"
        shape = (f" of {format_shape(info.sample_shape)}" if info.kind == "image"
                 else f", {count(info.sample_shape[0], 'feature')}" if info.kind == "table"
                 else "")
        text = size[0].upper() + size[1:] + shape
        if not info.class_names:  # a regression's labels
            return f"{text}; the label is a number to predict."
        names = ", ".join(info.class_names[:CLASSES_LISTED])
        more = info.num_classes - CLASSES_LISTED
        return (f"{text} in {count(info.num_classes, 'class', 'classes')}: {names}"
                + (f" and {more} more." if more > 0 else "."))

    def show_found_format(self, name: str) -> None:
        """Name the format an automatic reading found (``yolo``…; empty: none yet)."""
        title = FORMATS[name].TITLE if name in FORMATS else ""
        self.label_format.setItemText(0, f"Auto: {title} found" if title else AUTO_FORMAT)

    def columns(self, path: str) -> list[str]:
        """The CSV's column names as reading names them (read once per file); none if the
        file cannot be read (the facts below the form say why)."""
        if self._columns_of[0] != path:
            try:
                columns = csv_columns(path) if path else []
            except DataError:
                columns = []
            self._columns_of = (path, columns)
        return self._columns_of[1]

    def _show_columns(self, choice: DatasetChoice) -> None:
        columns = self.columns(choice.path)
        label = choice.label_column or (columns[-1] if columns else "")
        self._fill(self.label_column, [(c, c) for c in columns], label)
        self._fill(self.text_column,
                   [("None (numeric table)", "")] + [(c, c) for c in columns if c != label],
                   choice.text_column)

    @staticmethod
    def _fill(box: QComboBox, items: list[tuple[str, str]], current: str) -> None:
        if [(box.itemText(i), box.itemData(i)) for i in range(box.count())] != items:
            with QSignalBlocker(box):
                box.clear()
                for text, value in items:
                    box.addItem(text, value)
        show_choice(box, current)

    def _source_chosen(self, index: int) -> None:
        key = self.source.itemData(index)
        if key == NEW_DATASET:
            show_choice(self.source, source_key(self.doc.project.dataset))
            self.new_dataset()
            return
        if key in PICKED_BY_PATH:
            if not self.ask_path(key):  # cancelled: keep the current source
                show_choice(self.source, source_key(self.doc.project.dataset))
            return
        source, name = key.split(":", 1)
        demo_set = source in DEMO_TASKS
        edit_dataset(self.doc, f"Use {self.source.itemText(index)}", source=source,
                     name="" if demo_set else name, path="", validation_path="",
                     mask_path="", label_column="", text_column="", label_format="auto",
                     task=DEMO_TASKS.get(source, DEFAULT_TASK))

    def new_dataset(self) -> None:
        """Ask for a new image dataset's name and classes; made, it becomes the data."""
        self.new_dialog = NewDatasetDialog(self.doc, self)
        self.new_dialog.accepted.connect(self.dataset_created)
        self.new_dialog.open()

    def _format_chosen(self, index: int) -> None:
        value = self.label_format.itemData(index)
        if value != self.doc.project.dataset.label_format:
            edit_dataset(self.doc, f"Read labels as {self.label_format.itemText(index)}",
                         label_format=value)

    def _start_dir(self, path: str) -> str:
        if not path:
            return ""
        return path if Path(path).is_dir() else str(Path(path).parent)

    def ask_path(self, kind: str | bool = False) -> bool:
        """Ask for a folder or CSV file (``kind``, else the current source); True if picked."""
        kind = kind if isinstance(kind, str) else self.doc.project.dataset.source
        start = self._start_dir(self.doc.project.dataset.path)
        if kind == "csv":
            path, _ = QFileDialog.getOpenFileName(self, "Choose a CSV file", start, CSV_FILTER)
        elif kind == "detection":
            path = QFileDialog.getExistingDirectory(
                self, "Choose a detection dataset (images with YOLO, Pascal VOC, COCO or KITTI "
                "labels)", start)
        elif kind == "segmentation":
            path = QFileDialog.getExistingDirectory(
                self, "Choose a segmentation dataset (images with masks, or images alone and "
                "their masks next)", start)
        else:
            path = QFileDialog.getExistingDirectory(
                self, "Choose an image folder (one subfolder per class)", start)
        if path:
            self.pick(Path(path), kind)
        return bool(path)

    def pick(self, path: Path, kind: str | None = None) -> None:
        """Use a folder of class subfolders, a detection or a segmentation dataset (``kind``
        ``detection`` or ``segmentation``; None: if the data is one now), or a CSV file, as
        the data (one undoable edit)."""
        absolute = absolute_data_path(path)
        if kind is None:
            kind = self.doc.project.dataset.source
        if path.is_dir() and kind in DEMO_TASKS:
            edit_dataset(self.doc, f"Use {kind} folder {path.name}", source=kind, name="",
                         path=absolute, validation_path="", mask_path="", label_column="",
                         text_column="", label_format="auto", task=DEMO_TASKS[kind])
        elif path.is_dir():
            edit_dataset(self.doc, f"Use image folder {path.name}", source="folder",
                         path=absolute, validation_path="", mask_path="", label_column="",
                         text_column="", task=DEFAULT_TASK)
        else:
            edit_dataset(self.doc, f"Use CSV file {path.name}", source="csv", path=absolute,
                         validation_path="", mask_path="",
                         label_column=_default_label(self.columns(absolute)),
                         text_column="", task=DEFAULT_TASK)

    def _ask_validation(self) -> None:
        choice = self.doc.project.dataset
        start = self._start_dir(choice.validation_path or choice.path)
        path = QFileDialog.getExistingDirectory(self, "Choose a validation folder", start)
        if path:
            edit_dataset(self.doc, "Set validation folder",
                         validation_path=absolute_data_path(path))

    def _ask_masks(self) -> None:
        choice = self.doc.project.dataset
        start = self._start_dir(choice.mask_path or choice.path)
        path = QFileDialog.getExistingDirectory(
            self, "Choose the folder holding the masks (each named as its image)", start)
        if path:
            edit_dataset(self.doc, f"Read masks from {Path(path).name}",
                         mask_path=absolute_data_path(path))

    def _label_chosen(self, index: int) -> None:
        label = self.label_column.itemData(index)
        text = self.doc.project.dataset.text_column
        edit_dataset(self.doc, "Set label column", label_column=label,
                     text_column="" if text == label else text)

    def _text_chosen(self, index: int) -> None:
        edit_dataset(self.doc, "Set text column", text_column=self.text_column.itemData(index))
