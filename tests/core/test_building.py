"""Building Keras models from a graph alone, or from a graph that must fit its dataset."""

from __future__ import annotations

import pytest

from studio.core.build.analysis import analyze
from studio.core.build.keras_model import (
    ModelError,
    build_keras_model,
    build_model,
    compile_model,
    model_endpoints,
)
from studio.core.data.bundled import MNIST_10K
from studio.core.model.graph import Graph, Node
from studio.core.project.document import Schedule
from studio.core.project.templates import demo_project


def two_by_two() -> Graph:
    """Two inputs joined, then split into two outputs."""
    graph = Graph(nodes=[
        Node("tabular", "Input", {"shape": [6]}),
        Node("image", "Input", {"shape": [4, 4, 1]}),
        Node("flat", "Flatten", {}),
        Node("join", "Concatenate", {}),
        Node("first", "Dense", {"units": 3, "activation": "softmax"}),
        Node("second", "Dense", {"units": 1, "activation": "sigmoid"}),
    ])
    for src, dst in [("image", "flat"), ("tabular", "join"), ("flat", "join"),
                     ("join", "first"), ("join", "second")]:
        graph.connect(src, dst)
    return graph


def test_a_graph_alone_may_have_several_inputs_and_outputs():
    graph = two_by_two()
    report = analyze(graph)
    assert report.ok and report.nodes["join"].output_shape == (22,)
    model = build_keras_model(graph, "two by two")
    assert model_endpoints(graph) == (["tabular", "image"], ["first", "second"])
    assert [t.shape[1:] for t in model.inputs] == [(6,), (4, 4, 1)]
    assert [t.shape[1:] for t in model.outputs] == [(3,), (1,)]
    assert model.count_params() == report.total_params == 22 * 3 + 3 + 22 + 1
    assert model.name == "two_by_two"


def test_a_graph_for_a_dataset_needs_every_input_and_output_to_fit_it():
    graph = two_by_two()
    report = analyze(graph, MNIST_10K)
    assert not report.ok
    with pytest.raises(ModelError, match="does not match MNIST-10k"):
        build_model(graph, MNIST_10K)


def test_both_builders_make_the_same_model_for_a_valid_project():
    graph = demo_project().graph
    ours, plain = build_model(graph, MNIST_10K), build_keras_model(graph)
    assert [type(x) for x in ours.layers] == [type(x) for x in plain.layers]
    assert ours.count_params() == plain.count_params() == 257_162


def test_compiling_uses_the_projects_optimizer_and_schedule():
    project = demo_project()
    project.training.optimizer = "rmsprop"
    project.training.schedule = Schedule(kind="step", step_epochs=2, factor=0.1)
    model = build_model(project.graph, MNIST_10K)
    with pytest.raises(ValueError, match="step learning-rate schedule needs the number of steps"):
        compile_model(model, project.graph, project.training)
    compile_model(model, project.graph, project.training, steps_per_epoch=50)
    schedule = model.optimizer.get_config()["learning_rate"]
    assert type(model.optimizer).__name__ == "RMSprop"
    assert schedule["class_name"] == "ExponentialDecay"
    assert schedule["config"]["decay_steps"] == 100 and schedule["config"]["staircase"]
