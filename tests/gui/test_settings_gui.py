"""Training settings and the data split are edited in the window, one undo step per change."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.gui.support import isolate_settings, type_into

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


def test_training_settings_edit_the_project_and_are_undoable(window, qtbot):
    panel = window.training

    def training():
        return window.doc.project.training  # re-read: every edit replaces the project

    stack = window.doc.undo_stack
    assert (training().epochs, training().batch_size) == (5, 32)  # the demo's tuned settings
    assert (training().learning_rate, training().optimizer) == (0.002, "adam")

    type_into(qtbot, panel.epochs, "12")
    assert training().epochs == 12
    assert stack.count() == 1 and stack.undoText() == "Set epochs"  # "1" then "12": one step
    assert window.isWindowModified()

    type_into(qtbot, panel.batch_size, "256")
    assert training().batch_size == 256
    assert stack.count() == 2 and stack.undoText() == "Set batch size"

    form = panel.optimizer_form
    type_into(qtbot, form.learning_rate, "0.01")
    qtbot.keyClick(form.learning_rate, Qt.Key.Key_Return)
    assert training().learning_rate == pytest.approx(0.01)
    assert stack.count() == 3 and stack.undoText() == "Set learning rate"

    qtbot.keyClicks(form.optimizer, "SGD")
    assert form.optimizer.currentText() == "SGD"
    assert training().optimizer == "sgd"
    assert stack.count() == 4 and stack.undoText() == "Set optimizer to SGD"

    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    assert training().optimizer == "adam"
    assert form.optimizer.currentText() == "Adam"
    window.undo_action.trigger()
    assert training().learning_rate == pytest.approx(0.002)
    assert form.learning_rate.value() == pytest.approx(0.002)
    window.undo_action.trigger()
    assert training().batch_size == 32 and panel.batch_size.value() == 32
    window.undo_action.trigger()
    assert training().epochs == 5 and panel.epochs.value() == 5
    assert not window.isWindowModified()

    window.redo_action.trigger()
    window.redo_action.trigger()
    assert (training().epochs, training().batch_size) == (12, 256)
    assert (panel.epochs.value(), panel.batch_size.value()) == (12, 256)
    assert window.isWindowModified()


def test_split_percentages_edit_the_project_and_are_undoable(window, qtbot):
    options = window.data_panel.options
    stack = window.doc.undo_stack

    def dataset():
        return window.doc.project.dataset  # re-read: every edit replaces the project

    def counts():
        return [options.train.text()] + [label.text() for label in options.counts.values()]

    assert dataset().validation_split == pytest.approx(0.2)
    # The Data view is not shown, so nothing is read: the counts are estimates.
    assert counts() == ["80 %", "≈ 8,000 samples", "≈ 2,000 samples", "≈ 0 samples"]

    type_into(qtbot, options.validation, "30")
    assert dataset().validation_split == pytest.approx(0.3)
    assert counts() == ["70 %", "≈ 7,000 samples", "≈ 3,000 samples", "≈ 0 samples"]
    assert stack.count() == 1 and stack.undoText() == "Set validation split"
    assert window.isWindowModified()

    qtbot.keyClick(options.validation, Qt.Key.Key_Up)  # one more percent, in the same edit
    assert dataset().validation_split == pytest.approx(0.31)
    assert stack.count() == 1

    type_into(qtbot, options.test, "10")
    assert dataset().test_split == pytest.approx(0.1)
    assert counts() == ["59 %", "≈ 5,900 samples", "≈ 3,100 samples", "≈ 1,000 samples"]
    assert stack.count() == 2 and stack.undoText() == "Set test split"
    assert options.validation.maximum() == 85  # validation and test keep some training data

    window.undo_action.trigger()
    window.undo_action.trigger()
    assert (dataset().validation_split, dataset().test_split) == (pytest.approx(0.2), 0.0)
    assert (options.validation.value(), options.test.value()) == (20, 0)
    assert counts() == ["80 %", "≈ 8,000 samples", "≈ 2,000 samples", "≈ 0 samples"]
    assert not window.isWindowModified()

    type_into(qtbot, options.seed, "7")
    assert dataset().seed == 7
    assert stack.undoText() == "Set split seed"
    window.undo_action.trigger()
    assert dataset().seed == 0 and options.seed.value() == 0


def test_typing_a_validation_percentage_keeps_every_digit(window, qtbot):
    options = window.data_panel.options
    stack = window.doc.undo_stack
    type_into(qtbot, options.validation, "35")  # "3" is valid first and must not be reformatted
    assert window.doc.project.dataset.validation_split == pytest.approx(0.35)
    assert options.validation.text() == "35 %"
    qtbot.keyClick(options.validation, Qt.Key.Key_Return)
    assert window.doc.project.dataset.validation_split == pytest.approx(0.35)
    assert options.counts["validation"].text() == "≈ 3,500 samples"
    assert stack.count() == 1 and stack.undoText() == "Set validation split"

    window.undo_action.trigger()
    assert window.doc.project.dataset.validation_split == pytest.approx(0.2)
    assert options.validation.value() == 20
    assert not window.isWindowModified()
    window.redo_action.trigger()
    assert options.validation.value() == 35
