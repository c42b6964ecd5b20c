"""The node canvas, driven with the mouse and keyboard as a person would."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QWheelEvent
from PySide6.QtWidgets import QApplication

from studio.core.model.layout import NODE_HEIGHT, NODE_WIDTH
from studio.core.project.document import Project
from tests.gui.support import RUN_TIMEOUT_MS, click_row, row_ids, type_into

CTRL = Qt.KeyboardModifier.ControlModifier
LEFT = Qt.MouseButton.LeftButton


def empty_canvas(window, qtbot):
    """A new, empty project with the canvas focused at 60% zoom, so a small model fits."""
    window.doc.replace(Project(name="Branched"), None)
    window.canvas.resetTransform()
    window.canvas.zoom_by(0.6)
    window.canvas.centerOn(QPointF(0, 0))
    window.canvas.setFocus()
    return window.scene


def drop_layer(window, layer_type: str, at: QPoint) -> str:
    """Drag ``layer_type`` from the palette and drop it at view point ``at``; its new id."""
    before = set(window.scene.nodes)
    mime = window.palette.tree.mimeData([window.palette.item_for(layer_type)])
    viewport = window.canvas.viewport()
    enter = QDragEnterEvent(at, Qt.DropAction.CopyAction, mime, LEFT, Qt.KeyboardModifier(0))
    QApplication.sendEvent(viewport, enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(at), Qt.DropAction.CopyAction, mime, LEFT, Qt.KeyboardModifier(0))
    QApplication.sendEvent(viewport, drop)
    (added,) = set(window.scene.nodes) - before
    return added


def node_centre(window, node_id: str) -> QPoint:
    item = window.scene.nodes[node_id]
    return window.canvas.mapFromScene(item.mapToScene(QPointF(NODE_WIDTH / 2, NODE_HEIGHT / 2)))


def drag_wire(window, qtbot, source: str, target: str) -> None:
    """Press on ``source``'s output port, drag onto ``target`` and let go."""
    viewport = window.canvas.viewport()
    start = window.canvas.mapFromScene(window.scene.nodes[source].output_port())
    end = node_centre(window, target)
    qtbot.mousePress(viewport, LEFT, pos=start)
    qtbot.mouseMove(viewport, (start + end) / 2)
    qtbot.mouseMove(viewport, end)
    qtbot.mouseRelease(viewport, LEFT, pos=end)


NO_MODIFIER = Qt.KeyboardModifier(0)


def click_node(window, qtbot, node_id: str, modifier=NO_MODIFIER) -> None:
    qtbot.mouseClick(window.canvas.viewport(), LEFT, modifier, pos=node_centre(window, node_id))


