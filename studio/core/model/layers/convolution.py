"""The convolution layers: Conv2D."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import (
    LayerType,
    Shape,
    activation_param,
    padding_param,
    ranked,
    use_bias_param,
    windows,
)
from studio.core.model.params import Param


def _conv2d(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    h, w, c = ranked(inputs, 3, "Conv2D", "an image of height × width × channels")
    k, s, pad = params["kernel_size"], params["strides"], params["padding"]
    oh = windows(h, k, s, pad, "Conv2D", "kernel")
    ow = windows(w, k, s, pad, "Conv2D", "kernel")
    filters = params["filters"]
    weights = k * k * c * filters + (filters if params["use_bias"] else 0)
    return (oh, ow, filters), weights


TYPES = (
    LayerType(
        "Conv2D",
        "Convolution",
        "Slides learned filters over an image to detect local patterns.",
        (
            Param("filters", "int", 32, "How many feature maps to learn.", 1, 4096,
                  required=True),
            Param("kernel_size", "int", 3, "Width and height of each filter.", 1, 64,
                  required=True),
            Param("strides", "int", 1, "Step between filter positions.", 1, 64),
            padding_param(),
            activation_param("relu"),
            use_bias_param(),
        ),
        _conv2d,
    ),
)
