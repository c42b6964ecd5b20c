"""The window's layout: it fits a laptop screen, and nothing is cut at an edge."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QScreen
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QDockWidget,
    QLabel,
    QScrollArea,
    QWidget,
)

from studio.core.data.types import ArraySamples
from studio.core.project.templates import demo_project
from studio.core.runs.folders import runs_root
from studio.core.tasks.class_scores import Evaluation
from studio.gui.runs.run_table import COLUMNS
from studio.gui.shell.app import create_application, open_window
from studio.gui.shell.main_window import FIRST_RUN_SIZE, MainWindow
from studio.gui.widgets.forms import VerticalScrollArea, unscrolled_height
from studio.gui.widgets.plot_style import MIN_DATA_HEIGHT
from tests.gui.support import click_row
from tests.gui.test_plots_gui import legend_problems
from tests.run_folders import write_runs

LAPTOP = (1280, 720)
SMALLEST = (1024, 640)


def _is_viewport(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    return isinstance(parent, QAbstractScrollArea) and parent.viewport() is widget


def cut_off(widget: QWidget, window: QWidget) -> str:
    """Why ``widget`` cannot be seen whole, or "" if it can: it must lie inside every widget
    holding it up to the window, except that a scroll area's viewport may hold it above or
    below what it shows (scrolling reaches it), never beside."""
    rect = QRect(widget.mapTo(window, widget.rect().topLeft()), widget.size())
    holder = widget.parentWidget()
    while holder is not None:
        area = QRect(holder.mapTo(window, holder.rect().topLeft()), holder.size())
        if holder is window:
            area = window.rect()
        if _is_viewport(holder):  # scrolling up or down shows it there
            rect = QRect(rect.left(), area.top(), rect.width(), min(rect.height(), area.height()))
        if not area.contains(rect):
            return f"{rect} is not inside {type(holder).__name__} {holder.objectName()} {area}"
        if holder is window:
            return ""
        holder = holder.parentWidget()
    return "not in the window"


def shown_controls(window: QWidget) -> list[QWidget]:
    """The buttons and texts on screen (not those of a hidden page or a dock behind a tab)."""
    controls = [w for w in window.findChildren(QAbstractButton) + window.findChildren(QLabel)
                if w.isVisible() and (not isinstance(w, QLabel) or w.text())]
    return [w for w in controls if not w.objectName().startswith("qt_dockwidget_")
            and not _behind_a_tab(w)]


def _behind_a_tab(widget: QWidget) -> bool:
    while widget is not None and not isinstance(widget, QDockWidget):
        widget = widget.parentWidget()
    return widget is not None and widget.visibleRegion().isEmpty()


def problems(window) -> list[str]:
    found = []
    for control in shown_controls(window):
        why = cut_off(control, window)
        if why:
            text = control.text()[:40] if hasattr(control, "text") else ""
            found.append(f"{type(control).__name__} {control.objectName()!r} {text!r}: {why}")
    return found


def settle(qtbot, window) -> None:
    qtbot.wait(1)
    for _ in range(3):
        window.layout().activate()
        qtbot.wait(1)


def test_the_smallest_window_fits_a_laptop_screen(window):
    hint = window.minimumSizeHint().expandedTo(window.minimumSize())
    assert hint.width() <= SMALLEST[0] and hint.height() <= SMALLEST[1], hint


def test_at_1280_by_720_every_control_of_every_tab_and_dock_is_reachable(window, qtbot):
    click_row(qtbot, window, "dense_1")  # the inspector shows its editors and magnifiers
    window.views.setCurrentIndex(0)
    window.resize(*LAPTOP)
    settle(qtbot, window)
    assert (window.width(), window.height()) == LAPTOP
    found = []
    for dock in (window.training_dock, window.runs_dock):
        dock.raise_()
        for index in range(window.views.count()):
            window.views.setCurrentIndex(index)
            settle(qtbot, window)
            found += [f"{window.views.tabText(index)}/{dock.windowTitle()}: {p}"
                      for p in problems(window)]
    assert not found, "\n".join(found)


def _inspector_contents(window) -> list[QWidget]:
    inspector = window.inspector
    editors = [editor.widget for editor in inspector.editors.values()]
    fixes = inspector.fix_buttons + [button.label for button in inspector.fix_buttons]
    return (editors + list(inspector.search_buttons.values()) + fixes
            + [inspector.title, inspector.help, inspector.facts, inspector.problem])


def _assert_inspector_fits(qtbot, window) -> None:
    settle(qtbot, window)
    area = window.inspector_dock.widget()
    assert area.horizontalScrollBar().maximum() == 0 and not area.horizontalScrollBar().isVisible()
    assert area.widget().width() == area.viewport().width()
    assert window.inspector.search_buttons and window.inspector.fix_buttons
    found = [f"{type(w).__name__} {w.objectName()}: {cut_off(w, window)}"
             for w in _inspector_contents(window) if cut_off(w, window)]
    assert not found, "\n".join(found)


def test_the_inspector_shows_a_problem_its_fixes_and_every_editor_without_scrolling_sideways(
        window, qtbot):
    click_row(qtbot, window, "flatten_1")
    qtbot.keyClick(window.model_list.table, Qt.Key.Key_Delete)
    click_row(qtbot, window, "dense_1")  # now reads 3 × 3 × 64: Flatten or pooling fix it
    assert len(window.inspector.fix_buttons) == 2 and window.inspector.problem.text()
    _assert_inspector_fits(qtbot, window)

    window.resizeDocks([window.inspector_dock], [1], Qt.Orientation.Horizontal)
    settle(qtbot, window)  # at its narrowest the texts wrap, nothing is cut
    assert window.inspector_dock.width() <= 300
    _assert_inspector_fits(qtbot, window)
    for button in window.inspector.fix_buttons:  # tall enough for its text, wrapped or not
        assert button.height() >= button.heightForWidth(button.width())
    fix = window.inspector.fix_buttons[0]

    qtbot.mouseClick(fix, Qt.MouseButton.LeftButton)
    assert "flatten" in window.doc.project.graph.inputs_of("dense_1")[0]
    click_row(qtbot, window, "conv2d_1")
    qtbot.keyClick(window.model_list.table, Qt.Key.Key_Delete)
    click_row(qtbot, window, "max_pooling2d_1")
    settle(qtbot, window)
    area = window.inspector_dock.widget()
    assert area.horizontalScrollBar().value() == 0
    assert area.widget().width() == area.viewport().width()


def test_the_window_opens_inside_the_screen_s_available_area(qtbot, dialogs, monkeypatch):
    laptop = QRect(0, 30, *LAPTOP)  # a taskbar above
    monkeypatch.setattr(QScreen, "availableGeometry", lambda screen: laptop)
    window = open_window()  # first run: it would be 1400 × 900
    qtbot.addWidget(window)
    qtbot.waitExposed(window)
    assert laptop.contains(window.frameGeometry()), window.frameGeometry()


def first_run_window(qtbot, size: tuple[int, int]) -> MainWindow:
    """The window as it opens the first time at ``size`` (on a screen of that size, say),
    once it has sized its docks and shown the model."""
    create_application()
    window = MainWindow(demo_project())
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.canvas.zoom() < 1.0)  # the model shown, docks sized before
    settle(qtbot, window)
    assert window.size().toTuple() == size
    return window


@pytest.mark.parametrize("size", [LAPTOP, (1600, 1000)])
def test_the_first_run_gives_the_canvas_most_of_the_height_and_shows_the_whole_demo(
        qtbot, dialogs, size):
    window = first_run_window(qtbot, size)
    assert window.views.height() >= window.height() / 2, (window.views.height(), size)
    canvas = window.canvas
    seen = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
    shown = {i for i, node in window.scene.nodes.items()
             if seen.contains(node.sceneBoundingRect())}
    assert shown == set(window.scene.nodes), "the demo opens fitted"


@pytest.mark.parametrize("size", [LAPTOP, (1600, 1000)])
def test_the_first_run_training_dock_shows_whole_plots_and_a_settings_column_that_never_scrolls_sideways(  # noqa: E501
        qtbot, dialogs, size):
    window = first_run_window(qtbot, size)
    panel = window.training
    page = panel.findChild(QScrollArea, "", Qt.FindChildOption.FindDirectChildrenOnly)
    assert page.verticalScrollBar().maximum() == 0, "the dock shows all without scrolling"
    for metric, plot in panel.curves.plots.items():
        data = plot.getPlotItem().vb.sceneBoundingRect()
        assert data.height() >= MIN_DATA_HEIGHT, (metric, data)
        assert not legend_problems(plot), metric
        assert not cut_off(plot, window), metric
    def unfit(project) -> None:  # Start says why it cannot, in two lines
        project.graph.node("input_1").params.update(shape=[64, 64, 3])
        project.graph.node("dense_2").params.update(units=12)

    window.doc.edit("Break the model", unfit)
    settle(qtbot, window)
    lines = panel.status.height() // panel.status.fontMetrics().lineSpacing()
    assert lines == 2 or size != LAPTOP, panel.status.text()
    assert page.verticalScrollBar().maximum() == 0, "room was kept for the second line"
    tabs = panel.settings
    for index in range(tabs.count()):
        tabs.setCurrentIndex(index)
        settle(qtbot, window)
        column = tabs.currentWidget()
        assert column.horizontalScrollBar().maximum() == 0, tabs.tabText(index)
        assert column.widget().width() <= column.viewport().width(), tabs.tabText(index)


def test_at_1280_by_720_a_page_scrolls_only_if_its_least_height_does_not_fit(qtbot, dialogs):
    window = first_run_window(qtbot, LAPTOP)
    window.try_panel.tabs.setCurrentWidget(window.try_panel.pad)  # wrapped hints: preferred
    found = []                                                     # heights above the least
    for page in (window.try_panel, window.evaluation, window.search, window.training):
        if window.views.indexOf(page) >= 0:
            window.views.setCurrentWidget(page)
        settle(qtbot, window)
        area = page.findChild(QScrollArea, "", Qt.FindChildOption.FindDirectChildrenOnly)
        least = unscrolled_height(page)
        if least <= area.viewport().height() and area.verticalScrollBar().maximum() > 0:
            found.append(f"{type(page).__name__}: scrolls {area.verticalScrollBar().maximum()}"
                         f" px although {least} px fit in {area.viewport().height()}")
    assert not found, "\n".join(found)
    pad = window.try_panel.pad
    window.views.setCurrentWidget(window.try_panel)
    settle(qtbot, window)
    assert not any(cut_off(button, window) for button in (pad.clear_button, pad.explain_button))


def test_at_1280_by_720_the_runs_dock_shows_two_runs_curves_beside_them_without_scrolling(
        qtbot, dialogs):
    window = first_run_window(qtbot, LAPTOP)
    write_runs(runs_root(window.doc.place), 2, epochs=3)
    window.runs_dock.raise_()
    panel = window.runs
    panel.refresh()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2)
    panel.select_runs([run.id for run in panel.model.runs])
    panel.overlay_action.trigger()
    settle(qtbot, window)
    area = panel.findChild(QScrollArea, "", Qt.FindChildOption.FindDirectChildrenOnly)
    assert area.verticalScrollBar().maximum() == 0
    assert panel.splitter.orientation() == Qt.Orientation.Horizontal
    for plot in (panel.accuracy_plot, panel.loss_plot):
        assert not cut_off(plot, window) and not legend_problems(plot)
        assert plot.getPlotItem().vb.sceneBoundingRect().height() >= MIN_DATA_HEIGHT
    assert panel.table.columnWidth(0) >= COLUMNS[0].width, "run ids show whole"
    assert not problems(window)


def test_the_first_run_shows_the_training_dock_in_front_of_the_runs(qtbot, dialogs):
    window = open_window()
    qtbot.addWidget(window)
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: not window.training_dock.visibleRegion().isEmpty())
    assert window.runs_dock.visibleRegion().isEmpty()
    assert window.training.start_button.isVisible()


def test_the_data_settings_fit_the_first_run_window_and_the_split_buttons_match(window, qtbot):
    window.views.setCurrentWidget(window.data_panel)
    panel = window.data_panel
    qtbot.waitUntil(lambda: panel.loaded is not None, timeout=30_000)
    settle(qtbot, window)
    assert window.size().toTuple() == FIRST_RUN_SIZE
    column = panel.findChild(VerticalScrollArea)
    assert column.verticalScrollBar().maximum() == 0  # every row shows, down to the cache
    assert not cut_off(panel.options.seed, window) and not cut_off(panel.options.cache, window)
    buttons = panel.samples.buttons.buttons()
    assert len({button.width() for button in buttons}) == 1, [b.width() for b in buttons]


def _ten_class_evaluation() -> Evaluation:
    rng = np.random.default_rng(0)
    true = rng.integers(0, 10, 500)
    probabilities = rng.random((500, 10))
    probabilities[np.arange(500), true] += 5
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    images = rng.integers(0, 256, (500, 28, 28, 1), dtype=np.uint8)
    return Evaluation.of_answers("validation", [str(i) for i in range(10)], true,
                                 probabilities, 0.3, samples=ArraySamples(images))


def test_the_confusion_matrix_shows_all_ten_rows_under_its_axis_titles(window, qtbot):
    window.views.setCurrentWidget(window.evaluation)
    window.evaluation.show_evaluation(_ten_class_evaluation(), "a made-up model")
    settle(qtbot, window)
    view = window.evaluation.confusion
    assert view.model().rowCount() == 10
    assert view.verticalScrollBar().maximum() == 0  # rows 8 and 9 too, without scrolling
    assert view.horizontalScrollBar().maximum() == 0
    true, predicted = window.evaluation.axis_titles
    assert (true.text(), predicted.text()) == ("true class", "predicted class")
    assert not cut_off(true, window) and not cut_off(predicted, window)
    assert true.height() >= true.sizeHint().height()  # the whole title reads
    table = QRect(view.mapTo(window, QPoint(0, 0)), view.size())
    title_at = true.mapTo(window, QPoint(0, 0))
    assert title_at.x() < table.left() and table.top() <= title_at.y()  # beside the rows
    assert predicted.mapTo(window, QPoint(0, 0)).y() < table.top()  # above the columns
