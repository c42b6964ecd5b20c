"""A segmenter from start to answer, as a person makes one: the small U-Net template from the
gallery, a segmentation folder picked in the Data tab, one epoch of training with its mean
IoU and loss-part curves, then an image dropped on the window answered with its mask laid over
it."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QRadioButton

from studio.core.inference.mask_files import class_colors
from studio.gui.tasks.segmentation import SegmentationAnswer
from tests.gui.workflow import answered_on_drop, curves_drawn, trained_from_template
from tests.segmentation_runs import demo_folder


def test_a_segmenter_made_from_the_template_trains_on_a_folder_and_lays_masks_over_images(
        window, qtbot, monkeypatch, tmp_path):
    folder = demo_folder(tmp_path / "digits")
    panel = trained_from_template(qtbot, window, monkeypatch, "small_unet_segmenter",
                                  "Small U-Net (segmentation)", folder, "segmentation", 11)
    curves_drawn(panel, ("cross_entropy_loss", "dice_loss"))
    assert "val mean IoU" in panel.result

    prediction, card = answered_on_drop(qtbot, window, folder, "segmentation")
    assert prediction.mask.shape == (64, 64)  # in the image's own pixels
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
