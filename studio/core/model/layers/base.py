"""What every layer type shares: the LayerType record, its error, and the parameter and shape
helpers the family modules build their types from.

Shape rules are pure Python, so the editor can show shapes and parameter counts on every edit
without importing TensorFlow. Shapes leave out the batch dimension.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from studio.core.base.messages import count, quoted
from studio.core.model.params import Param, format_shape

Shape = tuple[int, ...]
Infer = Callable[[dict[str, Any], list[Shape]], tuple[Shape, int]]
"""A shape rule: resolved parameters and input shapes to output shape and parameter count."""
CallArguments = Callable[[list[Any]], tuple[tuple[Any, ...], dict[str, Any]]]
"""How a layer is called on its inputs: the inputs, in edge order, to positional and keyword
arguments. The inputs are tensors when a model is built, variable names when one is written
as code, so a rule only places them."""

ACTIVATIONS = ("linear", "relu", "sigmoid", "tanh", "softmax", "gelu", "elu", "leaky_relu")

class LayerError(ValueError):
    """A layer cannot accept its inputs or parameters; the message is meant for a person."""


@dataclass(frozen=True)
class LayerType:
    """A kind of layer: its parameters, how many inputs it takes and how it maps shapes."""

    name: str
    category: str
    help: str
    params: tuple[Param, ...]
    infer: Infer
    min_inputs: int = 1
    max_inputs: int = 1
    free_form: bool = False
    """Its nodes hold a record of their own rather than ``params`` (an imported Keras layer's
    class, config and shapes), which the project schema checks."""
    call_arguments: CallArguments | None = None
    """How its Keras layer is called, when not on its one input or a list of several (e.g.
    attention on ``query, value``); see ``arguments``."""

    def arguments(self, inputs: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The positional and keyword arguments its Keras layer is called with on ``inputs``
        (tensors, or the names of the variables holding them in written code)."""
        if self.call_arguments is not None:
            return self.call_arguments(inputs)
        return (inputs[0] if len(inputs) == 1 else list(inputs),), {}

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


def activation_param(default: str = "linear", required: bool = False) -> Param:
    """The ``activation`` choice among ACTIVATIONS."""
    return Param(
        "activation",
        "choice",
        default,
        "The function applied to each output value.",
        choices=ACTIVATIONS,
        required=required,
    )


def use_bias_param() -> Param:
    """The ``use_bias`` switch."""
    return Param("use_bias", "bool", True, "Add a learned offset to each output.")


def padding_param() -> Param:
    """The ``padding`` choice, 'valid' or 'same'."""
    return Param(
        "padding",
        "choice",
        "valid",
        "'valid' only uses full windows and shrinks the image; 'same' pads to keep the size.",
        choices=("valid", "same"),
    )


def ranked(inputs: list[Shape], rank: int, layer: str, what: str) -> Shape:
    """The first input's shape; raise LayerError unless it has ``rank`` dimensions."""
    shape = inputs[0]
    if len(shape) != rank:
        raise LayerError(
            f"{layer} expects {what}, but its input has shape {format_shape(shape)} "
            f"({count(len(shape), 'dimension')})."
            + (" Add a Reshape layer first, e.g. to 28, 28, 1." if rank == 3 else "")
            + (" Add Flatten or GlobalAveragePooling2D first." if rank == 1 else "")
        )
    return shape


def windows(size: int, window: int, stride: int, padding: str, layer: str, noun: str) -> int:
    """How many positions a window takes along one side of ``size``; raise LayerError if it
    does not fit."""
    if padding == "same":
        return math.ceil(size / stride)
    if window > size:
        raise LayerError(
            f"The {noun} of {window} × {window} is larger than this {layer}'s input of "
            f"{size} pixels. Use a smaller {noun}, padding 'same', or less pooling before it."
        )
    return (size - window) // stride + 1


def same_shape(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    """The shape rule of layers that keep their input's shape and learn nothing."""
    return inputs[0], 0


def shape_list(shapes: list[Shape]) -> str:
    """``8 × 8 × 16 and 8 × 8 × 32``, or ``a, b and c`` for more."""
    names = [format_shape(s) for s in shapes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
