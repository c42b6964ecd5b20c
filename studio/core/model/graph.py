"""The model as a graph of layer nodes; a list of layers is only a view of a chain."""

from __future__ import annotations

import copy
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from studio.core.model.registry import layer_type


class GraphError(ValueError):
    """The graph cannot do what was asked; the message is meant for a person."""


@dataclass
class Node:
    """One layer in the model: a unique id, its layer type and its parameter values."""

    id: str
    type: str
    params: dict[str, Any] = field(default_factory=dict)

    def resolved_params(self) -> dict[str, Any]:
        """The parameters with defaults filled in from the layer registry."""
        return layer_type(self.type).resolved(self.params)


@dataclass
class Graph:
    """Nodes and directed edges. The order of a node's incoming edges is its input order.

    ``blocks`` names groups of nodes a person marked (``studio.core.model.blocks``): name ->
    member ids in document order. A node is in at most one block; removing it leaves its
    block, and a block left empty goes.
    """

    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    blocks: dict[str, list[str]] = field(default_factory=dict)

    def node(self, node_id: str) -> Node:
        """The node with ``node_id``."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def ids(self) -> list[str]:
        """Node ids in document order."""
        return [n.id for n in self.nodes]

    def inputs_of(self, node_id: str) -> list[str]:
        """Ids feeding ``node_id``, in input order."""
        return [src for src, dst in self.edges if dst == node_id]

    def outputs_of(self, node_id: str) -> list[str]:
        """Ids that ``node_id`` feeds."""
        return [dst for src, dst in self.edges if src == node_id]

    def input_map(self) -> dict[str, list[str]]:
        """Every node id with the ids feeding it, in input order (one pass over the edges)."""
        feeds: dict[str, list[str]] = {n.id: [] for n in self.nodes}
        for src, dst in self.edges:
            feeds[dst].append(src)
        return feeds

    def output_map(self) -> dict[str, list[str]]:
        """Every node id with the ids it feeds, in edge order (one pass over the edges)."""
        fed: dict[str, list[str]] = {n.id: [] for n in self.nodes}
        for src, dst in self.edges:
            fed[src].append(dst)
        return fed

    def sinks(self) -> list[str]:
        """Nodes whose output feeds nothing: the model's outputs."""
        fed = {src for src, _ in self.edges}
        return [n.id for n in self.nodes if n.id not in fed]

    def topological_order(self) -> list[str]:
        """Ids ordered so every node comes after its inputs; raise GraphError on a cycle."""
        pending = {node_id: len(srcs) for node_id, srcs in self.input_map().items()}
        fed = self.output_map()
        ready = deque(i for i, count in pending.items() if count == 0)
        order: list[str] = []
        while ready:
            current = ready.popleft()
            order.append(current)
            for dst in fed[current]:
                pending[dst] -= 1
                if pending[dst] == 0:
                    ready.append(dst)
        if len(order) != len(self.nodes):
            raise GraphError("The model has a loop: a layer feeds back into itself.")
        return order

    def chain(self) -> list[str] | None:
        """Ids from input to output if the graph is one straight chain, else None."""
        if not self.nodes:
            return []
        if len(self.edges) != len(self.nodes) - 1:
            return None
        heads = [n.id for n in self.nodes if not self.inputs_of(n.id)]
        if len(heads) != 1:
            return None
        order = [heads[0]]
        while True:
            nxt = self.outputs_of(order[-1])
            if not nxt:
                break
            if len(nxt) > 1 or len(self.inputs_of(nxt[0])) > 1 or nxt[0] in order:
                return None
            order.append(nxt[0])
        return order if len(order) == len(self.nodes) else None

    def new_id(self, layer_type: str) -> str:
        """A fresh id such as ``conv2d_3`` for a new node of ``layer_type``."""
        stem = re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", layer_type).lower()
        taken = set(self.ids())
        index = 1
        while f"{stem}_{index}" in taken:
            index += 1
        return f"{stem}_{index}"

    def copy(self) -> Graph:
        """A deep copy."""
        return copy.deepcopy(self)

    # Chain edits: the operations behind the ordered-list editor.

    def _require_chain(self) -> list[str]:
        order = self.chain()
        if order is None:
            raise GraphError("This model branches, so it cannot be edited as a list.")
        return order

    def _relink(self, order: list[str]) -> None:
        by_id = {n.id: n for n in self.nodes}
        self.nodes = [by_id[i] for i in order]
        self.edges = list(zip(order, order[1:], strict=False))

    def insert(self, index: int, node: Node) -> None:
        """Insert ``node`` at position ``index`` of the chain."""
        order = self._require_chain()
        self._require_new_id(node.id)
        self.nodes.append(node)
        order.insert(max(0, min(index, len(order))), node.id)
        self._relink(order)

    def remove(self, node_id: str) -> None:
        """Remove a node from the chain, joining its neighbours."""
        order = self._require_chain()
        order.remove(node_id)
        self.nodes = [n for n in self.nodes if n.id != node_id]
        self._relink(order)
        self._forget({node_id})

    def move(self, node_id: str, index: int) -> None:
        """Move a node to position ``index`` of the chain."""
        order = self._require_chain()
        order.remove(node_id)
        order.insert(max(0, min(index, len(order))), node_id)
        self._relink(order)

    # Graph edits: the operations behind the node editor, for any acyclic graph.

    def _require_new_id(self, node_id: str) -> None:
        if node_id in self.ids():
            raise GraphError(f"A layer with id {node_id!r} already exists.")

    def _existing(self, ids: Iterable[str]) -> list[str]:
        wanted = list(dict.fromkeys(ids))
        known = set(self.ids())
        missing = [i for i in wanted if i not in known]
        if missing:
            raise GraphError(f"There is no layer {missing[0]!r} in the model.")
        return wanted

    def _reaches(self, start: str, goal: str) -> bool:
        fed = self.output_map()
        seen, stack = {start}, [start]
        while stack:
            for nxt in fed[stack.pop()]:
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return False

    def add(self, node: Node) -> None:
        """Add ``node`` unconnected; refuse an id that is already taken."""
        self._require_new_id(node.id)
        self.nodes.append(node)

    def remove_nodes(self, ids: Iterable[str]) -> None:
        """Remove the nodes ``ids`` and every edge touching them."""
        gone = set(self._existing(ids))
        self.nodes = [n for n in self.nodes if n.id not in gone]
        self.edges = [(s, d) for s, d in self.edges if s not in gone and d not in gone]
        self._forget(gone)

    def _forget(self, gone: set[str]) -> None:
        """Take removed nodes out of their blocks, and drop the blocks left empty."""
        kept = {name: [i for i in ids if i not in gone] for name, ids in self.blocks.items()}
        self.blocks = {name: ids for name, ids in kept.items() if ids}

    def dissolve(self, ids: Iterable[str]) -> None:
        """Remove the nodes ``ids``; one with a single input passes it on to its outputs.

        Deleting a layer from the middle of a chain thus keeps the chain joined, as the list
        view's Remove does; each output keeps its input order. Other nodes just go.
        """
        gone = set(self._existing(ids))
        for node_id in self.ids():
            if node_id not in gone:
                continue
            feeds = self.inputs_of(node_id)
            src = feeds[0] if len(feeds) == 1 and feeds[0] not in gone else None
            self.edges = [
                (src, d) if s == node_id and src is not None and (src, d) not in self.edges
                else (s, d)
                for s, d in self.edges
            ]
        self.remove_nodes(gone)

    def can_connect(self, src: str, dst: str) -> str | None:
        """Why the edge ``src -> dst`` is refused, or None if it may be made.

        A one-input layer that already has its input is not refused: ``connect`` replaces it.
        """
        known = set(self.ids())
        for end in (src, dst):
            if end not in known:
                return f"There is no layer {end!r} in the model."
        if src == dst:
            return f"{src} cannot feed itself."
        target = layer_type(self.node(dst).type)
        if target.max_inputs == 0:
            return f"{dst} is where data enters the model, so nothing can feed it."
        if (src, dst) in self.edges:
            return f"{src} already feeds {dst}."
        if self._reaches(dst, src):
            return f"Connecting {src} to {dst} would make a loop: {dst} already feeds {src}."
        count = len(self.inputs_of(dst))
        if target.max_inputs > 1 and count >= target.max_inputs:
            return f"{dst} already has {count} inputs, the most {target.name} accepts."
        return None

    def connect(self, src: str, dst: str) -> None:
        """Add the edge ``src -> dst`` as the last input of ``dst``.

        If ``dst`` takes one input and already has one, the new edge replaces the old one.
        """
        reason = self.can_connect(src, dst)
        if reason:
            raise GraphError(reason)
        if layer_type(self.node(dst).type).max_inputs == 1:
            self.edges = [e for e in self.edges if e[1] != dst]
        self.edges.append((src, dst))

    def disconnect(self, src: str, dst: str) -> None:
        """Remove the edge ``src -> dst``."""
        if (src, dst) not in self.edges:
            raise GraphError(f"{src} does not feed {dst}.")
        self.edges.remove((src, dst))

    def insert_between(self, src: str, dst: str, node: Node) -> None:
        """Replace the edge ``src -> dst`` by ``src -> node -> dst``, keeping dst's input order."""
        if (src, dst) not in self.edges:
            raise GraphError(f"{src} does not feed {dst}, so there is no wire to insert into.")
        self._require_new_id(node.id)
        if layer_type(node.type).max_inputs == 0:
            raise GraphError(f"{node.type} starts the model, so it cannot go between two layers.")
        index = self.edges.index((src, dst))
        self.edges[index : index + 1] = [(src, node.id), (node.id, dst)]
        self.nodes.insert(self.ids().index(dst), node)

    def fragment(self, ids: Iterable[str]) -> Graph:
        """A deep copy of the nodes ``ids`` and the edges among them, for copy and paste."""
        keep = set(self._existing(ids))
        return Graph(
            nodes=[copy.deepcopy(n) for n in self.nodes if n.id in keep],
            edges=[(s, d) for s, d in self.edges if s in keep and d in keep],
        )

    def paste(self, fragment: Graph) -> dict[str, str]:
        """Add copies of ``fragment``'s nodes under fresh ids, with the edges among them.

        Returns a map from each fragment id to its new id.
        """
        renamed: dict[str, str] = {}
        for node in fragment.nodes:
            renamed[node.id] = self.new_id(node.type)
            self.nodes.append(Node(renamed[node.id], node.type, copy.deepcopy(node.params)))
        self.edges.extend(
            (renamed[s], renamed[d]) for s, d in fragment.edges if s in renamed and d in renamed
        )
        return renamed

    @staticmethod
    def from_chain(nodes: list[Node]) -> Graph:
        """A straight chain through ``nodes`` in order."""
        graph = Graph(nodes=list(nodes))
        graph._relink([n.id for n in nodes])
        return graph
