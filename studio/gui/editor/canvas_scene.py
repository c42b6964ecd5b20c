"""The canvas scene: mirrors the document's graph and turns gestures into undoable edits."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QPen, QTransform
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSceneMouseEvent,
)

from studio.core.base.messages import count
from studio.core.build.analysis import Analysis
from studio.core.model.blocks import block_problem, new_block_name
from studio.core.model.describe import key_params
from studio.core.model.graph import GraphError, Node
from studio.core.model.layout import (
    H_GAP,
    NODE_HEIGHT,
    NODE_WIDTH,
    auto_layout,
    clear_offset,
    complete_positions,
    lanes,
    place_new_nodes,
)
from studio.core.model.params import format_shape
from studio.core.model.registry import REGISTRY
from studio.core.project.document import Project, ProjectFileError
from studio.core.project.templates import TEMPLATES, from_template
from studio.core.search.space import repeats_target
from studio.gui.editor.canvas_blocks import BlockItem
from studio.gui.editor.canvas_items import (
    SELECTED_COLOUR,
    EdgeItem,
    NodeItem,
    NodeLook,
    OverviewDrawing,
    wire_path,
)
from studio.gui.widgets.document import ProjectDocument


def _checked_fragment(data: Any) -> Project:
    """Copied layers as a project of their own, validated as a project file would be (which
    checks every layer's parameters); raise ProjectFileError saying what is wrong."""
    if not isinstance(data, dict):
        raise ProjectFileError("the clipboard holds no layers.")
    document = Project().to_dict()
    document["model"] = {"nodes": data.get("nodes"), "edges": data.get("edges")}
    document["positions"] = data.get("positions", {})
    return Project.from_dict(document)


class CanvasScene(QGraphicsScene):
    """Shows every layer as a node and every connection as an edge; edits go to the document."""

    message = Signal(str)
    """A short note for the status bar, e.g. why a connection was refused."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.nodes: dict[str, NodeItem] = {}
        self.edges: dict[tuple[str, str], EdgeItem] = {}
        self.blocks: dict[str, BlockItem] = {}
        self._wire: QGraphicsPathItem | None = None
        self._wire_source: NodeItem | None = None
        self.overview = False
        """The view draws nodes and wires itself (overview_drawing); the items draw nothing,
        but are still there to be clicked, selected and moved."""
        self.overview_drawing = OverviewDrawing(self.nodes, self.edges)
        self.lanes: list[tuple[float, float]] = []
        """The free strips between the nodes' columns, where wires across them run; edges
        share this list, updated in place."""
        doc.changed.connect(self.sync)
        self.sync()

    # Mirroring the document

    def positions(self) -> dict[str, list[float]]:
        """Every node's top-left position: stored ones, and an automatic layout for the rest."""
        return complete_positions(self.doc.project.graph, self.doc.project.positions)

    def _look(self, node: Node, analysis: Analysis) -> NodeLook:
        layer = REGISTRY[node.type]
        report = analysis.nodes.get(node.id)
        shape = format_shape(report.output_shape) if report else ""
        summary = key_params(node)
        return NodeLook(
            node_id=node.id,
            layer_type=node.type,
            category=layer.category,
            key_params="" if summary == shape else summary,  # an Input's shape, shown once
            shape=shape,
            params=f"{report.params:,}" if report else "",
            problem=analysis.problem_at(node.id) or "",
            has_input=layer.max_inputs > 0,
            help=layer.help,
        )

    def sync(self) -> None:
        """Add, update and remove items so the scene shows the document; keeps the selection."""
        graph = self.doc.project.graph
        analysis = self.doc.analysis()
        positions = self.positions()
        self.overview_drawing.forget()
        for node_id in set(self.nodes) - set(graph.ids()):
            self._remove_node_item(node_id)
        for node in graph.nodes:
            look = self._look(node, analysis)
            item = self.nodes.get(node.id)
            if item is None:
                item = NodeItem(look, self.overview_drawing)
                self._add(item)
                self.nodes[node.id] = item
            elif item.look != look:
                item.show_look(look)
            x, y = positions[node.id]
            if item.pos() != QPointF(x, y):
                item.setPos(x, y)
        strips = lanes(positions.values())
        if strips != self.lanes:
            self.lanes[:] = strips
            for edge in self.edges.values():
                edge.reroute()
        wanted = set(graph.edges)
        for key in set(self.edges) - wanted:
            self._remove_edge_item(key)
        for src, dst in wanted - set(self.edges):
            edge = EdgeItem(self.nodes[src], self.nodes[dst], self.lanes)
            self._add(edge)
            self.edges[(src, dst)] = edge
        self._sync_blocks()

    def _sync_blocks(self) -> None:
        graph = self.doc.project.graph
        for name in set(self.blocks) - set(graph.blocks):
            block = self.blocks.pop(name)
            block.frame([], "")
            self.removeItem(block)
        for name, ids in graph.blocks.items():
            block = self.blocks.get(name)
            if block is None:
                block = self.blocks[name] = BlockItem(name)
                self.addItem(block)
            block.frame([self.nodes[i] for i in ids], block_problem(graph, ids, name) or "")

    def _add(self, item: NodeItem | EdgeItem) -> None:
        item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, self.overview)
        self.addItem(item)

    def show_overview(self, on: bool) -> None:
        """Tell the nodes and wires to draw nothing while the view draws the overview (Qt then
        skips them without a call into Python), and to draw themselves again after."""
        if on == self.overview:
            return
        self.overview = on
        for item in (*self.nodes.values(), *self.edges.values()):
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, on)

    def _remove_edge_item(self, key: tuple[str, str]) -> None:
        edge = self.edges.pop(key)
        edge.detach()
        self.removeItem(edge)

    def _remove_node_item(self, node_id: str) -> None:
        for key in [k for k in self.edges if node_id in k]:
            self._remove_edge_item(key)
        self.removeItem(self.nodes.pop(node_id))

    # Selection

    def selected_ids(self) -> list[str]:
        """Ids of the selected nodes, in document order."""
        chosen = {i.node_id for i in self.selectedItems() if isinstance(i, NodeItem)}
        return [i for i in self.doc.project.graph.ids() if i in chosen]

    def select_ids(self, ids: list[str]) -> None:
        """Select exactly the nodes ``ids``."""
        self.clearSelection()
        for node_id in ids:
            if node_id in self.nodes:
                self.nodes[node_id].setSelected(True)

    # Edits: each is one undoable command on the document

    def _edit(self, text: str, change) -> bool:
        try:
            self.doc.edit(text, change)
        except GraphError as exc:
            self.message.emit(str(exc))
            return False
        return True

    def add_layer(self, layer_type: str, at: QPointF) -> str:
        """Add a layer centred at ``at`` (moved right if it would cover a layer there), or
        after the one selected node; return its id."""
        graph = self.doc.project.graph
        node = Node(graph.new_id(layer_type), layer_type, REGISTRY[layer_type].defaults())
        selected = self.selected_ids()
        source = selected[0] if len(selected) == 1 and REGISTRY[layer_type].max_inputs else None
        position = [at.x() - NODE_WIDTH / 2, at.y() - NODE_HEIGHT / 2]

        def change(project: Project) -> None:
            g = project.graph
            project.positions = complete_positions(g, project.positions)
            if source is None:
                dx = clear_offset({node.id: position}, list(project.positions.values()))
                g.add(node)
                project.positions[node.id] = [position[0] + dx, position[1]]
                return
            successors = g.outputs_of(source)
            if len(successors) == 1 and g.inputs_of(successors[0]) == [source]:
                g.insert_between(source, successors[0], node)
            else:
                g.add(node)
                g.connect(source, node.id)
            place_new_nodes(g, project.positions)

        if self._edit(f"Add {layer_type}", change):
            self.select_ids([node.id])
        return node.id

    def mark_block(self) -> str | None:
        """Mark the selected layers as a new block (one undo step) and return its name, or
        say in the status bar why they cannot be one."""
        graph = self.doc.project.graph
        ids = self.selected_ids()
        problem = block_problem(graph, ids)
        if problem:
            self.message.emit(problem)
            return None
        name = new_block_name(graph)
        self._edit(f"Mark {name}", lambda project: project.graph.blocks.update({name: ids}))
        return name

    def unmark_block(self, name: str) -> None:
        """Forget block ``name``, and stop searching its repeats: one undo step. Its layers
        stay."""
        target = repeats_target(name)

        def change(project: Project) -> None:
            project.graph.blocks.pop(name, None)
            project.search.dimensions = [d for d in project.search.dimensions
                                         if d.target != target]

        self._edit(f"Unmark {name}", change)

    def connect_nodes(self, source: str, target: str) -> bool:
        """Connect ``source``'s output to ``target``'s input, or say why not."""
        return self._edit(f"Connect {source} → {target}",
                          lambda project: project.graph.connect(source, target))

    def delete_selected(self) -> None:
        """Delete the selected nodes and connections."""
        ids = self.selected_ids()
        edges = [i.key for i in self.selectedItems() if isinstance(i, EdgeItem)]
        if not ids and not edges:
            return

        def change(project: Project) -> None:
            for src, dst in edges:
                if (src, dst) in project.graph.edges:
                    project.graph.disconnect(src, dst)
            project.graph.dissolve(ids)
            project.prune_positions()

        what = [count(len(ids), "layer")] if ids else []
        what += [count(len(edges), "connection")] if edges else []
        self._edit("Delete " + " and ".join(what), change)

    def fragment_of_selection(self) -> dict[str, Any] | None:
        """The selected nodes, their connections and positions, as plain data to copy."""
        ids = self.selected_ids()
        if not ids:
            return None
        fragment = self.doc.project.graph.fragment(ids)
        positions = self.positions()
        return {
            "nodes": [asdict(n) for n in fragment.nodes],
            "edges": [list(e) for e in fragment.edges],
            "positions": {i: list(positions[i]) for i in ids},
        }

    def insert_template(self, name: str) -> list[str]:
        """Add the template ``name`` to the right of the model, as one step; select it."""
        template = from_template(name)
        layout = auto_layout(template.graph)
        current = self.positions().values()
        left = max((x for x, _ in current), default=-NODE_WIDTH - H_GAP) + NODE_WIDTH + 2 * H_GAP
        top = min((y for _, y in current), default=0.0)
        x0 = min(x for x, _ in layout.values())
        data = {
            "nodes": [asdict(n) for n in template.graph.nodes],
            "edges": [list(e) for e in template.graph.edges],
            "positions": {i: [x - x0 + left, y + top] for i, (x, y) in layout.items()},
        }
        return self.paste(data, f"Insert {TEMPLATES[name].title}")

    def paste(self, data: dict[str, Any], text: str = "") -> list[str]:
        """Add a copied fragment with fresh ids where it was copied from, or, if layers are
        there, moved right until it covers none of them (so a duplicate sits beside its
        original, every port in sight); select it.

        The fragment may come from the clipboard, so it is checked like a project file first;
        if it is not valid, nothing changes and ``message`` says why.
        """
        try:
            piece = _checked_fragment(data)
        except ProjectFileError as exc:
            self.message.emit(f"Cannot paste: {exc}")
            return []
        names: dict[str, str] = {}

        def change(project: Project) -> None:
            project.positions = complete_positions(project.graph, project.positions)
            spots = {old: list(piece.positions.get(old, (0.0, 0.0))) for old in piece.graph.ids()}
            dx = clear_offset(spots, list(project.positions.values()))
            names.update(project.graph.paste(piece.graph))
            for old, new in names.items():
                x, y = spots[old]
                project.positions[new] = [x + dx, y]

        if not self._edit(text or f"Paste {count(len(piece.graph.nodes), 'layer')}", change):
            return []
        self.select_ids(list(names.values()))
        return list(names.values())

    def move_selected_to_where_dragged(self) -> None:
        """Record where the user dropped dragged nodes as one undoable move."""
        stored = self.positions()
        moved = {i: [item.pos().x(), item.pos().y()] for i, item in self.nodes.items()
                 if [item.pos().x(), item.pos().y()] != stored[i]}
        if not moved:
            return

        def change(project: Project) -> None:
            project.positions = {**stored, **moved}

        self._edit(f"Move {count(len(moved), 'layer')}", change)

    def lay_out(self) -> None:
        """Arrange every node top to bottom, as one undoable step."""

        def change(project: Project) -> None:
            project.positions = {i: [x, y] for i, (x, y) in auto_layout(project.graph).items()}

        self._edit("Auto-layout", change)

    # The wire gesture: drag from an output port onto another node

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        item = self.itemAt(event.scenePos(), QTransform())
        if (event.button() == Qt.MouseButton.LeftButton and isinstance(item, NodeItem)
                and item.on_output_port(event.scenePos())):
            self._wire_source = item
            self._wire = QGraphicsPathItem(wire_path(item.output_port(), event.scenePos()))
            self._wire.setPen(QPen(SELECTED_COLOUR, 2, Qt.PenStyle.DashLine))
            self._wire.setZValue(2)
            self.addItem(self._wire)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if self._wire is not None:
            self._wire.setPath(wire_path(self._wire_source.output_port(), event.scenePos()))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if self._wire is not None:
            source = self._wire_source
            self.removeItem(self._wire)
            self._wire, self._wire_source = None, None
            targets = [i for i in self.items(event.scenePos())
                       if isinstance(i, NodeItem) and i is not source]
            if targets:
                self.connect_nodes(source.node_id, targets[0].node_id)
            event.accept()
            return
        super().mouseReleaseEvent(event)
        if event.button() == Qt.MouseButton.LeftButton:
            self.move_selected_to_where_dragged()
