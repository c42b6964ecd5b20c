"""Each task's widgets, by task name: the one place a new task's views are registered."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QWidget

from studio.core.inference.predictor import Prediction
from studio.gui.tasks.classification import ClassificationViews
from studio.gui.tasks.regression import RegressionViews


class TaskViews(Protocol):
    """What the window draws differently for each task."""

    def answer_widget(self, prediction: Prediction) -> QWidget:
        """A readable answer of the model, for a Try card."""


VIEWS: dict[str, TaskViews] = {"classification": ClassificationViews(),
                               "regression": RegressionViews()}


def views_for(task: str) -> TaskViews:
    """The widgets of ``task`` (a name from ``studio.core.tasks.registry``)."""
    return VIEWS[task]
