"""Automatic layout: ranks top to bottom, centred rows, no overlaps, few crossings, fast; a
long model wrapped into columns."""

from __future__ import annotations

import random

import pytest

from studio.core.model.graph import Graph, Node
from studio.core.model.layout import H_GAP, NODE_HEIGHT, NODE_WIDTH, V_GAP, auto_layout
from studio.core.project.templates import demo_project, from_template

ROW = NODE_HEIGHT + V_GAP


def dag(count: int, seed: int) -> Graph:
    """A random acyclic graph: each node is fed by one to three earlier nodes."""
    rng = random.Random(seed)
    g = Graph([Node(f"n{i}", "Dense", {}) for i in range(count)])
    for i in range(1, count):
        for j in sorted(rng.sample(range(i), min(i, rng.randint(1, 3)))):
            g.edges.append((f"n{j}", f"n{i}"))
    rng.shuffle(g.nodes)
    return g


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return abs(a[0] - b[0]) < NODE_WIDTH and abs(a[1] - b[1]) < NODE_HEIGHT


def crossings(graph: Graph, pos: dict[str, tuple[float, float]]) -> int:
    """Pairs of edges between the same two rows whose ends swap sides."""
    edges = [(pos[s], pos[d]) for s, d in graph.edges]
    count = 0
    for i, (s1, d1) in enumerate(edges):
        for s2, d2 in edges[i + 1:]:
            if (s1[1], d1[1]) == (s2[1], d2[1]) and (s1[0] - s2[0]) * (d1[0] - d2[0]) < 0:
                count += 1
    return count


def test_a_chain_is_one_centred_column_going_down():
    graph = demo_project().graph
    pos = auto_layout(graph)
    assert list(pos) == graph.ids()
    assert {x for x, _ in pos.values()} == {-NODE_WIDTH / 2}
    assert [y for _, y in pos.values()] == [i * ROW for i in range(len(graph.nodes))]


def test_a_diamond_puts_the_branches_side_by_side():
    graph = Graph(
        [Node(i, "Dense", {}) for i in ("in", "a", "b", "sum")],
        [("in", "a"), ("in", "b"), ("a", "sum"), ("b", "sum")],
    )
    pos = auto_layout(graph)
    assert pos["a"][1] == pos["b"][1] == ROW
    assert pos["sum"][1] == 2 * ROW
    assert abs(pos["a"][0] - pos["b"][0]) == NODE_WIDTH + H_GAP
    assert pos["a"][0] + pos["b"][0] + NODE_WIDTH == 0, "the row is centred on x = 0"
    assert pos["in"][0] == pos["sum"][0] == -NODE_WIDTH / 2


def test_rank_is_the_longest_path_from_a_source():
    graph = Graph(
        [Node(i, "Dense", {}) for i in ("in", "a", "b", "sum", "side")],
        [("in", "a"), ("a", "b"), ("b", "sum"), ("in", "sum")],
    )
    pos = auto_layout(graph)
    assert pos["sum"][1] == 3 * ROW
    assert pos["side"][1] == 0, "an unconnected node is a source"


def test_barycenter_ordering_untangles_parallel_chains():
    graph = Graph(
        [Node(i, "Dense", {}) for i in ("a1", "b1", "c1", "c2", "b2", "a2")],
        [("a1", "a2"), ("b1", "b2"), ("c1", "c2")],
    )
    pos = auto_layout(graph)
    assert crossings(graph, pos) == 0
    assert [pos[f"{c}2"][0] for c in "abc"] == [pos[f"{c}1"][0] for c in "abc"]


def test_random_dag_has_no_overlaps_covers_every_node_and_points_down():
    graph = dag(200, seed=7)
    pos = auto_layout(graph)
    assert set(pos) == set(graph.ids())
    points = sorted(pos.values())
    for i, a in enumerate(points):
        for b in points[i + 1:]:
            if b[0] - a[0] >= NODE_WIDTH:
                break
            assert not overlap(a, b), (a, b)
    assert all(pos[s][1] < pos[d][1] for s, d in graph.edges)
    for y in {y for _, y in pos.values()}:
        xs = sorted(x for x, yy in pos.values() if yy == y)
        assert xs[0] + xs[-1] + NODE_WIDTH == 0, "each row is centred on x = 0"


def test_sweeps_reduce_crossings_compared_with_document_order():
    graph = dag(120, seed=3)
    pos = auto_layout(graph)
    rows: dict[float, list[str]] = {}
    for node_id in graph.ids():
        rows.setdefault(pos[node_id][1], []).append(node_id)
    unordered = {}
    for y, row in rows.items():
        left = -(len(row) * NODE_WIDTH + (len(row) - 1) * H_GAP) / 2
        for i, node_id in enumerate(row):
            unordered[node_id] = (left + i * (NODE_WIDTH + H_GAP), y)
    assert crossings(graph, pos) < crossings(graph, unordered)


