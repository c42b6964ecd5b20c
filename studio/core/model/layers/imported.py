"""The opaque type of imported Keras layers that no built-in type can express."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from studio.core.model.layers.base import LayerError, LayerType, Shape, shape_list

OPAQUE_TYPE = "Keras"
"""The type of imported Keras layers that no other type can express (see ``_opaque``)."""
CODE_CLASSES = frozenset({"Lambda"})
"""Keras layer classes that hold Python code, which Layer Studio never runs."""


def code_layer_names(config: Any) -> Iterator[str]:
    """Names of the layers holding Python code anywhere in a Keras config, nested included."""
    if isinstance(config, dict):
        if config.get("class_name") in CODE_CLASSES:
            inner = config.get("config")
            yield str(inner.get("name", "?")) if isinstance(inner, dict) else "?"
        for value in config.values():
            yield from code_layer_names(value)
    elif isinstance(config, list):
        for value in config:
            yield from code_layer_names(value)


def _opaque(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    """The output shape and parameter count recorded at import, for the recorded inputs only.

    ``params`` hold ``class_name``, ``config`` (the full Keras layer config),
    ``output_shape``, ``param_count`` and ``input_shapes``.
    """
    if "input_shapes" not in params:
        raise LayerError("This layer holds no imported Keras layer; such layers come only "
                         "from importing a Keras model.")
    if params["class_name"] in CODE_CLASSES or any(code_layer_names(params.get("config"))):
        raise LayerError(
            f"This imported {params['class_name']} layer holds Python code, which Layer Studio "
            "does not run, so the model cannot be built. Replace it with built-in layers."
        )
    recorded = [tuple(shape) for shape in params["input_shapes"]]
    if list(inputs) != recorded:
        raise LayerError(
            f"This imported {params['class_name']} layer was recorded for inputs "
            f"{shape_list(recorded)}; its output for {shape_list(inputs)} is not known "
            "without Keras. Give it back the inputs it was imported with, or replace it with "
            "a built-in layer."
        )
    return tuple(params["output_shape"]), params["param_count"]


TYPES = (
    LayerType(
        OPAQUE_TYPE,
        "Imported",
        "A layer imported from a Keras model that no other layer type can express. It keeps "
        "the layer's full Keras settings and works for the input shapes it was imported with.",
        (),
        _opaque,
        max_inputs=64,
        free_form=True,
        weights=None,  # not known without Keras
    ),
)
