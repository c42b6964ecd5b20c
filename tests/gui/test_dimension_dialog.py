"""Making a value a search dimension where it is edited: the Search… button beside it, the
dialog's live preview and refusals, and one undo step per change."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel

from studio.core.project.document import Dimension
from tests.gui.support import click_row, isolate_settings

LEFT = Qt.MouseButton.LeftButton


def type_into(qtbot, line, text: str) -> None:
    """Click into a text field, select all its text and type ``text`` over it."""
    qtbot.mouseClick(line, LEFT)
    qtbot.keyClick(line, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    if text:
        qtbot.keyClicks(line, text)
    else:
        qtbot.keyClick(line, Qt.Key.Key_Delete)


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


def tick(qtbot, box) -> None:
    """Click a check box on its box."""
    qtbot.mouseClick(box, LEFT, pos=QPoint(8, box.height() // 2))


def _open(qtbot, button):
    qtbot.mouseClick(button, LEFT)
    dialog = button.dialog
    qtbot.waitExposed(dialog)
    return dialog


def test_units_listed_in_the_inspector_become_a_dimension_in_one_undo_step(window, qtbot):
    click_row(qtbot, window, "dense_1")
    button = window.inspector.search_buttons["units"]
    assert "activation" in window.inspector.search_buttons  # a choice can be searched too
    assert not button.searched
    steps = window.doc.undo_stack.count()

    dialog = _open(qtbot, button)
    assert dialog.values.text() == "64"  # pre-filled with the current value
    assert dialog.preview.text().startswith("1 value: 64")
    type_into(qtbot, dialog.values, "4, 8")
    assert dialog.preview.text().startswith("2 values: 4, 8")
    assert dialog.ok.isEnabled()
    qtbot.mouseClick(dialog.ok, LEFT)

    assert window.doc.project.search.dimensions == [
        Dimension("layer.dense_1.units", values=[4, 8])]
    assert window.doc.undo_stack.count() == steps + 1
    assert window.doc.undo_stack.undoText() == "Search dense_1 · units"
    assert button.searched
    assert "searched: 4, 8" in button.toolTip()

    # Reopened, it shows the values searched; changing them replaces the dimension.
    dialog = _open(qtbot, button)
    assert dialog.values.text() == "4, 8"
    type_into(qtbot, dialog.values, "4, 8, 16")
    qtbot.keyClick(dialog.values, Qt.Key.Key_Return)
    assert window.doc.project.search.dimensions == [
        Dimension("layer.dense_1.units", values=[4, 8, 16])]
    assert window.doc.undo_stack.count() == steps + 2

    window.undo_action.trigger()
    window.undo_action.trigger()
    assert window.doc.project.search.dimensions == []
    assert not button.searched


@pytest.mark.parametrize(("typed", "reason"), [
    ("4, 0", "Units must be at least 1, not 0."),
    ("4, 2.5", "Units takes whole numbers, not 2.5."),
    ("4, abc", "Units: “abc” is not a number."),
    ("", "Units: give at least one value."),
])
def test_values_that_cannot_be_searched_say_why_and_disable_ok(window, qtbot, typed, reason):
    click_row(qtbot, window, "dense_1")
    dialog = _open(qtbot, window.inspector.search_buttons["units"])
    type_into(qtbot, dialog.values, typed)
    assert dialog.preview.text() == reason
    assert not dialog.ok.isEnabled()
    qtbot.keyClick(dialog.values, Qt.Key.Key_Return)  # Enter does not take it either
    assert window.doc.project.search.dimensions == []
    dialog.reject()


def test_learning_rate_range_on_a_log_scale_by_count_or_step(window, qtbot):
    window.doc.edit("Set learning rate", lambda p: setattr(p.training, "learning_rate", 0.001))
    button = window.training.optimizer_form.search_buttons["learning_rate"]
    dialog = _open(qtbot, button)
    qtbot.mouseClick(dialog.range_mode, LEFT)
    # Around the current 0.001: a tenth to ten times, on a log scale, three points.
    assert (dialog.low.text(), dialog.high.text()) == ("0.0001", "0.01")
    assert dialog.scale.currentData() == "log"
    assert dialog.preview.text().startswith("3 values: 0.0001, 0.001, 0.01")
    assert not dialog.values.isEnabled()

    dialog.cut.setCurrentIndex(dialog.cut.findData("step"))
    type_into(qtbot, dialog.cut_value, "0.5")
    assert dialog.preview.text() == ("Learning rate: on a log scale the step multiplies, so it "
                                     "must be more than 1, not 0.5.")
    assert not dialog.ok.isEnabled()
    type_into(qtbot, dialog.cut_value, "10")
    assert dialog.preview.text().startswith("3 values: 0.0001, 0.001, 0.01")
    type_into(qtbot, dialog.low, "-1")
    assert "log scale needs values above 0" in dialog.preview.text()
    type_into(qtbot, dialog.low, "0.0001")
    qtbot.mouseClick(dialog.ok, LEFT)

    assert window.doc.project.search.dimensions == [Dimension(
        "training.learning_rate", low=0.0001, high=0.01, scale="log", step=10.0)]
    assert "searched: 0.0001, 0.001, 0.01" in button.toolTip()


def test_choices_are_check_boxes_and_dont_search_removes_the_dimension(window, qtbot):
    button = window.training.optimizer_form.search_buttons["optimizer"]
    dialog = _open(qtbot, button)
    assert dialog.choices["adam"].isChecked()  # the current optimizer
    tick(qtbot, dialog.choices["sgd"])
    assert dialog.preview.text() == "2 values: adam, sgd"  # in the optimizers' order
    tick(qtbot, dialog.choices["sgd"])
    tick(qtbot, dialog.choices["adam"])
    assert dialog.preview.text() == "Optimizer: give at least one value."
    assert not dialog.ok.isEnabled()
    tick(qtbot, dialog.choices["sgd"])
    tick(qtbot, dialog.choices["rmsprop"])
    qtbot.mouseClick(dialog.ok, LEFT)
    (dimension,) = window.doc.project.search.dimensions
    assert dimension.target == "training.optimizer"
    assert sorted(dimension.values) == ["rmsprop", "sgd"]
    steps = window.doc.undo_stack.count()

    dialog = _open(qtbot, button)
    remove = next(b for b in dialog.buttons.buttons() if b.text() == "Don't search")
    qtbot.mouseClick(remove, LEFT)
    assert window.doc.project.search.dimensions == []
    assert window.doc.undo_stack.count() == steps + 1
    assert not button.searched


def test_batch_size_and_epochs_have_search_buttons_in_the_training_dock(window, qtbot):
    buttons = window.training.search_buttons
    dialog = _open(qtbot, buttons["epochs"])
    assert dialog.values.text() == "5"  # the demo's epochs
    type_into(qtbot, dialog.values, "1, 2")
    qtbot.mouseClick(dialog.ok, LEFT)
    assert buttons["epochs"].searched
    assert not buttons["batch_size"].searched
    assert window.doc.project.search.dimensions == [
        Dimension("training.epochs", values=[1, 2])]


def test_a_kernel_size_per_axis_is_searched_one_size_for_every_axis(window, qtbot):
    click_row(qtbot, window, "conv2d_1")
    kernel = window.inspector.editors["kernel_size"].widget
    qtbot.mouseClick(kernel, LEFT, pos=QPoint(6, kernel.height() // 2))
    qtbot.keyClick(kernel, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(kernel, "5, 1")
    qtbot.keyClick(kernel, Qt.Key.Key_Return)
    dialog = _open(qtbot, window.inspector.search_buttons["kernel_size"])
    intro = dialog.findChild(QLabel, "dimension-intro")
    assert "It is 5 × 1 now. Each value is used on every axis." in intro.text()
    assert dialog.values.text() == "5"
    type_into(qtbot, dialog.values, "3, 5")
    assert dialog.preview.text().startswith("2 values: 3, 5")
    qtbot.mouseClick(dialog.ok, LEFT)
    assert window.doc.project.search.dimensions == [
        Dimension("layer.conv2d_1.kernel_size", values=[3, 5])]
