"""One answered input: its thumbnail, the answer as its task draws it (the top classes as
bars, a value, ...) and the time it took; or, for an input that could not be read, why."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from studio.core.inference.predictor import Prediction
from studio.gui.tasks.registry import views_for
from studio.gui.widgets.images import array_pixmap

THUMBNAIL = 96
"""The thumbnail's side in pixels."""
ERROR_STYLE = "color: #b3261e;"
SELECTED_STYLE = "ResultCard { border: 2px solid #1a73e8; border-radius: 6px; background: white; }"
PLAIN_STYLE = "ResultCard { border: 1px solid #dadce0; border-radius: 6px; background: white; }"


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
        views = None if prediction.error else views_for(prediction.task)
        self.thumbnail: QLabel | None = None
        """The image, small; None where the answer draws the image itself."""
        if views is None or not views.shows_image:
            self.thumbnail = _thumbnail(prediction)
            layout.addWidget(self.thumbnail)
        column = QVBoxLayout()
        self.title = QLabel(f"<b>{_name(prediction.source)}</b>")
        self.title.setToolTip(prediction.source)
        column.addWidget(self.title)
        self.answer: QWidget | None = None
        """The answer as the task draws it; None for an input that could not be read."""
        if prediction.error:
            detail = QLabel(prediction.error)
            detail.setStyleSheet(ERROR_STYLE)
            detail.setWordWrap(True)
            column.addWidget(detail)
        else:
            self.answer = views.answer_widget(prediction)
            column.addWidget(self.answer)
        self.time = QLabel(f"{prediction.seconds * 1000:.0f} ms")
        self.time.setToolTip("Time to read, prepare and answer this input")
        self.time.setStyleSheet("color: #5f6368;")
        column.addWidget(self.time)
        self.tools = QHBoxLayout()
        """What acts on the card's input (``add_tool``)."""
        column.addLayout(self.tools)
        column.addStretch(1)
        layout.addLayout(column, 1)

    def add_tool(self, widget: QWidget) -> None:
        """Put ``widget`` (something acting on the card's input) under the answer."""
        self.tools.addWidget(widget, 0, Qt.AlignmentFlag.AlignLeft)

    def set_selected(self, selected: bool) -> None:
        """Draw the card as the chosen one, or not. Only a change restyles it: a style sheet
        polishes every widget in the card again, which each new card would otherwise cost
        every card kept (a segmentation's answer holds a dozen widgets)."""
        style = SELECTED_STYLE if selected else PLAIN_STYLE
        if self.styleSheet() != style:
            self.setStyleSheet(style)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self)
        super().mousePressEvent(event)


def _thumbnail(prediction: Prediction) -> QLabel:
    """The answered image at most THUMBNAIL a side ("no image" for one not read)."""
    label = QLabel()
    label.setFixedSize(THUMBNAIL, THUMBNAIL)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setStyleSheet("background: #f8f9fa;")
    if prediction.thumbnail is not None:
        label.setPixmap(array_pixmap(prediction.thumbnail).scaled(
            THUMBNAIL, THUMBNAIL, Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation))
    else:
        label.setText("no image" if prediction.error else "")
    return label


def _name(source: str) -> str:
    return source.replace("\\", "/").rsplit("/", 1)[-1] or source
