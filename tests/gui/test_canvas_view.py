"""The canvas as a person sees it: nodes that stay put, fitting, quick add by part of a name,
readable node text and the overview of a large model."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QCursor, QFontMetrics, QPainterPathStroker
from PySide6.QtWidgets import QApplication

from studio.core.model.graph import Graph, Node
from studio.core.model.layout import ROW
from studio.core.model.registry import REGISTRY
from studio.core.project.document import Project
from studio.core.project.templates import from_template
from studio.gui.editor.canvas_items import OVERVIEW_ZOOM, PORT_RADIUS, NodeItem, NodeLook
from studio.gui.editor.palette import layers_matching
from tests.gui.support import click_palette_entry
from tests.gui.test_canvas import CTRL, LEFT, click_node, drop_layer, node_centre, wheel


def where(window) -> dict[str, tuple[QPointF, QPoint]]:
    """Every node's position in the scene and on screen (in the view)."""
    return {node_id: (item.pos(), window.canvas.mapFromScene(item.pos()))
            for node_id, item in window.scene.nodes.items()}


def model_centre_on_screen(window) -> QPointF:
    box = QRectF()
    for item in window.scene.nodes.values():
        box = box.united(item.sceneBoundingRect())
    return QPointF(window.canvas.mapFromScene(box.center()))


def in_view(window) -> set[str]:
    seen = window.canvas.mapToScene(window.canvas.viewport().rect()).boundingRect()
    return {i for i, item in window.scene.nodes.items()
            if seen.contains(item.sceneBoundingRect())}


def assert_centred(window) -> None:
    centre = QPointF(window.canvas.viewport().rect().center())
    offset = model_centre_on_screen(window) - centre
    assert abs(offset.x()) <= 2 and abs(offset.y()) <= 2, offset


def fitted(window, qtbot) -> None:
    """Wait for the window's first fit (it comes once the window shows)."""
    qtbot.waitUntil(lambda: in_view(window) == set(window.scene.nodes))


def test_the_demo_opens_fitted_and_centred_and_so_does_an_opened_project(window, qtbot):
    fitted(window, qtbot)
    assert_centred(window)
    assert window.canvas.zoom() <= 1.0

    wide = Graph([Node(f"d{i}", "Dense", {}) for i in range(6)])
    window.doc.replace(Project(name="Six side by side", graph=wide), None)
    assert in_view(window) == set(window.scene.nodes)
    assert_centred(window)


def test_adding_and_moving_nodes_leaves_the_others_where_they_are(window, qtbot):
    fitted(window, qtbot)
    before = where(window)
    viewport = window.canvas.viewport().rect()
    added = drop_layer(window, "Dense", QPoint(viewport.right() - 30, viewport.center().y()))
    after = where(window)
    assert {i: after[i] for i in before} == before

    start = node_centre(window, "flatten_1")
    qtbot.mousePress(window.canvas.viewport(), LEFT, pos=start)
    qtbot.mouseMove(window.canvas.viewport(), start + QPoint(150, 40))
    qtbot.mouseRelease(window.canvas.viewport(), LEFT, pos=start + QPoint(150, 40))
    assert window.doc.undo_stack.undoText() == "Move 1 layer"
    moved = where(window)
    assert moved["flatten_1"] != after["flatten_1"]
    assert {i: moved[i] for i in after if i != "flatten_1"} == {
        i: after[i] for i in after if i != "flatten_1"}

    window.undo_action.trigger()
    window.undo_action.trigger()
    assert added not in window.scene.nodes
    assert where(window) == before


def test_f_centres_the_model_even_after_it_grew_and_shrank(window, qtbot):
    small = Graph([Node("input_1", "Input", {"shape": [8]})])
    window.doc.replace(Project(name="Small", graph=small), None)
    canvas = window.canvas
    assert canvas.zoom() == 1.0, "a small model is shown at 100%"
    centre = canvas.viewport().rect().center()
    far = drop_layer(window, "Dense", centre + QPoint(400, -100))
    QApplication.processEvents()  # Qt grows the scene's rect once back in the event loop
    window.scene.select_ids([far])
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_Delete)
    QApplication.processEvents()
    wheel(window, 2)
    qtbot.mousePress(canvas.viewport(), Qt.MouseButton.MiddleButton, pos=QPoint(50, 50))
    qtbot.mouseMove(canvas.viewport(), QPoint(250, 90))
    qtbot.mouseRelease(canvas.viewport(), Qt.MouseButton.MiddleButton, pos=QPoint(250, 90))

    qtbot.keyClick(canvas, Qt.Key.Key_F)
    assert canvas.zoom() == 1.0
    assert in_view(window) == set(window.scene.nodes)
    assert_centred(window)


