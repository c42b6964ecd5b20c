"""How a detector's answer is drawn: the image with its boxes, class names and scores, and
sliders for the score threshold and NMS IoU that decode the boxes again without the model."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QImageReader, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.messages import count
from studio.core.inference.predictor import Prediction, redecoded
from studio.gui.tasks.views import AnswerCells
from studio.gui.widgets.images import array_pixmap
from studio.gui.widgets.tagged_box import draw_tagged_box

PICTURE_SIDE = 240
"""The longest side the image is drawn at on a card."""
COLORS = [QColor(c) for c in ("#d93025", "#1a73e8", "#188038", "#e37400", "#9334e6",
                              "#007b83", "#c5221f", "#3f51b5", "#b06000", "#5f6368")]
"""A colour per class (cycled), so boxes of one class look alike."""
TABLE_BOXES = 3
"""Boxes named in a folder table's cell before "…"."""
NOT_EXPLAINED = ("Explanations (heat maps of where the model looked) are drawn for "
                 "classifiers: a detector's boxes already show where it found each object.")


def lay_beside(card: QWidget, picture: QWidget, controls: QLayout) -> None:
    """Lay ``controls`` out beside ``picture`` (at its own size, at the top) in ``card``, not
    under it: an answer stays about as tall as its picture, so a laptop's short Try tab shows
    a whole one."""
    picture.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
    layout = QHBoxLayout(card)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(picture, 0, Qt.AlignmentFlag.AlignTop)
    layout.addLayout(controls, 1)


def answered_picture(prediction: Prediction) -> QImage:
    """The answered image at most PICTURE_SIDE a side: its file read again (boxes and masks
    are in its own pixels), else the image as the model saw it."""
    reader = QImageReader(prediction.source)
    if Path(prediction.source).is_file() and reader.canRead():
        size = reader.size()
        if size.isValid() and max(size.width(), size.height()) > PICTURE_SIDE:
            reader.setScaledSize(size.scaled(PICTURE_SIDE, PICTURE_SIDE,
                                             Qt.AspectRatioMode.KeepAspectRatio))
        image = reader.read()
        if not image.isNull():
            return image
    pixels = prediction.image if prediction.image is not None else prediction.thumbnail
    return array_pixmap(pixels).toImage() if pixels is not None else QImage()


class BoxPicture(QWidget):
    """The image, fitted to the widget, with each box outlined in its class's colour and
    tagged with the class and score."""

    def __init__(self, picture: QImage, image_size: tuple[int, int]) -> None:
        super().__init__()
        self.picture = picture
        self.image_size = image_size
        """The image's own (height, width): the boxes' coordinates are in its pixels."""
        self.labels: list[str] = []
        self.scores: list[float] = []
        self.boxes: list[list[float]] = []
        self.class_names: list[str] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip("The boxes the model finds, each with its class and score")

    def set_boxes(self, prediction: Prediction) -> None:
        """Draw ``prediction``'s boxes."""
        self.labels, self.scores = list(prediction.labels), list(prediction.probabilities)
        self.boxes = list(prediction.boxes or [])
        self.class_names = list((prediction.decoding or {}).get("class_names") or [])
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        height, width = self.image_size
        factor = PICTURE_SIDE / max(height, width, 1)
        return QSize(round(width * factor), round(height * factor))

    minimumSizeHint = sizeHint

    def _color(self, label: str) -> QColor:
        index = self.class_names.index(label) if label in self.class_names else hash(label)
        return COLORS[index % len(COLORS)]

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        height, width = self.image_size
        factor = min(self.width() / max(width, 1), self.height() / max(height, 1))
        area = QRectF(0, 0, width * factor, height * factor)
        painter.fillRect(area, QColor("#f8f9fa"))
        if not self.picture.isNull():
            painter.drawImage(area, self.picture)
        for label, score, (x0, y0, x1, y1) in zip(self.labels, self.scores, self.boxes,
                                                  strict=True):
            box = QRectF(x0 * factor, y0 * factor, (x1 - x0) * factor, (y1 - y0) * factor)
            draw_tagged_box(painter, box, QPen(self._color(label), 2), f"{label} {score:.2f}")
        painter.end()


