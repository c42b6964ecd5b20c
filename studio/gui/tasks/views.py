"""What each task's views draw: the interface every task's views module implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtWidgets import QWidget

from studio.core.inference.predictor import Prediction


@dataclass(frozen=True)
class AnswerCells:
    """An answer as a row of the Try tab's folder table."""

    answer: str = ""
    confidence: str = ""
    next_best: str = ""
    sort_confidence: float = -1.0
    """How the confidence column sorts (-1 where there is none)."""


class EvaluationView(Protocol):
    """A widget showing a task's evaluations in the Evaluate tab."""

    def show_evaluation(self, evaluation: Any, what: str) -> str:
        """Show ``evaluation`` (the task's, of the model ``what`` describes) in place of any
        before; a one-line summary for the status bar back."""


class TaskViews(Protocol):
    """What the window draws differently for each task."""

    shows_image: bool
    """Whether ``answer_widget`` draws the image itself (a detector's boxes on it), so a Try
    card shows no thumbnail beside it."""
    not_explained: str
    """Why the Try view draws no explanation (a heat map of where the model looked) for this
    task's answers, in words for the person; empty where it draws one."""

    def answer_widget(self, prediction: Prediction, replacing: QWidget | None = None
                      ) -> QWidget:
        """A readable answer of the model, for a Try card; ``replacing``: the answer it takes
        the place of (the drawing pad's, at each stroke), whose settings it keeps."""

    def table_cells(self, prediction: Prediction) -> AnswerCells:
        """The answer as cells of the folder table."""

    def evaluation_view(self) -> EvaluationView | None:
        """A new widget showing this task's evaluations, or None where the Evaluate tab's own
        class scores (accuracy, confusion matrix) show them, or the task has none."""