def assert_nothing_covered(scene) -> None:
    """No node's card overlaps another's, nor covers a port of another."""
    cards = {i: item.sceneBoundingRect() for i, item in scene.nodes.items()}
    for node_id, item in scene.nodes.items():
        ports = [item.input_port(), item.output_port()]
        for other, card in cards.items():
            if other != node_id:
                assert not card.intersects(cards[node_id]), (node_id, other)
                assert not any(card.adjusted(-PORT_RADIUS, 0, PORT_RADIUS, 0).contains(p)
                               for p in ports), (node_id, other)


def test_duplicate_puts_the_copy_beside_the_original_covering_no_port(window, qtbot):
    fitted(window, qtbot)
    scene = window.scene
    click_node(window, qtbot, "conv2d_1")
    qtbot.keyClick(window.canvas, Qt.Key.Key_D, CTRL)
    (copy,) = scene.selected_ids()
    original = scene.nodes["conv2d_1"]
    assert scene.nodes[copy].pos().y() == original.pos().y()
    assert scene.nodes[copy].pos().x() > original.pos().x()
    assert_nothing_covered(scene)


def test_a_layer_added_onto_another_moves_beside_it(window, qtbot):
    fitted(window, qtbot)
    window.scene.clearSelection()
    click_palette_entry(qtbot, window, "Dropout", double=True)  # added mid-view
    assert len(window.scene.nodes) == 10
    drop_layer(window, "Dense", node_centre(window, "flatten_1"))
    assert_nothing_covered(window.scene)


def open_quick_add(window, qtbot):
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_Slash)
    box = window.canvas.quick_add
    assert box.isVisible()
    return box


def added_type(window, qtbot, typed: str) -> str:
    """Open quick add, type ``typed`` and press Enter: the type of the layer added."""
    before = set(window.doc.project.graph.ids())
    window.scene.clearSelection()
    box = open_quick_add(window, qtbot)
    qtbot.keyClicks(box, typed)
    assert box.completer().popup().model().index(0, 0).data() == layers_matching(typed)[0]
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert not box.isVisible()
    (new,) = set(window.doc.project.graph.ids()) - before
    return window.doc.project.graph.node(new).type


def test_quick_add_takes_part_of_a_name_and_adds_the_first_match(window, qtbot):
    assert added_type(window, qtbot, "maxp") == "MaxPooling2D"
    assert added_type(window, qtbot, "DENSE") == "Dense"
    assert added_type(window, qtbot, "pool") == "MaxPooling2D"
    assert added_type(window, qtbot, "norm") == "BatchNormalization"

    steps = window.doc.undo_stack.count()
    box = open_quick_add(window, qtbot)
    qtbot.keyClicks(box, "zzz")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert box.isVisible() and window.doc.undo_stack.count() == steps
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    assert not box.isVisible()


def test_matches_starting_with_the_text_come_first():
    assert layers_matching("av") == ["Average", "AveragePooling2D", "AveragePooling1D",
                                     "GlobalAveragePooling2D", "GlobalAveragePooling1D"]
    assert layers_matching("pool") == [
        "MaxPooling2D", "MaxPooling1D", "AveragePooling2D", "AveragePooling1D",
        "GlobalMaxPooling2D", "GlobalMaxPooling1D", "GlobalAveragePooling2D",
        "GlobalAveragePooling1D"]
    assert layers_matching("  ") == []


def test_quick_add_opens_inside_the_canvas_near_its_edge(window, qtbot):
    viewport = window.canvas.viewport()
    area = viewport.geometry()
    QCursor.setPos(viewport.mapToGlobal(viewport.rect().bottomRight() - QPoint(3, 3)))
    box = open_quick_add(window, qtbot)
    assert box.geometry().bottomRight() == area.bottomRight(), "moved in from the corner"
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    QCursor.setPos(viewport.mapToGlobal(QPoint(2, 2)))
    box = open_quick_add(window, qtbot)
    assert box.geometry().topLeft() == area.topLeft() + QPoint(2, 2), "opens at the mouse"


def look_of(layer_type: str, node_id: str, shape: str = "8") -> NodeLook:
    return NodeLook(node_id=node_id, layer_type=layer_type, category="Core", key_params="",
                    shape=shape, params="0", problem="", has_input=True, help="")


