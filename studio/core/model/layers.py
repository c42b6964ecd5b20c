"""The built-in layer types: each with its parameters, help text and shape rule.

Shape rules are pure Python, so the editor can show shapes and parameter counts on every edit
without importing TensorFlow. Shapes leave out the batch dimension.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from studio.core.base.messages import count, quoted
from studio.core.model.params import Param, format_shape

Shape = tuple[int, ...]

ACTIVATIONS = ("linear", "relu", "sigmoid", "tanh", "softmax", "gelu", "elu", "leaky_relu")

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


class LayerError(ValueError):
    """A layer cannot accept its inputs or parameters; the message is meant for a person."""


@dataclass(frozen=True)
class LayerType:
    """A kind of layer: its parameters, how many inputs it takes and how it maps shapes."""

    name: str
    category: str
    help: str
    params: tuple[Param, ...]
    infer: Callable[[dict[str, Any], list[Shape]], tuple[Shape, int]]
    min_inputs: int = 1
    max_inputs: int = 1
    free_form: bool = False
    """Its nodes hold a record of their own rather than ``params`` (an imported Keras layer's
    class, config and shapes), which the project schema checks."""

    def defaults(self) -> dict[str, Any]:
        """A fresh dict of default parameter values."""
        return {p.name: _copy(p.default) for p in self.params}

    def resolved(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` with every missing parameter set to its default."""
        return {**self.defaults(), **params}

    def param(self, name: str) -> Param:
        """The parameter called ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def check_params(self, params: dict[str, Any]) -> str | None:
        """The first plain-language problem with ``params``, or None."""
        for p in self.params:
            problem = p.check(params.get(p.name, p.default))
            if problem:
                return problem
        return None

    def check_stored(self, params: dict[str, Any]) -> str | None:
        """The first problem with ``params`` as a project file holds them: a parameter this
        type does not have, a required one left out, or a value it does not allow."""
        if self.free_form:
            return None
        names = [p.name for p in self.params]
        for key in params:
            if key not in names:
                takes = f"takes {', '.join(names)}" if names else "takes no parameters"
                return f"{self.name} has no parameter {quoted(key)} (it {takes})."
        for p in self.params:
            if p.required and p.name not in params:
                return f"{p.label} is not given; a project must say it for every {self.name}."
        return self.check_params(self.resolved(params))

    def output(self, params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        """Output shape and parameter count for ``inputs``; raise LayerError if impossible."""
        if not self.min_inputs <= len(inputs) <= self.max_inputs:
            raise LayerError(self._arity_message(len(inputs)))
        full = self.resolved(params)
        problem = self.check_params(full)
        if problem:
            raise LayerError(problem)
        return self.infer(full, inputs)

    def _arity_message(self, count: int) -> str:
        if self.max_inputs == 0:
            return f"{self.name} starts the model and takes no input."
        if self.min_inputs == self.max_inputs:
            return f"{self.name} needs exactly one input, but {count} are connected."
        if count < self.min_inputs:
            return f"{self.name} joins branches: connect at least {self.min_inputs} inputs."
        return f"{self.name} accepts at most {self.max_inputs} inputs."


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _activation(default: str = "linear", required: bool = False) -> Param:
    return Param(
        "activation",
        "choice",
        default,
        "The function applied to each output value.",
        choices=ACTIVATIONS,
        required=required,
    )


def _use_bias() -> Param:
    return Param("use_bias", "bool", True, "Add a learned offset to each output.")


def _padding() -> Param:
    return Param(
        "padding",
        "choice",
        "valid",
        "'valid' only uses full windows and shrinks the image; 'same' pads to keep the size.",
        choices=("valid", "same"),
    )


def _rank(inputs: list[Shape], rank: int, layer: str, what: str) -> Shape:
    shape = inputs[0]
    if len(shape) != rank:
        raise LayerError(
            f"{layer} expects {what}, but its input has shape {format_shape(shape)} "
            f"({count(len(shape), 'dimension')})."
            + (" Add a Reshape layer first, e.g. to 28, 28, 1." if rank == 3 else "")
            + (" Add Flatten or GlobalAveragePooling2D first." if rank == 1 else "")
        )
    return shape


def _window(size: int, window: int, stride: int, padding: str, layer: str, noun: str) -> int:
    if padding == "same":
        return math.ceil(size / stride)
    if window > size:
        raise LayerError(
            f"The {noun} of {window} × {window} is larger than this {layer}'s input of "
            f"{size} pixels. Use a smaller {noun}, padding 'same', or less pooling before it."
        )
    return (size - window) // stride + 1


def _input(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    return tuple(params["shape"]), 0


def _dense(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    if not shape:
        raise LayerError("Dense needs an input with at least one dimension.")
    units = params["units"]
    weights = shape[-1] * units + (units if params["use_bias"] else 0)
    return (*shape[:-1], units), weights


def _conv2d(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    h, w, c = _rank(inputs, 3, "Conv2D", "an image of height × width × channels")
    k, s, pad = params["kernel_size"], params["strides"], params["padding"]
    oh = _window(h, k, s, pad, "Conv2D", "kernel")
    ow = _window(w, k, s, pad, "Conv2D", "kernel")
    filters = params["filters"]
    weights = k * k * c * filters + (filters if params["use_bias"] else 0)
    return (oh, ow, filters), weights


def _pool(layer: str) -> Callable[[dict[str, Any], list[Shape]], tuple[Shape, int]]:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        h, w, c = _rank(inputs, 3, layer, "an image of height × width × channels")
        p, pad = params["pool_size"], params["padding"]
        s = params["strides"] or p
        return (
            _window(h, p, s, pad, layer, "pool window"),
            _window(w, p, s, pad, layer, "pool window"),
            c,
        ), 0

    return infer


def _global_pool(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    _, _, c = _rank(inputs, 3, "GlobalAveragePooling2D", "an image of height × width × channels")
    return (c,), 0


def _flatten(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    return (math.prod(inputs[0]),), 0


def _same(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    return inputs[0], 0


def _batchnorm(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    shape = inputs[0]
    if not shape:
        raise LayerError("BatchNormalization needs an input with at least one dimension.")
    return shape, 4 * shape[-1]


def _reshape(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    target = list(params["target_shape"])
    size = math.prod(inputs[0])
    known = math.prod(d for d in target if d != -1)
    if -1 in target:
        if size % known:
            raise LayerError(
                f"Cannot reshape {size} values ({format_shape(inputs[0])}) into "
                f"{format_shape(target)}: {size} is not a multiple of {known}."
            )
        target[target.index(-1)] = size // known
    elif known != size:
        raise LayerError(
            f"Cannot reshape {format_shape(inputs[0])} ({size} values) into "
            f"{format_shape(target)} ({known} values): the counts must match."
        )
    return tuple(target), 0


def _embedding(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    return (*inputs[0], params["output_dim"]), params["input_dim"] * params["output_dim"]


def _recurrent(layer: str, gates: int, bias_per_gate: int):
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        steps, features = _rank(inputs, 2, layer, "a sequence of steps × features")
        units = params["units"]
        weights = gates * units * (features + units + bias_per_gate)
        return ((steps, units) if params["return_sequences"] else (units,)), weights

    return infer


def _shape_list(shapes: list[Shape]) -> str:
    """``8 × 8 × 16 and 8 × 8 × 32``, or ``a, b and c`` for more."""
    names = [format_shape(s) for s in shapes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _elementwise(layer: str) -> Callable[[dict[str, Any], list[Shape]], tuple[Shape, int]]:
    def infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
        if any(other != inputs[0] for other in inputs[1:]):
            raise LayerError(
                f"{layer} needs inputs of the same shape, but got {_shape_list(inputs)}."
            )
        return inputs[0], 0

    return infer


def _concatenate(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    first = inputs[0]
    for other in inputs[1:]:
        if len(other) != len(first) or other[:-1] != first[:-1]:
            raise LayerError(
                "Concatenate joins along the last axis, so all other sizes must match, but got "
                f"{_shape_list(inputs)}."
            )
    return (*first[:-1], sum(s[-1] for s in inputs)), 0


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
            f"{_shape_list(recorded)}; its output for {_shape_list(inputs)} is not known "
            "without Keras. Give it back the inputs it was imported with, or replace it with "
            "a built-in layer."
        )
    return tuple(params["output_shape"]), params["param_count"]


def _pool_params() -> tuple[Param, ...]:
    return (
        Param("pool_size", "int", 2, "Width and height of the pooling window.", 1, 64),
        Param(
            "strides",
            "int",
            None,
            "Step between windows; empty means the same as the pool size.",
            1,
            64,
            optional=True,
        ),
        _padding(),
    )


LAYER_TYPES = (
    LayerType(
        "Input",
        "Core",
        "Where data enters the model; its shape is one sample without the batch.",
        (Param("shape", "shape", [28, 28, 1], "The shape of one sample, e.g. 28, 28, 1.",
               required=True),),
        _input,
        min_inputs=0,
        max_inputs=0,
    ),
    LayerType(
        "Dense",
        "Core",
        "A fully connected layer: every output looks at every input value.",
        (
            Param("units", "int", 64, "How many output values (neurons).", 1, 65536,
                  required=True),
            _activation("relu"),
            _use_bias(),
        ),
        _dense,
    ),
    LayerType(
        "Conv2D",
        "Convolution",
        "Slides learned filters over an image to detect local patterns.",
        (
            Param("filters", "int", 32, "How many feature maps to learn.", 1, 4096,
                  required=True),
            Param("kernel_size", "int", 3, "Width and height of each filter.", 1, 64,
                  required=True),
            Param("strides", "int", 1, "Step between filter positions.", 1, 64),
            _padding(),
            _activation("relu"),
            _use_bias(),
        ),
        _conv2d,
    ),
    LayerType(
        "MaxPooling2D",
        "Convolution",
        "Keeps the largest value in each window, shrinking the image.",
        _pool_params(),
        _pool("MaxPooling2D"),
    ),
    LayerType(
        "AveragePooling2D",
        "Convolution",
        "Averages each window, shrinking the image.",
        _pool_params(),
        _pool("AveragePooling2D"),
    ),
    LayerType(
        "GlobalAveragePooling2D",
        "Convolution",
        "Averages each feature map to one number, giving a flat vector.",
        (),
        _global_pool,
    ),
    LayerType(
        "Flatten",
        "Core",
        "Unrolls the input into one flat vector.",
        (),
        _flatten,
    ),
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
        _same,
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
    LayerType(
        "Activation",
        "Core",
        "Applies a function to every value.",
        (_activation("relu", required=True),),
        _same,
    ),
    LayerType(
        "Reshape",
        "Core",
        "Rearranges the values into a new shape; -1 means 'whatever is left'.",
        (
            Param(
                "target_shape", "shape", [-1], "The new shape, e.g. 28, 28, 1.",
                allow_wildcard=True, required=True,
            ),
        ),
        _reshape,
    ),
    LayerType(
        "Rescaling",
        "Preprocessing",
        "Multiplies by a scale and adds an offset, e.g. 1/255 to bring pixels into 0..1.",
        (
            Param("scale", "float", 1.0 / 255.0, "Each value is multiplied by this.",
                  required=True),
            Param("offset", "float", 0.0, "Then this is added."),
        ),
        _same,
    ),
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
    LayerType(
        "LSTM",
        "Sequence",
        "A recurrent layer with memory cells that reads a sequence step by step.",
        (
            Param("units", "int", 64, "Size of the hidden state.", 1, 65536, required=True),
            Param("return_sequences", "bool", False, "Output every step, not only the last."),
        ),
        _recurrent("LSTM", gates=4, bias_per_gate=1),
    ),
    LayerType(
        "GRU",
        "Sequence",
        "A lighter recurrent layer with gated updates.",
        (
            Param("units", "int", 64, "Size of the hidden state.", 1, 65536, required=True),
            Param("return_sequences", "bool", False, "Output every step, not only the last."),
        ),
        _recurrent("GRU", gates=3, bias_per_gate=2),
    ),
    LayerType(
        "Add",
        "Merge",
        "Adds its inputs element by element; they must have the same shape.",
        (),
        _elementwise("Add"),
        min_inputs=2,
        max_inputs=64,
    ),
    LayerType(
        "Multiply",
        "Merge",
        "Multiplies its inputs element by element; they must have the same shape.",
        (),
        _elementwise("Multiply"),
        min_inputs=2,
        max_inputs=64,
    ),
    LayerType(
        "Average",
        "Merge",
        "Averages its inputs element by element; they must have the same shape.",
        (),
        _elementwise("Average"),
        min_inputs=2,
        max_inputs=64,
    ),
    LayerType(
        "Concatenate",
        "Merge",
        "Joins its inputs along the last axis.",
        (),
        _concatenate,
        min_inputs=2,
        max_inputs=64,
    ),
    LayerType(
        OPAQUE_TYPE,
        "Imported",
        "A layer imported from a Keras model that no other layer type can express. It keeps "
        "the layer's full Keras settings and works for the input shapes it was imported with.",
        (),
        _opaque,
        max_inputs=64,
        free_form=True,
    ),
)
