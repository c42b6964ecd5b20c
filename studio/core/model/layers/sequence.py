"""The sequence layers: Embedding and the recurrent LSTM and GRU."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import Infer, LayerType, Shape, ranked
from studio.core.model.params import Param


def _embedding(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    return (*inputs[0], params["output_dim"]), params["input_dim"] * params["output_dim"]


def _recurrent(layer: str, gates: int, bias_per_gate: int) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        steps, features = ranked(inputs, 2, layer, "a sequence of steps × features")
        units = params["units"]
        weights = gates * units * (features + units + bias_per_gate)
        return ((steps, units) if params["return_sequences"] else (units,)), weights

    return infer


def _recurrent_type(name: str, help_text: str, gates: int, bias_per_gate: int) -> LayerType:
    """A recurrent layer whose weights are ``gates`` blocks, each with ``bias_per_gate`` biases."""
    return LayerType(
        name,
        "Sequence",
        help_text,
        (
            Param("units", "int", 64, "Size of the hidden state.", 1, 65536, required=True),
            Param("return_sequences", "bool", False, "Output every step, not only the last."),
        ),
        _recurrent(name, gates, bias_per_gate),
    )


TYPES = (
    LayerType(
        "Embedding",
        "Sequence",
        "Turns whole-number tokens into learned vectors.",
        (
            Param("input_dim", "int", 1000, "Vocabulary size: tokens are 0 .. input_dim-1.",
                  1, 10**7, required=True),
            Param("output_dim", "int", 32, "Length of each token's vector.", 1, 65536,
                  required=True),
        ),
        _embedding,
    ),
    _recurrent_type(
        "LSTM",
        "A recurrent layer with memory cells that reads a sequence step by step.",
        gates=4,
        bias_per_gate=1,
    ),
    _recurrent_type(
        "GRU", "A lighter recurrent layer with gated updates.", gates=3, bias_per_gate=2
    ),
)
