"""Find learning rate in the Training dock's Optimizer tab: the range test runs in the
background with progress and Cancel, its curve is drawn, and Use sets the rate in one undo
step."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from studio.core.data.sources import describe
from studio.core.hardware.devices import CpuInfo, Devices, StaticDiscovery
from studio.core.training import lr_finder
from studio.gui.training.lr_finder_view import LrFinderView
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.jobs import shutdown_jobs
from tests.helpers import regression_project

CPU = CpuInfo("Test CPU", cores=2, memory_bytes=16 * 2**30, bfloat16=False)


@pytest.fixture
def view(qtbot, tmp_path):
    project = regression_project(tmp_path)
    project.training.optimizer = "sgd"
    project.training.momentum = 0.0
    describe(project.dataset)  # the CSV read here, as the window reads it in the background
    widget = LrFinderView(ProjectDocument(project), StaticDiscovery(Devices(CPU)))
    undo = widget.doc.undo_stack.createUndoAction(widget)
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    undo.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    widget.addAction(undo)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    shutdown_jobs(widget)


def test_find_draws_the_curve_and_use_sets_the_rate_in_one_undo_step(qtbot, view):
    assert not view.use.isVisible() and view.curve is None
    qtbot.mouseClick(view.find, Qt.MouseButton.LeftButton)
    assert view.cancel.isVisible() and not view.find.isEnabled()
    qtbot.waitUntil(lambda: not view.job.busy(), timeout=60_000)
    found = view.finding
    assert found.suggestion is not None, view.status.text()
    rates, losses = view.curve.getData()
    assert len(rates) == len(found.rates) > 10 and list(losses) == found.smoothed
    qtbot.waitUntil(view.plot.isVisible)  # the layout shows a new widget after this event
    assert view.mark.isVisible() and view.mark.value() == pytest.approx(
        math.log10(found.suggestion))
    assert view.use.isVisible() and view.use.text().startswith("Use ")
    shown = float(view.use.text().removeprefix("Use "))
    assert shown == pytest.approx(found.suggestion, rel=0.05)
    edits = view.doc.undo_stack.count()
    qtbot.mouseClick(view.use, Qt.MouseButton.LeftButton)
    assert view.doc.project.training.learning_rate == shown
    assert view.doc.undo_stack.count() == edits + 1 and not view.use.isEnabled()
    qtbot.keyClick(view.find, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert view.doc.project.training.learning_rate == 0.05  # regression_project's
    assert view.use.isEnabled()


def test_cancel_stops_the_test_and_says_so(qtbot, view, gate):
    gate.before(lr_finder, "range_test")  # the data loaded, the model built
    qtbot.mouseClick(view.find, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(gate.reached.is_set, timeout=60_000)
    assert view.cancel.isVisible()
    qtbot.mouseClick(view.cancel, Qt.MouseButton.LeftButton)
    gate.open()
    qtbot.waitUntil(lambda: not view.job.busy())
    assert view.finding.status == "stopped" and not view.finding.rates
    assert "cancelled" in view.status.text() and not view.use.isVisible()
    assert view.find.isEnabled() and not view.cancel.isVisible()


def test_the_training_dock_has_a_rate_finder_tab(qtbot, tmp_path):
    from studio.gui.training.panel import FINDER_TAB, TrainingPanel

    panel = TrainingPanel(ProjectDocument(regression_project(tmp_path)),
                          StaticDiscovery(Devices(CPU)))
    qtbot.addWidget(panel)
    assert panel.settings.tabText(FINDER_TAB) == "Rate finder"
    assert panel.settings.widget(FINDER_TAB).isAncestorOf(panel.lr_finder.find)
    assert panel.settings.widget(0).isAncestorOf(panel.find_rate_button)


def test_find_beside_the_learning_rate_starts_the_finder(qtbot, tmp_path, gate):
    from studio.gui.training.panel import TrainingPanel

    project = regression_project(tmp_path)
    describe(project.dataset)  # the CSV read here, as the window reads it in the background
    panel = TrainingPanel(ProjectDocument(project), StaticDiscovery(Devices(CPU)))
    qtbot.addWidget(panel)
    panel.show()
    button = panel.find_rate_button
    assert button.parentWidget() is panel.optimizer_form.learning_rate.parentWidget()
    gate.before(lr_finder, "range_test")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert panel.settings.currentWidget().isAncestorOf(panel.lr_finder)  # its tab shown
    qtbot.waitUntil(gate.reached.is_set, timeout=60_000)
    assert panel.lr_finder.cancel.isVisible()
    qtbot.mouseClick(panel.lr_finder.cancel, Qt.MouseButton.LeftButton)
    gate.open()
    qtbot.waitUntil(lambda: not panel.lr_finder.job.busy())
    shutdown_jobs(panel)
