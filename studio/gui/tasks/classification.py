"""How a classification's answer is drawn: the likeliest classes as bars."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from studio.core.inference.predictor import Prediction
from studio.gui.tasks.views import AnswerCells

BAR_HEIGHT = 18
TOP_COLOR = QColor("#1a73e8")
OTHER_COLOR = QColor("#8ab4f8")
TRACK_COLOR = QColor("#f1f3f4")
TEXT_COLOR = QColor("#202124")


class ProbabilityBars(QWidget):
    """Horizontal bars, one per class, best first: the name, a bar as long as the
    probability and the percentage (painted directly: fast enough to draw within a drop)."""

    def __init__(self, labels: Sequence[str], probabilities: Sequence[float]) -> None:
        super().__init__()
        self.labels = list(labels)
        self.probabilities = [float(p) for p in probabilities]
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(220)
        self.setToolTip("The classes the model finds most likely, with its probability for each")

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(320, max(1, len(self.labels)) * (BAR_HEIGHT + 4))

    minimumSizeHint = sizeHint

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = QFontMetrics(self.font())
        name_width = min(max((metrics.horizontalAdvance(n) for n in self.labels), default=0) + 8,
                         self.width() // 3)
        percent_width = metrics.horizontalAdvance("100.0%") + 6
        track = max(10, self.width() - name_width - percent_width)
        for row, (name, p) in enumerate(zip(self.labels, self.probabilities, strict=True)):
            top = row * (BAR_HEIGHT + 4)
            painter.setPen(TEXT_COLOR)
            shown = metrics.elidedText(name, Qt.TextElideMode.ElideRight, name_width - 8)
            painter.drawText(QRectF(0, top, name_width - 6, BAR_HEIGHT),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, shown)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(TRACK_COLOR)
            painter.drawRoundedRect(QRectF(name_width, top + 2, track, BAR_HEIGHT - 4), 3, 3)
            painter.setBrush(TOP_COLOR if row == 0 else OTHER_COLOR)
            painter.drawRoundedRect(QRectF(name_width, top + 2, track * max(0.0, min(p, 1.0)),
                                           BAR_HEIGHT - 4), 3, 3)
            painter.setPen(TEXT_COLOR)
            painter.drawText(QRectF(name_width + track + 4, top, percent_width, BAR_HEIGHT),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                             f"{p * 100:.1f}%")
        painter.end()



class ClassificationViews:
    """The classification task's widgets."""

    shows_image = False
    not_explained = ""

    def answer_widget(self, prediction: Prediction, replacing: QWidget | None = None
                      ) -> QWidget:
        """The top classes of ``prediction`` as bars with their probabilities."""
        return ProbabilityBars(prediction.labels, prediction.probabilities)

    def table_cells(self, prediction: Prediction) -> AnswerCells:
        """The top class, its probability and the two after it."""
        labels, probabilities = prediction.labels, prediction.probabilities
        if not labels:
            return AnswerCells()
        return AnswerCells(
            labels[0], f"{probabilities[0] * 100:.1f}%",
            ", ".join(f"{label} {p * 100:.1f}%"
                      for label, p in zip(labels[1:3], probabilities[1:3], strict=True)),
            probabilities[0])

    def evaluation_view(self) -> None:
        """None: the Evaluate tab's own class scores show a classifier's evaluation."""
        return None
