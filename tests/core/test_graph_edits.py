"""Graph edits behind the node editor: any acyclic graph, plain-language refusals."""

from __future__ import annotations

import pytest

from studio.core.build.analysis import analyze
from studio.core.data.bundled import MNIST_10K
from studio.core.model.graph import Graph, GraphError, Node
from studio.core.project.templates import demo_project


def graph(*nodes: tuple[str, str], edges: str = "") -> Graph:
    """Nodes as (id, type); edges as ``"a>b b>c"``."""
    return Graph(
        [Node(i, t, {}) for i, t in nodes],
        [tuple(e.split(">")) for e in edges.split()],
    )


def diamond() -> Graph:
    return graph(("in", "Input"), ("a", "Dense"), ("b", "Dense"), ("sum", "Add"),
                 edges="in>a in>b a>sum b>sum")


def residual_block() -> Graph:
    """Input, a stem convolution, two convolutions beside a skip, Add, and a classifier."""
    g = Graph()
    g.add(Node("in", "Input", {"shape": [28, 28, 1]}))
    g.add(Node("stem", "Conv2D", {"filters": 8, "padding": "same"}))
    g.connect("in", "stem")
    g.add(Node("c1", "Conv2D", {"filters": 8, "padding": "same"}))
    g.add(Node("c2", "Conv2D", {"filters": 8, "padding": "same", "activation": "linear"}))
    g.add(Node("sum", "Add", {}))
    g.add(Node("pool", "GlobalAveragePooling2D", {}))
    g.add(Node("out", "Dense", {"units": 10, "activation": "softmax"}))
    for src, dst in [("stem", "c1"), ("c1", "c2"), ("c2", "sum"), ("stem", "sum"),
                     ("sum", "pool"), ("pool", "out")]:
        g.connect(src, dst)
    return g


def test_add_appends_an_unconnected_node_and_refuses_a_taken_id():
    g = diamond()
    g.add(Node("x", "Dropout", {}))
    assert g.ids()[-1] == "x" and g.inputs_of("x") == [] and g.outputs_of("x") == []
    with pytest.raises(GraphError, match="A layer with id 'a' already exists"):
        g.add(Node("a", "Dense", {}))


def test_remove_nodes_drops_every_edge_touching_them():
    g = diamond()
    g.remove_nodes(["a", "sum"])
    assert g.ids() == ["in", "b"]
    assert g.edges == [("in", "b")]


def test_remove_nodes_accepts_any_iterable_and_refuses_unknown_ids():
    g = diamond()
    g.remove_nodes(i for i in ("b", "b"))
    assert g.ids() == ["in", "a", "sum"]
    with pytest.raises(GraphError, match="There is no layer 'ghost'"):
        g.remove_nodes(["a", "ghost"])
    assert g.ids() == ["in", "a", "sum"], "a refused edit changes nothing"


@pytest.mark.parametrize(
    ("src", "dst", "reason"),
    [
        ("a", "a", "a cannot feed itself."),
        ("a", "in", "in is where data enters the model, so nothing can feed it."),
        ("in", "a", "in already feeds a."),
        ("sum", "a", "Connecting sum to a would make a loop: a already feeds sum."),
        ("sum", "in", "in is where data enters the model, so nothing can feed it."),
        ("ghost", "a", "There is no layer 'ghost' in the model."),
        ("a", "ghost", "There is no layer 'ghost' in the model."),
    ],
)
def test_can_connect_explains_each_refusal(src, dst, reason):
    assert diamond().can_connect(src, dst) == reason


def test_a_loop_through_several_layers_is_refused():
    g = graph(("a", "Dense"), ("b", "Dense"), ("c", "Dense"), ("d", "Dense"),
              edges="a>b b>c c>d")
    assert g.can_connect("d", "a") == (
        "Connecting d to a would make a loop: a already feeds d."
    )
    assert g.can_connect("a", "d") is None


def test_a_full_merge_layer_is_refused():
    g = graph(("sum", "Add"))
    for i in range(64):
        g.add(Node(f"d{i}", "Dense", {}))
        g.connect(f"d{i}", "sum")
    g.add(Node("extra", "Dense", {}))
    assert g.can_connect("extra", "sum") == "sum already has 64 inputs, the most Add accepts."
    with pytest.raises(GraphError, match="the most Add accepts"):
        g.connect("extra", "sum")


def test_an_occupied_one_input_port_is_not_a_refusal():
    g = diamond()
    g.add(Node("x", "Dense", {}))
    assert g.can_connect("x", "a") is None


def test_connect_appends_as_the_last_input():
    g = graph(("a", "Dense"), ("b", "Dense"), ("c", "Dense"), ("cat", "Concatenate"))
    for src in ("b", "a", "c"):
        g.connect(src, "cat")
    assert g.inputs_of("cat") == ["b", "a", "c"]


def test_connect_replaces_the_wire_into_a_one_input_layer():
    g = diamond()
    g.add(Node("x", "Dense", {}))
    g.connect("x", "a")
    assert g.inputs_of("a") == ["x"]
    assert ("in", "a") not in g.edges
    assert g.outputs_of("in") == ["b"]


def test_connect_raises_the_reason_and_changes_nothing():
    g = diamond()
    before = g.copy()
    with pytest.raises(GraphError, match="would make a loop"):
        g.connect("sum", "a")
    assert g == before


