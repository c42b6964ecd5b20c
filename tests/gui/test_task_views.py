"""A Try card and the folder table draw an answer as its task's views say, and a new task's
views plug in with one registration."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QLabel, QWidget

from studio.core.inference.predictor import Prediction
from studio.gui.inference.prediction_table import COLUMNS, PredictionTableModel
from studio.gui.inference.result_card import ResultCard
from studio.gui.tasks.classification import ProbabilityBars
from studio.gui.tasks.detection import DetectionAnswer
from studio.gui.tasks.registry import VIEWS
from studio.gui.tasks.segmentation import SegmentationAnswer
from studio.gui.tasks.views import AnswerCells


def card(qtbot, prediction: Prediction) -> ResultCard:
    shown = ResultCard(prediction)
    qtbot.addWidget(shown)
    return shown


def test_each_task_draws_its_answer(qtbot):
    classified = card(qtbot, Prediction("a.png", labels=["dog", "cat"],
                                        probabilities=[0.75, 0.25], task="classification"))
    assert isinstance(classified.answer, ProbabilityBars)
    assert classified.answer.labels == ["dog", "cat"]
    assert classified.thumbnail is not None
    valued = card(qtbot, Prediction("b.png", value=[1.5, 20.25], task="regression"))
    assert isinstance(valued.answer, QLabel)
    assert valued.answer.text() == "Predicted value: 1.5, 20.25"
    unreadable = card(qtbot, Prediction("c.png", error="not an image"))
    assert unreadable.answer is None
    found = card(qtbot, Prediction("d.png", labels=["7", "1"], probabilities=[0.98, 0.5],
                                   boxes=[[1, 2, 10, 20], [5, 5, 9, 9]], task="detection"))
    assert isinstance(found.answer, DetectionAnswer)
    assert found.answer.picture.boxes == [[1, 2, 10, 20], [5, 5, 9, 9]]
    assert found.answer.summary.text() == "2 boxes"
    assert found.thumbnail is None  # the answer draws the image, with its boxes
    # An answer that kept no head output (read from elsewhere) cannot be decoded again
    assert not found.answer.score_slider.isEnabled()
    mask = np.zeros((4, 6), np.uint8)
    mask[:, 4:] = 1
    segmented = card(qtbot, Prediction("e.png", labels=["0", "1"], areas=[16, 8], mask=mask,
                                       task="segmentation"))
    assert isinstance(segmented.answer, SegmentationAnswer)
    assert segmented.answer.legend.rows == [("0", "66.7% (16 px)"), ("1", "33.3% (8 px)")]
    assert segmented.thumbnail is None  # the answer draws the image, with its mask


def table_row(prediction: Prediction) -> list[str]:
    table = PredictionTableModel()
    table.set_rows([prediction])
    return [table.data(table.index(0, column)) for column in range(len(COLUMNS))]


def test_each_task_fills_the_folder_table(qtbot):
    assert table_row(Prediction("a.png", labels=["dog", "cat", "cow"], seconds=0.002,
                                probabilities=[0.75, 0.2, 0.05], task="classification")
                     ) == ["a.png", "dog", "75.0%", "cat 20.0%, cow 5.0%", "2.0 ms", ""]
    assert table_row(Prediction("b.png", value=[1.5], task="regression"))[1:4] == [
        "1.5", "", ""]
    assert table_row(Prediction("d.png", labels=["7", "1", "7", "3"], task="detection",
                                probabilities=[0.98, 0.91, 0.6, 0.4], boxes=[[0, 0, 1, 1]] * 4)
                     )[1:4] == ["4 boxes: 7 (0.98), 1 (0.91), 7 (0.60), …", "98.0%", ""]
    assert table_row(Prediction("e.png", task="detection"))[1] == "no boxes"
    assert table_row(Prediction("f.png", labels=["background", "cat", "dog"], areas=[6, 3, 1],
                                task="segmentation"))[1:4] == [
        "cat 30.0%", "", "background 60.0%, dog 10.0%"]
    assert table_row(Prediction("c.png", error="not an image"))[1:] == [
        "", "", "", "0.0 ms", "not an image"]


class CountingViews:
    shows_image = False
    not_explained = ""

    def answer_widget(self, prediction: Prediction, replacing: QWidget | None = None
                      ) -> QLabel:
        return QLabel(f"{prediction.value[0]:.0f} things")

    def table_cells(self, prediction: Prediction) -> AnswerCells:
        return AnswerCells(f"{prediction.value[0]:.0f}")

    def evaluation_view(self) -> None:
        return None


def test_a_new_tasks_views_plug_in_with_their_registration(qtbot, monkeypatch):
    monkeypatch.setitem(VIEWS, "counting", CountingViews())
    counted = Prediction("d.png", value=[3.0], task="counting")
    assert card(qtbot, counted).answer.text() == "3 things"
    assert table_row(counted)[1] == "3"