def test_build_a_branched_model_on_the_canvas_then_train_it(window, qtbot):
    scene = empty_canvas(window, qtbot)
    ids = {
        "in": drop_layer(window, "Input", QPoint(300, 20)),
        "flat": drop_layer(window, "Flatten", QPoint(300, 90)),
        "a": drop_layer(window, "Dense", QPoint(160, 160)),
        "b": drop_layer(window, "Dense", QPoint(440, 160)),
        "sum": drop_layer(window, "Add", QPoint(300, 230)),
        "out": drop_layer(window, "Dense", QPoint(300, 300)),
    }
    assert window.doc.undo_stack.count() == 6
    for source, target in (("in", "flat"), ("flat", "a"), ("flat", "b"), ("a", "sum"),
                           ("b", "sum"), ("sum", "out")):
        drag_wire(window, qtbot, ids[source], ids[target])
    graph = window.doc.project.graph
    assert graph.inputs_of(ids["sum"]) == [ids["a"], ids["b"]]
    assert len(graph.edges) == 6 and set(scene.edges) == set(graph.edges)
    assert window.doc.undo_stack.undoText() == f"Connect {ids['sum']} → {ids['out']}"

    # The output is a 64-unit relu Dense: a problem, pinned to that node.
    assert not window.training.start_button.isEnabled()
    assert "must output 10 values" in scene.nodes[ids["out"]].look.problem

    click_node(window, qtbot, ids["out"])
    assert window.inspector.node_id == ids["out"]
    type_into(qtbot, window.inspector.editors["units"].widget, "10")
    qtbot.keyClick(window.inspector.editors["units"].widget, Qt.Key.Key_Return)
    window.inspector.editors["activation"].widget.setCurrentText("softmax")
    assert window.doc.analysis().ok, window.doc.analysis().problems
    assert scene.nodes[ids["out"]].look.shape == "10"
    assert window.training.start_button.isEnabled()

    window.undo_action.trigger()
    window.undo_action.trigger()
    out = window.doc.project.graph.node(ids["out"])
    assert (out.params["units"], out.params["activation"]) == (64, "relu")
    assert not window.training.start_button.isEnabled()
    window.redo_action.trigger()
    window.redo_action.trigger()
    assert window.doc.analysis().ok
    assert scene.nodes[ids["out"]].look.key_params == "10 units, softmax"

    type_into(qtbot, window.training.epochs, "1")
    with qtbot.waitSignal(window.training.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(window.training.start_button, LEFT)
    assert finished.args == ["finished"]
    assert window.training.status.text().startswith("Finished in ")


def test_a_connection_that_would_make_a_loop_is_refused_with_a_reason(window, qtbot):
    scene = empty_canvas(window, qtbot)
    a = drop_layer(window, "Dense", QPoint(200, 40))
    b = drop_layer(window, "Dense", QPoint(200, 200))
    drag_wire(window, qtbot, a, b)
    steps = window.doc.undo_stack.count()
    drag_wire(window, qtbot, b, a)
    assert window.doc.undo_stack.count() == steps
    assert set(scene.edges) == {(a, b)}
    assert "loop" in window.statusBar().currentMessage()


def test_delete_copy_paste_and_duplicate_are_single_undo_steps(window, qtbot):
    scene = window.scene
    window.canvas.setFocus()
    click_node(window, qtbot, "dense_1")
    click_node(window, qtbot, "dense_2", CTRL)
    assert scene.selected_ids() == ["dense_1", "dense_2"]

    qtbot.keyClick(window.canvas, Qt.Key.Key_D, CTRL)
    graph = window.doc.project.graph
    assert len(graph.nodes) == 11
    new = scene.selected_ids()
    assert len(new) == 2 and (new[0], new[1]) in graph.edges
    assert window.doc.undo_stack.undoText() == "Paste 2 layers"

    qtbot.keyClick(window.canvas, Qt.Key.Key_Delete)
    assert len(window.doc.project.graph.nodes) == 9
    qtbot.keyClick(window.canvas, Qt.Key.Key_Z, CTRL)
    assert len(window.doc.project.graph.nodes) == 11

    click_node(window, qtbot, "conv2d_1")
    qtbot.keyClick(window.canvas, Qt.Key.Key_C, CTRL)
    qtbot.keyClick(window.canvas, Qt.Key.Key_V, CTRL)
    assert len(window.doc.project.graph.nodes) == 12
    assert window.doc.undo_stack.undoText() == "Paste 1 layer"


def test_dragging_a_node_is_one_move_and_auto_layout_is_one_step(window, qtbot):
    scene = window.scene
    start = node_centre(window, "flatten_1")
    before = scene.nodes["flatten_1"].pos()
    viewport = window.canvas.viewport()
    qtbot.mousePress(viewport, LEFT, pos=start)
    qtbot.mouseMove(viewport, start + QPoint(30, 10))
    qtbot.mouseMove(viewport, start + QPoint(80, 20))
    qtbot.mouseRelease(viewport, LEFT, pos=start + QPoint(80, 20))
    assert scene.nodes["flatten_1"].pos() != before
    assert window.doc.undo_stack.undoText() == "Move 1 layer"
    assert window.doc.project.positions["flatten_1"][0] != before.x()

    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_L, CTRL)
    assert window.doc.undo_stack.undoText() == "Auto-layout"
    assert scene.nodes["flatten_1"].pos() == before
    window.undo_action.trigger()
    assert scene.nodes["flatten_1"].pos() != before


