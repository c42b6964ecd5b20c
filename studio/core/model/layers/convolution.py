"""The convolution layers: Conv2D, Conv1D, Conv3D, Conv2DTranspose, SeparableConv2D and
DepthwiseConv2D. Their kernels and strides may differ per axis where Keras allows it."""

from __future__ import annotations

import math
from typing import Any

from studio.core.model.layers.base import (
    Infer,
    LayerType,
    Shape,
    WeightRule,
    Weights,
    activation_param,
    bias,
    kernel_params,
    padding_param,
    ranked,
    sliding,
    use_bias_param,
)
from studio.core.model.params import AXIS_NAMES, Param

_INPUTS = {
    1: "a sequence of steps × channels",
    2: "an image of height × width × channels",
    3: "a volume of depth × height × width × channels",
}
"""What a convolution over 1, 2 or 3 axes takes, in words."""


def kernel_size_param(axes: int) -> Param:
    """The ``kernel_size`` of a convolution over ``axes`` axes."""
    return Param("kernel_size", "int", 3, _per_axis("Size of each filter", axes), 1, 64,
                 required=True, axes=axes)


def strides_param(axes: int) -> Param:
    """The ``strides`` of a convolution over ``axes`` axes."""
    return Param("strides", "int", 1, _per_axis("Step between filter positions", axes), 1, 64,
                 axes=axes)


def _per_axis(what: str, axes: int) -> str:
    """A size's help: what it is, and how to give each axis its own."""
    if axes == 1:
        return f"{what}, in steps."
    names = AXIS_NAMES[axes]
    example = ", ".join(["3"] + ["1"] * (axes - 1))
    return (f"{what}: one number for every axis, or one per axis ({', '.join(names)}), "
            f"e.g. {example}.")


def _filters(what: str = "How many feature maps to learn.") -> Param:
    return Param("filters", "int", 32, what, 1, 4096, required=True)


def _depth_multiplier() -> Param:
    return Param("depth_multiplier", "int", 1,
                 "How many filters each input channel gets of its own.", 1, 256)


def _conv(layer: str, axes: int) -> Infer:
    """The shape rule of a plain convolution over ``axes`` axes."""

    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        *sizes, c = ranked(inputs, axes + 1, layer, _INPUTS[axes])
        kernel = kernel_size_param(axes)
        out = sliding(tuple(sizes), kernel, params, layer)
        filters = params["filters"]
        weights = math.prod(kernel.sizes(params["kernel_size"])) * c * filters
        return (*out, filters), weights + (filters if params["use_bias"] else 0)

    return infer


def _conv_weights(axes: int, transpose: bool = False) -> WeightRule:
    """The weight rule of a plain convolution over ``axes`` axes: a kernel of the kernel's
    sizes × input channels × filters (filters × input channels when transposed), and a
    bias per filter."""

    def weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
        kernel = kernel_size_param(axes).sizes(params["kernel_size"])
        channels, filters = inputs[0][-1], params["filters"]
        pair = (filters, channels) if transpose else (channels, filters)
        return [("kernel", (*kernel, *pair)), *bias(params, filters)]

    return weights


def _depthwise_weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    """A filter of the kernel's size per input channel and multiplier, then (separable) a
    1 × 1 kernel mixing them into the filters, and a bias per output channel."""
    kernel = kernel_size_param(2).sizes(params["kernel_size"])
    channels, multiplier = inputs[0][-1], params["depth_multiplier"]
    filters = params.get("filters")
    if filters is None:
        return [("kernel", (*kernel, channels, multiplier)),
                *bias(params, channels * multiplier)]
    return [("depthwise_kernel", (*kernel, channels, multiplier)),
            ("pointwise_kernel", (1, 1, channels * multiplier, filters)),
            *bias(params, filters)]


def _transpose(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    h, w, c = ranked(inputs, 3, "Conv2DTranspose", _INPUTS[2])
    kernel = kernel_size_param(2).sizes(params["kernel_size"])
    strides = strides_param(2).sizes(params["strides"])
    same = params["padding"] == "same"
    out = tuple(size * s + (0 if same else max(k - s, 0))
                for size, k, s in zip((h, w), kernel, strides, strict=True))
    filters = params["filters"]
    weights = math.prod(kernel) * c * filters + (filters if params["use_bias"] else 0)
    return (*out, filters), weights


def _depthwise(layer: str) -> Infer:
    """The shape rule of a depthwise convolution, followed by a pointwise one (separable)
    when the layer has ``filters``."""

    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        h, w, c = ranked(inputs, 3, layer, _INPUTS[2])
        kernel = kernel_size_param(2)
        out = sliding((h, w), kernel, params, layer)
        channels = c * params["depth_multiplier"]
        weights = math.prod(kernel.sizes(params["kernel_size"])) * channels
        filters = params.get("filters")
        if filters is not None:
            weights += channels * filters
        else:
            filters = channels
        return (*out, filters), weights + (filters if params["use_bias"] else 0)

    return infer


def _conv_type(name: str, axes: int, help_text: str) -> LayerType:
    padding = padding_param()
    if axes == 1:
        padding = Param("padding", "choice", "valid",
                        padding.help + " 'causal' pads only the start, so no step sees later "
                        "ones.", choices=("valid", "same", "causal"))
    return LayerType(
        name,
        "Convolution",
        help_text,
        (_filters(), kernel_size_param(axes), strides_param(axes), padding,
         activation_param("relu"), use_bias_param(), *kernel_params()),
        _conv(name, axes),
        weights=_conv_weights(axes),
    )


TYPES = (
    _conv_type("Conv2D", 2, "Slides learned filters over an image to detect local patterns."),
    _conv_type("Conv1D", 1, "Slides learned filters along a sequence (a signal, a text's "
                            "embeddings) to detect local patterns."),
    _conv_type("Conv3D", 3, "Slides learned filters through a volume (a scan, a video's "
                            "frames) to detect local patterns."),
    LayerType(
        "Conv2DTranspose",
        "Convolution",
        "A learned upsampling: spreads each input pixel over a filter-sized patch, so strides "
        "of 2 double the image (the decoder half of a U-Net).",
        (_filters(), kernel_size_param(2), strides_param(2), padding_param(),
         activation_param("relu"), use_bias_param(), *kernel_params()),
        _transpose,
        weights=_conv_weights(2, transpose=True),
    ),
    LayerType(
        "SeparableConv2D",
        "Convolution",
        "A cheaper Conv2D: filters each channel on its own, then mixes the channels with 1 × 1 "
        "filters (as in Xception and MobileNet).",
        (_filters(), kernel_size_param(2), strides_param(2), padding_param(),
         _depth_multiplier(), activation_param("relu"), use_bias_param(),
         *kernel_params("depthwise"), *kernel_params("pointwise")),
        _depthwise("SeparableConv2D"),
        weights=_depthwise_weights,
    ),
    LayerType(
        "DepthwiseConv2D",
        "Convolution",
        "Filters each channel on its own, without mixing channels (MobileNet's middle step; "
        "a 1 × 1 Conv2D usually follows).",
        (kernel_size_param(2), strides_param(2), padding_param(), _depth_multiplier(),
         activation_param("linear"), use_bias_param(), *kernel_params("depthwise")),
        _depthwise("DepthwiseConv2D"),
        weights=_depthwise_weights,
    ),
)
