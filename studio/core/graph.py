"""The model as a graph of layer nodes; a list of layers is only a view of a chain."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from studio.core.layers import layer_type


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
    """Nodes and directed edges. The order of a node's incoming edges is its input order."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)

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

    def sinks(self) -> list[str]:
        """Nodes whose output feeds nothing: the model's outputs."""
        fed = {src for src, _ in self.edges}
        return [n.id for n in self.nodes if n.id not in fed]

    def topological_order(self) -> list[str]:
        """Ids ordered so every node comes after its inputs; raise GraphError on a cycle."""
        pending = {n.id: len(self.inputs_of(n.id)) for n in self.nodes}
        ready = [i for i, count in pending.items() if count == 0]
        order: list[str] = []
        while ready:
            current = ready.pop(0)
            order.append(current)
            for dst in self.outputs_of(current):
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
        if node.id in order:
            raise GraphError(f"A layer with id {node.id!r} already exists.")
        self.nodes.append(node)
        order.insert(max(0, min(index, len(order))), node.id)
        self._relink(order)

    def remove(self, node_id: str) -> None:
        """Remove a node from the chain, joining its neighbours."""
        order = self._require_chain()
        order.remove(node_id)
        self.nodes = [n for n in self.nodes if n.id != node_id]
        self._relink(order)

    def move(self, node_id: str, index: int) -> None:
        """Move a node to position ``index`` of the chain."""
        order = self._require_chain()
        order.remove(node_id)
        order.insert(max(0, min(index, len(order))), node_id)
        self._relink(order)

    @staticmethod
    def from_chain(nodes: list[Node]) -> Graph:
        """A straight chain through ``nodes`` in order."""
        graph = Graph(nodes=list(nodes))
        graph._relink([n.id for n in nodes])
        return graph
