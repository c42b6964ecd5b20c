"""The Evaluate tab on a segmentation run: the mean IoU and pixel accuracy, each class's IoU
and Dice in a sortable table, the pixel confusion matrix as each row's shares, and the images
of lowest IoU with the model's mask and the true mask drawn over them."""

from __future__ import annotations

import os

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from studio.core.inference.mask_files import class_colors
from studio.core.tasks.segmentation.evaluation import percent_text
from studio.gui.tasks.mask_drawing import DEFAULT_OPACITY
from studio.gui.tasks.segmentation_evaluation import GAP, POSITION_ROLE, SIDE
from tests.gui.support import names_stretch
from tests.gui.test_evaluation_panel import evaluate, shown_panel

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def panel(qtbot, trained_segmenter):
    """The Evaluate view offering the session's segmentation run (evaluating writes nothing
    to it), at the size it has in a 1280 x 720 window."""
    yield from shown_panel(qtbot, trained_segmenter, 1280, 680)


def painted(picture, x: int, y: int) -> np.ndarray:
    color = picture.pixelColor(x, y)
    return np.array([color.red(), color.green(), color.blue()], np.float64)


def section_middle(header, section: int) -> QPoint:
    """The middle of a heading's section, in its viewport."""
    return QPoint(header.sectionViewportPosition(section) + header.sectionSize(section) // 2,
                  header.height() // 2)


def test_a_segmentations_evaluation_shows_its_classes_matrix_and_worst_images(qtbot, panel):
    evaluation = evaluate(qtbot, panel)
    view = panel.task_views["segmentation"]
    assert view.isVisible() and panel.results.isHidden()
    headline = view.headline.text()
    assert f"{percent_text(evaluation.mean_iou)}</span>&nbsp; mean IoU" in headline
    assert f"{percent_text(evaluation.pixel_accuracy)}</span>&nbsp; pixel accuracy" in headline
    assert "4</b> validation images" in headline

    # the per-class table, sorted by IoU with a click on its heading
    table, model = view.table, view.table.model()
    assert model.rowCount() == 11
    shown = {model.index(r, 0).data(): (model.index(r, 1).data(), model.index(r, 2).data())
             for r in range(11)}
    assert shown == {name: (percent_text(evaluation.iou[k]), percent_text(evaluation.dice[k]))
                     for k, name in enumerate(evaluation.class_names)}
    header = table.horizontalHeader()
    assert names_stretch(table)
    qtbot.mouseClick(header.viewport(), LEFT, pos=section_middle(header, 1))
    ious = np.nan_to_num(evaluation.iou, nan=-1.0)
    order = [model.index(r, 0).data() for r in range(11)]
    assert [ious[evaluation.class_names.index(n)] for n in order] in (
        sorted(ious.tolist()), sorted(ious.tolist(), reverse=True))

    # the pixel confusion matrix: true rows, answered columns, each row's shares
    matrix = view.confusion.model()
    assert (matrix.rowCount(), matrix.columnCount()) == (11, 11)
    assert view.confusion.isVisible()
    row = int(np.argmax(evaluation.confusion.sum(axis=1)))
    column = int(np.argmax(evaluation.confusion[row]))
    share = evaluation.confusion[row, column] / evaluation.confusion[row].sum()
    assert matrix.index(row, column).data() == f"{share:.0%}"
    assert matrix.headerData(row, Qt.Orientation.Vertical).endswith(
        evaluation.class_names[row])
    assert " pixels (" in matrix.index(row, column).data(Qt.ItemDataRole.ToolTipRole)

    # the lowest-IoU images, the worst first, each its answer beside its truth
    gallery = view.gallery
    qtbot.waitUntil(lambda: gallery.pending() == 0 and gallery.count() > 0)
    positions = [gallery.item(i).data(POSITION_ROLE) for i in range(gallery.count())]
    assert positions == evaluation.lowest_iou(len(positions)).tolist()
    worst = positions[0]
    assert gallery.item(0).text() == f"#{worst + 1}: IoU " \
        f"{percent_text(evaluation.image_iou[worst])}"
    if os.environ.get("SHOT"):
        panel.grab().save(os.environ["SHOT"])
    # each answered pixel's colour laid over the image at the overlay's opacity: the true
    # mask's picture beside it shows the image itself where the truth is background (clear)
    picture = gallery.item(0).icon().pixmap(gallery.iconSize()).toImage()
    true, answered = evaluation.masks(worst)  # squashed to 16 x 16 from the 64 x 64 image
    colors = class_colors(evaluation.class_names).astype(np.float64)
    opacity = DEFAULT_OPACITY / 100
    cell = SIDE / true.shape[0]  # the picture's pixels per mask pixel
    checked = 0
    for (r, c), k in np.ndenumerate(answered):
        x, y = int((c + 0.5) * cell), int((r + 0.5) * cell)
        beside = painted(picture, x + SIDE + GAP, y)
        if true[r, c] == 0 and k != 0:
            expected = (1 - opacity) * beside + opacity * colors[k]
            assert np.abs(painted(picture, x, y) - expected).max() <= 3
            checked += 1
        elif true[r, c] == k:
            assert np.abs(painted(picture, x, y) - beside).max() <= 1
    assert checked

