"""The pooling layers (in the palette's Convolution group): max, average and global average."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import (
    Infer,
    LayerType,
    Shape,
    padding_param,
    ranked,
    sliding,
)
from studio.core.model.params import Param


def _pool(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        h, w, c = ranked(inputs, 3, layer, "an image of height × width × channels")
        window = _pool_size()
        strides = window.sizes(params["strides"] or params["pool_size"])
        return (*sliding((h, w), window, params, layer, strides), c), 0

    return infer


def _global_pool(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    _, _, c = ranked(inputs, 3, "GlobalAveragePooling2D", "an image of height × width × channels")
    return (c,), 0


def _pool_size() -> Param:
    return Param("pool_size", "int", 2, "Height and width of the pooling window: one number "
                 "for both, or two (height, width), e.g. 2, 1.", 1, 64, axes=2)


def _pool_params() -> tuple[Param, ...]:
    return (
        _pool_size(),
        Param(
            "strides",
            "int",
            None,
            "Step between windows: one number, or two (height, width); auto means the same "
            "as the pool size.",
            1,
            64,
            optional=True,
            axes=2,
        ),
        padding_param(),
    )


TYPES = (
    LayerType(
        "MaxPooling2D",
        "Convolution",
        "Keeps the largest value in each window, shrinking the image.",
        _pool_params(),
        _pool("MaxPooling2D"),
    ),
    LayerType(
        "AveragePooling2D",
        "Convolution",
        "Averages each window, shrinking the image.",
        _pool_params(),
        _pool("AveragePooling2D"),
    ),
    LayerType(
        "GlobalAveragePooling2D",
        "Convolution",
        "Averages each feature map to one number, giving a flat vector.",
        (),
        _global_pool,
    ),
)
