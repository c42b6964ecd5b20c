"""One answered input: its thumbnail, the top classes as bars with probabilities, and the time
it took; or, for an input that could not be read, why."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from studio.core.inference.predictor import Prediction
from studio.gui.widgets.images import array_pixmap

THUMBNAIL = 96
"""The thumbnail's side in pixels."""
BAR_HEIGHT = 18
TOP_COLOR = QColor("#1a73e8")
OTHER_COLOR = QColor("#8ab4f8")
TRACK_COLOR = QColor("#f1f3f4")
TEXT_COLOR = QColor("#202124")
ERROR_STYLE = "color: #b3261e;"
SELECTED_STYLE = "ResultCard { border: 2px solid #1a73e8; border-radius: 6px; background: white; }"
PLAIN_STYLE = "ResultCard { border: 1px solid #dadce0; border-radius: 6px; background: white; }"


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


class ResultCard(QFrame):
    """A prediction as a card; clicking it selects it (to see why the model answered so)."""

    clicked = Signal(object)
    """The card was clicked; the argument is the card."""

    def __init__(self, prediction: Prediction) -> None:
        super().__init__()
        self.prediction = prediction
        self.setObjectName("result-card")
        self.setStyleSheet(PLAIN_STYLE)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        self.thumbnail = QLabel()
        self.thumbnail.setFixedSize(THUMBNAIL, THUMBNAIL)
        self.thumbnail.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.thumbnail.setStyleSheet("background: #f8f9fa;")
        if prediction.thumbnail is not None:
            self.thumbnail.setPixmap(array_pixmap(prediction.thumbnail).scaled(
                THUMBNAIL, THUMBNAIL, Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation))
        else:
            self.thumbnail.setText("no image" if prediction.error else "")
        layout.addWidget(self.thumbnail)
        column = QVBoxLayout()
        self.title = QLabel(f"<b>{_name(prediction.source)}</b>")
        self.title.setToolTip(prediction.source)
        column.addWidget(self.title)
        self.bars: ProbabilityBars | None = None
        if prediction.error:
            detail = QLabel(prediction.error)
            detail.setStyleSheet(ERROR_STYLE)
            detail.setWordWrap(True)
            column.addWidget(detail)
        elif prediction.value is not None:
            column.addWidget(QLabel("Predicted value: " + ", ".join(
                f"{v:.4g}" for v in prediction.value)))
        else:
            self.bars = ProbabilityBars(prediction.labels, prediction.probabilities)
            column.addWidget(self.bars)
        self.time = QLabel(f"{prediction.seconds * 1000:.0f} ms")
        self.time.setToolTip("Time to read, prepare and answer this input")
        self.time.setStyleSheet("color: #5f6368;")
        column.addWidget(self.time)
        column.addStretch(1)
        layout.addLayout(column, 1)

    def set_selected(self, selected: bool) -> None:
        """Draw the card as the chosen one, or not."""
        self.setStyleSheet(SELECTED_STYLE if selected else PLAIN_STYLE)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self)
        super().mousePressEvent(event)


def _name(source: str) -> str:
    return source.replace("\\", "/").rsplit("/", 1)[-1] or source
