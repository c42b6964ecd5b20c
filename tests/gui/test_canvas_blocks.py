"""Marking a block on the canvas, as a person does: select its layers, Ctrl+B, see its frame
follow them, unmark it from its frame's menu; then search its repeats from the Search tab."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication

from studio.core.model.layout import NODE_HEIGHT, NODE_WIDTH
from studio.core.project.document import Dimension, SearchSettings, save_project
from studio.core.search.runner import search_folder
from studio.core.search.state import SearchState, TrialRecord, write_state
from studio.gui.editor.canvas_blocks import LABEL_HEIGHT
from studio.gui.search.space_editor import REPEATS_ENTRY
from tests.gui.support import show_tab
from tests.gui.test_canvas import CTRL, LEFT, click_node, drag_wire, node_centre
from tests.gui.test_search_panel import type_over

BLOCK = ["conv2d_2", "max_pooling2d_2"]


def mark(window, qtbot, ids: list[str]) -> None:
    """Click the first layer, Ctrl+click the others, press Ctrl+B on the canvas."""
    for k, node_id in enumerate(ids):
        window.canvas.ensureVisible(window.scene.nodes[node_id])
        click_node(window, qtbot, node_id, CTRL if k else Qt.KeyboardModifier(0))
    assert window.scene.selected_ids() == ids
    qtbot.keyClick(window.canvas, Qt.Key.Key_B, CTRL)


def card(window, node_id: str):
    item = window.scene.nodes[node_id]
    return item.mapRectToScene(0, 0, NODE_WIDTH, NODE_HEIGHT)


def right_click(window, at: QPoint, choose: str) -> list[str]:
    """Right-click the canvas at view point ``at`` and pick ``choose`` from the menu that
    opens; returns the menu's entries."""
    offered = []

    def pick():
        menu = QApplication.activePopupWidget()
        offered.extend(a.text() for a in menu.actions() if a.text())
        next(a for a in menu.actions() if a.text() == choose).trigger()
        menu.close()

    QTimer.singleShot(0, pick)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at,
                              window.canvas.viewport().mapToGlobal(at))
    QApplication.sendEvent(window.canvas.viewport(), event)
    return offered


def test_ctrl_b_marks_the_selection_as_a_framed_block_that_follows_its_layers(window, qtbot):
    scene = window.scene
    mark(window, qtbot, BLOCK)
    assert window.doc.project.graph.blocks == {"block_1": BLOCK}
    assert window.doc.undo_stack.undoText() == "Mark block_1"
    frame = scene.blocks["block_1"]
    assert not frame.problem and frame.toolTip().startswith("<b>block_1</b>: 2 layers")
    for node_id in BLOCK:
        assert frame.boundingRect().contains(card(window, node_id))
    assert not frame.boundingRect().intersects(card(window, "conv2d_3"))
    # its name sits in the frame above its first layer, where the label is drawn
    assert frame.boundingRect().top() < card(window, "conv2d_2").top() - LABEL_HEIGHT

    start = node_centre(window, "max_pooling2d_2")
    viewport = window.canvas.viewport()
    qtbot.mousePress(viewport, LEFT, pos=start)
    qtbot.mouseMove(viewport, start + QPoint(60, 20))
    qtbot.mouseMove(viewport, start + QPoint(120, 40))
    qtbot.mouseRelease(viewport, LEFT, pos=start + QPoint(120, 40))
    assert frame.boundingRect().contains(card(window, "max_pooling2d_2"))  # moved with it

    window.undo_action.trigger()  # the move
    window.undo_action.trigger()  # the mark
    assert window.doc.project.graph.blocks == {} and "block_1" not in scene.blocks
    assert frame.scene() is None
    window.redo_action.trigger()
    assert "block_1" in scene.blocks


def test_layers_that_are_not_one_way_in_and_out_are_refused_in_the_status_bar(window, qtbot):
    steps = window.doc.undo_stack.count()
    mark(window, qtbot, ["conv2d_1", "conv2d_2"])
    assert window.statusBar().currentMessage() == (
        "A block takes one input, but input_1 and max_pooling2d_1 outside it feed it.")
    assert window.doc.undo_stack.count() == steps and window.scene.blocks == {}


