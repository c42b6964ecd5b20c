"""The Try view's drawing pad: a person draws with the mouse (or a pen) and the model answers
the drawing as it grows, shown at its input's size and colour mode; Explain shows why."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal, Slot
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from studio.core.inference.predictor import Prediction, Predictor
from studio.gui.inference.answer_slot import beside, replace_answer
from studio.gui.inference.explain_view import ExplainView
from studio.gui.tasks.registry import views_for
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.forms import hint
from studio.gui.widgets.jobs import JobSlot, Policy

PAD_SIDE = 280
"""About how many ink pixels the longer side of the drawing has (10 per pixel of a 28 × 28
input), so strokes are smooth before they are scaled down to the model's size."""
MODEL_SIDE = 28
"""The input side the pad starts at, before a model is loaded (MNIST's)."""
DRAWING = "Drawing"
"""The name of the drawing's answers."""
EMPTY_TEXT = "Draw in the box with the mouse or a pen: the model answers as you draw."
NO_MODEL_TEXT = "The drawing is answered once a model is loaded (see above)."
EXPLAIN_TEXT = "Press Explain to see where in the drawing the model found its answer."
EXPLAIN_TIP = ("Show where in the drawing the model found its answer (Grad-CAM), and again "
               "after each stroke")


class PadCanvas(QWidget):
    """The ink, kept at ``PAD_SIDE`` and shown as large as the widget allows; ``pixels`` is
    it scaled down to the model's input. Light ink on black by default, as MNIST's digits
    are stored; ``set_dark_ink`` draws dark ink on white paper instead."""

    changed = Signal()
    """A stroke event changed the ink (a press or a move with the button held)."""
    stroke_ended = Signal()
    """The pen was lifted."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("drawing-canvas")
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setMinimumSize(140, 140)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setToolTip("Draw here; the model answers the drawing as you draw")
        self.brush = 3
        """The stroke's width in pixels of the model's input."""
        self.dark_ink = False
        self.drawn = False
        """Whether anything has been drawn since the pad was last cleared."""
        self.size_hw = (MODEL_SIDE, MODEL_SIDE)
        self.channels = 1
        self._last: QPointF | None = None
        self.ink = QImage()
        self._scale = 1
        self.set_form(MODEL_SIDE, MODEL_SIDE, 1)

    def set_form(self, height: int, width: int, channels: int) -> bool:
        """Draw for a model taking ``height`` × ``width`` × ``channels`` inputs; a new size
        clears the pad (and returns True)."""
        self.channels = channels
        if (height, width) == self.size_hw and not self.ink.isNull():
            return False
        self.size_hw = (height, width)
        self._scale = max(1, round(PAD_SIDE / max(height, width)))
        self.ink = QImage(width * self._scale, height * self._scale,
                          QImage.Format.Format_Grayscale8)
        self.clear()
        return True

    def set_dark_ink(self, dark: bool) -> None:
        """Dark ink on white paper (True) or light ink on black (False); what is drawn stays,
        in the new colours."""
        if dark != self.dark_ink:
            self.dark_ink = dark
            self.ink.invertPixels()
            self.update()
            if self.drawn:
                self.changed.emit()

    def clear(self) -> None:
        """Blank paper."""
        self.ink.fill(QColor(self._paper()))
        self.drawn = False
        self.update()

    def pixels(self) -> np.ndarray:
        """The drawing at the model's input size, uint8 H × W × C (smoothly scaled down, so a
        stroke's edges are grey, as in scanned digits)."""
        height, width = self.size_hw
        small = self.ink.scaled(width, height, Qt.AspectRatioMode.IgnoreAspectRatio,
                                Qt.TransformationMode.SmoothTransformation)
        line = small.bytesPerLine()
        rows = np.frombuffer(small.constBits(), np.uint8, height * line).reshape(height, line)
        grey = rows[:, :width, np.newaxis]
        return np.repeat(grey, self.channels, axis=-1)  # a copy, never the image's memory

    def pen_down(self) -> bool:
        """Whether a stroke is being drawn (the button is held)."""
        return self._last is not None

    def _paper(self) -> Qt.GlobalColor:
        return Qt.GlobalColor.white if self.dark_ink else Qt.GlobalColor.black

    def _target(self) -> QRectF:
        """Where the ink is shown: as large as fits, centred, keeping its proportions."""
        side = min(self.width() / self.ink.width(), self.height() / self.ink.height())
        width, height = self.ink.width() * side, self.ink.height() * side
        return QRectF((self.width() - width) / 2, (self.height() - height) / 2, width, height)

    def _ink_point(self, position: QPointF) -> QPointF:
        target = self._target()
        factor = self.ink.width() / target.width()
        return (position - target.topLeft()) * factor

    def _stroke(self, to: QPointF) -> None:
        painter = QPainter(self.ink)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        ink = Qt.GlobalColor.black if self.dark_ink else Qt.GlobalColor.white
        painter.setPen(QPen(ink, self.brush * self._scale, Qt.PenStyle.SolidLine,
                            Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin))
        if self._last is None:
            painter.drawPoint(to)
        else:
            painter.drawLine(self._last, to)
        painter.end()
        self._last = to
        self.drawn = True
        self.update()
        self.changed.emit()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.LeftButton:
            self._last = None
            self._stroke(self._ink_point(event.position()))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.buttons() & Qt.MouseButton.LeftButton and self._last is not None:
            self._stroke(self._ink_point(event.position()))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.LeftButton and self._last is not None:
            self._last = None
            self.stroke_ended.emit()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        target = self._target()
        painter.drawImage(target, self.ink)
        painter.setPen(QColor("#9aa0a6"))
        painter.drawRect(target.adjusted(0, 0, -1, -1))
        painter.end()


