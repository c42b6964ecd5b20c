"""The Try view's Example tab: one example typed for a model trained on a table (a field per
column) or on texts (a text box)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.inference.predictor import Prediction, Predictor

Request = Callable[[Predictor], list[Prediction]]


class ExampleForm(QWidget):
    """The fields of the loaded model's example; ``asked`` when Predict is pressed."""

    asked = Signal()
    """The person asked for the typed example to be answered."""

    def __init__(self) -> None:
        super().__init__()
        self.form_box = QVBoxLayout(self)
        self.form_page: QWidget | None = None
        self.form_fields: dict[str, QLineEdit] = {}
        self.text_box: QPlainTextEdit | None = None

    def show_for(self, predictor: Predictor | None) -> str:
        """Show the fields ``predictor``'s model reads; its kind (``image`` shows none)."""
        kind = predictor.kind if predictor is not None else "image"
        if self.form_page is not None:
            self.form_page.deleteLater()
        self.form_page, self.form_fields, self.text_box = QWidget(), {}, None
        form = QFormLayout(self.form_page)
        if kind == "table":
            for column in predictor.prep["columns"]:
                box = QLineEdit()
                box.setPlaceholderText("empty: the training mean")
                self.form_fields[column] = box
                form.addRow(column, box)
        elif kind == "text":
            self.text_box = QPlainTextEdit()
            self.text_box.setPlaceholderText("Type a text to classify")
            form.addRow(self.text_box)
        predict = QPushButton("Predict")
        predict.setObjectName("try-predict")
        predict.setToolTip("Answer the example typed above (Ctrl+Return)")
        predict.setShortcut("Ctrl+Return")
        predict.clicked.connect(self.asked)
        form.addRow(predict)
        self.form_box.addWidget(self.form_page)
        return kind

    def request(self, top_k: int) -> Request:
        """The request answering the typed example with the ``top_k`` likeliest classes."""
        if self.text_box is not None:
            text = self.text_box.toPlainText()
            return lambda p: p.predict_texts([text], top_k)
        row = {name: box.text() for name, box in self.form_fields.items()}
        return lambda p: p.predict_rows([row], top_k)
