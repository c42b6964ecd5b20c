"""A detector from start to answer, as a person makes one: the small-detector template from
the gallery, a detection folder picked in the Data tab, one epoch of training with its mAP and
loss-part curves, then an image dropped on the Try tab answered with boxes drawn on it."""

from __future__ import annotations

from PySide6.QtCore import Qt

from studio.core.data.detection import demo
from studio.core.tasks.detection.labels import BoxLabels
from studio.gui.tasks.detection import DetectionAnswer
from tests.gui.workflow import answered_on_drop, curves_drawn, trained_from_template


def test_a_detector_made_from_the_template_trains_on_a_folder_and_draws_boxes(
        window, qtbot, monkeypatch, tmp_path):
    folder = tmp_path / "digits"
    demo.write_demo(folder, "yolo", demo.generate(train=8, validation=4))
    panel = trained_from_template(qtbot, window, monkeypatch, "small_detector",
                                  "Small detector (from scratch)", folder, "detection", 10)
    assert isinstance(window.data_panel.loaded.labels, BoxLabels)
    curves_drawn(panel, ("heatmap_loss", "size_loss", "offset_loss"))
    assert "val mAP@0.5" in panel.result

    _, card = answered_on_drop(qtbot, window, folder, "detection")
    answer = card.answer
    assert isinstance(answer, DetectionAnswer)
    # One epoch leaves its scores low: the Score slider, pulled to its lowest, shows the boxes
    answer.score_slider.setFocus()
    qtbot.keyClick(answer.score_slider, Qt.Key.Key_Home)
    qtbot.waitUntil(lambda: len(answer.picture.boxes) > 0)
    assert answer.summary.text() == f"{len(answer.picture.boxes)} boxes"
    assert len(answer.picture.labels) == len(answer.picture.boxes)
