"""Estimated floating-point operations per sample for each layer type's forward pass.

A multiply-add counts as 2. Layers with weights also count one operation per output value for
the bias and one for a non-linear activation, as a separate Activation layer would.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from studio.core.model.applications import flops as _application
from studio.core.model.layers import Shape
from studio.core.model.layers.attention import sizes as attention_sizes

FlopsRule = Callable[[dict[str, Any], list[Shape], Shape, int], int]
"""(resolved params, input shapes, output shape, weight count) -> operations per sample."""


def _activation(params: dict[str, Any], output: Shape) -> int:
    return 0 if params.get("activation", "linear") == "linear" else math.prod(output)


def _bias_and_activation(params: dict[str, Any], output: Shape) -> int:
    bias = math.prod(output) if params.get("use_bias") else 0
    return bias + _activation(params, output)


def _dense(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    return 2 * inputs[0][-1] * math.prod(output) + _bias_and_activation(params, output)


def _area(size: int | list[int], axes: int) -> int:
    """The number of positions a per-axis window covers (one number means every axis)."""
    return size ** axes if isinstance(size, int) else math.prod(size)


def _conv(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    window = _area(params["kernel_size"], len(inputs[0]) - 1) * inputs[0][-1]
    return 2 * window * math.prod(output) + _bias_and_activation(params, output)


def _kernel_use(pixels: Callable[[list[Shape], Shape], Shape]) -> FlopsRule:
    """A layer that uses each kernel weight once per pixel of ``pixels(inputs, output)``: a
    multiply-add per weight and pixel, then the bias and activation."""

    def rule(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
        kernel = weights - (output[-1] if params.get("use_bias") else 0)
        return (2 * kernel * math.prod(pixels(inputs, output)[:-1])
                + _bias_and_activation(params, output))

    return rule


def _pool(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    return _area(params["pool_size"], 2) * math.prod(output)


def _pool1d(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    return params["pool_size"] * math.prod(output)


def _global_pool(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    return math.prod(inputs[0])


def _per_value(count: int) -> FlopsRule:
    def rule(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
        return count * math.prod(output)

    return rule


def _activation_layer(
    params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int
) -> int:
    return _activation(params, output)


def _merge(extra: int) -> FlopsRule:
    """One operation per value for each input after the first, plus ``extra`` per value."""

    def rule(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
        return (len(inputs) - 1 + extra) * math.prod(output)

    return rule


def _dot(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    """A multiply-add along the axis for each output value, after scaling both inputs to
    length 1 (a square, a sum and a division per value) when it normalizes."""
    along = inputs[0][params["axes"] % (len(inputs[0]) + 1) - 1]
    scaling = 3 * sum(math.prod(shape) for shape in inputs) if params["normalize"] else 0
    return 2 * along * math.prod(output) + scaling


def _recurrent(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    return 2 * weights * inputs[0][0]


def _time_distributed(
    params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int
) -> int:
    values = math.prod(output)
    return 2 * inputs[0][-1] * values + values + _activation(params, output)


def _attention(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    """Projecting the query, key and value and the output (about two operations per weight
    per step), then for every head each query step against every key step: a score, its
    softmax, and the weighted sum of the values."""
    query_steps, value_steps, heads, size = attention_sizes(params, inputs)
    projections = 2 * weights * max(query_steps, value_steps)
    return projections + heads * query_steps * value_steps * (4 * size + 1)


def _detection_head(
    params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int
) -> int:
    """A 1 × 1 convolution: a multiply-add per input channel and a bias per output value."""
    return (2 * inputs[0][-1] + 1) * math.prod(output)


def _free(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    return 0


FLOPS_RULES: dict[str, FlopsRule] = {
    "Input": _free,
    "Dense": _dense,
    "Conv2D": _conv,
    "Conv1D": _conv,
    "Conv3D": _conv,
    # each input pixel spreads over a kernel-sized patch of the output
    "Conv2DTranspose": _kernel_use(lambda inputs, output: inputs[0]),
    "SeparableConv2D": _kernel_use(lambda inputs, output: output),
    "DepthwiseConv2D": _kernel_use(lambda inputs, output: output),
    "MaxPooling2D": _pool,
    "AveragePooling2D": _pool,
    "GlobalAveragePooling2D": _global_pool,
    "UpSampling2D": _per_value(1),  # a copy or an interpolation per value
    "ZeroPadding2D": _free,
    "Cropping2D": _free,
    "Resizing": _per_value(4),  # bilinear: four neighbours weighed per value
    "Flatten": _free,
    "Dropout": _per_value(1),  # the training-time mask
    "BatchNormalization": _per_value(2),  # statistics folded into a scale and a shift
    "Activation": _activation_layer,
    "Reshape": _free,
    "Rescaling": _per_value(2),  # multiply, then add the offset
    "Embedding": _free,  # a table look-up
    "SimpleRNN": _recurrent,
    "LSTM": _recurrent,
    "GRU": _recurrent,
    "Bidirectional": _recurrent,  # its weights count both directions
    "TimeDistributed": _time_distributed,
    "RepeatVector": _free,  # copies values
    "MultiHeadAttention": _attention,
    "Add": _merge(0),
    "Multiply": _merge(0),
    "Average": _merge(1),  # the sum, then one division per value
    "Concatenate": _free,  # copies values, no arithmetic
    # Issue 22's pooling, normalization, activation, shape and merge layers
    "MaxPooling1D": _pool1d,
    "AveragePooling1D": _pool1d,
    "GlobalMaxPooling2D": _global_pool,
    "GlobalAveragePooling1D": _global_pool,
    "GlobalMaxPooling1D": _global_pool,
    "SpatialDropout2D": _per_value(1),  # the training-time mask
    "GaussianNoise": _per_value(1),  # the training-time noise
    "LayerNormalization": _per_value(4),  # statistics, then normalize, scale and shift
    "GroupNormalization": _per_value(4),
    "ReLU": _per_value(1),
    "LeakyReLU": _per_value(1),
    "PReLU": _per_value(2),  # a comparison and a multiplication
    "ELU": _per_value(1),
    "Softmax": _per_value(3),  # exponent, sum and division
    "Permute": _free,
    "Subtract": _merge(0),
    "Maximum": _merge(0),
    "Minimum": _merge(0),
    "Dot": _dot,
    "DetectionHead": _detection_head,
    "Application": _application,  # scaled from the base's published count
    "Keras": _free,  # an imported layer: unknown without Keras, so not counted
}


def layer_flops(
    layer_type: str, params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int
) -> int:
    """Operations per sample for one layer; ``params`` must have defaults filled in."""
    return FLOPS_RULES[layer_type](params, inputs, output, weights)


_FLOPS_PREFIXES = ((1e9, "G"), (1e6, "M"), (1e3, "k"))


def format_flops(flops: int) -> str:
    """``4_620_000`` gives ``4.62 MFLOPs``."""
    for size, prefix in _FLOPS_PREFIXES:
        if flops >= size:
            return f"{flops / size:.3g} {prefix}FLOPs"
    return f"{flops} FLOPs"
