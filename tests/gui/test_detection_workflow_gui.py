"""A detector from start to answer, as a person makes one: the small-detector template from
the gallery, a detection folder picked in the Data tab, one epoch of training with its mAP and
loss-part curves, then an image dropped on the Try tab answered with boxes drawn on it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from studio.core.data.detection import demo
from studio.core.inference.batch import image_files
from studio.gui.tasks.detection import DetectionAnswer
from tests.gui.support import RUN_TIMEOUT_MS, drop_on
from tests.gui.test_data_detection_gui import choose_in_popup, pick_detection_folder
from tests.gui.test_template_gallery import open_gallery, pick

LEFT = Qt.MouseButton.LeftButton


def test_a_detector_made_from_the_template_trains_on_a_folder_and_draws_boxes(
        window, qtbot, monkeypatch, tmp_path):
    folder = tmp_path / "digits"
    demo.write_demo(folder, "yolo", demo.generate(train=8, validation=4))

    gallery = open_gallery(qtbot, window)
    pick(qtbot, gallery, "small_detector")
    qtbot.mouseClick(gallery.open_button, LEFT)
    qtbot.waitUntil(lambda: window.doc.project.name == "Small detector (from scratch)")
    # Picked while the template's demo set (4,500 images drawn on first use) is still being
    # drawn: the folder's reading replaces that one, as it does for a person who does not wait
    data = pick_detection_folder(qtbot, window, monkeypatch, folder, read_first=False)
    choose_in_popup(qtbot, data.options.color, "grayscale")  # grey digits, as the input is
    qtbot.waitUntil(lambda: window.doc.analysis().ok)
    assert window.doc.dataset().num_classes == 10

    panel = window.training
    panel.epochs.selectAll()
    qtbot.keyClicks(panel.epochs, "1")
    qtbot.keyClick(panel.epochs, Qt.Key.Key_Return)
    assert window.doc.project.training.epochs == 1
    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(panel.start_button, LEFT)
    assert ended.args == ["finished"], panel.status.text()
    # The curves drew the run's validation mAP@0.5 and its loss's parts
    assert set(panel.curves.plots) == {"loss", "score", "parts", "learning_rate"}
    assert len(panel.curves.series["val_score"].x) == 1
    assert all(len(panel.curves.series[f"part_train_{metric}"].x) == 1
               for metric in ("heatmap_loss", "size_loss", "offset_loss"))
    assert "val mAP@0.5" in panel.result

    try_panel = window.try_panel
    image = image_files(folder)[0]
    with qtbot.waitSignal(try_panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        assert drop_on(window.canvas.viewport(), [image])  # the window shows the Try tab
    assert window.views.currentWidget() is try_panel
    (prediction,) = answered.args[0]
    assert prediction.error is None and prediction.task == "detection"
    assert Path(panel.run_dir).name in try_panel.status.text()  # the run just trained
    (card,) = try_panel.cards
    answer = card.answer
    assert isinstance(answer, DetectionAnswer)
    # One epoch leaves its scores low: the Score slider, pulled to its lowest, shows the boxes
    answer.score_slider.setFocus()
    qtbot.keyClick(answer.score_slider, Qt.Key.Key_Home)
    qtbot.waitUntil(lambda: len(answer.picture.boxes) > 0)
    assert answer.summary.text() == f"{len(answer.picture.boxes)} boxes"
    assert len(answer.picture.labels) == len(answer.picture.boxes)
