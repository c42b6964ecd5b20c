"""The sequence layers: Embedding, the recurrent SimpleRNN, LSTM and GRU, Bidirectional (a
recurrent layer read both ways), TimeDistributed (a Dense layer on every step) and
RepeatVector."""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import (
    Infer,
    KerasKwargs,
    LayerError,
    LayerType,
    Nested,
    ReadConfig,
    Shape,
    WeightRule,
    Weights,
    activation_param,
    keras_names,
    kernel_params,
    sequence_input,
)
from studio.core.model.layers.core import dense_weights
from studio.core.model.params import Param, format_shape

RECURRENT = {"SimpleRNN": (1, 1), "LSTM": (4, 1), "GRU": (3, 2)}
"""Each recurrent layer's weights: how many gate blocks, and biases per gate and unit (a GRU
keeps two, as Keras's ``reset_after`` does)."""
MERGE_MODES = ("concat", "sum", "mul", "ave")


def _embedding(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    return (*inputs[0], params["output_dim"]), params["input_dim"] * params["output_dim"]


def _recurrent_output(layer: str, kind: str, params: dict[str, Any], inputs: list[Shape]
                      ) -> tuple[Shape, int]:
    steps, features = sequence_input(inputs, layer)
    gates, biases = RECURRENT[kind]
    units = params["units"]
    weights = gates * units * (features + units + biases)
    return ((steps, units) if params["return_sequences"] else (units,)), weights


def _recurrent_weights(kind: str, features: int, units: int, prefix: str = "") -> Weights:
    """A recurrent layer's kernel, recurrent kernel and bias, one block per gate side by side
    (a GRU's two biases as two rows)."""
    gates, biases = RECURRENT[kind]
    width = gates * units
    return [(f"{prefix}kernel", (features, width)), (f"{prefix}recurrent_kernel", (units, width)),
            (f"{prefix}bias", (width,) if biases == 1 else (biases, width))]


def _recurrent_weight_rule(kind: str) -> WeightRule:
    def weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
        return _recurrent_weights(kind, inputs[0][-1], params["units"])

    return weights


def _bidirectional_weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    """The forward layer's weights, then the backward one's."""
    features, units = inputs[0][-1], params["units"]
    return [weight for way in ("forward", "backward")
            for weight in _recurrent_weights(params["layer"], features, units, f"{way} ")]


def _embedding_weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    return [("embeddings", (params["input_dim"], params["output_dim"]))]


def _recurrent(layer: str) -> Infer:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        return _recurrent_output(layer, layer, params, inputs)

    return infer


def _units() -> Param:
    return Param("units", "int", 64, "Size of the hidden state.", 1, 65536, required=True)


def _return_sequences() -> Param:
    return Param("return_sequences", "bool", False,
                 "Output every step, not only the last: needed before another recurrent layer.")


def _recurrent_weight_params() -> tuple[Param, ...]:
    """How a recurrent layer's input weights (kernel) and its step-to-step weights
    (recurrent) start and are penalised, with Keras's defaults for each."""
    return (*kernel_params(), *kernel_params("recurrent", "orthogonal"))


def _recurrent_type(name: str, help_text: str, *extra: Param) -> LayerType:
    return LayerType(
        name, "Sequence", help_text,
        (_units(), *extra, _return_sequences(), *_recurrent_weight_params()), _recurrent(name),
        weights=_recurrent_weight_rule(name),
    )


def _bidirectional(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    (*steps, units), weights = _recurrent_output("Bidirectional", params["layer"], params, inputs)
    merged = 2 * units if params["merge_mode"] == "concat" else units
    return (*steps, merged), 2 * weights


def _time_distributed(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    if len(shape) < 2:
        raise LayerError(
            f"TimeDistributed applies its Dense layer to every step of a sequence, but its "
            f"input {format_shape(shape)} has no steps. Use a plain Dense layer instead."
        )
    units = params["units"]
    return (*shape[:-1], units), shape[-1] * units + units


def _repeat_vector(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    if len(shape) != 1:
        raise LayerError(
            f"RepeatVector repeats a flat vector, but its input has shape {format_shape(shape)}."
            " Add Flatten first, or a recurrent layer without return sequences."
        )
    return (params["n"], shape[0]), 0


def _wrapper(inner: str | None, inner_params: tuple[str, ...]) -> tuple[KerasKwargs, ReadConfig]:
    """The build and import hooks of a wrapper layer whose ``layer`` argument is a Keras
    layer of class ``inner`` (None: the class the parameter ``layer`` chooses) made from the
    Keras arguments ``inner_params``; its other arguments are its own."""

    def to_keras(params: dict[str, Any], inputs: list[Shape]) -> dict[str, Any]:
        own = {k: v for k, v in params.items() if k not in inner_params and k != "layer"}
        layer = Nested(inner or params["layer"], {k: params[k] for k in inner_params})
        return {"layer": layer, **own}

    def unwrap_config(config: dict[str, Any]) -> dict[str, Any] | None:
        nested = config.get("layer")
        if not isinstance(nested, dict) or not isinstance(nested.get("config"), dict):
            return None
        if inner is not None and nested.get("class_name") != inner:
            return None
        values = {k: v for k, v in config.items() if k not in ("layer", "backward_layer")}
        values.update({k: nested["config"][k] for k in inner_params if k in nested["config"]})
        return values if inner else {**values, "layer": nested.get("class_name")}

    return to_keras, unwrap_config


_BIDIRECTIONAL = _wrapper(None, ("units", "return_sequences",
                                  *keras_names(_recurrent_weight_params())))
_TIME_DISTRIBUTED = _wrapper("Dense", ("units", "activation", *keras_names(kernel_params())))

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
        weights=_embedding_weights,
    ),
    _recurrent_type(
        "SimpleRNN",
        "The plainest recurrent layer: each step mixes the input with the previous state. "
        "Forgets quickly; LSTM and GRU remember longer.",
        activation_param("tanh"),
    ),
    _recurrent_type(
        "LSTM", "A recurrent layer with memory cells that reads a sequence step by step."
    ),
    _recurrent_type("GRU", "A lighter recurrent layer with gated updates."),
    LayerType(
        "Bidirectional",
        "Sequence",
        "Reads the sequence with a recurrent layer forwards and with a second one backwards, "
        "so every step sees what comes before and after it.",
        (
            Param("layer", "choice", "LSTM", "The recurrent layer read both ways.",
                  choices=tuple(RECURRENT), required=True),
            _units(),
            _return_sequences(),
            Param("merge_mode", "choice", "concat",
                  "How the two directions join: 'concat' puts them side by side (twice the "
                  "units); 'sum', 'mul' and 'ave' combine them value by value.",
                  choices=MERGE_MODES),
            *_recurrent_weight_params(),
        ),
        _bidirectional,
        weights=_bidirectional_weights,
        to_keras=_BIDIRECTIONAL[0],
        unwrap_config=_BIDIRECTIONAL[1],
    ),
    LayerType(
        "TimeDistributed",
        "Sequence",
        "Applies one Dense layer to every step of a sequence, with the same weights at "
        "each step.",
        (
            Param("units", "int", 64, "How many output values per step.", 1, 65536,
                  required=True),
            activation_param("linear"),
            *kernel_params(),
        ),
        _time_distributed,
        weights=dense_weights,  # its Dense always has a bias
        to_keras=_TIME_DISTRIBUTED[0],
        unwrap_config=_TIME_DISTRIBUTED[1],
    ),
    LayerType(
        "RepeatVector",
        "Sequence",
        "Repeats a flat vector n times, making a sequence of n equal steps, e.g. to feed an "
        "encoded sentence to a decoder.",
        (Param("n", "int", 4, "How many times to repeat the vector.", 1, 65536,
               required=True),),
        _repeat_vector,
    ),
)