def test_quick_add_by_name_adds_after_the_selected_node(window, qtbot):
    click_node(window, qtbot, "flatten_1")
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_Slash)
    box = window.canvas.quick_add
    assert box.isVisible()
    qtbot.keyClicks(box, "Dropout")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert not box.isVisible()
    graph = window.doc.project.graph
    assert graph.chain()[7] == "dropout_1"
    assert graph.inputs_of("dropout_1") == ["flatten_1"]


def test_list_and_canvas_stay_in_sync(window, qtbot):
    click_row(qtbot, window, "dense_1")
    assert window.scene.selected_ids() == ["dense_1"]
    window.model_list.remove_selected()
    assert "dense_1" not in window.scene.nodes
    assert set(window.scene.edges) == set(window.doc.project.graph.edges)
    assert row_ids(window) == window.doc.project.graph.chain()


def wheel(window, notches: int) -> None:
    """Turn the mouse wheel over the middle of the canvas."""
    viewport = window.canvas.viewport()
    at = QPointF(viewport.rect().center())
    event = QWheelEvent(at, QPointF(viewport.mapToGlobal(at.toPoint())), QPoint(),
                        QPoint(0, 120 * notches), Qt.MouseButton.NoButton, NO_MODIFIER,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, event)


def test_wheel_zooms_middle_drag_pans_and_fit_shows_every_node(window, qtbot):
    canvas = window.canvas
    before = canvas.zoom()
    wheel(window, 3)
    assert canvas.zoom() > before * 1.4
    wheel(window, -1)
    assert before < canvas.zoom() < before * 1.4

    viewport = canvas.viewport()
    bar = canvas.verticalScrollBar()
    scrolled = bar.value()
    centre = viewport.rect().center()
    qtbot.mousePress(viewport, Qt.MouseButton.MiddleButton, pos=centre)
    qtbot.mouseMove(viewport, centre - QPoint(0, 60))
    qtbot.mouseRelease(viewport, Qt.MouseButton.MiddleButton, pos=centre - QPoint(0, 60))
    assert bar.value() == scrolled + 60

    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_F)
    view = canvas.mapToScene(viewport.rect()).boundingRect()
    for item in window.scene.nodes.values():
        assert view.contains(item.sceneBoundingRect())
    assert canvas.zoom() <= 1.0

def test_a_one_click_fix_is_one_undo_step_and_places_the_new_layer(window, qtbot):
    scene = window.scene
    click_node(window, qtbot, "flatten_1")
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_Delete)
    assert "dense_1" in scene.nodes and scene.nodes["dense_1"].look.problem

    click_node(window, qtbot, "dense_1")
    buttons = {b.text(): b for b in window.inspector.fix_buttons}
    assert set(buttons) == {"Insert Flatten before dense_1",
                            "Insert GlobalAveragePooling2D before dense_1"}
    steps = window.doc.undo_stack.count()
    qtbot.mouseClick(buttons["Insert GlobalAveragePooling2D before dense_1"], LEFT)
    assert window.doc.undo_stack.count() == steps + 1
    assert window.doc.analysis().ok
    graph = window.doc.project.graph
    (pool,) = [n.id for n in graph.nodes if n.type == "GlobalAveragePooling2D"]
    assert graph.inputs_of(pool) == ["conv2d_3"] and graph.inputs_of("dense_1") == [pool]
    above, new, below = (scene.nodes[i].pos() for i in ("conv2d_3", pool, "dense_1"))
    assert above.x() == new.x() == below.x() and above.y() < new.y() < below.y()
    assert window.inspector.fix_buttons == []

    window.undo_action.trigger()
    assert pool not in scene.nodes and not window.doc.analysis().ok


