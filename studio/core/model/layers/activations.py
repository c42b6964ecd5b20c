"""Activation functions as layers of their own, with the settings the Activation layer's plain
choice lacks: LeakyReLU, PReLU (which learns its slope), ELU, ReLU with a cap, and Softmax
along any axis."""

from __future__ import annotations

import math
from typing import Any

from studio.core.base.messages import count
from studio.core.model.layers.base import (
    LayerError,
    LayerType,
    Shape,
    Weights,
    axis_index,
    same_shape,
)
from studio.core.model.params import Param, format_shape


def _prelu(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    shared = params["shared_axes"] or []
    for axis in shared:
        if axis > len(shape):
            raise LayerError(
                f"Shared axes name axis {axis}, but this PReLU's input {format_shape(shape)} "
                f"has {count(len(shape), 'axis', 'axes')} after the batch: use 1 to "
                f"{len(shape)}."
            )
    return shape, math.prod(_prelu_weights(params, inputs)[0][1])


def _prelu_weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    """A slope for every value of the input, one for all along each shared axis."""
    shared = params["shared_axes"] or []
    return [("alpha", tuple(1 if i in shared else size
                            for i, size in enumerate(inputs[0], 1)))]


def _softmax(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    axis_index(params["axis"], inputs[0], "Softmax")
    return inputs[0], 0


def _slope(default: float) -> Param:
    return Param("negative_slope", "float", default,
                 "How much of a negative value is let through (0 lets none).", 0.0, 1e6)


TYPES = (
    LayerType(
        "ReLU",
        "Activations",
        "Keeps positive values and zeroes the rest; can cap the output, as MobileNet's ReLU6 "
        "does with a max value of 6.",
        (
            Param("max_value", "float", None, "The largest output; empty means no cap.",
                  0.0, 1e6, optional=True, unset="no cap"),
            _slope(0.0),
            Param("threshold", "float", 0.0, "Values below this count as negative.", 0.0, 1e6),
        ),
        same_shape,
    ),
    LayerType(
        "LeakyReLU",
        "Activations",
        "Like ReLU, but lets a small fraction of each negative value through, so no unit "
        "stops learning.",
        (_slope(0.3),),
        same_shape,
    ),
    LayerType(
        "PReLU",
        "Activations",
        "A leaky ReLU that learns how much of each negative value to let through.",
        (
            Param("shared_axes", "shape", None,
                  "Axes that share one learned slope, e.g. 1, 2 for one slope per channel of "
                  "an image; empty learns a slope for every value.", optional=True,
                  unset="none"),
        ),
        _prelu,
        weights=_prelu_weights,
    ),
    LayerType(
        "ELU",
        "Activations",
        "Keeps positive values and bends negative ones smoothly towards -alpha.",
        (Param("alpha", "float", 1.0, "The value that large negative inputs approach, "
               "negated.", 0.0, 1e6),),
        same_shape,
    ),
    LayerType(
        "Softmax",
        "Activations",
        "Turns values into probabilities that add up to 1 along one axis.",
        (Param("axis", "int", -1, "The axis whose values add up to 1: 1 is the first axis "
               "after the batch, -1 the last.", -8, 8),),
        _softmax,
    ),
)
