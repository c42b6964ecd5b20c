"""How the data is read and split: image options, split percentages, training and text options."""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from studio.core.data.types import DEFAULT_IMAGE_SIZE, SPLITS, DatasetInfo
from studio.core.project.document import DatasetChoice
from studio.core.tasks.registry import task_for
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.forms import choice_box, edit_dataset, hint, show_choice
from studio.gui.widgets.sync import show_value

MAX_HELD_OUT = 95
"""Validation and test together may take at most this percentage of the samples."""

COLORS = (
    ("Auto", "auto", "Keep a dataset's own channels; read image folders as RGB"),
    ("Grayscale", "grayscale", "One channel"),
    ("RGB", "rgb", "Three colour channels"),
)
RESIZES = (
    ("Squash", "squash", "Stretch every image to the size, ignoring its aspect ratio"),
    ("Center crop", "crop", "Cut the middle to the size's aspect ratio, then scale"),
    ("Pad", "pad", "Scale to fit inside the size and fill the rest with black"),
)
NORMALIZATIONS = (
    ("0 to 1", "unit", "Divide pixel values by 255"),
    ("−1 to 1", "symmetric", "Map pixel values to −1..1"),
    ("Mean / std per channel", "standardize",
     "Subtract each channel's mean and divide by its standard deviation, both measured on the "
     "training split"),
)
CACHES = (
    ("Auto", "auto", "Keep decoded images in a file in the workspace when they take up to 1 GB "
     "(later epochs and later runs skip decoding), else read them anew every epoch"),
    ("None", "none", "Read the samples anew every epoch: least memory"),
    ("Memory", "memory", "Keep decoded samples in memory after the first epoch: fastest"),
    ("Disk", "disk", "Keep decoded samples in a file in the workspace: for data larger than "
     "memory"),
)


