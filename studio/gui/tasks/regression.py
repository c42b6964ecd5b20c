"""How a regression's answer is drawn: the predicted values."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from studio.core.inference.predictor import Prediction
from studio.gui.tasks.views import AnswerCells


class RegressionViews:
    """The regression task's widgets."""

    shows_image = False
    not_explained = ""

    def answer_widget(self, prediction: Prediction, replacing: QWidget | None = None
                      ) -> QWidget:
        """The values ``prediction`` holds."""
        return QLabel("Predicted value: " + ", ".join(f"{v:.4g}" for v in prediction.value or ()))

    def table_cells(self, prediction: Prediction) -> AnswerCells:
        """The predicted values."""
        return AnswerCells(", ".join(f"{v:.4g}" for v in prediction.value or ()))

    def evaluation_view(self) -> None:
        """None: a regression run is not evaluated there."""
        return None