def test_a_block_broken_by_a_new_wire_says_why_and_its_frame_unmarks_it(window, qtbot):
    mark(window, qtbot, BLOCK)
    window.canvas.ensureVisible(window.scene.nodes["conv2d_2"])
    drag_wire(window, qtbot, "conv2d_2", "conv2d_3")  # conv2d_3's one input: now conv2d_2's
    frame = window.scene.blocks["block_1"]
    assert frame.problem == ("The model ends at max_pooling2d_2, so a block with it would "
                             "have nothing to feed.")
    assert "It cannot be repeated now" in frame.toolTip()
    window.doc.undo_stack.undo()
    assert not frame.problem

    project = window.doc.project.copy()
    project.search.dimensions = [Dimension("block.block_1.repeats", values=[1, 2])]
    window.doc.edit("Search block_1 · repeats",
                    lambda p: setattr(p.search, "dimensions", project.search.dimensions))
    label = frame.boundingRect().topLeft() + QPointF(24, LABEL_HEIGHT / 2 + 2)
    at = window.canvas.mapFromScene(label)
    assert window.canvas.itemAt(at) is frame
    offered = right_click(window, at, "Unmark block_1")
    assert offered == ["Select block_1's Layers", "Unmark block_1"]
    # the block and the search of its repeats go together, in one undo step
    assert window.doc.project.graph.blocks == {} and window.doc.project.search.dimensions == []
    window.doc.undo_stack.undo()
    assert window.doc.project.graph.blocks == {"block_1": BLOCK}
    assert len(window.doc.project.search.dimensions) == 1


def test_right_clicking_a_layer_of_a_block_offers_to_unmark_it(window, qtbot):
    mark(window, qtbot, BLOCK)
    at = node_centre(window, "conv2d_2")
    offered = right_click(window, at, "Unmark block_1")
    assert offered[-1] == "Unmark block_1" and "Mark as Block" not in offered
    assert window.doc.project.graph.blocks == {}
    assert window.doc.undo_stack.undoText() == "Unmark block_1"


def test_the_search_tab_adds_a_block_s_repeats_and_refuses_a_count_that_cannot_build(
        window, qtbot):
    mark(window, qtbot, BLOCK)
    show_tab(qtbot, window, "Search")
    panel = window.search
    panel.add_menu.aboutToShow.emit()
    menus = {a.text(): a.menu() for a in panel.add_menu.actions()}
    entry = next(a for a in menus["block_1"].actions() if a.text() == REPEATS_ENTRY)
    entry.trigger()
    dialog = panel.dialog
    qtbot.waitExposed(dialog)
    type_over(qtbot, dialog.values, "1, 4")
    assert not dialog.ok.isEnabled()
    assert "block_1 cannot be in the model 4 times" in dialog.preview.text()
    steps = window.doc.undo_stack.count()
    type_over(qtbot, dialog.values, "0, 1, 2, 3")
    assert dialog.ok.isEnabled(), dialog.preview.text()
    qtbot.mouseClick(dialog.ok, LEFT)
    assert window.doc.project.search.dimensions == [
        Dimension("block.block_1.repeats", values=[0, 1, 2, 3])]
    assert window.doc.undo_stack.count() == steps + 1
    assert panel.dimensions.item(0).text() == "block_1 · Repeats: 0, 1, 2, 3"


def test_applying_a_trial_that_repeats_the_block_places_its_copies_under_it(
        window, qtbot, tmp_path):
    mark(window, qtbot, ["conv2d_3"])
    repeats = "block.block_1.repeats"
    path = tmp_path / "demo.studio.json"
    project = window.doc.project.copy()
    project.search = SearchSettings(dimensions=[Dimension(repeats, values=[1, 3])])
    save_project(project, path)
    window.doc.open(path)
    write_state(search_folder(window.doc.place), SearchState(project, 1, 2, [
        TrialRecord(0, {repeats: 1}, "finished", 0.9, seconds=2.0, epochs=[]),
        TrialRecord(1, {repeats: 3}, "finished", 0.95, seconds=2.0, epochs=[])]))
    show_tab(qtbot, window, "Search")
    window.search.show_last_search()
    steps = window.doc.undo_stack.count()
    qtbot.mouseClick(window.search.apply_button, LEFT)  # the best: three of it
    assert window.doc.undo_stack.count() == steps + 1
    graph, positions = window.doc.project.graph, window.doc.project.positions
    assert graph.inputs_of("flatten_1") == ["conv2d_5"]
    assert graph.inputs_of("conv2d_5") == ["conv2d_4"] and graph.inputs_of("conv2d_4") == [
        "conv2d_3"]
    column = [positions[i] for i in ("conv2d_3", "conv2d_4", "conv2d_5", "flatten_1")]
    assert len({x for x, _ in column}) == 1 and [y for _, y in column] == sorted(
        y for _, y in column)  # one under another, the layers after them pushed down
    window.undo_action.trigger()
    assert "conv2d_4" not in window.doc.project.graph.ids()
