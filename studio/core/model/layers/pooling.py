"""The pooling layers (in the palette's Convolution group): max and average pooling over images
and sequences, and global pooling of either to one value per channel."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import (
    Infer,
    LayerType,
    Shape,
    padding_param,
    ranked,
    sequence_input,
    sliding,
)
from studio.core.model.params import Param

IMAGE = "an image of height × width × channels"


def _pool(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        h, w, c = ranked(inputs, 3, layer, IMAGE)
        return (*_slide((h, w), params, layer), c), 0

    return infer


def _pool1d(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        steps, features = sequence_input(inputs, layer)
        return (*_slide((steps,), params, layer), features), 0

    return infer


def _slide(sizes: Shape, params: dict[str, Any], layer: str) -> Shape:
    """The window's positions along ``sizes``; strides left to auto step by the pool size."""
    window = _pool_size(len(sizes))
    strides = window.sizes(params["strides"] or params["pool_size"])
    return sliding(sizes, window, params, layer, strides)


def _global_pool(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        return (ranked(inputs, 3, layer, IMAGE)[-1],), 0

    return infer


def _global_pool1d(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        return (sequence_input(inputs, layer)[-1],), 0

    return infer


_WINDOW = {1: ("Length in steps of the pooling window.", "Step between windows"),
           2: ("Height and width of the pooling window: one number for both, or two (height, "
               "width), e.g. 2, 1.", "Step between windows: one number, or two (height, width)")}


def _pool_size(axes: int) -> Param:
    return Param("pool_size", "int", 2, _WINDOW[axes][0], 1, 64, axes=axes)


def _pool_params(axes: int) -> tuple[Param, ...]:
    return (
        _pool_size(axes),
        Param(
            "strides",
            "int",
            None,
            f"{_WINDOW[axes][1]}; auto means the same as the pool size.",
            1,
            64,
            optional=True,
            axes=axes,
        ),
        padding_param(),
    )


def _pooling(name: str, does: str, infer: Infer, axes: int) -> LayerType:
    return LayerType(name, "Convolution", does, _pool_params(axes), infer(name))


def _global(name: str, does: str, infer: Infer) -> LayerType:
    return LayerType(name, "Convolution", does, (), infer(name))


TYPES = (
    _pooling("MaxPooling2D", "Keeps the largest value in each window, shrinking the image.",
             _pool, 2),
    _pooling("AveragePooling2D", "Averages each window, shrinking the image.", _pool, 2),
    _global("GlobalAveragePooling2D",
            "Averages each feature map to one number, giving a flat vector.", _global_pool),
    _global("GlobalMaxPooling2D",
            "Keeps the largest value of each feature map, giving a flat vector.", _global_pool),
    _pooling("MaxPooling1D",
             "Keeps the largest value in each window of steps, shortening the sequence.",
             _pool1d, 1),
    _pooling("AveragePooling1D", "Averages each window of steps, shortening the sequence.",
             _pool1d, 1),
    _global("GlobalAveragePooling1D",
            "Averages each feature over all the steps of a sequence, giving a flat vector.",
            _global_pool1d),
    _global("GlobalMaxPooling1D",
            "Keeps the largest value of each feature over all the steps, giving a flat vector.",
            _global_pool1d),
)
