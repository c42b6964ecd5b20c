"""The preprocessing layers: Rescaling."""

from __future__ import annotations

from studio.core.model.layers.base import LayerType, same_shape
from studio.core.model.params import Param

TYPES = (
    LayerType(
        "Rescaling",
        "Preprocessing",
        "Multiplies by a scale and adds an offset, e.g. 1/255 to bring pixels into 0..1.",
        (
            Param("scale", "float", 1.0 / 255.0, "Each value is multiplied by this.",
                  required=True),
            Param("offset", "float", 0.0, "Then this is added."),
        ),
        same_shape,
    ),
)
