"""Model problems and their one-click fixes: which changes to offer, and what each one does."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from studio.core.model.graph import Graph, Node
from studio.core.model.layers import SetParam, Shape, Suggestion
from studio.core.model.params import format_shape


@dataclass(frozen=True)
class Fix:
    """A change that solves a problem; ``apply`` edits the graph it is given in place."""

    label: str
    apply: Callable[[Graph], None]


@dataclass(frozen=True)
class DataFix:
    """A change to how the data is read that solves a problem: ``changes`` are the values to
    give fields of the project's dataset choice (the model is left as it is)."""

    label: str
    changes: Mapping[str, Any]


AnyFix = Fix | DataFix
"""A one-click fix of the model or of how the data is read."""


@dataclass(frozen=True)
class Problem:
    """Something that stops training; ``node_id`` is None for whole-model problems.

    ``fixes`` are changes that would solve it, offered as one-click actions.
    """

    node_id: str | None
    message: str
    fixes: tuple[AnyFix, ...] = ()
    cause: bool = False
    """It makes the model's other problems beside the point (the model is made for another task
    than the data's), so it is said first."""


def _set_param(node_id: str, name: str, value: Any, label: str) -> Fix:
    def apply(graph: Graph) -> None:
        graph.node(node_id).params[name] = value

    return Fix(label, apply)


def set_input_shape(node_id: str, shape: Shape) -> Fix:
    """Give the Input ``node_id`` the dataset's sample shape."""
    return _set_param(
        node_id, "shape", list(shape), f"Set the input shape to {format_shape(shape)}"
    )


COLOR_MODES = {1: ("grayscale", "grayscale"), 3: ("rgb", "RGB")}
"""The dataset choice's colour mode that reads images with so many channels, and its name."""


def read_images_with(channels: int) -> DataFix:
    """Read the data's images with ``channels`` channels (1 or 3), as the model's Input has."""
    mode, name = COLOR_MODES[channels]
    return DataFix(f"Read the images as {name}", {"color": mode})


def set_units(node_id: str, units: int) -> Fix:
    """Give the layer ``node_id`` ``units`` outputs."""
    return _set_param(node_id, "units", units, f"Set units to {units}")


def set_classes(node_id: str, classes: int) -> Fix:
    """Have the head ``node_id`` find ``classes`` classes."""
    return _set_param(node_id, "classes", classes, f"Set classes to {classes}")


def _insert_before(node_id: str, layer: str, params: dict[str, Any] | None = None) -> Fix:
    def apply(graph: Graph) -> None:
        src = graph.inputs_of(node_id)[0]
        graph.insert_between(src, node_id, Node(graph.new_id(layer), layer, dict(params or {})))

    params = params or {}
    if set(params) == {"target_shape"}:  # a Reshape reads best as "to 28 × 28"
        shown = f" to {format_shape(params['target_shape'])}"
    else:
        shown = ", ".join(f"{name} {_shown(value)}" for name, value in params.items())
        shown = f" ({shown})" if shown else ""
    return Fix(f"Insert {layer}{shown} before {node_id}", apply)


def _shown(value: Any) -> str:
    """A parameter's value as a fix's label writes it: shapes as ``784 × 1``."""
    return format_shape(value) if isinstance(value, list) else str(value)


def suggested_fixes(node_id: str, suggestions: tuple[Suggestion, ...]) -> tuple[Fix, ...]:
    """The one-click fixes for the changes a layer's shape rule suggested (see LayerError)."""
    return tuple(
        _set_param(node_id, s.name, s.value,
                   f"Set {s.name.replace('_', ' ')} to {_shown(s.value)}")
        if isinstance(s, SetParam) else _insert_before(node_id, s.layer, s.params)
        for s in suggestions
    )


def flatten_fixes(node_id: str, input_shape: Shape) -> tuple[Fix, ...]:
    """Ways to give ``node_id`` a flat input: Flatten, or global pooling for an image."""
    fixes = [_insert_before(node_id, "Flatten")]
    if len(input_shape) == 3:
        fixes.append(_insert_before(node_id, "GlobalAveragePooling2D"))
    return tuple(fixes)


def _append(after: str, layers: list[tuple[str, dict[str, Any]]], label: str = "") -> Fix:
    """Add ``layers`` in a chain after the layer ``after``; ``label`` says so, if given."""

    def apply(graph: Graph) -> None:
        last = after
        for layer, params in layers:
            node = Node(graph.new_id(layer), layer, dict(params))
            graph.add(node)
            graph.connect(last, node.id)
            last = node.id

    if not label:
        names = " and ".join(
            f"{layer}({params['units']}, {params['activation']})" if params else layer
            for layer, params in layers
        )
        label = f"Add {names} after {after}"
    return Fix(label, apply)


def set_filters(node_id: str, filters: int) -> Fix:
    """Give the convolution ``node_id`` ``filters`` feature maps."""
    return _set_param(node_id, "filters", filters, f"Set filters to {filters}")


def segmentation_head(out_id: str, classes: int) -> Fix:
    """End the model at ``out_id`` (an image-sized feature map) in one probability per class
    for each pixel."""
    return _append(out_id, [("Conv2D", {"filters": classes, "kernel_size": 1,
                                        "activation": "softmax"})],
                   f"Add a 1×1 Conv2D with {classes} filters and softmax")


def upsample_to_match(out_id: str, factor: int) -> Fix:
    """Enlarge the map ``out_id`` ``factor`` times (bilinear), to the input's resolution."""
    return _append(out_id, [("UpSampling2D", {"size": factor, "interpolation": "bilinear"})],
                   f"Upsample ×{factor} to match")


def set_input_dim(node_id: str, size: int) -> Fix:
    """Give the Embedding ``node_id`` a row for each of ``size`` token ids."""
    return _set_param(node_id, "input_dim", size, f"Set input_dim to {size:,}")


def set_activation(node_id: str, activation: str) -> Fix:
    """Give the layer ``node_id`` another activation."""
    return _set_param(node_id, "activation", activation, f"Set the activation to {activation}")


def classifier_fixes(out_id: str, shape: Shape, classes: int) -> tuple[Fix, ...]:
    """Ways to end the model at ``out_id`` (output ``shape``) in one value per class."""
    return _head_fixes(out_id, shape, ("Dense", {"units": classes, "activation": "softmax"}))


def regression_fixes(out_id: str, shape: Shape) -> tuple[Fix, ...]:
    """Ways to end the model at ``out_id`` (output ``shape``) in one number."""
    return _head_fixes(out_id, shape, ("Dense", {"units": 1, "activation": "linear"}))


def _head_fixes(out_id: str, shape: Shape, head: tuple[str, dict[str, Any]]
                ) -> tuple[Fix, ...]:
    if len(shape) <= 1:
        return (_append(out_id, [head]),)
    fixes = [_append(out_id, [("Flatten", {}), head])]
    if len(shape) == 3:
        fixes.append(_append(out_id, [("GlobalAveragePooling2D", {}), head]))
    return tuple(fixes)
