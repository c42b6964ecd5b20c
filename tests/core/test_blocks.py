"""Marked blocks: which layers can be one (one way in, one way out), how they are kept in the
project file, and how repeating one chains copies of it that Keras builds."""

from __future__ import annotations

import json

import pytest

from studio.core.build.analysis import analyze
from studio.core.build.keras_model import build_keras_model
from studio.core.model.blocks import block_ends, block_problem, new_block_name, repeat_block
from studio.core.model.graph import Graph, GraphError, Node
from studio.core.project.document import Project, load_project, save_project


def residual_model() -> Graph:
    """Input -> conv2d_1 -> [conv2d_2 -> add_1(conv2d_1, conv2d_2)] -> flatten -> dense: a
    residual unit whose input feeds both its convolution and its Add."""
    return Graph(
        nodes=[Node("input_1", "Input", {"shape": [8, 8, 3]}),
               Node("conv2d_1", "Conv2D", {"filters": 4, "kernel_size": 3, "padding": "same"}),
               Node("conv2d_2", "Conv2D", {"filters": 4, "kernel_size": 3, "padding": "same"}),
               Node("add_1", "Add", {}),
               Node("flatten_1", "Flatten", {}),
               Node("dense_1", "Dense", {"units": 3, "activation": "softmax"})],
        edges=[("input_1", "conv2d_1"), ("conv2d_1", "conv2d_2"), ("conv2d_1", "add_1"),
               ("conv2d_2", "add_1"), ("add_1", "flatten_1"), ("flatten_1", "dense_1")],
        blocks={"block_1": ["conv2d_2", "add_1"]})


def test_a_residual_unit_is_a_block_fed_by_one_layer_and_feeding_on_from_one():
    graph = residual_model()
    assert block_ends(graph, ["conv2d_2", "add_1"]).entry == "conv2d_1"
    assert block_ends(graph, ["conv2d_2", "add_1"]).exit == "add_1"
    assert new_block_name(graph) == "block_2"


@pytest.mark.parametrize(("ids", "reason"), [
    ([], "Select the layers to mark as a block."),
    (["input_1", "conv2d_1"], "input_1 is where data enters the model, so it cannot be in a "
                              "block"),
    (["add_1"], "A block takes one input, but conv2d_1 and conv2d_2 outside it feed it."),
    (["conv2d_1", "conv2d_2"], "A block gives one output, but conv2d_1 and conv2d_2 in it "
                               "feed layers after it."),
    (["flatten_1", "dense_1"], "The model ends at dense_1, so a block with it would have "
                               "nothing to feed."),
])
def test_layers_that_cannot_be_a_block_are_refused_in_one_line(ids, reason):
    graph = residual_model()
    graph.blocks = {}
    assert block_problem(graph, ids).startswith(reason)
    with pytest.raises(GraphError):
        block_ends(graph, ids)


def test_a_layer_is_in_one_block_only():
    graph = residual_model()
    assert block_problem(graph, ["conv2d_2", "add_1"], name="block_1") is None
    assert block_problem(graph, ["add_1", "flatten_1"]) == (
        "add_1 is already in block_1: a layer can be in one block.")


def test_repeating_a_block_chains_copies_that_keras_builds_with_their_parameters():
    graph = residual_model()
    copies = repeat_block(graph, "block_1", 3)
    assert copies == {"conv2d_2": ["conv2d_3", "conv2d_4"], "add_1": ["add_2", "add_3"]}
    # each copy's Add takes what the unit before gave, then its own convolution, in that order
    assert graph.inputs_of("conv2d_3") == ["add_1"] and graph.inputs_of("add_2") == [
        "add_1", "conv2d_3"]
    assert graph.inputs_of("add_3") == ["add_2", "conv2d_4"]
    assert graph.inputs_of("flatten_1") == ["add_3"]
    assert graph.ids()[:8] == ["input_1", "conv2d_1", "conv2d_2", "add_1", "conv2d_3", "add_2",
                               "conv2d_4", "add_3"]
    model = build_keras_model(graph)
    unit = 3 * 3 * 4 * 4 + 4
    assert model.count_params() == (3 * 3 * 3 * 4 + 4) + 3 * unit + (8 * 8 * 4 * 3 + 3)
    assert model.count_params() == analyze(graph).total_params
    assert graph.blocks == {"block_1": ["conv2d_2", "add_1"]}  # the copies are not marked


def test_a_block_repeated_none_times_wires_its_entry_to_what_it_fed():
    graph = residual_model()
    assert repeat_block(graph, "block_1", 0) == {"conv2d_2": [], "add_1": []}
    assert graph.ids() == ["input_1", "conv2d_1", "flatten_1", "dense_1"]
    assert graph.inputs_of("flatten_1") == ["conv2d_1"]
    assert graph.blocks == {}
    with pytest.raises(GraphError, match="0 to 8 times, not 9"):
        repeat_block(residual_model(), "block_1", 9)


def test_removing_a_layer_takes_it_out_of_its_block_and_an_empty_block_goes():
    graph = residual_model()
    graph.remove_nodes(["conv2d_2"])
    assert graph.blocks == {"block_1": ["add_1"]}
    graph.dissolve(["add_1"])
    assert graph.blocks == {}


def test_blocks_are_saved_with_the_project_and_a_file_s_strays_are_dropped(tmp_path):
    project = Project(graph=residual_model())
    path = tmp_path / "p.studio.json"
    save_project(project, path)
    assert load_project(path).graph.blocks == {"block_1": ["conv2d_2", "add_1"]}
    document = json.loads(path.read_text())
    document["model"]["blocks"] = {"block_2": ["gone_1"], "block_1": ["add_1", "conv2d_2"],
                                   "block_3": ["add_1", "flatten_1"]}
    path.write_text(json.dumps(document))
    # unknown layers go; a layer named by two blocks stays in the first; order is the model's
    assert load_project(path).graph.blocks == {"block_1": ["conv2d_2", "add_1"],
                                               "block_3": ["flatten_1"]}
    del document["model"]["blocks"]
    document["format_version"] = 10
    path.write_text(json.dumps(document))
    assert load_project(path).graph.blocks == {}
