"""Asking how to prepare images for a model file that does not say (no preprocessing.json
beside it): its input size, colour mode, resizing and pixel scaling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from studio.core.inference.predictor import image_preprocessing
from studio.gui.data.options import NORMALIZATIONS, RESIZES
from studio.gui.widgets.forms import choice_box, hint

COLORS = (("Grayscale", "grayscale", "One channel"), ("RGB", "rgb", "Three colour channels"))
MAX_SIDE = 4096


class PreprocessingDialog(QDialog):
    """The person states how the model's inputs were prepared in training; the fields start
    from the model's input shape where it has one, and nothing is used until OK."""

    def __init__(self, model_name: str, input_shape: Sequence[Any],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("How were this model's images prepared?")
        height, width, channels = _known(input_shape)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(
            f"<b>{model_name}</b> does not say how its training images were prepared, so "
            "answers could be wrong if this is guessed. Say how they were prepared:"))
        form = QFormLayout()
        self.height_box, self.width_box = _side(height), _side(width)
        size = QHBoxLayout()
        size.addWidget(self.height_box)
        size.addWidget(QLabel("×"))
        size.addWidget(self.width_box)
        size.addStretch(1)
        form.addRow("Size (h × w)", size)
        self.color = choice_box(COLORS, "The channels the model reads")
        self.color.setCurrentIndex(0 if channels == 1 else 1)
        form.addRow("Colour", self.color)
        self.resize_mode = choice_box(RESIZES, "How images of another shape are fitted")
        form.addRow("Resize", self.resize_mode)
        self.normalization = choice_box(NORMALIZATIONS[:2], "How pixel values were scaled")
        form.addRow("Normalise", self.normalization)
        layout.addLayout(form)
        fixed = any(list(input_shape)[-3:])
        layout.addWidget(hint(
            "The model's input is " + " × ".join(str(v or "any") for v in input_shape)
            + ("; the fields it fixes are filled in from it." if fixed else ".")
            + " Classes are shown by number."))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def preprocessing(self) -> dict[str, Any]:
        """The preprocessing the answers describe."""
        channels = 1 if self.color.currentData() == "grayscale" else 3
        return image_preprocessing((self.height_box.value(), self.width_box.value(), channels),
                                   self.color.currentData(), self.normalization.currentData(),
                                   self.resize_mode.currentData())


def _known(shape: Sequence[Any]) -> tuple[int, int, int]:
    dims = list(shape)[-3:] if len(shape) >= 3 else []
    height, width, channels = ([int(d) if d else 0 for d in dims] + [0, 0, 0])[:3]
    return height or 224, width or 224, channels or 3


def _side(value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(1, MAX_SIDE)
    box.setValue(value)
    box.setSuffix(" px")
    return box
