"""The pooling layers (in the palette's Convolution group): max and average pooling over images
and sequences, and global pooling of either to one value per channel."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import (
    Infer,
    LayerError,
    LayerType,
    SetParam,
    Shape,
    padding_param,
    ranked,
    sequence_input,
    windows,
)
from studio.core.model.params import Param

IMAGE = "an image of height × width × channels"


def _pool(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        h, w, c = ranked(inputs, 3, layer, IMAGE)
        p, pad = params["pool_size"], params["padding"]
        s = params["strides"] or p
        return (
            windows(h, p, s, pad, layer, "pool window"),
            windows(w, p, s, pad, layer, "pool window"),
            c,
        ), 0

    return infer


def _pool1d(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        steps, features = sequence_input(inputs, layer)
        p, pad = params["pool_size"], params["padding"]
        if pad == "valid" and p > steps:
            raise LayerError(
                f"The pool window of {p} steps is longer than this {layer}'s input of {steps} "
                "steps. Use a smaller pool size, padding 'same', or less pooling before it.",
                SetParam("padding", "same"),
            )
        return (windows(steps, p, params["strides"] or p, pad, layer, "pool window"),
                features), 0

    return infer


def _global_pool(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        return (ranked(inputs, 3, layer, IMAGE)[-1],), 0

    return infer


def _global_pool1d(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        return (sequence_input(inputs, layer)[-1],), 0

    return infer


def _pool_params(window: str) -> tuple[Param, ...]:
    return (
        Param("pool_size", "int", 2, f"{window} of the pooling window.", 1, 64),
        Param(
            "strides",
            "int",
            None,
            "Step between windows; empty means the same as the pool size.",
            1,
            64,
            optional=True,
        ),
        padding_param(),
    )


def _pooling(name: str, does: str, infer: Infer, window: str) -> LayerType:
    return LayerType(name, "Convolution", does, _pool_params(window), infer(name))


def _global(name: str, does: str, infer: Infer) -> LayerType:
    return LayerType(name, "Convolution", does, (), infer(name))


TYPES = (
    _pooling("MaxPooling2D", "Keeps the largest value in each window, shrinking the image.",
             _pool, "Width and height"),
    _pooling("AveragePooling2D", "Averages each window, shrinking the image.", _pool,
             "Width and height"),
    _global("GlobalAveragePooling2D",
            "Averages each feature map to one number, giving a flat vector.", _global_pool),
    _global("GlobalMaxPooling2D",
            "Keeps the largest value of each feature map, giving a flat vector.", _global_pool),
    _pooling("MaxPooling1D",
             "Keeps the largest value in each window of steps, shortening the sequence.",
             _pool1d, "Length in steps"),
    _pooling("AveragePooling1D", "Averages each window of steps, shortening the sequence.",
             _pool1d, "Length in steps"),
    _global("GlobalAveragePooling1D",
            "Averages each feature over all the steps of a sequence, giving a flat vector.",
            _global_pool1d),
    _global("GlobalMaxPooling1D",
            "Keeps the largest value of each feature over all the steps, giving a flat vector.",
            _global_pool1d),
)
