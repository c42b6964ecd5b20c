"""FLOPs estimates: a multiply-add is 2; bias and non-linear activation are 1 per output."""

from __future__ import annotations

import pytest

from studio.core.build.analysis import analyze
from studio.core.data.bundled import MNIST_10K
from studio.core.model.flops import FLOPS_RULES, format_flops, layer_flops
from studio.core.model.graph import Graph, Node
from studio.core.model.registry import REGISTRY
from studio.core.project.templates import demo_project


def test_every_layer_type_has_a_rule():
    assert set(FLOPS_RULES) == set(REGISTRY)


def test_demo_cnn_flops_match_hand_counts():
    report = analyze(demo_project().graph, MNIST_10K)
    flops = {node_id: r.flops for node_id, r in report.nodes.items()}
    # Conv2D ("same" padding keeps the image's size): 2 × k × k × cin per output value, then
    # one bias add and one relu per output.
    assert flops["conv2d_1"] == 2 * 3 * 3 * 1 * 28 * 28 * 32 + 2 * 28 * 28 * 32 == 501_760
    assert flops["conv2d_2"] == 2 * 3 * 3 * 32 * 14 * 14 * 64 + 2 * 14 * 14 * 64 == 7_250_432
    assert flops["conv2d_3"] == 2 * 3 * 3 * 64 * 7 * 7 * 64 + 2 * 7 * 7 * 64 == 3_618_944
    # Dense: 2 × in × units, then bias and activation (relu, softmax) per output.
    assert flops["dense_1"] == 2 * 3136 * 64 + 2 * 64 == 401_536
    assert flops["dense_2"] == 2 * 64 * 10 + 2 * 10 == 1_300
    # Pooling looks at every value of each 2 × 2 window; Flatten and Input cost nothing.
    assert flops["max_pooling2d_1"] == 4 * 14 * 14 * 32
    assert flops["max_pooling2d_2"] == 4 * 7 * 7 * 64
    assert flops["flatten_1"] == flops["input_1"] == 0
    assert report.total_flops == sum(flops.values()) == 11_811_604


def test_total_flops_leaves_out_layers_without_a_shape():
    g = Graph.from_chain([
        Node("in", "Input", {"shape": [28, 28, 1]}),
        Node("conv", "Conv2D", {"filters": 4, "use_bias": False, "activation": "linear"}),
        Node("bad", "Conv2D", {"kernel_size": 99}),
        Node("out", "Dense", {"units": 10}),
    ])
    report = analyze(g, MNIST_10K)
    assert report.nodes["conv"].flops == 2 * 9 * 26 * 26 * 4
    assert report.total_flops == report.nodes["conv"].flops
    assert "bad" not in report.nodes


def flops(layer: str, inputs: list[tuple[int, ...]], **params) -> int:
    full = REGISTRY[layer].resolved(params)
    output, weights = REGISTRY[layer].output(full, inputs)
    return layer_flops(layer, full, inputs, output, weights)


@pytest.mark.parametrize(
    ("layer", "inputs", "params", "expected"),
    [
        ("Dense", [(7, 5, 3)], {"units": 4, "activation": "linear", "use_bias": False},
         2 * 3 * 4 * 7 * 5),
        ("Dense", [(3,)], {"units": 4, "activation": "relu", "use_bias": True}, 2 * 12 + 4 + 4),
        ("Conv2D", [(8, 8, 3)], {"filters": 5, "kernel_size": 3, "strides": 2,
                                 "padding": "same", "activation": "linear", "use_bias": False},
         2 * 3 * 3 * 3 * 5 * 4 * 4),
        ("AveragePooling2D", [(9, 9, 2)], {"pool_size": 3}, 9 * 3 * 3 * 2),
        ("GlobalAveragePooling2D", [(6, 5, 4)], {}, 6 * 5 * 4),
        ("BatchNormalization", [(4, 4, 8)], {}, 2 * 128),
        ("Dropout", [(100,)], {}, 100),
        ("Rescaling", [(28, 28, 1)], {}, 2 * 784),
        ("Activation", [(10,)], {"activation": "tanh"}, 10),
        ("Activation", [(10,)], {"activation": "linear"}, 0),
        ("Add", [(4, 4)] * 3, {}, 2 * 16),
        ("Multiply", [(4, 4)] * 2, {}, 16),
        ("Average", [(4, 4)] * 3, {}, 3 * 16),
        ("Concatenate", [(4, 2), (4, 3)], {}, 0),
        ("LSTM", [(12, 5)], {"units": 8}, 2 * 4 * 8 * (5 + 8 + 1) * 12),
        ("GRU", [(12, 5)], {"units": 8, "return_sequences": True}, 2 * 3 * 8 * (5 + 8 + 2) * 12),
        ("Embedding", [(20,)], {}, 0),
        ("Flatten", [(3, 3, 3)], {}, 0),
        ("Reshape", [(12,)], {"target_shape": [3, 4]}, 0),
        ("Input", [], {}, 0),
    ],
)
def test_rules(layer, inputs, params, expected):
    assert flops(layer, inputs, **params) == expected


def test_flops_read_with_a_prefix():
    assert [format_flops(n) for n in (950, 4_620_000, 1_500, 2_000_000_000)] == [
        "950 FLOPs", "4.62 MFLOPs", "1.5 kFLOPs", "2 GFLOPs"]
