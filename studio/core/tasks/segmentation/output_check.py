"""What a segmentation model's output must be, and the one-click fixes when it is not: a map of
the input's height × width with one channel per class (softmax probabilities or logits)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from studio.core.model.fixes import (
    Problem,
    segmentation_head,
    set_filters,
    upsample_to_match,
)
from studio.core.model.graph import Graph
from studio.core.model.layers import Shape
from studio.core.model.params import format_shape
from studio.core.tasks.task import DatasetFacts

SEVERAL = " (Every layer that feeds nothing is an output of the model.)"
CLASS_SCORES = ("softmax", "linear")
"""The activations of a layer that ends a model in class scores (probabilities, logits)."""


def upsampling_factor(input_size: Sequence[int], size: Sequence[int]) -> int | None:
    """How many times a map of ``size`` (height, width) must be enlarged to the input's
    ``input_size``, if that is a power of two (2, 4, 8, ...) alike down and across; else
    None."""
    (height, width), (rows, cols) = input_size, size
    if not rows or not cols or height % rows or width % cols:
        return None
    factor = height // rows
    if factor < 2 or width // cols != factor or factor & (factor - 1):
        return None
    return factor


def output_problems(graph: Graph, out: str, shapes: Mapping[str, Shape | None],
                    dataset: DatasetFacts, several: bool) -> list[Problem]:
    """The problems of output layer ``out`` for a segmentation of ``dataset`` (``shapes``:
    every analysed layer's output shape)."""
    node = graph.node(out)
    shape = shapes.get(out) or ()
    classes = dataset.num_classes
    height, width = dataset.sample_shape[:2]
    more = SEVERAL if several else ""
    if node.type == "DetectionHead" or len(shape) != 3:
        gives = ("finds boxes" if node.type == "DetectionHead" else
                 "answers one thing per image" if len(shape) <= 1 else "is not an image")
        return [Problem(
            out,
            f"The model ends in {node.type} with output {format_shape(shape)}, which {gives}, "
            f"but {dataset.title} is a segmentation dataset (a class for each pixel): end the "
            f"model in an output of {height} × {width} × {classes}, one channel per class (a "
            f"1×1 Conv2D with {classes} filters and softmax on a feature map of the input's "
            f"size).{more}", cause=True)]
    problems = []
    rows, cols, channels = shape
    if (rows, cols) != (height, width):
        factor = upsampling_factor((height, width), (rows, cols))
        if factor is None:
            problems.append(Problem(
                out,
                f"The model's output map is {rows} × {cols}, but it must answer for each pixel "
                f"of the {height} × {width} input: change the layers that shrink or enlarge "
                f"it, so that it ends at {height} × {width} (or smaller by a power of two, to "
                f"upsample).{more}"))
        else:
            problems.append(Problem(
                out,
                f"The model's output map is {rows} × {cols}, {factor} times smaller than the "
                f"{height} × {width} input: upsample it ×{factor} to answer for each pixel."
                + more, (upsample_to_match(out, factor),)))
    if channels != classes:
        params = node.resolved_params()
        if "filters" in params and params.get("activation") in CLASS_SCORES:
            problems.append(Problem(
                out,
                f"This layer answers {channels} classes for each pixel, but {dataset.title} "
                f"has {classes}. Set filters to {classes}.", (set_filters(out, classes),)))
        else:
            problems.append(Problem(
                out,
                f"The model's output has {channels} channels, but {dataset.title} has "
                f"{classes} classes: end it in one channel per class, a 1×1 Conv2D with "
                f"{classes} filters and softmax.{more}", (segmentation_head(out, classes),)))
    return problems
