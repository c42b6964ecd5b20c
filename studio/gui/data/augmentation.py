"""Augmentation controls and a live preview of the same training samples, randomly changed."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from studio.core.data.types import ArraySamples, FileSamples, LoadedData
from studio.core.project.document import FILL_MODES, Augmentation, DatasetChoice
from studio.core.tasks.registry import DEFAULT_TASK
from studio.gui.data.images import fit, read_array
from studio.gui.data.registry import data_views_for
from studio.gui.data.samples import pick
from studio.gui.data.views import DataViews, Preview
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.forms import delay, hint
from studio.gui.widgets.jobs import JobSlot
from studio.gui.widgets.sync import show_value

PREVIEW_SAMPLES = 6
REPEATS = 4
DEBOUNCE_MS = 120
"""Wait this long after the last slider move before computing a preview."""
ERROR_STYLE = "color: #b3261e;"
SLIDER_WIDTH = 120
ROW_GAP = 12
"""Pixels between the row of originals and the augmented rows in the preview."""
TURNS_SHAPES = 45
"""Rotations wider than this many degrees either way are warned about: they turn some
samples into others (a 6 into a 9)."""
ROTATION_NOTE = ("Past ±45°, rotation can turn one class into another: a 6 becomes a 9, a u "
                 "an n. Rotate no further than the real samples do.")
FILL_TITLES = {"constant": "Black", "nearest": "Nearest edge pixel",
               "reflect": "Mirrored edges", "wrap": "Opposite edge"}
MOVES = ("rotation", "zoom", "translation")
"""The changes that uncover corners for the fill."""


@dataclass(frozen=True)
class Knob:
    """One augmentation amount: its field, title, range and how its value reads."""

    field: str
    title: str
    maximum: float
    step: float
    unit: str
    tip: str

    def text(self, value: float) -> str:
        """The value as a person reads it."""
        if not value:
            return "off"
        if self.unit == "°":
            return f"±{value:.0f}°"
        if self.unit == "σ":
            return f"σ {value:.2f}"
        return f"{'' if self.field == 'crop' else '±'}{value * 100:.0f} %"


KNOBS = (
    Knob("rotation", "Rotation", 180, 1, "°",
         "Rotate by a random angle of up to this many degrees either way. Keep it small for "
         "digits and letters: past ±45° a 6 can look like a 9"),
    Knob("zoom", "Zoom", 0.9, 0.01, "%", "Zoom in or out at random by up to this share of "
         "the size"),
    Knob("translation", "Shift", 0.9, 0.01, "%", "Move the image at random by up to this "
         "share of its width and height"),
    Knob("contrast", "Contrast", 1.0, 0.01, "%", "Change the contrast at random by up to "
         "this share"),
    Knob("brightness", "Brightness", 1.0, 0.01, "%", "Brighten or darken at random by up to "
         "this share of the full range"),
    Knob("noise", "Noise", 1.0, 0.01, "σ", "Add Gaussian noise with this standard deviation, "
         "as a share of the full range"),
    Knob("crop", "Random crop", 0.9, 0.01, "%", "Cut a random window this much smaller and "
         "scale it back to the size"),
)


def model_images(loaded: LoadedData, indices: np.ndarray, shape: tuple[int, ...], resize: str
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Samples as training reads them, before augmentation: uint8 N × H × W × C of ``shape``,
    and the indices of those read (an unreadable file is left out)."""
    out, kept = [], []
    for index in indices:
        if isinstance(loaded.samples, ArraySamples):
            image = loaded.samples.x[index]
        else:
            image = read_array(loaded.samples.paths[index])
            if image is None:
                continue
        out.append(fit(image, shape[:2], resize, shape[2]))
        kept.append(index)
    return (np.stack(out) if out else np.zeros((0, *shape), np.uint8),
            np.asarray(kept, np.int64))


def _preview_task(loaded: LoadedData, indices: np.ndarray, choice: DatasetChoice,
                  shape: tuple[int, ...], seed: int, views: DataViews):
    aug = choice.augmentation

    def task(on_event, stop) -> Preview:
        images, kept = model_images(loaded, indices, shape, choice.resize)
        overlays = views.overlays(loaded, kept, choice, shape)
        if not aug.active() or not len(images):
            return images[np.newaxis], None if overlays is None else [overlays]
        moved_images, moved = views.augment(images, overlays, aug, REPEATS, seed)
        return (np.concatenate([images[np.newaxis], moved_images]),
                None if overlays is None else [overlays, *moved])

    return task