def test_right_clicking_a_layer_offers_its_fixes_duplicate_and_delete(window, qtbot):
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QContextMenuEvent

    project = window.doc.project.copy()
    project.graph.dissolve(["flatten_1"])
    window.doc.replace(project, None)
    window.scene.select_ids(["dense_1"])
    window.canvas.ensureVisible(window.scene.nodes["dense_1"])
    offered = []

    def choose():
        menu = QApplication.activePopupWidget()
        offered.extend(a.text() for a in menu.actions() if a.text())
        (fix,) = [a for a in menu.actions() if a.text() == "Insert Flatten before dense_1"]
        fix.trigger()
        menu.close()

    QTimer.singleShot(0, choose)
    at = node_centre(window, "dense_1")
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at,
                              window.canvas.viewport().mapToGlobal(at))
    QApplication.sendEvent(window.canvas.viewport(), event)
    assert offered == ["Insert Flatten before dense_1",
                       "Insert GlobalAveragePooling2D before dense_1", "Duplicate", "Delete",
                       "Mark as Block"]
    assert window.doc.analysis().ok
    assert window.doc.undo_stack.undoText() == "Insert Flatten before dense_1"


def test_bad_connections_are_explained_at_the_node(window, qtbot):
    scene = empty_canvas(window, qtbot)
    source = drop_layer(window, "Input", QPoint(300, 20))
    flat = drop_layer(window, "Flatten", QPoint(300, 90))
    wide = drop_layer(window, "Dense", QPoint(160, 160))
    narrow = drop_layer(window, "Dense", QPoint(440, 160))
    merge = drop_layer(window, "Add", QPoint(300, 230))
    loose = drop_layer(window, "Dropout", QPoint(560, 300))
    for src, dst in ((source, flat), (flat, wide), (flat, narrow), (wide, merge),
                     (narrow, merge)):
        drag_wire(window, qtbot, src, dst)
    click_node(window, qtbot, narrow)
    type_into(qtbot, window.inspector.editors["units"].widget, "32")
    qtbot.keyClick(window.inspector.editors["units"].widget, Qt.Key.Key_Return)

    assert scene.nodes[merge].look.problem == (
        "Add needs inputs of the same shape, but got 64 and 32.")
    assert scene.nodes[loose].look.problem == "Nothing is connected to this layer's input."
    assert "Problem:" in scene.nodes[merge].toolTip()
    assert not window.training.start_button.isEnabled()


def test_choosing_from_the_quick_add_list_with_enter_adds_one_layer(window, qtbot):
    window.canvas.setFocus()
    steps = window.doc.undo_stack.count()
    qtbot.keyClick(window.canvas, Qt.Key.Key_Slash)
    box = window.canvas.quick_add
    qtbot.keyClicks(box, "drop")
    popup = box.completer().popup()
    qtbot.waitUntil(popup.isVisible)
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert window.doc.undo_stack.count() == steps + 1
    assert [n.type for n in window.doc.project.graph.nodes].count("Dropout") == 1


def test_pasting_something_that_is_not_valid_layers_changes_nothing(window, qtbot):
    import json

    from PySide6.QtGui import QGuiApplication

    window.canvas.setFocus()
    before = window.doc.project
    for nodes, reason in (
        ([{"id": "x", "type": "Conv4D", "params": {}}], "unknown type 'Conv4D'"),
        ([{"id": "x", "type": "Dense", "params": {"units": -5}}],
         "Layer 'x': Units must be at least 1, not -5."),
        ("nonsense", "is not valid"),
    ):
        clip = {"layer_studio_fragment": 1, "nodes": nodes, "edges": []}
        QGuiApplication.clipboard().setText(json.dumps(clip))
        qtbot.keyClick(window.canvas, Qt.Key.Key_V, CTRL)
        assert window.doc.project is before
        message = window.statusBar().currentMessage()
        assert message.startswith("Cannot paste: ") and reason in message, message