class DetectionAnswer(QWidget):
    """A detector's answer on a Try card: the picture with its boxes, how many there are, and
    sliders for the score threshold and NMS IoU, which decode the answer again from the head
    output it keeps (the model is not run again)."""

    def __init__(self, prediction: Prediction) -> None:
        super().__init__()
        self.original = prediction
        self.prediction = prediction
        """The answer as drawn, for the sliders' settings."""
        decoding = prediction.decoding or {}
        height, width = decoding.get("image_size") or (PICTURE_SIDE, PICTURE_SIDE)
        self.picture = BoxPicture(answered_picture(prediction), (int(height), int(width)))
        self.summary = QLabel()
        controls = QVBoxLayout()
        controls.addWidget(self.summary)
        sliders = QGridLayout()
        self.score_slider, self.score_value = self._slider(
            sliders, 0, "Score at least", decoding.get("score_threshold", 0.3),
            "Boxes scoring less than this are left out")
        self.iou_slider, self.iou_value = self._slider(
            sliders, 1, "Overlap (NMS IoU)", decoding.get("nms_iou", 0.5),
            "Of two boxes of one class overlapping by more than this, the weaker is left out")
        controls.addLayout(sliders)
        controls.addStretch(1)
        lay_beside(self, self.picture, controls)
        enabled = prediction.output is not None and prediction.decoding is not None
        self.score_slider.setEnabled(enabled)
        self.iou_slider.setEnabled(enabled)
        self._show(prediction)

    def _slider(self, grid: QGridLayout, row: int, title: str, value: float, tip: str
                ) -> tuple[QSlider, QLabel]:
        slider = QSlider(Qt.Orientation.Horizontal)
        slider.setRange(0, 100)
        slider.setValue(round(value * 100))
        slider.setToolTip(tip)
        shown = QLabel(f"{value:.2f}")
        grid.addWidget(QLabel(title), row, 0)
        grid.addWidget(slider, row, 1)
        grid.addWidget(shown, row, 2)
        slider.valueChanged.connect(self._decode_again)
        return slider, shown

    def _decode_again(self) -> None:
        threshold = self.score_slider.value() / 100
        iou = self.iou_slider.value() / 100
        self.score_value.setText(f"{threshold:.2f}")
        self.iou_value.setText(f"{iou:.2f}")
        self._show(redecoded(self.original, score_threshold=threshold, nms_iou=iou))

    def keep_settings(self, other: DetectionAnswer) -> None:
        """Decode with ``other``'s slider settings: a drawing's next answer keeps those the
        person chose."""
        if self.score_slider.isEnabled():
            self.score_slider.setValue(other.score_slider.value())
            self.iou_slider.setValue(other.iou_slider.value())

    def _show(self, prediction: Prediction) -> None:
        self.prediction = prediction
        self.picture.set_boxes(prediction)
        self.summary.setText(count(len(prediction.boxes or []), "box", "boxes"))

    @property
    def labels(self) -> list[str]:
        """The classes of the boxes drawn, best first."""
        return self.prediction.labels


class DetectionViews:
    """The detection task's widgets."""

    shows_image = True
    not_explained = NOT_EXPLAINED

    def answer_widget(self, prediction: Prediction, replacing: QWidget | None = None
                      ) -> QWidget:
        """The image with ``prediction``'s boxes, and sliders to decode them again, set as
        ``replacing``'s are."""
        answer = DetectionAnswer(prediction)
        if isinstance(replacing, DetectionAnswer):
            answer.keep_settings(replacing)
        return answer

    def table_cells(self, prediction: Prediction) -> AnswerCells:
        """``3 boxes: 7 (0.98), 1 (0.91), …`` and the best score."""
        scores = prediction.probabilities
        if not scores:
            return AnswerCells("no boxes")
        named = ", ".join(f"{label} ({p:.2f})" for label, p in
                          zip(prediction.labels[:TABLE_BOXES], scores[:TABLE_BOXES],
                              strict=True))
        more = ", …" if len(scores) > TABLE_BOXES else ""
        return AnswerCells(f"{count(len(scores), 'box', 'boxes')}: {named}{more}",
                           f"{scores[0] * 100:.1f}%", "", scores[0])

    def evaluation_view(self) -> QWidget:
        """The mAPs, AP table, precision-recall curves and each class's mistakes on images."""
        from studio.gui.tasks.detection_evaluation import DetectionEvaluationView  # pyqtgraph

        return DetectionEvaluationView()
