"""Automatic top-to-bottom layout of the model graph for the node canvas."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from studio.core.model.graph import Graph, GraphError

NODE_WIDTH = 220
NODE_HEIGHT = 76
"""Room for four lines of text at a readable size: type, id, key parameters, shape."""
H_GAP = 40
V_GAP = 40
ROW = NODE_HEIGHT + V_GAP
"""Vertical distance from one row of nodes to the next."""
SWEEPS = 2
"""Down-and-up passes of barycenter ordering; more barely reduce crossings further."""
COLUMN_GAP = 3 * H_GAP
"""Between the columns of a long model wrapped into several: room for the wires that go on
at the top of the next column and for those that skip rows beside a column."""
LONGEST_COLUMN = 12
"""A model of more rows than this, and much taller than wide, is wrapped into columns."""
TALL = 2.0
"""How many times taller than wide a single column may be before it is wrapped: the canvas
is wider than tall, and fitting a column of 35 layers into it shrank them to slivers."""
WRAPPED_ASPECT = 1.6
"""The width-to-height ratio wrapped columns aim at, that of a typical canvas."""


def _ranks(graph: Graph, feeds: dict[str, list[str]]) -> dict[str, int]:
    """Longest path from a source; layers in a loop are ranked below those already placed."""
    try:
        order = graph.topological_order()
    except GraphError:
        order = graph.ids()
    rank: dict[str, int] = {}
    for node_id in order:
        placed = [rank[src] for src in feeds[node_id] if src in rank]
        rank[node_id] = max(placed) + 1 if placed else 0
    return rank


def _reorder(rows: list[list[str]], links: dict[str, list[str]], downward: bool) -> None:
    """Sort each row by the mean slot of its linked nodes in rows already swept."""
    slot = {node_id: i - (len(row) - 1) / 2 for row in rows for i, node_id in enumerate(row)}
    for row in rows if downward else reversed(rows):
        keys: dict[str, float] = {}
        for node_id in row:
            linked = links[node_id]
            keys[node_id] = sum(slot[i] for i in linked) / len(linked) if linked else slot[node_id]
        row.sort(key=keys.__getitem__)
        for i, node_id in enumerate(row):
            slot[node_id] = i - (len(row) - 1) / 2


def auto_layout(graph: Graph) -> dict[str, tuple[float, float]]:
    """Top-left positions for every node: ranks from top to bottom, each centred on x = 0.

    A node's rank is the longest path to it from a source; within a rank, nodes are ordered
    by the barycenter of their neighbours so that edges cross little.
    """
    feeds = graph.input_map()
    fed = graph.output_map()
    rank = _ranks(graph, feeds)
    rows: list[list[str]] = [[] for _ in range(max(rank.values(), default=-1) + 1)]
    for node_id in graph.ids():
        rows[rank[node_id]].append(node_id)
    for _ in range(SWEEPS):
        _reorder(rows, feeds, downward=True)
        _reorder(rows, fed, downward=False)
    _reorder(rows, feeds, downward=True)
    positions: dict[str, tuple[float, float]] = {}
    columns = _columns(rows)
    left = -(sum(map(_band_width, columns)) + (len(columns) - 1) * COLUMN_GAP) / 2
    for band in columns:
        middle = left + _band_width(band) / 2 if len(columns) > 1 else 0.0
        for r, row in enumerate(band):
            start = middle - _row_width(row) / 2
            for i, node_id in enumerate(row):
                positions[node_id] = (start + i * (NODE_WIDTH + H_GAP), float(r * ROW))
        left += _band_width(band) + COLUMN_GAP
    return positions


def _row_width(row: list[str]) -> float:
    return len(row) * NODE_WIDTH + (len(row) - 1) * H_GAP


def _band_width(band: list[list[str]]) -> float:
    return max(map(_row_width, band), default=0.0)


def _columns(rows: list[list[str]]) -> list[list[list[str]]]:
    """The rows as one column, or, for a long model much taller than wide (a U-Net, a deep
    chain), wrapped into side-by-side columns of consecutive rows, each going down and the
    next starting at the top, as many as bring the whole nearest to WRAPPED_ASPECT."""
    if len(rows) <= LONGEST_COLUMN or len(rows) * ROW <= TALL * _band_width(rows):

        return [rows]

    def columns(count: int) -> list[list[list[str]]]:
        size = math.ceil(len(rows) / count)
        return [rows[i:i + size] for i in range(0, len(rows), size)]

    def mismatch(count: int) -> float:
        bands = columns(count)
        width = sum(map(_band_width, bands)) + (len(bands) - 1) * COLUMN_GAP
        height = max(map(len, bands)) * ROW - V_GAP
        return abs(math.log(width / height / WRAPPED_ASPECT))

    return columns(min(range(1, len(rows) + 1), key=mismatch))


def complete_positions(graph: Graph,
                       positions: dict[str, list[float]]) -> dict[str, list[float]]:
    """``positions`` with every node of ``graph`` that lacks one placed by ``auto_layout``."""
    if all(node_id in positions for node_id in graph.ids()):
        return {node_id: list(point) for node_id, point in positions.items()}
    laid_out = auto_layout(graph)
    return {node_id: list(positions.get(node_id, laid_out[node_id])) for node_id in graph.ids()}


def place_new_nodes(graph: Graph, positions: dict[str, list[float]]) -> None:
    """Put each node without a position just below its first input, pushing lower rows down.

    Nodes are placed in graph order, so a chain of new nodes ends up one under another.
    """
    for node_id in graph.ids():
        if node_id in positions:
            continue
        feeds = [src for src in graph.inputs_of(node_id) if src in positions]
        if not feeds:
            positions[node_id] = [0.0, 0.0]
            continue
        x, y = positions[feeds[0]]
        below = y + ROW
        for other, (ox, oy) in positions.items():
            if oy >= below:
                positions[other] = [ox, oy + ROW]
        positions[node_id] = [x, below]


def lanes(positions: Iterable[Sequence[float]]) -> list[tuple[float, float]]:
    """The vertical strips (left and right x) wider than H_GAP that no node at ``positions``
    covers, between the leftmost and rightmost nodes: the gaps between the columns of a
    wrapped layout, where a wire from one column to another runs past every node."""
    strips: list[tuple[float, float]] = []
    reach: float | None = None
    for x, _ in sorted(positions):
        if reach is not None and x - reach > H_GAP:
            strips.append((reach, x))
        reach = x + NODE_WIDTH if reach is None else max(reach, x + NODE_WIDTH)
    return strips


def clear_offset(piece: dict[str, list[float]], taken: list[list[float]]) -> float:
    """How far right to move nodes at ``piece`` so that none covers, or touches, a node at
    ``taken`` (0 if none does): whole columns, so a copy lands beside what it copies."""

    def clashes(dx: float) -> bool:
        return any(abs(x + dx - tx) < NODE_WIDTH + H_GAP / 2 and abs(y - ty) < ROW - V_GAP / 2
                   for x, y in piece.values() for tx, ty in taken)

    dx = 0.0
    while clashes(dx):
        dx += NODE_WIDTH + H_GAP
    return dx
