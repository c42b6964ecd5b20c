"""A segmenter from start to answer, as a person makes one: the small U-Net template from the
gallery, a segmentation folder picked in the Data tab, one epoch of training with its mean
IoU and loss-part curves, then an image dropped on the window answered with its mask laid over
it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QRadioButton

from studio.core.inference.batch import image_files
from studio.core.inference.mask_files import class_colors
from studio.gui.tasks.segmentation import SegmentationAnswer
from tests.gui.support import RUN_TIMEOUT_MS, drop_on
from tests.gui.test_data_detection_gui import choose_in_popup, pick_folder
from tests.gui.test_template_gallery import open_gallery, pick
from tests.segmentation_runs import demo_folder

LEFT = Qt.MouseButton.LeftButton


def test_a_segmenter_made_from_the_template_trains_on_a_folder_and_lays_masks_over_images(
        window, qtbot, monkeypatch, tmp_path):
    folder = demo_folder(tmp_path / "digits")

    gallery = open_gallery(qtbot, window)
    pick(qtbot, gallery, "small_unet_segmenter")
    qtbot.mouseClick(gallery.open_button, LEFT)
    qtbot.waitUntil(lambda: window.doc.project.name == "Small U-Net (segmentation)")
    # Picked while the template's demo set is still being drawn: the folder replaces it
    data = pick_folder(qtbot, window, monkeypatch, folder, "segmentation", read_first=False)
    choose_in_popup(qtbot, data.options.color, "grayscale")  # grey digits, as the input is
    qtbot.waitUntil(lambda: window.doc.analysis().ok)
    assert window.doc.dataset().num_classes == 11

    panel = window.training
    panel.epochs.selectAll()
    qtbot.keyClicks(panel.epochs, "1")
    qtbot.keyClick(panel.epochs, Qt.Key.Key_Return)
    assert window.doc.project.training.epochs == 1
    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(panel.start_button, LEFT)
    assert ended.args == ["finished"], panel.status.text()
    # The curves drew the run's mean IoU and its loss's cross-entropy and Dice parts
    assert {"loss", "score", "parts"} <= set(panel.curves.plots)
    assert len(panel.curves.series["val_score"].x) == 1
    assert all(len(panel.curves.series[f"part_train_{metric}"].x) == 1
               for metric in ("cross_entropy_loss", "dice_loss"))
    assert "val mean IoU" in panel.result

    try_panel = window.try_panel
    image = image_files(folder)[0]
    with qtbot.waitSignal(try_panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        assert drop_on(window.canvas.viewport(), [image])  # the window shows the Try tab
    assert window.views.currentWidget() is try_panel
    (prediction,) = answered.args[0]
    assert prediction.error is None and prediction.task == "segmentation"
    assert prediction.mask.shape == (64, 64)  # in the image's own pixels
    assert Path(panel.run_dir).name in try_panel.status.text()  # the run just trained
    (card,) = try_panel.cards
    answer = card.answer
    assert isinstance(answer, SegmentationAnswer)
    # The mask alone, as the picture paints it: each pixel its class's colour
    mask_button = answer.findChild(QRadioButton, "mask")
    mask_button.setFocus()
    qtbot.keyClick(mask_button, Qt.Key.Key_Space)
    assert answer.mode == "mask"
    shot, area = answer.picture.grab().toImage(), answer.picture.picture_area()
    colors = class_colors(prediction.class_names)
    for row, col in ((8, 8), (32, 32), (56, 40)):
        x = int(area.left() + (col + 0.5) * area.width() / 64)
        y = int(area.top() + (row + 0.5) * area.height() / 64)
        painted = np.array(shot.pixelColor(x, y).getRgb()[:3])
        assert np.abs(painted - colors[prediction.mask[row, col]][:3]).max() <= 3
