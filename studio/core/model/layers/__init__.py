"""The built-in layer types, one module per family: each type with its parameters, help text
and shape rule (see ``base``).

LAYER_TYPES lists them in palette order: the palette shows each category where its first type
comes, and a category's types in this order. A new type goes in its family's ``TYPES``.
"""

from __future__ import annotations

from studio.core.model.layers import (
    activations,
    attention,
    convolution,
    core,
    detection,
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
    InsertBefore,
    LayerError,
    LayerType,
    Nested,
    SetParam,
    Shape,
    Suggestion,
)
from studio.core.model.layers.imported import CODE_CLASSES, OPAQUE_TYPE, code_layer_names

__all__ = [
    "ACTIVATIONS",
    "CODE_CLASSES",
    "InputArguments",
    "InsertBefore",
    "LAYER_TYPES",
    "OPAQUE_TYPE",
    "LayerError",
    "LayerType",
    "Nested",
    "SetParam",
    "Shape",
    "Suggestion",
    "code_layer_names",
]

LAYER_TYPES: tuple[LayerType, ...] = (
    *core.TYPES,
    *activations.TYPES,
    *convolution.TYPES,
    *pooling.TYPES,
    *resizing.TYPES,
    *regularization.TYPES,
    *preprocessing.TYPES,
    *sequence.TYPES,
    *attention.TYPES,
    *merge.TYPES,
    *detection.TYPES,
    *imported.TYPES,
)
