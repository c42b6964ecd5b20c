"""Chain edits behind the list editor, and graph order."""

import pytest

from studio.core.model.graph import Graph, GraphError, Node


def make(*ids):
    return Graph.from_chain([Node(i, "Dense", {}) for i in ids])


def test_insert_remove_move_keep_a_chain():
    g = make("a", "b", "c")
    g.insert(1, Node("x", "Dropout", {}))
    assert g.chain() == ["a", "x", "b", "c"]
    g.move("c", 0)
    assert g.chain() == ["c", "a", "x", "b"]
    g.remove("a")
    assert g.chain() == ["c", "x", "b"]
    assert g.edges == [("c", "x"), ("x", "b")]


def test_list_edits_refuse_a_branching_graph():
    g = make("a", "b")
    g.nodes.append(Node("c", "Dense", {}))
    g.edges.append(("a", "c"))
    assert g.chain() is None
    with pytest.raises(GraphError, match="branches"):
        g.remove("b")


def test_new_ids_are_unique_and_readable():
    g = make("dense_1")
    assert g.new_id("Dense") == "dense_2"
    assert g.new_id("MaxPooling2D") == "max_pooling2d_1"
    assert g.new_id("GlobalAveragePooling2D") == "global_average_pooling2d_1"
