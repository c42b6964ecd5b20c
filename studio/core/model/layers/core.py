"""The Core layers: Input, Dense, Flatten, Activation, and the shape layers Reshape and Permute."""

from __future__ import annotations

import math
from typing import Any

from studio.core.model.layers.base import (
    LayerError,
    LayerType,
    Shape,
    Weights,
    activation_param,
    bias,
    kernel_params,
    same_shape,
    shape_list,
    use_bias_param,
)
from studio.core.model.params import Param, format_shape


def _input(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    return tuple(params["shape"]), 0


def _dense(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    if not shape:
        raise LayerError("Dense needs an input with at least one dimension.")
    units = params["units"]
    weights = shape[-1] * units + (units if params["use_bias"] else 0)
    return (*shape[:-1], units), weights


def dense_weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    """A kernel from the input's last axis to the units, and a bias per unit."""
    units = params["units"]
    return [("kernel", (inputs[0][-1], units)), *bias(params, units)]


def _flatten(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    return (math.prod(inputs[0]),), 0


def _reshape(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    target = list(params["target_shape"])
    size = math.prod(inputs[0])
    known = math.prod(d for d in target if d != -1)
    if -1 in target:
        if size % known:
            raise LayerError(
                f"Cannot reshape {size} values ({format_shape(inputs[0])}) into "
                f"{format_shape(target)}: {size} is not a multiple of {known}."
            )
        target[target.index(-1)] = size // known
    elif known != size:
        raise LayerError(
            f"Cannot reshape {format_shape(inputs[0])} ({size} values) into "
            f"{format_shape(target)} ({known} values): the counts must match."
        )
    return tuple(target), 0


def _permute(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    dims, shape = list(params["dims"]), inputs[0]
    axes = list(range(1, len(shape) + 1))
    if sorted(dims) != axes:
        raise LayerError(
            f"Dims must name each axis of the input {format_shape(shape)} once, in the new "
            f"order: {shape_list([(d,) for d in axes])} in any order (1 is the first axis after "
            f"the batch), but got {', '.join(str(d) for d in dims)}."
        )
    return tuple(shape[d - 1] for d in dims), 0


TYPES = (
    LayerType(
        "Input",
        "Core",
        "Where data enters the model; its shape is one sample without the batch.",
        (Param("shape", "shape", [28, 28, 1], "The shape of one sample, e.g. 28, 28, 1.",
               required=True),),
        _input,
        min_inputs=0,
        max_inputs=0,
    ),
    LayerType(
        "Dense",
        "Core",
        "A fully connected layer: every output looks at every input value.",
        (
            Param("units", "int", 64, "How many output values (neurons).", 1, 65536,
                  required=True),
            activation_param("relu"),
            use_bias_param(),
            *kernel_params(),
        ),
        _dense,
        weights=dense_weights,
    ),
    LayerType(
        "Flatten",
        "Core",
        "Unrolls the input into one flat vector.",
        (),
        _flatten,
    ),
    LayerType(
        "Activation",
        "Core",
        "Applies a function to every value.",
        (activation_param("relu", required=True),),
        same_shape,
    ),
    LayerType(
        "Reshape",
        "Core",
        "Rearranges the values into a new shape; -1 means 'whatever is left'.",
        (
            Param(
                "target_shape", "shape", [-1], "The new shape, e.g. 28, 28, 1.",
                allow_wildcard=True, required=True,
            ),
        ),
        _reshape,
    ),
    LayerType(
        "Permute",
        "Core",
        "Reorders the axes, e.g. 2, 1 swaps steps and features.",
        (Param("dims", "shape", [2, 1], "The input's axes in their new order, e.g. 2, 1; axis 1 "
               "is the first after the batch.", required=True),),
        _permute,
    ),
)