class DrawingPad(QWidget):
    """The pad with its brush, colours, Clear and Explain, beside the model's answer to the
    drawing. Answers run as jobs, coalesced: while one runs, only the newest drawing waits,
    and the drawings between are never answered. ``predictor`` gives the loaded model (None
    while none is) and ``top_k`` how many classes to show."""

    answered = Signal(object)
    """The answer to a drawing is on screen (its Prediction)."""
    model_wanted = Signal()
    """Something was drawn with no model loaded."""

    def __init__(self, predictor: Callable[[], Predictor | None],
                 top_k: Callable[[], int]) -> None:
        super().__init__()
        self.setObjectName("drawing-pad")
        self.predictor, self.top_k = predictor, top_k
        self.prediction: Prediction | None = None
        """The answer on screen, or None."""
        self.version = 0
        """Counts the drawing's changes; an answer says which version it is of."""
        self.answered_version = 0
        """The version of the drawing whose answer is on screen, or that was wiped (answers
        to earlier versions are out of date)."""
        self._wanted = False
        """A model was asked for (once, not at every stroke event)."""
        self._explaining = False
        """Explain was pressed: each finished stroke is explained again, until Clear."""
        self.job = JobSlot(self, Policy.RERUN)
        self.job.succeeded.connect(self._show)
        self.job.failed.connect(self._failed)

        self.canvas = PadCanvas()
        self.canvas.changed.connect(self.ask)
        self.canvas.stroke_ended.connect(self._explain_when_answered)
        self.brush_box = QSpinBox()
        self.brush_box.setObjectName("drawing-brush")
        self.brush_box.setPrefix("Brush ")
        self.brush_box.setSuffix(" px")
        self.brush_box.setRange(1, 8)
        self.brush_box.setValue(self.canvas.brush)
        self.brush_box.setToolTip("The stroke's width, in pixels of the image the model takes")
        self.brush_box.valueChanged.connect(lambda width: setattr(self.canvas, "brush", width))
        self.dark_box = QCheckBox("Dark ink")
        self.dark_box.setToolTip("Draw dark ink on white paper, for models trained on such "
                                 "images; MNIST's digits are light on black")
        self.dark_box.toggled.connect(self.canvas.set_dark_ink)
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Wipe the pad")
        self.clear_button.clicked.connect(self.clear)
        self.explain_button = QPushButton("Explain")
        self.explain_button.clicked.connect(self.explain)
        tools = QHBoxLayout()
        for widget in (self.brush_box, self.dark_box, self.clear_button, self.explain_button):
            tools.addWidget(widget)
        tools.addStretch(1)
        pad_column = QWidget()
        pad_layout = QVBoxLayout(pad_column)
        pad_layout.addWidget(self.canvas, 1)
        pad_layout.addLayout(tools)

        self.note = hint(EMPTY_TEXT)
        self.note.setObjectName("drawing-note")
        self.answer: QWidget | None = None
        """The answer as the task draws it (bars for a classifier), or None."""
        self.answer_box = QVBoxLayout()
        self.answer_box.addWidget(self.note)
        self.explain_view = ExplainView()
        answers = QWidget()
        answers_layout = QVBoxLayout(answers)
        answers_layout.addLayout(self.answer_box)
        answers_layout.addWidget(self.explain_view, 1)
        beside(self, pad_column, answers, (1, 1))
        self.explain_view.reset(EXPLAIN_TEXT)
        self._offer_explain()

    def set_predictor(self, predictor: Predictor | None) -> None:
        """A model was loaded (or unloaded): draw at its input's size and colour mode, and
        answer what is drawn."""
        self._drop_answer()
        self._wanted = False
        if predictor is None or predictor.kind != "image":
            self.note.setText(NO_MODEL_TEXT if self.canvas.drawn else EMPTY_TEXT)
            return
        height, width, channels = (int(d) for d in predictor.prep["sample_shape"])
        if self.canvas.set_form(height, width, channels):
            self.brush_box.setMaximum(max(8, max(height, width) // 4))
            self.brush_box.setValue(max(1, round(max(height, width) / 10)))
        self.ask()

    def ask(self) -> None:
        """Answer the drawing as it is now, once the answer under way (if any) has ended."""
        self.version += 1
        if not self.canvas.drawn:
            return
        predictor = self.predictor()
        if predictor is None:
            self.note.setText(NO_MODEL_TEXT)
            if not self._wanted:
                self._wanted = True
                self.model_wanted.emit()
            return
        version, pixels, top_k = self.version, self.canvas.pixels(), self.top_k()
        self.job.start(lambda on_event, stop: (
            version, predictor.predict_images([pixels], [DRAWING], top_k)[0]))

    @Slot(object)
    def _show(self, answer: tuple[int, Prediction]) -> None:
        version, prediction = answer
        if version <= self.answered_version:
            return  # of a drawing wiped since, or older than the one shown
        self.prediction, self.answered_version = prediction, version
        if prediction.error:
            self._failed(prediction.error)
            return
        self.note.setText(f"Answered in {prediction.seconds * 1000:.0f} ms.")
        self.answer = replace_answer(self.answer_box, self.answer, prediction)
        self._offer_explain()
        self.answered.emit(prediction)
        if self._explaining and version == self.version and not self.canvas.pen_down():
            self._explain_current()

    @Slot(str)
    def _failed(self, text: str) -> None:
        note_error("Could not answer the drawing", text)
        self.note.setText(f"Could not answer the drawing: {text}")

    def clear(self) -> None:
        """Wipe the pad, its answer and its explanation."""
        self.canvas.clear()
        self._drop_answer()
        self.note.setText(EMPTY_TEXT)

    def _drop_answer(self) -> None:
        self.answered_version = self.version
        self.prediction = None
        self._explaining = False
        if self.answer is not None:
            self.answer.deleteLater()
            self.answer = None
        self.explain_view.reset(EXPLAIN_TEXT)
        self._offer_explain()

    def explain(self) -> None:
        """Explain the drawing now and after each stroke from now on."""
        self._explaining = True
        self._explain_when_answered()

    def _explain_when_answered(self) -> None:
        """Explain the drawing if its answer is on screen; otherwise its answer, once shown,
        is explained (see ``_show``)."""
        if self._explaining and self.prediction is not None \
                and self.answered_version == self.version:
            self._explain_current()

    def _explain_current(self) -> None:
        predictor = self.predictor()
        if predictor is not None and self.prediction is not None:
            self.explain_view.show_prediction(predictor, self.prediction)

    def _offer_explain(self) -> None:
        """Offer Explain once the drawing is answered by a task whose answers it explains;
        for one whose answers it does not, the button's tip and the explanation say why."""
        prediction = self.prediction
        not_explained = views_for(prediction.task).not_explained if prediction else ""
        self.explain_button.setEnabled(prediction is not None and not not_explained)
        self.explain_button.setToolTip(not_explained or EXPLAIN_TIP)
        if not_explained:
            self.explain_view.decline(not_explained)