def _spin(low: int, high: int, tip: str, suffix: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setToolTip(tip)
    spin.setSuffix(suffix)
    spin.setGroupSeparatorShown(high >= 10_000)
    return spin


def estimated_counts(total: int, choice: DatasetChoice) -> dict[str, int]:
    """Roughly how many samples each split gets, before the data is read."""
    validation = round(total * choice.validation_split)
    test = round(total * choice.test_split)
    return {"train": total - validation - test, "validation": validation, "test": test}


NATIVE_SIZED = ("bundled", "keras", "detection", "segmentation")
"""Sources read at their images' own size when no size is set (a detection or segmentation
dataset at its most common one), so "Native size" applies."""

SPLIT_TITLES = {True: "Split (stratified per class)", False: "Split (at random, seeded)"}
"""The split box's title, by whether the labels are classes (only classes are stratified)."""
NAMED_TITLE = "Split (as the dataset names it)"
"""The split box's title when the data's folder sets every split itself."""
SEPARATE_NOTE = ("Validation uses the separate validation folder; the test share is split off "
                 "the training folder.")


def layout_note(sizes: dict[str, int]) -> str:
    """What the splits a folder names itself (``sizes``: their sample counts) mean for the
    percentages; empty when it names none."""
    if not sizes:
        return ""
    if len(sizes) == 1:
        return (f"The dataset names its test split ({sizes['test']:,} samples); validation is "
                "split off the other samples by its percentage.")
    named = ", ".join(f"{split} {size:,}" for split, size in sizes.items() if size)
    empty = " (and no test split)" if not sizes["test"] else ""
    return (f"The dataset names its splits: {named}{empty}. The percentages and seed do not "
            "apply.")


class OptionsForm(QWidget):
    """Image, split, training and text options; each change is one undoable edit."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.native = QCheckBox("Native size")
        self.native.setToolTip("Keep the dataset's own image size")
        self.native.toggled.connect(self._native_toggled)
        self.height = _spin(4, 2048, "Height the images are resized to, in pixels", " px")
        self.width = _spin(4, 2048, "Width the images are resized to, in pixels", " px")
        for spin in (self.height, self.width):
            spin.valueChanged.connect(self._size_changed)
        self.color = self._choice(COLORS, "Channels the model sees", "color", "colour mode")
        self.resize_mode = self._choice(RESIZES, "How images of another shape are fitted to "
                                        "the size", "resize", "resize mode")
        self.normalization = self._choice(NORMALIZATIONS, "How pixel values are scaled before "
                                          "the model sees them", "normalization",
                                          "normalisation")
        self.images = QGroupBox("Images")
        size = QHBoxLayout()
        size.addWidget(self.height)
        size.addWidget(QLabel("×"))
        size.addWidget(self.width)
        size.addWidget(self.native)  # on the size's row: the column fits without scrolling
        size.addStretch(1)
        image_form = QFormLayout(self.images)
        image_form.addRow("Size (h × w)", size)
        image_form.addRow("Colour", self.color)
        image_form.addRow("Resize", self.resize_mode)
        image_form.addRow("Normalise", self.normalization)

        self.validation = _spin(1, 90, "Percentage of the samples held out to measure "
                                "validation accuracy after every epoch", " %")
        self.validation.setObjectName("validation-percent")
        self.validation.valueChanged.connect(
            lambda v: edit_dataset(doc, "Set validation split", "dataset.validation_split",
                                   validation_split=v / 100))
        self.test = _spin(0, 90, "Percentage of the samples held out for a final test, never "
                          "seen in training", " %")
        self.test.setObjectName("test-percent")
        self.test.valueChanged.connect(
            lambda v: edit_dataset(doc, "Set test split", "dataset.test_split", test_split=v / 100))
        self.train = QLabel()
        self.train.setToolTip("What is left for training")
        self.counts = {name: QLabel() for name in ("train", "validation", "test")}
        self.seed = _spin(0, 2**31 - 1, "The same seed always gives the same split")
        self.seed.valueChanged.connect(
            lambda v: edit_dataset(doc, "Set split seed", "dataset.seed", seed=v))
        self.split_note = hint()
        self._layout: dict[str, int] = {}
        """The sizes of the splits the data's folder names itself (see layout_sizes)."""
        self._tips = {spin: spin.toolTip() for spin in (self.validation, self.test, self.seed)}
        self.split = QGroupBox(SPLIT_TITLES[True])
        grid = QGridLayout(self.split)
        for row, (text, editor, name) in enumerate((("Training", self.train, "train"),
                                                    ("Validation", self.validation, "validation"),
                                                    ("Test", self.test, "test"))):
            grid.addWidget(QLabel(text), row, 0)
            grid.addWidget(editor, row, 1)
            grid.addWidget(self.counts[name], row, 2)
        grid.addWidget(QLabel("Seed"), 3, 0)
        grid.addWidget(self.seed, 3, 1)
        grid.addWidget(self.split_note, 4, 0, 1, 3)
        grid.setColumnStretch(2, 1)

        self.class_weights = QCheckBox("Balance classes with weights")
        self.class_weights.setToolTip("Weight each class's loss by how rare it is in training, "
                                      "so that small classes count as much as large ones")
        self.class_weights.toggled.connect(
            lambda on: edit_dataset(doc, "Set class weights", class_weights=on))
        self.cache = self._choice(CACHES, "Where decoded samples are kept between epochs",
                                  "cache", "cache")
        self.training = QGroupBox("Training")
        training_form = QFormLayout(self.training)
        training_form.addRow(self.class_weights)
        training_form.addRow("Cache", self.cache)

        self.max_tokens = _spin(2, 1_000_000, "The vocabulary size: the most frequent words "
                                "of the training split are kept")
        self.max_tokens.valueChanged.connect(
            lambda v: edit_dataset(doc, "Set vocabulary size", "dataset.max_tokens",
                                   max_tokens=v))
        self.sequence_length = _spin(1, 100_000, "Words per text: longer texts are cut, "
                                     "shorter ones padded")
        self.sequence_length.valueChanged.connect(
            lambda v: edit_dataset(doc, "Set sequence length", "dataset.sequence_length",
                                   sequence_length=v))
        self.text = QGroupBox("Text")
        text_form = QFormLayout(self.text)
        text_form.addRow("Vocabulary", self.max_tokens)
        text_form.addRow("Sequence length", self.sequence_length)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for group in (self.images, self.split, self.training, self.text):
            layout.addWidget(group)

    def _choice(self, choices, tip: str, field: str, label: str):
        box = choice_box(choices, tip)
        box.activated.connect(lambda _: edit_dataset(self.doc, f"Set {label}",
                                                     **{field: box.currentData()}))
        return box

    def refresh(self, choice: DatasetChoice, info: DatasetInfo | None) -> None:
        """Show ``choice``, and only the options that apply to its kind of data."""
        kind = info.kind if info else ("text" if choice.text_column else
                                       "table" if choice.source == "csv" else "image")
        self.images.setVisible(kind == "image")
        self.text.setVisible(kind == "text")
        task = task_for(choice.task)
        self.class_weights.setVisible(task.has_classes or task.class_weights_in_loss)
        in_memory = choice.source in NATIVE_SIZED
        self.native.setVisible(in_memory)
        show_value(self.native, in_memory and choice.image_size is None)
        native = info.sample_shape[:2] if info and kind == "image" else DEFAULT_IMAGE_SIZE
        height, width = choice.image_size or (native if in_memory else DEFAULT_IMAGE_SIZE)
        for spin, value in ((self.height, height), (self.width, width)):
            show_value(spin, value)
            spin.setEnabled(not self.native.isChecked())
        for box, value in ((self.color, choice.color), (self.resize_mode, choice.resize),
                           (self.normalization, choice.normalization),
                           (self.cache, choice.cache)):
            show_choice(box, value)
        validation, test = round(choice.validation_split * 100), round(choice.test_split * 100)
        with QSignalBlocker(self.validation), QSignalBlocker(self.test):
            self.validation.setMaximum(min(90, MAX_HELD_OUT - test))
            self.test.setMaximum(min(90, MAX_HELD_OUT - validation))
        show_value(self.validation, validation)
        show_value(self.test, test)
        self.train.setText(f"{100 - validation - test} %")
        self._show_held_out(choice)
        for spin, value in ((self.seed, choice.seed), (self.max_tokens, choice.max_tokens),
                            (self.sequence_length, choice.sequence_length)):
            show_value(spin, value)
        show_value(self.class_weights, choice.class_weights)

    def show_layout_splits(self, sizes: dict[str, int]) -> None:
        """Hold the percentages of the splits the data's folder names itself (``sizes``: their
        sample counts, by layout_sizes; empty: it names none) disabled, and say so."""
        self._layout = sizes
        self._show_held_out(self.doc.project.dataset)

    def _show_held_out(self, choice: DatasetChoice) -> None:
        """Enable only the split settings that decide a split; say where the others come
        from."""
        fixed = self._layout
        every = len(fixed) == len(SPLITS)
        self.split.setTitle(NAMED_TITLE if every
                            else SPLIT_TITLES[task_for(choice.task).has_classes])
        separate = choice.source == "folder" and bool(choice.validation_path)
        note = layout_note(fixed) or (SEPARATE_NOTE if separate else "")
        for spin, held in ((self.validation, separate or "validation" in fixed),
                           (self.test, "test" in fixed), (self.seed, every)):
            spin.setEnabled(not held)
            spin.setToolTip(note if held else self._tips[spin])
        self.train.setEnabled(not every)
        self.split_note.setText(note)
        self.split_note.setVisible(bool(note))

    def show_counts(self, counts: dict[str, int] | None, exact: bool) -> None:
        """Show how many samples each split holds (``exact`` once the data is read)."""
        for name, label in self.counts.items():
            if counts is None:
                label.setText("")
            else:
                label.setText(f"{'' if exact else '≈ '}{counts[name]:,} samples")

    def _native_toggled(self, native: bool) -> None:
        size = None if native else [self.height.value(), self.width.value()]
        edit_dataset(self.doc, "Set image size", image_size=size)

    def _size_changed(self) -> None:
        edit_dataset(self.doc, "Set image size", "dataset.image_size",
                     image_size=[self.height.value(), self.width.value()])