def test_node_text_is_readable_and_ids_are_whole(window):
    for layer_type in REGISTRY:
        node_id = Graph().new_id(layer_type).replace("_1", "_12")
        item = NodeItem(look_of(layer_type, node_id))
        texts = [line.text for line in item.lines]
        assert layer_type in texts and node_id in texts, texts
        for line in item.lines:
            assert line.font.pixelSize() >= 11
            assert QFontMetrics(line.font).horizontalAdvance(line.text) <= line.rect.width()
            assert line.colour.lightness() <= 0x40, line.colour.name()
    assert window.scene.nodes["input_1"].lines[0].font.pixelSize() >= 13


def test_the_input_node_shows_its_shape_once(window):
    text = " ".join(line.text for line in window.scene.nodes["input_1"].lines)
    assert text.count("28 × 28 × 1") == 1, text


def show_long_chain(window) -> None:
    """A model of 80 layers placed in a column (auto-layout would wrap it into several),
    which the view fits only far out."""
    chain = [Node("input_1", "Input", {"shape": [8]})]
    chain += [Node(f"dense_{i}", "Dense", {}) for i in range(1, 80)]
    column = {node.id: [0.0, i * ROW] for i, node in enumerate(chain)}
    window.doc.replace(Project(name="Long", graph=Graph.from_chain(chain), positions=column),
                       None)


def test_far_out_the_view_draws_an_overview_whose_nodes_can_still_be_selected(window, qtbot):
    show_long_chain(window)
    canvas, scene = window.canvas, window.scene
    assert canvas.zoom() < OVERVIEW_ZOOM, "80 layers fit the view only far out"
    canvas.viewport().repaint()
    assert scene.overview
    assert all(item.flags() & item.GraphicsItemFlag.ItemHasNoContents
               for item in scene.nodes.values())
    image = canvas.viewport().grab().toImage()
    centre = node_centre(window, "dense_40")
    assert image.pixelColor(centre).name() == scene.nodes["dense_40"].fill.name()

    click_node(window, qtbot, "dense_40")
    assert scene.selected_ids() == ["dense_40"]
    canvas.viewport().repaint()
    image = canvas.viewport().grab().toImage()
    assert image.pixelColor(node_centre(window, "dense_40")).name() == "#1a73e8"

    canvas.resetTransform()
    canvas.centerOn(scene.nodes["dense_40"])
    canvas.viewport().repaint()
    assert not scene.overview
    assert not any(item.flags() & item.GraphicsItemFlag.ItemHasNoContents
                   for item in scene.nodes.values())
def test_the_overview_follows_a_node_dragged_then_deleted(window, qtbot):
    # The overview keeps its boxes between frames: a drag and an edit must still show.
    show_long_chain(window)
    scene, viewport = window.scene, window.canvas.viewport()
    viewport.repaint()
    assert scene.overview
    start = node_centre(window, "dense_40")
    end = start + QPoint(60, 0)
    qtbot.mousePress(viewport, LEFT, pos=start)
    qtbot.mouseMove(viewport, start + QPoint(30, 0))
    qtbot.mouseMove(viewport, end)
    viewport.repaint()
    image = viewport.grab().toImage()
    assert image.pixelColor(end).name() == "#1a73e8", "the dragged node, selected, where it is"
    assert image.pixelColor(start).name() == "#ffffff", "nothing left where it was"
    qtbot.mouseRelease(viewport, LEFT, pos=end)
    scene.delete_selected()
    viewport.repaint()
    assert "dense_40" not in scene.nodes
    assert viewport.grab().toImage().pixelColor(end).name() == "#ffffff"




def test_a_wire_that_skips_one_layer_bows_out_beside_it(window, qtbot):
    window.doc.replace(from_template("transformer_text"), None)
    attention = window.scene.nodes["multi_head_attention_1"].sceneBoundingRect()
    skip = window.scene.edges[("embedding_1", "add_1")].sceneBoundingRect()
    assert skip.top() < attention.top() and skip.bottom() > attention.bottom()
    assert skip.right() > attention.right()  # not hidden behind the layer it skips
    next_row = window.scene.edges[("embedding_1", "multi_head_attention_1")].sceneBoundingRect()
    assert next_row.right() < attention.right()


def test_a_u_net_opens_in_readable_columns_its_wires_running_past_every_layer(window, qtbot):
    window.doc.replace(from_template("small_unet_segmenter"), None)
    scene = window.scene
    assert window.canvas.zoom() > OVERVIEW_ZOOM, "its layers are drawn, not an overview"
    assert not scene.overview and scene.lanes
    stroker = QPainterPathStroker()
    for (source, target), edge in scene.edges.items():
        wire = stroker.createStroke(edge.path())
        for node_id, node in scene.nodes.items():
            if node_id not in (source, target):
                assert not wire.intersects(node.sceneBoundingRect()), (source, target, node_id)
