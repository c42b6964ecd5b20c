"""Editing the model in the window: palette, list buttons and keys, inspector, undo and redo."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.gui.support import (
    click_palette_entry,
    click_row,
    isolate_settings,
    row_ids,
    row_item,
    type_into,
)

LEFT = Qt.MouseButton.LeftButton
CTRL = Qt.KeyboardModifier.ControlModifier
DEMO = ["input_1", "conv2d_1", "max_pooling2d_1", "conv2d_2", "max_pooling2d_2", "conv2d_3",
        "flatten_1", "dense_1", "dense_2"]


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


def _undo_by_keyboard(qtbot, window) -> None:
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)


def test_double_clicking_a_palette_entry_adds_it_after_the_selection(window, qtbot):
    stack = window.doc.undo_stack
    assert row_ids(window) == DEMO
    assert not window.isWindowModified()
    assert window.windowTitle() == "Small CNN[*] — Layer Studio"

    click_row(qtbot, window, "flatten_1")
    click_palette_entry(qtbot, window, "Dropout", double=True)
    expected = DEMO[:7] + ["dropout_1"] + DEMO[7:]
    assert row_ids(window) == expected
    assert window.doc.project.graph.chain() == expected
    assert window.model_list.selected_id() == "dropout_1"
    assert window.inspector.title.text().startswith("dropout_1")
    assert "rate" in window.inspector.editors
    assert window.model_list.summary.text() == (
        "10 layers · 257,162 parameters · 11.8 MFLOPs per sample · ready to train")
    assert stack.count() == 1 and stack.undoText() == "Add Dropout"
    assert window.isWindowModified()

    _undo_by_keyboard(qtbot, window)
    assert row_ids(window) == DEMO
    assert not window.isWindowModified()
    window.redo_action.trigger()
    assert row_ids(window) == expected
    assert window.isWindowModified()


def test_add_button_adds_the_selected_palette_entry(window, qtbot):
    click_row(qtbot, window, "dense_1")
    click_palette_entry(qtbot, window, "BatchNormalization")
    assert window.doc.undo_stack.count() == 0  # selecting in the palette changes nothing
    qtbot.mouseClick(window.palette.add_button, LEFT)
    expected = DEMO[:8] + ["batch_normalization_1"] + DEMO[8:]
    assert row_ids(window) == expected
    assert row_item(window, "batch_normalization_1").text(4) == "256"
    assert window.doc.undo_stack.count() == 1
    assert window.isWindowModified()
    window.undo_action.trigger()
    assert row_ids(window) == DEMO
    assert not window.isWindowModified()


def test_remove_button_and_delete_key_each_remove_one_layer(window, qtbot):
    stack = window.doc.undo_stack
    click_row(qtbot, window, "dense_1")
    qtbot.mouseClick(window.model_list.remove_button, LEFT)
    assert row_ids(window) == DEMO[:7] + ["dense_2"]
    assert window.model_list.selected_id() == "dense_2"  # the neighbour takes the selection
    assert stack.count() == 1 and stack.undoText() == "Remove dense_1"
    assert window.isWindowModified()

    click_row(qtbot, window, "max_pooling2d_2")
    window.model_list.table.setFocus()
    qtbot.waitUntil(window.model_list.table.hasFocus)
    qtbot.keyClick(window.model_list.table, Qt.Key.Key_Delete)
    assert row_ids(window) == DEMO[:4] + ["conv2d_3", "flatten_1", "dense_2"]
    assert stack.count() == 2

    _undo_by_keyboard(qtbot, window)
    assert row_ids(window) == DEMO[:7] + ["dense_2"]
    assert window.isWindowModified()
    _undo_by_keyboard(qtbot, window)
    assert row_ids(window) == DEMO
    assert not window.isWindowModified()


def test_up_and_down_buttons_move_the_selected_layer(window, qtbot):
    stack = window.doc.undo_stack
    click_row(qtbot, window, "max_pooling2d_1")
    qtbot.mouseClick(window.model_list.down_button, LEFT)
    moved_down = ["input_1", "conv2d_1", "conv2d_2", "max_pooling2d_1"] + DEMO[4:]
    assert row_ids(window) == moved_down
    assert window.model_list.selected_id() == "max_pooling2d_1"
    assert stack.count() == 1 and stack.undoText() == "Move max_pooling2d_1"
    assert window.isWindowModified()

    qtbot.mouseClick(window.model_list.up_button, LEFT)
    qtbot.mouseClick(window.model_list.up_button, LEFT)
    moved_up = ["input_1", "max_pooling2d_1", "conv2d_1"] + DEMO[3:]
    assert row_ids(window) == moved_up
    assert stack.count() == 3

    window.undo_action.trigger()
    assert row_ids(window) == DEMO
    window.undo_action.trigger()
    assert row_ids(window) == moved_down
    window.undo_action.trigger()
    assert row_ids(window) == DEMO
    assert not window.isWindowModified()


def test_moving_the_first_layer_up_is_not_an_edit(window, qtbot):
    click_row(qtbot, window, "input_1")
    qtbot.mouseClick(window.model_list.up_button, LEFT)
    assert row_ids(window) == DEMO
    assert not window.isWindowModified()
    assert not window.isWindowModified()


def test_wrong_units_disable_start_with_the_reason_and_undo_fixes_it(window, qtbot):
    panel = window.training
    reason = "Set units to 10"
    click_row(qtbot, window, "dense_2")
    assert window.inspector.title.text().startswith("dense_2")
    units = window.inspector.editors["units"].widget
    assert units.value() == 10
    # Each key is an edit; none may rebuild the editor being typed into (that once deleted the
    # spin box under its own handler, and typing "12" gave 1).
    with qtbot.assertNotEmitted(window.model_list.selection_changed):
        type_into(qtbot, units, "12")
        qtbot.keyClick(units, Qt.Key.Key_Return)

    assert window.doc.project.graph.node("dense_2").params["units"] == 12
    assert window.inspector.editors["units"].widget is units
    assert units.value() == 12 and units.text() == "12"
    assert window.doc.undo_stack.count() == 1  # "1" then "12": one undo step
    window.inspector.show_node("dense_2")  # showing the shown layer again only updates values
    assert window.inspector.editors["units"].widget is units
    assert not panel.start_button.isEnabled()
    assert reason in panel.start_button.toolTip()
    assert panel.start_button.toolTip().startswith("Cannot start: dense_2: ")
    assert reason in panel.status.text()
    assert reason in row_item(window, "dense_2").toolTip(1)
    assert "Problem" in row_item(window, "dense_2").toolTip(0)
    assert reason in window.inspector.problem.text()
    assert reason in window.model_list.summary.text()
    qtbot.keyClick(window, Qt.Key.Key_F5)  # the Start shortcut does nothing either
    assert not panel.is_running()

    _undo_by_keyboard(qtbot, window)
    assert window.doc.project.graph.node("dense_2").params["units"] == 10
    assert window.inspector.editors["units"].widget.value() == 10
    assert panel.start_button.isEnabled()
    assert reason not in panel.status.text()
    assert window.inspector.problem.text() == ""
    assert "Problem" not in row_item(window, "dense_2").toolTip(0)
    assert not window.isWindowModified()

    window.redo_action.trigger()
    assert window.inspector.editors["units"].widget.value() == 12
    assert not panel.start_button.isEnabled()
    assert reason in panel.status.text()
    assert reason in window.inspector.problem.text()


def test_typing_a_decimal_parameter_keeps_every_digit(window, qtbot):
    click_row(qtbot, window, "flatten_1")
    click_palette_entry(qtbot, window, "Dropout", double=True)
    rate = window.inspector.editors["rate"].widget
    # "0.3" is a valid rate on the way to "0.35"; its edit must not reformat the text being typed.
    type_into(qtbot, rate, "0.35")
    qtbot.keyClick(rate, Qt.Key.Key_Return)
    assert window.doc.project.graph.node("dropout_1").params["rate"] == pytest.approx(0.35)
    assert window.inspector.editors["rate"].widget is rate
    assert rate.value() == pytest.approx(0.35)
    assert window.doc.undo_stack.undoText() == "Set rate of dropout_1"

    _undo_by_keyboard(qtbot, window)
    assert window.doc.project.graph.node("dropout_1").params["rate"] == pytest.approx(0.5)
    assert rate.value() == pytest.approx(0.5)


def test_a_kernel_size_takes_one_number_or_one_per_axis_and_steps_like_a_spin_box(window,
                                                                                 qtbot):
    click_row(qtbot, window, "conv2d_1")
    editor = window.inspector.editors["kernel_size"]
    kernel = editor.widget
    assert kernel.text() == "3"
    assert "Type one number, or one per axis (height, width);" in kernel.toolTip()
    def node(node_id):
        return window.doc.project.graph.node(node_id)


    type_into(qtbot, kernel, "5, 1")
    qtbot.keyClick(kernel, Qt.Key.Key_Return)
    assert node("conv2d_1").params["kernel_size"] == [5, 1]
    assert window.doc.undo_stack.undoText() == "Set kernel size of conv2d_1"
    qtbot.keyClick(kernel, Qt.Key.Key_Up)  # the arrows step every axis
    assert node("conv2d_1").params["kernel_size"] == [6, 2]
    assert kernel.text() == "6, 2"
    facts = window.inspector.facts.text()
    assert "Output shape: 28 × 28 × 32" in facts  # padding 'same' keeps the size
    assert f"Parameters: {6 * 2 * 32 + 32:,}" in facts

    type_into(qtbot, kernel, "4")
    qtbot.keyClick(kernel, Qt.Key.Key_Return)
    assert node("conv2d_1").params["kernel_size"] == 4
    qtbot.keyClick(kernel, Qt.Key.Key_Down)
    assert node("conv2d_1").params["kernel_size"] == 3

    type_into(qtbot, kernel, "3, 3, 3")  # Conv2D has two axes: the box says so, nothing changes
    qtbot.keyClick(kernel, Qt.Key.Key_Return)
    assert node("conv2d_1").params["kernel_size"] == 3
    assert window.inspector.problem.text() == (
        "Kernel size takes one number, or one per axis (height, width), not '3, 3, 3'.")
    qtbot.keyClicks(kernel, "a")  # letters cannot be typed at all
    assert "a" not in kernel.text()

    _undo_by_keyboard(qtbot, window)  # edits of one parameter in a row are one undo step
    assert node("conv2d_1").params["kernel_size"] == 3
    assert kernel.text() == "3"
    assert not window.isWindowModified()


def test_a_pool_stride_steps_down_to_auto_and_back(window, qtbot):
    click_row(qtbot, window, "max_pooling2d_1")
    strides = window.inspector.editors["strides"].widget
    assert strides.text() == "auto"
    def node(node_id):
        return window.doc.project.graph.node(node_id)

    qtbot.keyClick(strides, Qt.Key.Key_Up)
    assert node("max_pooling2d_1").params["strides"] == 1
    type_into(qtbot, strides, "1 x 2")
    qtbot.keyClick(strides, Qt.Key.Key_Return)
    assert node("max_pooling2d_1").params["strides"] == [1, 2]
    assert "Output shape: 27 × 14 × 32" in window.inspector.facts.text()
    type_into(qtbot, strides, "auto")
    qtbot.keyClick(strides, Qt.Key.Key_Return)
    assert node("max_pooling2d_1").params["strides"] is None


def test_a_kernel_larger_than_its_input_is_fixed_from_the_inspector_in_one_click(window,
                                                                                  qtbot):
    click_row(qtbot, window, "conv2d_3")  # its input is 7 × 7 × 64
    window.inspector.editors["padding"].widget.setCurrentText("valid")
    kernel = window.inspector.editors["kernel_size"].widget
    type_into(qtbot, kernel, "9, 3")
    qtbot.keyClick(kernel, Qt.Key.Key_Return)
    assert window.inspector.problem.text().startswith(
        "The kernel size of 9 × 3 is larger than this Conv2D's input of 7 × 7 pixels.")
    buttons = window.inspector.fix_buttons
    assert [b.text() for b in buttons] == ["Set padding to same", "Set kernel size to 7 × 3"]
    qtbot.mouseClick(buttons[1], Qt.MouseButton.LeftButton)
    assert window.doc.project.graph.node("conv2d_3").params["kernel_size"] == [7, 3]
    assert window.inspector.problem.text() == ""
    assert kernel.text() == "7, 3"
    assert "Output shape: 1 × 5 × 64" in window.inspector.facts.text()
