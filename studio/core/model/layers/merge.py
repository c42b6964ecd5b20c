"""The merge layers, which join branches: element by element (Add, Subtract, Multiply, Average,
Maximum, Minimum), side by side (Concatenate), or as dot products (Dot)."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import (
    Infer,
    LayerError,
    LayerType,
    Shape,
    axis_index,
    shape_list,
)
from studio.core.model.params import Param, format_shape


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


def _dot(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    first, second = inputs
    axes = params["axes"]
    a, b = (axis_index(axes, shape, "Dot", "axes") for shape in inputs)
    if first[a] != second[b]:
        raise LayerError(
            f"Dot multiplies its inputs along axis {axes} and sums, so both must have the same "
            f"size there, but {format_shape(first)} has {first[a]} and {format_shape(second)} "
            f"has {second[b]}."
        )
    return (*first[:a], *first[a + 1:], *second[:b], *second[b + 1:]) or (1,), 0


def _elementwise_type(name: str, does: str, max_inputs: int = 64) -> LayerType:
    return LayerType(
        name,
        "Merge",
        f"{does} element by element; they must have the same shape.",
        (),
        _elementwise(name),
        min_inputs=2,
        max_inputs=max_inputs,
    )


TYPES = (
    _elementwise_type("Add", "Adds its inputs"),
    _elementwise_type("Subtract", "Subtracts the second input from the first", max_inputs=2),
    _elementwise_type("Multiply", "Multiplies its inputs"),
    _elementwise_type("Average", "Averages its inputs"),
    _elementwise_type("Maximum", "Keeps the largest of its inputs"),
    _elementwise_type("Minimum", "Keeps the smallest of its inputs"),
    LayerType(
        "Concatenate",
        "Merge",
        "Joins its inputs along the last axis.",
        (),
        _concatenate,
        min_inputs=2,
        max_inputs=64,
    ),
    LayerType(
        "Dot",
        "Merge",
        "Multiplies two inputs value by value along one axis and sums: a dot product, or, "
        "with normalize, the cosine similarity.",
        (
            Param("axes", "int", -1, "The axis to multiply along, in both inputs: 1 is the "
                  "first after the batch, -1 the last.", -8, 8, required=True),
            Param("normalize", "bool", False, "Scale both inputs to length 1 along the axis "
                  "first, giving the cosine similarity."),
        ),
        _dot,
        min_inputs=2,
        max_inputs=2,
    ),
)