class AugmentationView(QWidget):
    """Edits ``project.dataset.augmentation``; a slider drag is one undo step."""

    preview_shown = Signal()
    """A new preview is on screen."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.flip_horizontal = QCheckBox("Flip left–right")
        self.flip_horizontal.setToolTip("Mirror half of the images left to right, at random")
        self.flip_vertical = QCheckBox("Flip upside down")
        self.flip_vertical.setToolTip("Mirror half of the images top to bottom, at random")
        for box, field in ((self.flip_horizontal, "flip_horizontal"),
                           (self.flip_vertical, "flip_vertical")):
            box.toggled.connect(lambda on, field=field, box=box: self._set(
                f"Set {box.text().lower()}", field, on))
        controls = QGroupBox("Random changes to training images")
        grid = QGridLayout(controls)
        grid.addWidget(self.flip_horizontal, 0, 0, 1, 3)
        grid.addWidget(self.flip_vertical, 1, 0, 1, 3)
        self.sliders: dict[str, QSlider] = {}
        self.values: dict[str, QLabel] = {}
        for row, knob in enumerate(KNOBS, start=2):
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setObjectName(f"augment-{knob.field}")
            slider.setRange(0, round(knob.maximum / knob.step))
            slider.setPageStep(max(1, slider.maximum() // 18))
            slider.setToolTip(knob.tip)
            slider.setMinimumWidth(SLIDER_WIDTH)
            slider.sliderPressed.connect(self._new_gesture)
            slider.valueChanged.connect(lambda position, knob=knob: self._slid(knob, position))
            value = QLabel()
            value.setMinimumWidth(self.fontMetrics().horizontalAdvance("±100 %") + 6)
            value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            title = QLabel(knob.title)
            title.setToolTip(knob.tip)
            grid.addWidget(title, row, 0)
            grid.addWidget(slider, row, 1)
            grid.addWidget(value, row, 2)
            self.sliders[knob.field], self.values[knob.field] = slider, value
        self.fill = QComboBox()
        self.fill.setObjectName("augment-fill")
        for mode in FILL_MODES:
            self.fill.addItem(FILL_TITLES[mode], mode)
        self.fill.setToolTip("What fills the corners that rotation, zoom and shift uncover: "
                             "black, or the image's edge pixels, mirror or opposite side "
                             "(these can leave ghost strokes)")
        self.fill.activated.connect(lambda index: self._set(
            "Set augmentation fill", "fill_mode", self.fill.itemData(index)))
        fill_row = len(KNOBS) + 2
        grid.addWidget(QLabel("Fill"), fill_row, 0)
        grid.addWidget(self.fill, fill_row, 1, 1, 2)
        self.rotation_note = hint(ROTATION_NOTE)
        self.rotation_note.setObjectName("augment-rotation-note")
        self.rotation_note.setStyleSheet("color: #b06000;")
        grid.setColumnStretch(1, 1)
        self.reset = QPushButton("Reset")
        self.reset.setToolTip("Switch every augmentation off")
        self.reset.clicked.connect(self._reset)
        grid.addWidget(self.reset, fill_row + 1, 2)
        self.note = hint("Augmentation applies to training only: validation and test images "
                         "are never changed.")
        left = QVBoxLayout()
        left.addWidget(controls)
        left.addWidget(self.rotation_note)
        left.addWidget(self.note)
        left.addStretch(1)

        self.views = data_views_for(DEFAULT_TASK)
        """The data views of the data previewed: they augment it and draw it."""
        self.picture = self._new_grid()
        self.caption = hint()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.redraw = QPushButton("New draw")
        self.redraw.setToolTip("Augment the same samples with other random draws")
        self.redraw.clicked.connect(self._new_draw)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.redraw, 0, Qt.AlignmentFlag.AlignTop)
        self.right = right = QVBoxLayout()
        right.addWidget(self.caption)
        right.addWidget(self.picture, 1)
        right.addLayout(bottom)
        layout = QHBoxLayout(self)
        layout.addLayout(left)
        layout.addLayout(right, 1)

        self.loaded: LoadedData | None = None
        self.choice = DatasetChoice()
        self.shape: tuple[int, ...] | None = None
        self.preview: np.ndarray | None = None
        """The images on screen: R × N × H × W × C, the first row unaugmented."""
        self.overlays: list[list] | None = None
        """What the data views draw over them (pixels of these images), row by row: a
        detection's boxes; None for data drawn as the images alone."""
        self.seed = 0
        self._gesture = 0
        self._data_version = 0
        self._wanted: tuple | None = None
        self._started: tuple | None = None
        self._tensorflow_used = False
        self.job = JobSlot(self)
        self.job.succeeded.connect(self._show_preview)
        self.job.failed.connect(self._failed)
        self.timer = delay(self, DEBOUNCE_MS, self._start_preview)
        self.clear("No data yet.")

    def refresh(self, choice: DatasetChoice, shape: tuple[int, ...] | None) -> None:
        """Show ``choice``'s augmentation; ``shape`` is the image shape training reads."""
        self.choice, self.shape = choice, shape
        aug = choice.augmentation
        show_value(self.flip_horizontal, aug.flip_horizontal)
        show_value(self.flip_vertical, aug.flip_vertical)
        for knob in KNOBS:
            value = getattr(aug, knob.field)
            slider = self.sliders[knob.field]
            if slider.value() != round(value / knob.step):
                with QSignalBlocker(slider):
                    slider.setValue(round(value / knob.step))
            self.values[knob.field].setText(knob.text(value))
        if self.fill.currentData() != aug.fill_mode:
            with QSignalBlocker(self.fill):
                self.fill.setCurrentIndex(self.fill.findData(aug.fill_mode))
        self.fill.setEnabled(any(getattr(aug, name) for name in MOVES))
        self.rotation_note.setVisible(aug.rotation > TURNS_SHAPES)
        self.reset.setEnabled(aug.active())
        self._request()

    def show_data(self, loaded: LoadedData) -> None:
        """Preview training samples of ``loaded``."""
        if not isinstance(loaded.samples, ArraySamples | FileSamples):
            self.clear("Augmentation changes images; it does not apply to tables or texts.")
            return
        views = data_views_for(loaded.info.task)
        if views is not self.views:  # another kind of label: its own grid draws it
            self.job.cancel()
            self.views = views
            grid = self._new_grid()
            self.right.replaceWidget(self.picture, grid)
            self.picture.deleteLater()
            self.picture = grid
        self.loaded = loaded
        self._data_version += 1
        self._request()

    @property
    def boxes(self) -> list[list] | None:
        """The boxes drawn on a detection's preview (its overlays), row by row."""
        return self.overlays

    def _new_grid(self):
        grid = self.views.preview_grid(ROW_GAP)
        grid.setObjectName("augment-preview")
        return grid

    def clear(self, message: str) -> None:
        """Show ``message`` instead of a preview."""
        self.job.cancel()
        self.timer.stop()
        self.loaded, self.preview, self.overlays = None, None, None
        self._wanted = self._started = None
        self.picture.set_images(None)
        self.caption.setText("")
        self.status.setStyleSheet("")
        self.status.setText(message)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Compute a preview that was asked for while the view was hidden."""
        super().showEvent(event)
        self._request()

    def _set(self, text: str, field: str, value, merge_key: str | None = None) -> None:
        self.doc.edit(text, lambda p: setattr(p.dataset.augmentation, field, value), merge_key)

    def _new_gesture(self) -> None:
        self._gesture += 1

    def _slid(self, knob: Knob, position: int) -> None:
        value = round(position * knob.step, 4)
        self.values[knob.field].setText(knob.text(value))
        self._set(f"Set {knob.title.lower()}", knob.field, value,
                  f"dataset.augmentation.{knob.field}.{self._gesture}")

    def _reset(self) -> None:
        self.doc.edit("Switch augmentation off",
                      lambda p: setattr(p.dataset, "augmentation", Augmentation()))

    def _new_draw(self) -> None:
        self.seed += 1
        self._request()

    def _key(self) -> tuple:
        return (self._data_version, self.shape, self.choice.resize,
                tuple(asdict(self.choice.augmentation).values()), self.seed)

    def _request(self) -> None:
        """Ask for a preview of the current settings once the sliders rest."""
        if self.loaded is None or self.shape is None:
            return
        self._wanted = self._key()
        if self._wanted != self._started and self.isVisible():
            self.timer.start()

    def _start_preview(self) -> None:
        if self._wanted is None or self._wanted == self._started:
            return
        self._started = self._wanted
        aug = self.choice.augmentation
        indices = pick(self.loaded, "train", PREVIEW_SAMPLES)
        self.job.start(_preview_task(self.loaded, indices, self.choice, self.shape, self.seed,
                                    self.views))
        self.status.setStyleSheet("")
        self.status.setText("Loading TensorFlow for the preview…"
                            if aug.active() and not self._tensorflow_used else "Working…")
        self._tensorflow_used |= aug.active()

    def _show_preview(self, result: Preview) -> None:
        preview, self.overlays = result
        self.preview = preview
        self.views.show_preview(self.picture, result, self.loaded.info.class_names)
        if not preview.shape[1]:
            self.status.setText("No training image could be read for the preview.")
            return
        augmented = len(preview) > 1
        self.caption.setText(
            f"Top row: {preview.shape[1]} training samples as the model reads them "
            f"({preview.shape[3]}×{preview.shape[2]}); below: {len(preview) - 1} random "
            "augmentations of each." if augmented else
            f"{preview.shape[1]} training samples as the model reads them.")
        self.redraw.setEnabled(augmented)
        self.status.setText("" if augmented else
                            "Augmentation is off: training uses the images as they are. "
                            "Move a slider to see its effect.")
        self.preview_shown.emit()

    def _failed(self, message: str) -> None:
        note_error("Augmentation preview failed", message)
        self._started = None
        self.status.setStyleSheet(ERROR_STYLE)
        self.status.setText(f"The preview failed: {message}")
