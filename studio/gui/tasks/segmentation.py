"""How a segmentation's answer is drawn: the image with its predicted mask laid over it in a
colour per class (background left clear), an opacity slider, a choice of overlay, mask alone
or image alone, and a legend of the classes with their areas."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QPixmap
from PySide6.QtWidgets import (
    QButtonGroup,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QRadioButton,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from studio.core.inference.mask_files import class_colors, is_background
from studio.core.inference.predictor import Prediction
from studio.core.model.params import format_shape
from studio.gui.tasks.detection import PICTURE_SIDE, answered_picture, lay_beside
from studio.gui.tasks.mask_drawing import DEFAULT_OPACITY, MaskLayers, draw_mask
from studio.gui.tasks.segmentation_evaluation import SegmentationEvaluationView
from studio.gui.tasks.views import AnswerCells

MODES = (("overlay", "&Overlay", "The mask laid over the image, background left clear"),
         ("mask", "&Mask", "The mask alone, every class in its colour"),
         ("image", "&Image", "The image alone, without the mask"))
"""How the picture can be drawn: its name, its button's text and tooltip."""
SWATCH = 12
TABLE_CLASSES = 3
"""Classes named in a folder table's row."""
NOT_EXPLAINED = ("Explanations (heat maps of where the model looked) are drawn for "
                 "classifiers: a segmentation's mask already shows where it found each class.")


def _names(prediction: Prediction) -> list[str]:
    """The class of each mask value: the run's class names, else the values as text."""
    if prediction.class_names:
        return list(prediction.class_names)
    top = int(prediction.mask.max()) + 1 if prediction.mask is not None else 0
    return [str(k) for k in range(top)]


def _shares(prediction: Prediction) -> list[tuple[str, float]]:
    """Each class in the mask with its share of the pixels in percent, the largest first."""
    return list(zip(prediction.labels, prediction.percents or [], strict=True))


class MaskPicture(QWidget):
    """The image fitted to the widget with the mask drawn as ``mode`` says: over it at
    ``opacity``, alone, or not at all. Mask pixels are drawn whole (no blurring)."""

    def __init__(self, picture: QImage, mask: np.ndarray, class_names: Sequence[str]) -> None:
        super().__init__()
        self.picture = picture
        self.image_size = mask.shape[:2]
        """The image's own (height, width), which the mask covers pixel for pixel."""
        self.layers = MaskLayers.of(mask, class_names)
        self.mode = "overlay"
        self.opacity = DEFAULT_OPACITY / 100
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip("The class the model finds at each pixel, in the legend's colours")

    def show_as(self, mode: str, opacity: float) -> None:
        """Draw the mask as ``mode`` (one of MODES) says, at ``opacity`` (0 to 1) over the
        image."""
        self.mode, self.opacity = mode, opacity
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        height, width = self.image_size
        factor = PICTURE_SIDE / max(height, width, 1)
        return QSize(max(1, round(width * factor)), max(1, round(height * factor)))

    minimumSizeHint = sizeHint

    def picture_area(self) -> QRectF:
        """Where the image is drawn: fitted to the widget, from its top left."""
        height, width = self.image_size
        factor = min(self.width() / max(width, 1), self.height() / max(height, 1))
        return QRectF(0, 0, width * factor, height * factor)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        draw_mask(painter, self.picture_area(), self.picture, self.layers, self.mode,
                  self.opacity)
        painter.end()


def _swatch(color: np.ndarray) -> QPixmap:
    swatch = QPixmap(SWATCH, SWATCH)
    swatch.fill(QColor(*(int(c) for c in color)))
    return swatch


class Legend(QWidget):
    """Each class in the mask: its colour, its name and its area (share and pixels)."""

    def __init__(self, prediction: Prediction, class_names: Sequence[str]) -> None:
        super().__init__()
        colors = class_colors(class_names)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(2)
        self.rows: list[tuple[str, str]] = []
        """Each class shown, as its name and its area in words."""
        for row, ((label, share), pixels) in enumerate(
                zip(_shares(prediction), prediction.areas or [], strict=True)):
            value = list(class_names).index(label) if label in class_names else row
            swatch = QLabel()
            swatch.setPixmap(_swatch(colors[value]))
            area = f"{share:.1f}% ({pixels:,} px)"
            clear = " (clear over the image)" if is_background(label) else ""
            swatch.setToolTip(f"{label}'s colour in the mask{clear}")
            grid.addWidget(swatch, row, 0)
            grid.addWidget(QLabel(label), row, 1)
            shown = QLabel(area)
            shown.setToolTip(f"The share of the image's pixels the model finds to be {label}")
            grid.addWidget(shown, row, 2)
            self.rows.append((label, area))
        grid.setColumnStretch(3, 1)


