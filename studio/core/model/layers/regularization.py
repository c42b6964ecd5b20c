"""The regularization layers: Dropout and BatchNormalization."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import LayerError, LayerType, Shape, same_shape
from studio.core.model.params import Param


def _batchnorm(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    if not shape:
        raise LayerError("BatchNormalization needs an input with at least one dimension.")
    return shape, 4 * shape[-1]


TYPES = (
    LayerType(
        "Dropout",
        "Regularization",
        "During training, randomly zeroes a fraction of values to fight overfitting.",
        (
            Param(
                "rate", "float", 0.5, "Fraction of values dropped.", 0.0, 1.0,
                exclusive_maximum=True, required=True,
            ),
        ),
        same_shape,
    ),
    LayerType(
        "BatchNormalization",
        "Regularization",
        "Normalizes each channel to zero mean and unit variance, which steadies training.",
        (
            Param("momentum", "float", 0.99, "How slowly the running statistics change.",
                  0.0, 1.0),
            Param("epsilon", "float", 0.001, "A small number that avoids division by zero.",
                  1e-9, 1.0),
        ),
        _batchnorm,
    ),
)
