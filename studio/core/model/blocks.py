"""Marked blocks: groups of layers with one way in and one way out (a residual unit, a
convolution with its normalization and activation), which a search can repeat.

A block's *entry* is the one layer outside it that feeds it (it may feed several of its
layers, as a residual unit's input feeds both its convolution and its Add); its *exit* is the
one layer in it that feeds the layers after it. Repeating a block chains copies of it, each
fed by the exit of the one before, and the layers after it are fed by the last copy's exit.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from studio.core.model.graph import Graph, GraphError, Node
from studio.core.model.registry import layer_type

MAX_REPEATS = 8
"""The most times a search may put a block in the model."""
BLOCK_STEM = "block"


@dataclass(frozen=True)
class Ends:
    """Where a block joins the model: the layer feeding it and its layer feeding on."""

    entry: str
    exit: str


def _listed(ids: list[str], most: int = 3) -> str:
    """``a``, ``a and b``, ``a, b and c``, or the first ``most`` and how many more."""
    shown = ids[:most]
    more = len(ids) - len(shown)
    if more:
        return f"{', '.join(shown)} and {more} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def block_ends(graph: Graph, ids: list[str]) -> Ends:
    """The entry and exit of the layers ``ids`` taken as a block; GraphError says in words
    why they cannot be one."""
    members = set(ids)
    if not members:
        raise GraphError("Select the layers to mark as a block.")
    nodes = {node.id: node for node in graph.nodes}
    for node_id in ids:
        if node_id not in nodes:
            raise GraphError(f"There is no layer {node_id!r} in the model.")
        if layer_type(nodes[node_id].type).max_inputs == 0:
            raise GraphError(f"{node_id} is where data enters the model, so it cannot be in a "
                             "block: a block is repeated after the layer that feeds it.")
    inward = [(s, d) for s, d in graph.edges if d in members]
    outward = [(s, d) for s, d in graph.edges if s in members]
    entries = list(dict.fromkeys(s for s, _ in inward if s not in members))
    if not entries:
        raise GraphError("Nothing outside these layers feeds them: a block needs one layer "
                         "before it.")
    if len(entries) > 1:
        raise GraphError(f"A block takes one input, but {_listed(entries)} outside it feed it.")
    feeding = {s for s, _ in outward}
    ends = [i for i in ids if i not in feeding]
    if ends:
        raise GraphError(f"The model ends at {_listed(ends)}, so a block with it would have "
                         "nothing to feed.")
    exits = list(dict.fromkeys(s for s, d in outward if d not in members))
    if len(exits) > 1:
        raise GraphError(f"A block gives one output, but {_listed(exits)} in it feed layers "
                         "after it.")
    fed = {d for _, d in inward}
    starts = [i for i in ids if i not in fed]
    if starts:
        raise GraphError(f"Nothing feeds {_listed(starts)}: a block's layers are fed from "
                         "its input.")
    return Ends(entries[0], exits[0])


def block_problem(graph: Graph, ids: list[str], name: str | None = None) -> str | None:
    """Why the layers ``ids`` cannot be marked as a block (or stay block ``name``), or None.
    Besides one way in and one way out, a layer may be in one block only."""
    for other, members in graph.blocks.items():
        shared = [i for i in ids if i in members]
        if other != name and shared:
            verb = "is" if len(shared) == 1 else "are"
            return f"{_listed(shared)} {verb} already in {other}: a layer can be in one block."
    try:
        block_ends(graph, ids)
    except GraphError as exc:
        return str(exc)
    return None


def new_block_name(graph: Graph) -> str:
    """A free name such as ``block_2``."""
    index = 1
    while f"{BLOCK_STEM}_{index}" in graph.blocks:
        index += 1
    return f"{BLOCK_STEM}_{index}"


def repeat_block(graph: Graph, name: str, times: int) -> dict[str, list[str]]:
    """Put block ``name`` in ``graph`` ``times`` times (0 leaves it out, its entry wired to
    what its exit fed), in place. The copies are fresh layers after the block, with its
    parameters and wiring; merges keep their input order. Returns each member's copies' ids
    (empty with 1, and with 0, when the members themselves are gone)."""
    if not 0 <= times <= MAX_REPEATS:
        raise GraphError(f"A block can be repeated 0 to {MAX_REPEATS} times, not {times}.")
    ids = list(graph.blocks[name])
    ends = block_ends(graph, ids)
    members = set(ids)
    onward = [k for k, (s, d) in enumerate(graph.edges) if s == ends.exit and d not in members]
    copies: dict[str, list[str]] = {i: [] for i in ids}
    if times == 0:
        for k in onward:
            graph.edges[k] = (ends.entry, graph.edges[k][1])
        graph.remove_nodes(ids)
        return copies
    inner = [(s, d) for s, d in graph.edges if d in members]
    place = max(graph.ids().index(i) for i in ids) + 1
    last_exit = ends.exit
    for _ in range(times - 1):
        renamed = {}
        for node_id in ids:
            node = graph.node(node_id)
            renamed[node_id] = graph.new_id(node.type)
            graph.nodes.insert(place, Node(renamed[node_id], node.type,
                                           copy.deepcopy(node.params)))
            place += 1
            copies[node_id].append(renamed[node_id])
        graph.edges.extend((renamed[s] if s in members else last_exit, renamed[d])
                           for s, d in inner)
        last_exit = renamed[ends.exit]
    for k in onward:
        graph.edges[k] = (last_exit, graph.edges[k][1])
    return copies