class SegmentationAnswer(QWidget):
    """A segmentation's answer on a Try card: the picture with its mask, how it is drawn
    (overlay, mask or image, and the overlay's opacity), and the legend."""

    def __init__(self, prediction: Prediction) -> None:
        super().__init__()
        self.prediction = prediction
        names = _names(prediction)
        mask = prediction.mask if prediction.mask is not None else np.zeros((1, 1), np.uint8)
        self.picture = MaskPicture(answered_picture(prediction), mask, names)
        self.summary = QLabel(f"{len(prediction.labels)} classes in "
                              f"{format_shape(mask.shape)} pixels")
        self.modes = QButtonGroup(self)
        buttons = QHBoxLayout()
        for index, (name, text, tip) in enumerate(MODES):
            button = QRadioButton(text)
            button.setObjectName(name)
            button.setToolTip(tip)
            button.setChecked(index == 0)
            self.modes.addButton(button, index)
            buttons.addWidget(button)
        self.modes.idToggled.connect(self._redraw)
        self.opacity = QSlider(Qt.Orientation.Horizontal)
        self.opacity.setRange(0, 100)
        self.opacity.setValue(DEFAULT_OPACITY)
        self.opacity.setToolTip("How strongly the mask covers the image in the overlay")
        self.opacity.setAccessibleName("Mask opacity")
        self.opacity_value = QLabel()
        self.opacity.valueChanged.connect(self._redraw)
        buttons.addStretch(1)
        opacity = QHBoxLayout()
        opacity.addWidget(QLabel("Opacity"))
        opacity.addWidget(self.opacity, 1)
        opacity.addWidget(self.opacity_value)
        self.legend = Legend(prediction, names)
        controls = QVBoxLayout()
        controls.addLayout(buttons)
        controls.addLayout(opacity)
        controls.addWidget(self.summary)
        controls.addWidget(self.legend)
        controls.addStretch(1)
        lay_beside(self, self.picture, controls)
        self._redraw()

    @property
    def mode(self) -> str:
        """How the picture is drawn: one of MODES' names."""
        return MODES[max(0, self.modes.checkedId())][0]

    def _redraw(self) -> None:
        self.opacity_value.setText(f"{self.opacity.value()}%")
        self.opacity.setEnabled(self.mode == "overlay")
        self.picture.show_as(self.mode, self.opacity.value() / 100)

    def keep_settings(self, other: SegmentationAnswer) -> None:
        """Draw as ``other`` is drawn: a drawing's next answer keeps what the person chose."""
        self.opacity.setValue(other.opacity.value())
        self.modes.button(max(0, other.modes.checkedId())).setChecked(True)

    @property
    def labels(self) -> list[str]:
        """The classes in the mask, the largest first."""
        return self.prediction.labels


class SegmentationViews:
    """The segmentation task's widgets."""

    shows_image = True
    not_explained = NOT_EXPLAINED

    def answer_widget(self, prediction: Prediction, replacing: QWidget | None = None
                      ) -> QWidget:
        """The image with ``prediction``'s mask over it, drawn as ``replacing``'s is."""
        answer = SegmentationAnswer(prediction)
        if isinstance(replacing, SegmentationAnswer):
            answer.keep_settings(replacing)
        return answer

    def table_cells(self, prediction: Prediction) -> AnswerCells:
        """The largest class that is not background with its share (background's where
        there is no other), and the next classes with theirs: ``dog 40.0%`` and
        ``background 55.0%, cat 5.0%``."""
        shares = _shares(prediction)
        if not shares:
            return AnswerCells("no class")
        main = next((s for s in shares if not is_background(s[0])), shares[0])
        rest = [s for s in shares if s is not main][:TABLE_CLASSES - 1]
        return AnswerCells(f"{main[0]} {main[1]:.1f}%", "",
                           ", ".join(f"{label} {share:.1f}%" for label, share in rest))

    def evaluation_view(self) -> QWidget:
        """The mean IoU, each class's IoU and Dice, the pixel confusion matrix and the
        images of lowest IoU with their masks."""
        return SegmentationEvaluationView()
