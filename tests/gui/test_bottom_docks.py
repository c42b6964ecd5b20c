"""Ctrl+J puts the Training and Runs docks away and brings them back, as a person on a laptop
screen does to give the Data or Try tab their height; a run started meanwhile shows them."""

from __future__ import annotations

from PySide6.QtCore import Qt

from studio.gui.shell.bottom_docks import HIDE, SHOW, in_front
from studio.gui.training import panel as training_panel
from tests.gui.support import show_tab

CTRL = Qt.KeyboardModifier.ControlModifier


def test_ctrl_j_gives_the_docks_height_to_the_tabs_and_brings_them_back(window, qtbot):
    show_tab(qtbot, window, "Data")
    before = window.views.height()
    window.runs_dock.raise_()  # Runs in front of Training, as a person may leave them
    qtbot.waitUntil(lambda: in_front(window.runs_dock))
    qtbot.keyClick(window, Qt.Key.Key_J, CTRL)
    qtbot.waitUntil(lambda: not window.training_dock.isVisible()
                    and not window.runs_dock.isVisible())
    qtbot.waitUntil(lambda: window.views.height() > before + 150)
    assert window.bottom_docks.action.text() == SHOW
    qtbot.keyClick(window, Qt.Key.Key_J, CTRL)
    # back as they were: Runs in front
    qtbot.waitUntil(lambda: in_front(window.runs_dock) and not in_front(window.training_dock))
    assert window.training_dock.toggleViewAction().isChecked()
    assert window.bottom_docks.action.text() == HIDE
    qtbot.waitUntil(lambda: window.views.height() == before)


def test_a_run_started_with_the_docks_away_shows_the_training_dock(window, qtbot, gate):
    qtbot.keyClick(window, Qt.Key.Key_J, CTRL)
    qtbot.waitUntil(lambda: not window.training_dock.isVisible())
    gate.before(training_panel, "train")  # the run held before its first batch
    with qtbot.waitSignal(window.training.run_started):
        qtbot.keyClick(window, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: in_front(window.training_dock))
    with qtbot.waitSignal(window.training.run_finished, timeout=60_000):
        qtbot.keyClick(window, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
        gate.open()
