"""The merge layers, which join branches: Add, Multiply, Average and Concatenate."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import Infer, LayerError, LayerType, Shape, shape_list


def _elementwise(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        if any(other != inputs[0] for other in inputs[1:]):
            raise LayerError(
                f"{layer} needs inputs of the same shape, but got {shape_list(inputs)}."
            )
        return inputs[0], 0

    return infer


def _concatenate(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    first = inputs[0]
    for other in inputs[1:]:
        if len(other) != len(first) or other[:-1] != first[:-1]:
            raise LayerError(
                "Concatenate joins along the last axis, so all other sizes must match, but got "
                f"{shape_list(inputs)}."
            )
    return (*first[:-1], sum(s[-1] for s in inputs)), 0


TYPES = (
    LayerType(
        "Add",
        "Merge",
        "Adds its inputs element by element; they must have the same shape.",
        (),
        _elementwise("Add"),
        min_inputs=2,
        max_inputs=64,
    ),
    LayerType(
        "Multiply",
        "Merge",
        "Multiplies its inputs element by element; they must have the same shape.",
        (),
        _elementwise("Multiply"),
        min_inputs=2,
        max_inputs=64,
    ),
    LayerType(
        "Average",
        "Merge",
        "Averages its inputs element by element; they must have the same shape.",
        (),
        _elementwise("Average"),
        min_inputs=2,
        max_inputs=64,
    ),
    LayerType(
        "Concatenate",
        "Merge",
        "Joins its inputs along the last axis.",
        (),
        _concatenate,
        min_inputs=2,
        max_inputs=64,
    ),
)
