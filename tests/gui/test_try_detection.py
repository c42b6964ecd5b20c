"""Trying a detector: an image dropped on the Try tab is drawn with its boxes, class names and
scores, and the card's sliders decode the boxes again without running the model."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from studio.core.inference.batch import image_files
from studio.core.inference.predictor import Predictor
from studio.core.project.document import load_project
from studio.core.runs import folders as runs
from studio.gui.shell.app import create_application
from studio.gui.shell.main_window import MainWindow
from studio.gui.tasks.detection import DetectionAnswer
from studio.gui.tasks.registry import views_for
from tests.gui.support import RUN_TIMEOUT_MS, copied_run, drop_on, runs_of


@pytest.fixture
def window(qtbot, dialogs, detection_run):
    """The main window on the detection run's project, with the run among its runs."""
    create_application()
    win = MainWindow(load_project(detection_run / runs.PROJECT_FILE))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    copied_run(detection_run, runs_of(win))
    return win


@pytest.fixture
def model_calls(monkeypatch) -> list[int]:
    """The sizes of the batches any predictor runs its model on."""
    calls: list[int] = []
    outputs = Predictor.outputs
    monkeypatch.setattr(Predictor, "outputs",
                        lambda self, x: calls.append(len(x)) or outputs(self, x))
    return calls


def test_a_dropped_image_shows_its_boxes_and_the_slider_redraws_them_without_the_model(
        window, qtbot, detection_run, model_calls):
    image = image_files(detection_run.parent.parent / "digits")[0]
    panel = window.try_panel
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        assert drop_on(panel, [image])
    (prediction,) = answered.args[0]
    (card,) = panel.cards
    answer = card.answer
    assert isinstance(answer, DetectionAnswer)
    found = len(prediction.boxes)
    assert found >= 2
    assert answer.summary.text() == f"{found} boxes"
    assert answer.picture.boxes == prediction.boxes
    assert answer.picture.labels == prediction.labels
    assert answer.score_value.text() == "0.05"
    calls = len(model_calls)
    assert calls >= 1
    # A model trained for one epoch scores its boxes about 0.1 (the head's prior): the
    # threshold moved from 0.05 to 0.10 keeps only some of them
    for _ in range(5):
        qtbot.keyClick(answer.score_slider, Qt.Key.Key_Right)
    assert answer.score_value.text() == "0.10"
    kept = len(answer.picture.boxes)
    assert 0 < kept < found
    assert answer.summary.text() == f"{kept} boxes"
    assert min(answer.picture.scores) >= 0.1
    assert len(model_calls) == calls
    cells = views_for("detection").table_cells(prediction)
    first = ", ".join(f"{label} ({p:.2f})" for label, p in
                      zip(prediction.labels[:3], prediction.probabilities[:3], strict=True))
    assert cells.answer == f"{found} boxes: {first}, …"
    assert cells.sort_confidence == prediction.probabilities[0]
