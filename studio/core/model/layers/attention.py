"""The attention layer (in the palette's Sequence group): MultiHeadAttention, which attends
to its own input (self-attention) or from a query to a second input (cross-attention)."""

from __future__ import annotations

import math
from typing import Any

from studio.core.model.layers.base import (
    InputArguments,
    InsertBefore,
    LayerError,
    LayerType,
    SetParam,
    Shape,
    Weights,
    kernel_params,
)
from studio.core.model.params import Param, format_shape

ATTENTION_CALL = InputArguments(("query", "value", "key"), required=2)
"""Keras calls it as ``layer(query, value, key)``; the key is the value unless connected."""


def key_dim(params: dict[str, Any], query: Shape) -> int:
    """The size of each head's queries and keys: the parameter, or if it is empty the query's
    features shared between the heads; raise LayerError if they do not share evenly."""
    if params["key_dim"] is not None:
        return params["key_dim"]
    features, heads = query[-1], params["num_heads"]
    if features % heads:
        divisors = [d for d in range(1, features + 1) if not features % d]
        fewer = [d for d in divisors if d < heads][-1:]
        more = [d for d in divisors if d > heads][:1]
        raise LayerError(
            f"{features} features do not split into {heads} heads. Choose a number of heads "
            f"that divides {features}, or set key_dim to the size each head should have.",
            *(SetParam("num_heads", d) for d in (*fewer, *more)),
            SetParam("key_dim", max(1, features // heads)),
        )
    return features // heads


def _inputs(inputs: list[Shape]) -> tuple[Shape, Shape, Shape]:
    """The query, value and key shapes; raise LayerError unless they can attend."""
    query = inputs[0]
    if len(query) < 2:
        raise LayerError(
            f"MultiHeadAttention attends across the steps of a sequence (steps × features), "
            f"but its input has shape {format_shape(query)}. Reshape it to "
            f"{format_shape((*query, 1))} first, which reads each value as a step.",
            InsertBefore("Reshape", {"target_shape": [*query, 1]}),
        )
    value = inputs[1] if len(inputs) > 1 else query
    key = inputs[2] if len(inputs) > 2 else value
    if len(value) != len(query):
        raise LayerError(
            f"The query ({format_shape(query)}) and the value ({format_shape(value)}) of "
            "this MultiHeadAttention must have the same number of dimensions."
        )
    if key[:-1] != value[:-1]:
        raise LayerError(
            f"The key ({format_shape(key)}) and the value ({format_shape(value)}) of this "
            "MultiHeadAttention must have the same steps; only their features may differ."
        )
    return query, value, key


def _attention(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    query, value, key = _inputs(inputs)
    heads, size = params["num_heads"], key_dim(params, query)
    out = params["output_shape"] or query[-1]
    projections = heads * size * (query[-1] + key[-1] + value[-1] + 3)
    return (*query[:-1], out), projections + heads * size * out + out


def _attention_weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    """A kernel and a bias per head for each of the query, key and value projections, then
    the output projection's kernel from every head and its bias."""
    query, value, key = _inputs(inputs)
    heads, size = params["num_heads"], key_dim(params, query)
    out = params["output_shape"] or query[-1]
    projections = [weight for name, features in (("query", query), ("key", key),
                                                 ("value", value))
                   for weight in ((f"{name} kernel", (features[-1], heads, size)),
                                  (f"{name} bias", (heads, size)))]
    return [*projections, ("output kernel", (heads, size, out)), ("output bias", (out,))]


def sizes(params: dict[str, Any], inputs: list[Shape]) -> tuple[int, int, int, int]:
    """How many query steps and value steps (all positions attended over), heads, and the
    size of each head's keys."""
    query, value, _ = _inputs(inputs)
    heads, size = params["num_heads"], key_dim(params, query)
    return math.prod(query[:-1]), math.prod(value[:-1]), heads, size


def kept_values(params: dict[str, Any], inputs: list[Shape]) -> int:
    """Values per sample that attention keeps for the backward pass besides its output: the
    projected queries, keys and values, and every head's scores and their softmax."""
    query_steps, value_steps, heads, size = sizes(params, inputs)
    return heads * size * (query_steps + 2 * value_steps) + 2 * heads * query_steps * value_steps


def _to_keras(kwargs: dict[str, Any], inputs: list[Shape]) -> dict[str, Any]:
    return {**kwargs, "key_dim": key_dim(kwargs, inputs[0])}


TYPES = (
    LayerType(
        "MultiHeadAttention",
        "Sequence",
        "Lets every step look at every other step and take in what matters to it, with "
        "several heads looking for different things: the heart of a transformer. Connect "
        "one input to attend to itself (self-attention), or a query and then a second input "
        "(the value, and a third, the key) to attend from one sequence to another.",
        (
            Param("num_heads", "int", 4, "How many attention heads look in parallel.", 1,
                  1024, required=True),
            Param("key_dim", "int", None,
                  "Size of each head's queries and keys; empty shares the query's features "
                  "between the heads, which then must divide them.", 1, 65536, optional=True),
            Param("dropout", "float", 0.0,
                  "During training, the fraction of attention weights dropped.", 0.0, 1.0,
                  exclusive_maximum=True),
            Param("output_shape", "int", None,
                  "Features of each output step; empty keeps the query's.", 1, 65536,
                  optional=True),
            *kernel_params(),
        ),
        _attention,
        max_inputs=3,
        weights=_attention_weights,
        to_keras=_to_keras,
        call_arguments=ATTENTION_CALL,
    ),
)