def test_disconnect_removes_one_edge():
    g = diamond()
    g.disconnect("a", "sum")
    assert g.inputs_of("sum") == ["b"]
    with pytest.raises(GraphError, match="a does not feed sum"):
        g.disconnect("a", "sum")


def test_insert_between_keeps_the_input_order():
    g = graph(("a", "Dense"), ("b", "Dense"), ("cat", "Concatenate"),
              edges="a>cat b>cat")
    g.insert_between("a", "cat", Node("drop", "Dropout", {}))
    assert g.inputs_of("cat") == ["drop", "b"]
    assert g.inputs_of("drop") == ["a"]
    assert "a" not in g.inputs_of("cat")
    assert g.ids().index("drop") < g.ids().index("cat")


def test_insert_between_refusals():
    g = diamond()
    with pytest.raises(GraphError, match="a does not feed b"):
        g.insert_between("a", "b", Node("x", "Dropout", {}))
    with pytest.raises(GraphError, match="'b' already exists"):
        g.insert_between("in", "a", Node("b", "Dropout", {}))
    with pytest.raises(GraphError, match="cannot go between"):
        g.insert_between("in", "a", Node("in2", "Input", {}))
    assert g == diamond()


def test_fragment_is_a_deep_copy_of_the_nodes_and_the_edges_among_them():
    g = residual_block()
    part = g.fragment(["c2", "c1", "sum"])
    assert part.ids() == ["c1", "c2", "sum"]
    assert part.edges == [("c1", "c2"), ("c2", "sum")]
    part.node("c1").params["filters"] = 99
    assert g.node("c1").params["filters"] == 8
    with pytest.raises(GraphError, match="no layer 'ghost'"):
        g.fragment(["ghost"])


def test_paste_adds_copies_under_fresh_ids_with_their_edges():
    g = residual_block()
    part = g.fragment(["c1", "c2"])
    first = g.paste(part)
    second = g.paste(part)
    assert first == {"c1": "conv2d_1", "c2": "conv2d_2"}
    assert second == {"c1": "conv2d_3", "c2": "conv2d_4"}
    assert ("conv2d_1", "conv2d_2") in g.edges and ("conv2d_3", "conv2d_4") in g.edges
    assert g.inputs_of("conv2d_1") == [] and g.outputs_of("conv2d_4") == []
    g.node("conv2d_1").params["filters"] = 3
    assert part.node("c1").params["filters"] == 8
    assert len(set(g.ids())) == len(g.ids())


def test_paste_into_another_model():
    target = demo_project().graph
    mapping = target.paste(residual_block().fragment(["sum", "pool"]))
    assert mapping == {"sum": "add_1", "pool": "global_average_pooling2d_1"}
    assert target.edges[-1] == ("add_1", "global_average_pooling2d_1")


def test_a_residual_network_built_with_edits_is_valid_and_matches_keras():
    g = residual_block()
    report = analyze(g, MNIST_10K)
    assert report.ok, report.problems
    assert report.nodes["sum"].output_shape == (28, 28, 8)
    assert g.chain() is None
    import keras

    from studio.core.build.keras_model import build_model

    model = build_model(g, MNIST_10K)
    assert model.count_params() == report.total_params
    assert isinstance(model.get_layer("sum"), keras.layers.Add)


def test_edits_then_removal_leave_a_valid_chain():
    g = residual_block()
    g.remove_nodes(["c1", "c2"])
    g.disconnect("stem", "sum")
    g.remove_nodes(["sum"])
    g.connect("stem", "pool")
    assert g.chain() == ["in", "stem", "pool", "out"]
    assert analyze(g, MNIST_10K).ok


def test_topological_order_follows_edges_and_reports_loops():
    g = residual_block()
    order = g.topological_order()
    assert all(order.index(s) < order.index(d) for s, d in g.edges)
    g.edges.append(("out", "stem"))
    with pytest.raises(GraphError, match="loop"):
        g.topological_order()


def test_input_and_output_maps_cover_every_node():
    g = diamond()
    assert g.input_map() == {"in": [], "a": ["in"], "b": ["in"], "sum": ["a", "b"]}
    assert g.output_map() == {"in": ["a", "b"], "a": ["sum"], "b": ["sum"], "sum": []}


def test_dissolve_joins_a_chain_and_keeps_merge_input_order():
    graph = Graph(
        [Node("in", "Input", {}), Node("a", "Dense", {}), Node("b", "Dense", {}),
         Node("drop", "Dropout", {}), Node("sum", "Add", {}), Node("out", "Dense", {})],
        [("in", "a"), ("in", "b"), ("a", "drop"), ("drop", "sum"), ("b", "sum"),
         ("sum", "out")],
    )
    graph.dissolve(["drop"])
    assert graph.inputs_of("sum") == ["a", "b"]
    graph.dissolve(["sum"])
    assert graph.inputs_of("out") == []
    assert "sum" not in graph.ids() and graph.outputs_of("a") == []


def test_dissolving_two_neighbours_joins_across_both():
    graph = Graph.from_chain([Node(i, "Dense", {}) for i in ("a", "b", "c", "d")])
    graph.dissolve(["b", "c"])
    assert graph.edges == [("a", "d")]