def test_empty_graph_and_graph_with_a_loop():
    assert auto_layout(Graph()) == {}
    loop = Graph([Node(i, "Dense", {}) for i in ("a", "b", "c")],
                 [("a", "b"), ("b", "c"), ("c", "b")])
    pos = auto_layout(loop)
    assert set(pos) == {"a", "b", "c"}
    assert len(set(pos.values())) == 3


def test_new_nodes_go_below_their_input_and_push_lower_rows_down():
    from studio.core.model.graph import Node
    from studio.core.model.layout import ROW, complete_positions, place_new_nodes

    graph = Graph.from_chain([Node(i, "Dense", {}) for i in ("a", "b", "c")])
    positions = complete_positions(graph, {})
    assert set(positions) == {"a", "b", "c"}
    graph.insert_between("a", "b", Node("x", "Dropout", {}))
    graph.insert_between("x", "b", Node("y", "Dropout", {}))
    place_new_nodes(graph, positions)
    column = [positions[i] for i in ("a", "x", "y", "b", "c")]
    assert [p[0] for p in column] == [column[0][0]] * 5
    assert [p[1] - column[0][1] for p in column] == [0, ROW, 2 * ROW, 3 * ROW, 4 * ROW]


def test_a_copy_moves_right_by_whole_columns_until_it_covers_no_node():
    from studio.core.model.layout import clear_offset

    column = NODE_WIDTH + H_GAP
    taken = [[0.0, 0.0], [0.0, ROW], [column, ROW]]
    assert clear_offset({"a": [0.0, 0.0]}, taken) == column
    assert clear_offset({"a": [0.0, ROW]}, taken) == 2 * column
    assert clear_offset({"a": [0.0, 0.0], "b": [0.0, ROW]}, taken) == 2 * column
    assert clear_offset({"a": [0.0, 3 * ROW]}, taken) == 0
    assert clear_offset({"a": [10.0, 10.0]}, []) == 0


def _box(pos: dict[str, tuple[float, float]]) -> tuple[float, float]:
    """The width and height of the nodes at ``pos``."""
    xs, ys = [x for x, _ in pos.values()], [y for _, y in pos.values()]
    return max(xs) - min(xs) + NODE_WIDTH, max(ys) - min(ys) + NODE_HEIGHT


def assert_no_overlaps(pos: dict[str, tuple[float, float]]) -> None:
    points = list(pos.values())
    for i, a in enumerate(points):
        for b in points[i + 1:]:
            assert not overlap(a, b), (a, b)


@pytest.mark.parametrize("name", ["small_unet_segmenter", "mobilenetv2_unet_segmenter",
                                  "small_detector", "resnet", "vgg"])
def test_a_long_model_wraps_into_columns_about_as_wide_as_a_canvas(name):
    graph = from_template(name).graph
    pos = auto_layout(graph)
    width, height = _box(pos)
    assert 1 <= width / height <= 2.5, (width, height)
    assert_no_overlaps(pos)
    columns = sorted({x for x, _ in pos.values()})
    assert len(columns) > 1
    for source, target in graph.edges:  # down within a column, on to the top of the next
        (sx, sy), (tx, ty) = pos[source], pos[target]
        assert sy < ty or tx > sx


def test_the_u_net_reads_in_columns_of_its_layers_in_order():
    graph = from_template("small_unet_segmenter").graph
    pos = auto_layout(graph)
    order = graph.topological_order()
    assert sorted(order, key=lambda node: (pos[node][0], pos[node][1])) == order
    assert len({x for x, _ in pos.values()}) == 5
    assert _box(pos)[1] == 7 * ROW - V_GAP


@pytest.mark.parametrize("name", ["mlp", "cnn", "lenet5", "cnn1d", "transformer_text"])
def test_a_short_model_stays_one_column(name):
    pos = auto_layout(from_template(name).graph)
    assert {x + NODE_WIDTH / 2 for x, _ in pos.values()} <= {0.0, -(NODE_WIDTH + H_GAP) / 2,
                                                             (NODE_WIDTH + H_GAP) / 2}
    assert _box(pos)[0] < _box(pos)[1]


def test_the_gaps_between_wrapped_columns_are_lanes_for_wires():
    from studio.core.model.layout import COLUMN_GAP, lanes

    pos = auto_layout(from_template("small_unet_segmenter").graph)
    columns = sorted({x for x, _ in pos.values()})
    assert lanes(pos.values()) == [(x + NODE_WIDTH, x + NODE_WIDTH + COLUMN_GAP)
                                   for x in columns[:-1]]
    assert lanes(auto_layout(demo_project().graph).values()) == []
    diamond = Graph([Node(i, "Dense", {}) for i in ("in", "a", "b", "sum")],
                    [("in", "a"), ("in", "b"), ("a", "sum"), ("b", "sum")])
    assert lanes(auto_layout(diamond).values()) == [], "the gap within a row is no lane"
