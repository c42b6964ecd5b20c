"""The regularization and normalization layers: Dropout, SpatialDropout2D, GaussianNoise, and
Batch, Layer and Group normalization."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import (
    LayerError,
    LayerType,
    SetParam,
    Shape,
    WeightRule,
    Weights,
    axis_index,
    ranked,
    same_shape,
)
from studio.core.model.params import Param


def _batchnorm(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    if not shape:
        raise LayerError("BatchNormalization needs an input with at least one dimension.")
    return shape, 4 * shape[-1]


def _learned_scale_and_shift(params: dict[str, Any], channels: int) -> int:
    """A scale and an offset per channel, each if switched on."""
    return (int(params["center"]) + int(params["scale"])) * channels


def _layernorm(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    size = shape[axis_index(params["axis"], shape, "LayerNormalization")]
    return shape, _learned_scale_and_shift(params, size)


def _groupnorm(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    channels = shape[axis_index(params["axis"], shape, "GroupNormalization")]
    groups = params["groups"]
    if channels % groups:
        divisor = max(d for d in range(1, min(groups, channels) + 1) if channels % d == 0)
        why = ("there are more groups than channels" if groups > channels
               else f"{groups} does not divide {channels}")
        raise LayerError(
            f"GroupNormalization cannot split {channels} channels into {groups} equal groups: "
            f"{why}. Set groups to a divisor of {channels}, such as {divisor}.",
            SetParam("groups", divisor),
        )
    return shape, _learned_scale_and_shift(params, channels)


def _batchnorm_weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    size = (inputs[0][-1],)
    return [(name, size) for name in ("gamma", "beta", "moving_mean", "moving_variance")]


def _scale_and_shift_weights(layer: str) -> WeightRule:
    """The weight rule of a normalization that may learn a factor (gamma) and an offset
    (beta) for each value along its axis, in that order."""

    def weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
        shape = inputs[0]
        size = (shape[axis_index(params["axis"], shape, layer)],)
        return [(name, size) for name, on in (("gamma", params["scale"]),
                                               ("beta", params["center"])) if on]

    return weights


def _spatial_dropout(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    return ranked(inputs, 3, "SpatialDropout2D", "an image of height × width × channels"), 0


def _rate() -> Param:
    return Param("rate", "float", 0.5, "Fraction of values dropped.", 0.0, 1.0,
                 exclusive_maximum=True, required=True)


def _epsilon() -> Param:
    return Param("epsilon", "float", 0.001, "A small number that avoids division by zero.",
                 1e-9, 1.0)


def _normalization_params(axis_help: str) -> tuple[Param, ...]:
    return (
        Param("axis", "int", -1, f"{axis_help} 1 is the first axis after the batch, -1 the "
              "last.", -8, 8),
        _epsilon(),
        Param("center", "bool", True, "Learn an offset added after normalizing."),
        Param("scale", "bool", True, "Learn a factor applied after normalizing."),
    )


TYPES = (
    LayerType(
        "Dropout",
        "Regularization",
        "During training, randomly zeroes a fraction of values to fight overfitting.",
        (_rate(),),
        same_shape,
    ),
    LayerType(
        "SpatialDropout2D",
        "Regularization",
        "During training, randomly zeroes whole feature maps of an image, as neighbouring "
        "pixels are too alike for dropping single values to help.",
        (_rate(),),
        _spatial_dropout,
    ),
    LayerType(
        "GaussianNoise",
        "Regularization",
        "During training, adds random noise to every value, so the model cannot rely on exact "
        "values.",
        (Param("stddev", "float", 0.1, "How strong the noise is (its standard deviation).",
               0.0, 1.0, required=True),),
        same_shape,
    ),
    LayerType(
        "BatchNormalization",
        "Regularization",
        "Normalizes each channel to zero mean and unit variance, which steadies training.",
        (
            Param("momentum", "float", 0.99, "How slowly the running statistics change.",
                  0.0, 1.0),
            _epsilon(),
        ),
        _batchnorm,
        weights=_batchnorm_weights,
    ),
    LayerType(
        "LayerNormalization",
        "Regularization",
        "Normalizes each sample on its own to zero mean and unit variance, as transformers do; "
        "unlike BatchNormalization it does not depend on the batch.",
        _normalization_params("The axis whose values are normalized together."),
        _layernorm,
        weights=_scale_and_shift_weights("LayerNormalization"),
    ),
    LayerType(
        "GroupNormalization",
        "Regularization",
        "Normalizes each sample's channels in groups; steady even with small batches. The "
        "number of groups must divide the number of channels.",
        (
            Param("groups", "int", 32, "How many groups the channels are split into; it must "
                  "divide the number of channels.", 1, 65536),
            *_normalization_params("The axis of the channels."),
        ),
        _groupnorm,
        weights=_scale_and_shift_weights("GroupNormalization"),
    ),
)
