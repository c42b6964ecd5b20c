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
from studio.gui.training import lr_finder_view
from studio.gui.training import panel as training_panel
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


def test_the_curve_grows_batch_by_batch_then_shows_smoothed(qtbot, view, gate,
                                                             monkeypatch):
    record = lr_finder._record

    def held(finding, rate, loss):  # the test waits at its sixth batch, five points sent
        if len(finding.rates) == 5:
            gate.hold()
        return record(finding, rate, loss)

    monkeypatch.setattr(lr_finder, "_record", held)
    qtbot.mouseClick(view.find, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(gate.reached.is_set, timeout=60_000)
    # the timer draws the points that came, while the test still runs
    qtbot.waitUntil(lambda: view.curve is not None and len(view.curve.getData()[0]) == 5)
    qtbot.waitUntil(view.plot.isVisible)  # the layout shows a new widget after this event
    assert view.job.busy() and not view.mark.isVisible()
    assert view.status.text() == lr_finder_view.TRYING  # no longer "Loading the data…"
    rates, losses = view.curve.getData()
    assert list(10 ** rates) == pytest.approx(lr_finder.RangeTest().rates()[:5])  # log axis
    assert list(losses) == view.points.y  # each batch's loss, not yet smoothed
    qtbot.mouseClick(view.cancel, Qt.MouseButton.LeftButton)
    gate.open()
    qtbot.waitUntil(lambda: not view.job.busy())
    found = view.finding
    assert found.status == "stopped" and len(found.rates) == 6
    assert list(view.curve.getData()[1]) == found.smoothed != found.losses  # replaced


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


@pytest.fixture
def panel(qtbot, tmp_path):
    project = regression_project(tmp_path)
    describe(project.dataset)  # the CSV read here, as the window reads it in the background
    widget = training_panel.TrainingPanel(ProjectDocument(project),
                                          StaticDiscovery(Devices(CPU)))
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    shutdown_jobs(widget)


def test_find_waits_while_a_run_trains(qtbot, panel, gate):
    gate.before(training_panel, "train")  # the run held before it starts
    finds = (panel.lr_finder.find, panel.find_rate_button)
    assert all(button.isEnabled() for button in finds)
    with qtbot.waitSignal(panel.run_started):
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    for button in finds:
        assert not button.isEnabled() and button.toolTip() == lr_finder_view.TRAINING
    panel.lr_finder.start()  # as Find… would, were it enabled
    assert not panel.lr_finder.is_running()
    with qtbot.waitSignal(panel.run_finished, timeout=60_000):
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
        gate.open()
    assert all(button.isEnabled() for button in finds)
    assert panel.find_rate_button.toolTip() == training_panel.FIND_TIP


def test_no_run_starts_while_the_finder_runs(qtbot, panel, gate):
    gate.before(lr_finder_view, "find_learning_rate")  # the test held before it starts
    assert panel.start_button.isEnabled()
    qtbot.mouseClick(panel.lr_finder.find, Qt.MouseButton.LeftButton)
    assert panel.lr_finder.is_running()
    assert not panel.start_button.isEnabled() and not panel.imported_button.isEnabled()
    assert panel.start_button.toolTip() == training_panel.FINDING
    panel.start()  # as F5 would
    assert not panel.is_running()
    assert panel.train_again() == f"{training_panel.FINDING}."
    qtbot.mouseClick(panel.lr_finder.cancel, Qt.MouseButton.LeftButton)
    gate.open()
    qtbot.waitUntil(lambda: not panel.lr_finder.is_running(), timeout=60_000)
    assert panel.start_button.isEnabled()
    assert panel.start_button.toolTip() == "Train the model in the background (F5)"


def test_find_beside_the_learning_rate_starts_the_finder(qtbot, panel, gate):
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


def test_the_curve_fits_the_dock_s_tab_without_scrolling(qtbot, panel, gate):
    """The plot beside the controls takes the tab's height: pyqtgraph's 480-pixel size hint
    made the page scroll, the curve cut at the bottom, even at 1600 × 1000."""
    panel.resize(1200, 260)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.mouseClick(panel.find_rate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.lr_finder.job.busy(), timeout=60_000)
    view = panel.lr_finder
    qtbot.waitUntil(lambda: view.plot is not None and view.plot.isVisible())
    page = panel.settings.currentWidget()
    assert page.widget() is view
    assert not page.verticalScrollBar().isVisible()
    assert view.plot.height() >= lr_finder_view._PLOT_HEIGHT
