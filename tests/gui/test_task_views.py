"""A Try card draws the answer as its task's views say, and a new task's views plug in with
one registration."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from studio.core.inference.predictor import Prediction
from studio.gui.inference.result_card import ResultCard
from studio.gui.tasks.classification import ProbabilityBars
from studio.gui.tasks.registry import VIEWS


def card(qtbot, prediction: Prediction) -> ResultCard:
    shown = ResultCard(prediction)
    qtbot.addWidget(shown)
    return shown


def test_each_task_draws_its_answer(qtbot):
    classified = card(qtbot, Prediction("a.png", labels=["dog", "cat"],
                                        probabilities=[0.75, 0.25], task="classification"))
    assert isinstance(classified.answer, ProbabilityBars)
    assert classified.answer.labels == ["dog", "cat"]
    valued = card(qtbot, Prediction("b.png", value=[1.5, 20.25], task="regression"))
    assert isinstance(valued.answer, QLabel)
    assert valued.answer.text() == "Predicted value: 1.5, 20.25"
    unreadable = card(qtbot, Prediction("c.png", error="not an image"))
    assert unreadable.answer is None


class CountingViews:
    def answer_widget(self, prediction: Prediction) -> QLabel:
        return QLabel(f"{prediction.value[0]:.0f} things")


def test_a_new_tasks_views_plug_in_with_their_registration(qtbot, monkeypatch):
    monkeypatch.setitem(VIEWS, "counting", CountingViews())
    counted = card(qtbot, Prediction("d.png", value=[3.0], task="counting"))
    assert counted.answer.text() == "3 things"
