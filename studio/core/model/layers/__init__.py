"""The built-in layer types, one module per family: each type with its parameters, help text
and shape rule (see ``base``).

LAYER_TYPES lists them in palette order: the palette shows each category where its first type
comes, and a category's types in this order. A new type goes in its family's ``TYPES``.
"""

from __future__ import annotations

from studio.core.model.layers import (
    attention,
    convolution,
    core,
    imported,
    merge,
    pooling,
    preprocessing,
    regularization,
    resizing,
    sequence,
)
from studio.core.model.layers.base import (
    ACTIVATIONS,
    InputArguments,
    LayerError,
    LayerType,
    Nested,
    Remedy,
    Shape,
)
from studio.core.model.layers.imported import CODE_CLASSES, OPAQUE_TYPE, code_layer_names

__all__ = [
    "ACTIVATIONS",
    "CODE_CLASSES",
    "InputArguments",
    "LAYER_TYPES",
    "OPAQUE_TYPE",
    "LayerError",
    "LayerType",
    "Nested",
    "Remedy",
    "Shape",
    "code_layer_names",
]

LAYER_TYPES: tuple[LayerType, ...] = (
    *core.TYPES,
    *convolution.TYPES,
    *pooling.TYPES,
    *resizing.TYPES,
    *regularization.TYPES,
    *preprocessing.TYPES,
    *sequence.TYPES,
    *attention.TYPES,
    *merge.TYPES,
    *imported.TYPES,
)
