"""Shape inference over whole models, and plain-language problems at the right layer."""

from __future__ import annotations

import pytest

from studio.core.build.analysis import analyze
from studio.core.data.bundled import MNIST_10K
from studio.core.data.types import DatasetInfo
from studio.core.model.graph import Graph, Node
from studio.core.project.templates import demo_project


def chain(*layers) -> Graph:
    nodes = [Node(f"n{i}", t, p) for i, (t, p) in enumerate(layers)]
    return Graph.from_chain(nodes)


IMAGE = ("Input", {"shape": [28, 28, 1]})


def test_demo_cnn_counts_match_keras_summary():
    report = analyze(demo_project().graph, MNIST_10K)
    assert report.total_params == 257_162
    shapes = [r.output_shape for r in report.nodes.values()]
    assert shapes == [(28, 28, 1), (28, 28, 32), (14, 14, 32), (14, 14, 64), (7, 7, 64),
                      (7, 7, 64), (3136,), (64,), (10,)]


@pytest.mark.parametrize(
    ("graph", "node", "words"),
    [
        (chain(IMAGE, ("Flatten", {}), ("Conv2D", {}), ("Dense", {"units": 10})),
         "n2", "Conv2D expects an image"),
        (chain(IMAGE, ("Flatten", {}), ("Dense", {"units": -3, "activation": "softmax"})),
         "n2", "Units must be at least 1, not -3"),
        (chain(IMAGE, ("Conv2D", {"kernel_size": 5, "strides": 4}),
               ("Conv2D", {"kernel_size": 9}), ("Flatten", {}), ("Dense", {"units": 10})),
         "n2", "kernel size of 9 × 9 is larger than this Conv2D's input of 6 × 6 pixels"),
        (chain(IMAGE, ("Flatten", {}), ("Dense", {"units": 12, "activation": "softmax"})),
         "n2", "softmax classifier has 12 outputs, but MNIST-10k has 10 classes. Set units to 10"),
        (chain(IMAGE, ("Conv2D", {"filters": 10})),
         "n1", "Add Flatten or GlobalAveragePooling2D"),
        (chain(("Input", {"shape": [32, 32, 3]}), ("Flatten", {}), ("Dense", {"units": 10})),
         "n0", "does not match MNIST-10k"),
    ],
)
def test_problems_are_pinned_to_the_layer(graph, node, words):
    report = analyze(graph, MNIST_10K)
    assert not report.ok
    assert words in (report.problem_at(node) or ""), report.problems
    assert report.reason.startswith(f"{node}: ")


def test_layers_after_a_problem_have_no_shape_but_earlier_ones_do():
    report = analyze(chain(IMAGE, ("Flatten", {}), ("Conv2D", {}), ("Dense", {"units": 10})),
                     MNIST_10K)
    assert report.nodes["n1"].output_shape == (784,)
    assert "n2" not in report.nodes and "n3" not in report.nodes


def test_whole_model_problems():
    assert "empty" in analyze(Graph(), MNIST_10K).reason
    loop = Graph([Node("a", "Dense", {}), Node("b", "Dense", {})], [("a", "b"), ("b", "a")])
    assert "loop" in analyze(loop, MNIST_10K).reason
    two_outputs = chain(IMAGE, ("Flatten", {}), ("Dense", {"units": 10, "activation": "softmax"}))
    two_outputs.nodes.append(Node("extra", "Dense", {}))
    two_outputs.edges.append(("n1", "extra"))
    report = analyze(two_outputs, MNIST_10K)
    assert report.problem_at("extra").endswith(
        "(Every layer that feeds nothing is an output of the model.)")
    assert analyze(Graph([Node("d", "Dense", {})]), MNIST_10K).problems[0].message == (
        "The model needs an Input layer.")


def test_several_inputs_and_outputs_fit_a_dataset_when_each_one_does():
    graph = Graph(
        [Node("a", "Input", {"shape": [28, 28, 1]}), Node("b", "Input", {"shape": [28, 28, 1]}),
         Node("fa", "Flatten", {}), Node("fb", "Flatten", {}), Node("cat", "Concatenate", {}),
         Node("main", "Dense", {"units": 10, "activation": "softmax"}),
         Node("aux", "Dense", {"units": 10, "activation": "softmax"})],
        [("a", "fa"), ("b", "fb"), ("fa", "cat"), ("fb", "cat"), ("cat", "main"),
         ("fa", "aux")],
    )
    assert analyze(graph, MNIST_10K).ok
    graph.node("b").params["shape"] = [14, 14, 1]
    graph.node("aux").params["units"] = 7
    report = analyze(graph, MNIST_10K)
    assert "does not match MNIST-10k" in report.problem_at("b")
    assert "Set units to 10" in report.problem_at("aux")
    assert report.problem_at("a") is None and report.problem_at("main") is None


def test_branching_graph_with_add_and_concatenate():
    graph = Graph(
        [Node("in", "Input", {"shape": [28, 28, 1]}), Node("f", "Flatten", {}),
         Node("a", "Dense", {"units": 16}), Node("b", "Dense", {"units": 16}),
         Node("sum", "Add", {}), Node("cat", "Concatenate", {}),
         Node("out", "Dense", {"units": 10, "activation": "softmax"})],
        [("in", "f"), ("f", "a"), ("f", "b"), ("a", "sum"), ("b", "sum"),
         ("sum", "cat"), ("a", "cat"), ("cat", "out")],
    )
    report = analyze(graph, MNIST_10K)
    assert report.ok, report.problems
    assert report.nodes["cat"].output_shape == (32,)
    assert graph.chain() is None


HOUSES = DatasetInfo("houses.csv", "houses.csv", (3,), 0, (), 50, kind="table",
                     task="regression")


def test_a_regression_model_ends_in_one_number():
    assert analyze(chain(("Input", {"shape": [3]}), ("Dense", {"units": 8}),
                         ("Dense", {"units": 1})), HOUSES).ok


def test_a_softmax_head_on_regression_data_is_explained_and_fixed():
    graph = chain(("Input", {"shape": [3]}), ("Dense", {"units": 4, "activation": "softmax"}))
    (problem,) = analyze(graph, HOUSES).problems
    assert problem.node_id == "n1" and "regression task" in problem.message
    assert [f.label for f in problem.fixes] == ["Set the activation to linear", "Set units to 1"]
    for fix in problem.fixes:
        fix.apply(graph)
    assert analyze(graph, HOUSES).ok


def test_an_image_output_on_regression_data_offers_a_one_number_head():
    graph = chain(IMAGE, ("Conv2D", {}))
    images = DatasetInfo("ages", "ages", (28, 28, 1), 0, (), 9, task="regression")
    (problem,) = analyze(graph, images).problems
    assert "must output one number. End with Dense(1)." in problem.message
    problem.fixes[0].apply(graph)
    assert analyze(graph, images).ok


def test_an_embedding_too_small_for_the_vocabulary_is_fixed_in_one_click():
    graph = chain(("Input", {"shape": [20]}), ("Embedding", {"input_dim": 500, "output_dim": 8}),
                  ("Flatten", {}), ("Dense", {"units": 2, "activation": "softmax"}))
    reviews = DatasetInfo("r.csv", "r.csv", (20,), 2, ("bad", "good"), 9, kind="text",
                          vocabulary_size=2_000)
    (problem,) = analyze(graph, reviews).problems
    assert problem.node_id == "n1" and "vocabulary of 2,000" in problem.message
    problem.fixes[0].apply(graph)
    assert analyze(graph, reviews).ok
