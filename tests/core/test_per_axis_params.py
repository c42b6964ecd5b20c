"""Sizes per axis: one number for every axis, one per axis, or one per side, as Keras takes
them, and the Keras arguments and configs they turn into and come back from."""

from __future__ import annotations

import pytest

from studio.core.build.keras_model import layer_kwargs
from studio.core.model.describe import key_params
from studio.core.model.graph import Node
from studio.core.model.layers.keras_args import registry_values
from studio.core.model.registry import REGISTRY

KERNEL = REGISTRY["Conv2D"].param("kernel_size")
PADDING = REGISTRY["ZeroPadding2D"].param("padding")


@pytest.mark.parametrize(
    ("param", "value", "problem"),
    [
        (KERNEL, 3, None),
        (KERNEL, [3, 1], None),
        (KERNEL, [3, 1, 1], "Kernel size takes one number, or one per axis (height, width), "
                            "not '3, 1, 1'."),
        (KERNEL, [3, 65], "Kernel size must be at most 64, not 65."),
        (KERNEL, [3, 1.5], "Kernel size must be a whole number, not 1.5."),
        (REGISTRY["Conv1D"].param("kernel_size"), [3, 1], "Kernel size must be a whole number, "
                                                          "not [3, 1]."),
        (REGISTRY["Conv3D"].param("strides"), [1, 2, 1], None),
        (PADDING, [0, 1, 0, 1], None),
        (PADDING, [0, 1, 0], "Padding takes one number, or one per axis (height, width), or one "
                             "per side (top, bottom, left, right), not '0, 1, 0'."),
        (PADDING, [0, -1], "Padding must be at least 0, not -1."),
    ],
)
def test_a_size_may_be_given_per_axis_where_keras_allows_it(param, value, problem):
    assert param.check(value) == problem


@pytest.mark.parametrize(
    ("value", "keras", "sizes", "shortest"),
    [(1, 1, (2, 2), 1),
     ([1, 2], ((1, 1), (2, 2)), (2, 4), [1, 2]),
     ([2, 2], ((2, 2), (2, 2)), (4, 4), 2),
     ([0, 1, 0, 1], ((0, 1), (0, 1)), (1, 1), [0, 1, 0, 1]),
     ([3, 3, 2, 2], ((3, 3), (2, 2)), (6, 4), [3, 2])],
)
def test_sides_become_keras_pairs_and_come_back_in_their_shortest_form(value, keras, sizes,
                                                                        shortest):
    assert PADDING.to_keras(value) == keras
    assert PADDING.sizes(value) == sizes
    stored = PADDING.to_keras(value if isinstance(value, list) else [value, value])
    assert PADDING.from_keras([list(pair) for pair in stored]) == shortest


def test_a_regularizer_and_its_factor_make_one_keras_regularizer_and_come_back():
    node = Node("c", "Conv2D", {"kernel_size": [3, 1], "kernel_initializer": "he_normal",
                                "kernel_regularizer": "l1_l2",
                                "kernel_regularizer_factor": 1e-4})
    kwargs = layer_kwargs(node)
    assert kwargs["kernel_size"] == [3, 1]
    assert kwargs["kernel_initializer"] == "he_normal"
    assert kwargs["kernel_regularizer"] == {"class_name": "L1L2",
                                            "config": {"l1": 1e-4, "l2": 1e-4}}
    assert "kernel_regularizer_factor" not in kwargs
    none = layer_kwargs(Node("d", "Dense", {"units": 4}))
    assert none["kernel_regularizer"] is None
    keras_config = {**kwargs, "kernel_size": [3, 1],
                    "kernel_initializer": {"class_name": "HeNormal", "config": {"seed": None}},
                    "kernel_regularizer": {"class_name": "L1L2",
                                           "config": {"l1": 1e-4, "l2": 1e-4}}}
    assert registry_values(REGISTRY["Conv2D"], keras_config) == node.resolved_params()


@pytest.mark.parametrize(
    ("layer", "params", "shown"),
    [("Conv2D", {"kernel_size": [3, 1], "strides": [2, 1]}, "32 × 3×1, stride 2×1, relu"),
     ("Conv1D", {"kernel_size": 5, "padding": "causal"}, "32 × 5, causal, relu"),
     ("DepthwiseConv2D", {"depth_multiplier": 2, "strides": 2}, "3×3, × 2 per channel, stride 2"),
     ("MaxPooling2D", {"pool_size": [2, 1]}, "2×1"),
     ("ZeroPadding2D", {"padding": [0, 1, 0, 1]}, "0,1×0,1"),
     ("UpSampling2D", {"size": 2}, "× 2×2, nearest")],
)
def test_the_canvas_describes_sizes_per_axis(layer, params, shown):
    assert key_params(Node("n", layer, params)) == shown
