"""The Evaluate tab on a detection run: the mAPs, the per-class AP table and precision-recall
curves, and a class's false positives and missed boxes drawn on its images when it is
clicked in the table or the curves' legend."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QPoint, Qt

from studio.core.tasks.detection.evaluation import ap_text
from studio.gui.tasks.detection_evaluation import CLASS_ROLE, MISTAKES_ROLE
from tests.gui.support import RUN_TIMEOUT_MS, names_stretch
from tests.gui.test_evaluation_panel import evaluate, shown_panel

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def panel(qtbot, detection_run):
    """The Evaluate view offering the session's detection run (evaluating it writes nothing
    to it; a copy would lose its data, which the snapshot names relative to the run), at the
    size it has in a 1280 x 720 window."""
    yield from shown_panel(qtbot, detection_run, 1280, 680)


def gallery_mistakes(qtbot, gallery) -> list:
    """The mistakes of every image the gallery shows, once it has them all."""
    qtbot.waitUntil(lambda: gallery.pending() == 0 and gallery.count() > 0)
    return [gallery.item(i).data(MISTAKES_ROLE) for i in range(gallery.count())]


def test_a_detectors_evaluation_shows_its_maps_curves_and_a_classs_mistakes(qtbot, panel):
    evaluation = evaluate(qtbot, panel)
    view = panel.task_views["detection"]
    scores = evaluation.scores
    assert view.isVisible() and panel.results.isHidden() and panel.empty.isHidden()
    headline = view.headline.text()
    assert f"{ap_text(scores.map50)}</span>&nbsp; mAP@0.5" in headline
    assert f"{ap_text(scores.map)}</span>&nbsp; mAP@[0.5:0.95]" in headline
    assert "4</b> validation images" in headline
    table = view.table
    model = table.model()
    assert model.rowCount() == 10 and names_stretch(table)
    shown = {model.index(r, 0).data(): (model.index(r, 1).data(), model.index(r, 2).data())
             for r in range(10)}
    assert shown == {name: (ap_text(scores.class_ap50[k]), ap_text(scores.class_ap[k]))
                     for k, name in enumerate(evaluation.class_names)}
    assert len(view.curves) == 10 and len(view.legend.items) == 10

    # the class with the most mistakes, clicked in the table
    k = max(range(10), key=lambda c: len(scores.mistakes[c].false_positive_boxes)
            + 10 * len(scores.mistakes[c].missed_boxes))
    row = next(r for r in range(10) if model.index(r, 0).data(CLASS_ROLE) == k)
    table.scrollTo(model.index(row, 1))
    with qtbot.waitSignal(view.class_chosen) as chosen:
        qtbot.mouseClick(table.viewport(), LEFT,
                         pos=table.visualRect(model.index(row, 1)).center())
    assert chosen.args == [k]
    mistakes = gallery_mistakes(qtbot, view.gallery)
    expected = scores.mistakes[k]
    assert sum(len(m.false_positives) for m in mistakes) == len(expected.false_positive_boxes)
    assert sum(len(m.missed) for m in mistakes) == len(expected.missed_boxes)
    assert {m.position for m in mistakes} == (set(expected.false_positive_images.tolist())
                                              | set(expected.missed_images.tolist()))
    assert view.caption.text().startswith(f"“{evaluation.class_names[k]}”: ")
    assert not view.gallery.item(0).icon().isNull()
    if os.environ.get("SHOT"):
        panel.grab().save(os.environ["SHOT"])

    # another class, clicked in the curves' legend under the plot
    other = (k + 1) % 10
    sample = view.legend.items[other][0]
    at = view.plot.mapFromScene(sample.mapToScene(sample.boundingRect().center()))
    with qtbot.waitSignal(view.class_chosen, timeout=RUN_TIMEOUT_MS) as chosen:
        qtbot.mouseClick(view.plot.viewport(), LEFT, pos=QPoint(at.x(), at.y()))
    assert chosen.args == [other] and view.curves[other].isVisible()
    assert table.currentIndex().data(CLASS_ROLE) == other
    expected = scores.mistakes[other]
    mistakes = gallery_mistakes(qtbot, view.gallery)
    assert sum(len(m.false_positives) for m in mistakes) == len(expected.false_positive_boxes)
    assert sum(len(m.missed) for m in mistakes) == len(expected.missed_boxes)
