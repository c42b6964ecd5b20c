"""What every layer type shares: the LayerType record, its error, and the parameter and shape
helpers the family modules build their types from.

Shape rules are pure Python, so the editor can show shapes and parameter counts on every edit
without importing TensorFlow. Shapes leave out the batch dimension.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from studio.core.base.messages import count, plural, quoted
from studio.core.model.params import Param, format_shape

Shape = tuple[int, ...]
Infer = Callable[[dict[str, Any], list[Shape]], tuple[Shape, int]]
"""A shape rule: resolved parameters and input shapes to output shape and parameter count."""
Weights = list[tuple[str, Shape]]
"""A layer's weights as Keras gives them (``layer.get_weights()`` order): each one's name, as
the inspector says it, and its shape."""
WeightRule = Callable[[dict[str, Any], list[Shape]], Weights]
"""A weight rule: resolved parameters and (valid) input shapes to the layer's weights."""
KerasKwargs = Callable[[dict[str, Any], list[Shape]], dict[str, Any]]
"""A build hook: the parameters as Keras takes them (``keras_args.keras_kwargs``: sizes as
tuples, a regularizer and its factor as one regularizer) and the input shapes to the keyword
arguments of the Keras class, where a layer given to another (the one a wrapper wraps) is a
``Nested``."""
ReadConfig = Callable[[dict[str, Any]], "dict[str, Any] | None"]
"""An import hook: a Keras layer config to a flat one in which import finds the type's
parameters by name (a wrapped layer's settings brought up), None if it cannot hold them."""
CallArguments = Callable[[list[Any]], tuple[tuple[Any, ...], dict[str, Any]]]
"""How a layer is called on its inputs: the inputs, in edge order, to positional and keyword
arguments. The inputs are tensors when a model is built, variable names when one is written
as code, so a rule only places them."""
T = TypeVar("T")

ACTIVATIONS = ("linear", "relu", "sigmoid", "tanh", "softmax", "gelu", "elu", "leaky_relu")


@dataclass(frozen=True)
class SetParam:
    """A suggested change to the failing layer: set its parameter ``name`` to ``value``."""

    name: str
    value: Any


@dataclass(frozen=True)
class InsertBefore:
    """A suggested change: put a ``layer`` with ``params`` between the failing layer and its
    (only) input."""

    layer: str
    params: dict[str, Any]


Suggestion = SetParam | InsertBefore
"""A change that solves a LayerError, as data; the model's fixes turn it into a one-click Fix."""


class LayerError(ValueError):
    """A layer cannot accept its inputs or parameters; the message is meant for a person, and
    ``suggestions`` are the obvious changes that would solve it, if any."""

    def __init__(self, message: str, *suggestions: Suggestion) -> None:
        super().__init__(message)
        self.suggestions = suggestions


@dataclass(frozen=True)
class Nested:
    """A Keras layer given to another as an argument, such as the one a wrapper wraps: its
    class in ``keras.layers`` and keyword arguments."""

    class_name: str
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class InputArguments:
    """A call rule (``CallArguments``) for a layer that takes its inputs as separate
    arguments, e.g. ``layer(query, value)``, rather than as one input or a list; import reads
    it backwards.

    The node's inputs fill ``names`` in order. Keras needs the first ``required`` of them;
    one not connected takes the input of the argument before it, as Keras's own defaults do
    for attention (key = value), and so one input attends to itself (query = value).
    """

    names: tuple[str, ...]
    required: int

    def __call__(self, inputs: list[T]) -> tuple[tuple[T, ...], dict[str, Any]]:
        return tuple(self.fill(inputs)), {}

    def fill(self, inputs: list[T]) -> list[T]:
        """The positional arguments of the call on ``inputs``."""
        return [*inputs, *[inputs[-1]] * (self.required - len(inputs))]

    def roles(self, inputs: list[str]) -> str:
        """Which input each argument takes, e.g. ``query and value: embedding_1``."""
        by_input: dict[str, list[str]] = {}
        for name, source in zip(self.names, self.fill(inputs), strict=False):
            by_input.setdefault(source, []).append(name)
        return "; ".join(f"{' and '.join(names)}: {source}" for source, names in by_input.items())

    def inputs(self, arguments: list[str]) -> list[str]:
        """The fewest inputs (by name) that ``fill`` gives ``arguments`` from: an argument at
        the end that repeats the one before it needs no input of its own."""
        kept = list(arguments)
        while len(kept) > 1 and kept[-1] == kept[-2]:
            kept.pop()
        return kept


def no_weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    """The weight rule of layers that learn nothing."""
    return []


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
    to_keras: KerasKwargs | None = None
    """How to make its Keras layer, when its parameters are not the class's keyword arguments
    (see ``keras_args``)."""
    unwrap_config: ReadConfig | None = None
    """How import reads its parameters from a Keras config, the other way round."""
    call_arguments: CallArguments | None = None
    """How its Keras layer is called, when not on its one input or a list of several (e.g.
    attention on ``query, value``); see ``arguments``."""
    weights: WeightRule | None = no_weights
    """The names and shapes of its weights (see ``weight_shapes``); by default it has none,
    and None says they are not known without Keras (an imported or pre-trained layer)."""
    keras_class: str | None = None
    """The class in ``keras.layers`` its layer is, when not the one of its own name (a
    DetectionHead is a Conv2D); see ``keras_name``."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels of parameters whose names do not read well with the first letter capitalised
    (``{"nms_iou": "NMS IoU"}``); each becomes its ``Param.label``."""

    def __post_init__(self) -> None:
        unknown = set(self.labels) - {p.name for p in self.params}
        if unknown:
            raise ValueError(f"{self.name} labels parameters it does not have: {sorted(unknown)}")
        object.__setattr__(self, "params", tuple(
            replace(p, title=self.labels[p.name]) if p.name in self.labels else p
            for p in self.params))

    @property
    def keras_name(self) -> str:
        """The name of its Keras class in ``keras.layers``."""
        return self.keras_class or self.name

    def weight_shapes(self, params: dict[str, Any], inputs: list[Shape]) -> Weights | None:
        """The names and shapes of the weights Keras gives this layer for ``params`` and
        ``inputs``, in ``layer.get_weights()`` order, or None if they are not known without
        Keras; raise LayerError if the layer cannot take them (see ``output``)."""
        if self.weights is None:
            return None
        self.output(params, inputs)
        return self.weights(self.resolved(params), inputs)

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
            wanted = "one input" if self.max_inputs == 1 else f"{self.max_inputs} inputs"
            return (f"{self.name} needs exactly {wanted}, but {count} "
                    f"{plural(count, 'is', 'are')} connected.")
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


def bias(params: dict[str, Any], units: int, name: str = "bias") -> Weights:
    """A layer's bias of ``units`` values, if it has one (``use_bias``)."""
    return [(name, (units,))] if params.get("use_bias", True) else []


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
    """The first input's shape; raise LayerError unless it has ``rank`` dimensions, offering
    a Reshape to that many when one keeps the values in order (see ``reshaped``)."""
    shape = inputs[0]
    if len(shape) == rank:
        return shape
    message = (f"{layer} expects {what}, but its input has shape {format_shape(shape)} "
               f"({count(len(shape), 'dimension')}).")
    if rank == 1:
        raise LayerError(f"{message} Add Flatten or GlobalAveragePooling2D first.",
                         InsertBefore("Flatten", {}))
    target = reshaped(shape, rank)
    if target is None:
        example = " e.g. to 28, 28, 1" if rank == 3 else ""
        raise LayerError(f"{message} Add a Reshape layer first,{example}.")
    raise LayerError(f"{message} Add a Reshape to {format_shape(target)} first.",
                     InsertBefore("Reshape", {"target_shape": list(target)}))


def reshaped(shape: Shape, rank: int) -> Shape | None:
    """``shape`` with ``rank`` dimensions and the same values in the same order: a channel
    axis of 1 added (784 becomes 784 × 1 for a 1-D convolution) or dropped (a grey image's
    rows become a sequence's steps), a feature map's positions made a sequence's steps with
    its channels as features, other trailing axes merged, or a flat square vector made a
    one-channel image. None when no such shape reads naturally."""
    if len(shape) > rank:
        if len(shape) == rank + 1 and shape[-1] == 1:
            return shape[:-1]
        if rank == 2:
            return (math.prod(shape[:-1]), shape[-1])
        return (*shape[:rank - 1], math.prod(shape[rank - 1:]))
    if len(shape) == 1 and rank == 3:
        side = math.isqrt(shape[0])
        return (side, side, 1) if side * side == shape[0] else None
    return (*shape, *(1,) * (rank - len(shape)))


def sliding(sizes: Shape, window: Param, params: dict[str, Any], layer: str,
            strides: tuple[int, ...] | None = None) -> Shape:
    """How many positions the window ``params[window.name]`` takes along each axis of
    ``sizes`` with the layer's strides and padding; raise LayerError, offering padding
    'same' or a window that fits, if it is larger than its input."""
    extents = window.sizes(params[window.name])
    steps = strides or window.sizes(params["strides"])
    if params["padding"] != "valid":  # 'same', and a 1-D convolution's 'causal'
        return tuple(math.ceil(size / step) for size, step in zip(sizes, steps, strict=True))
    if all(w <= size for w, size in zip(extents, sizes, strict=True)):
        return tuple((size - w) // step + 1
                     for size, w, step in zip(sizes, extents, steps, strict=True))
    noun = window.label.lower()
    fitting = window.from_keras([min(w, size) for w, size in zip(extents, sizes, strict=True)])
    unit = " steps" if len(sizes) == 1 else " pixels" if len(sizes) == 2 else ""
    raise LayerError(
        f"The {noun} of {format_shape(extents)} is larger than this {layer}'s input of "
        f"{format_shape(sizes)}{unit}. Use a smaller {noun}, padding 'same', or less "
        "pooling before it.",
        SetParam("padding", "same"), SetParam(window.name, fitting),
    )


INITIALIZERS = ("glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform",
                "lecun_normal", "orthogonal", "random_normal", "random_uniform",
                "truncated_normal", "zeros", "ones")
"""Keras's common weight initializers, by the names Keras takes."""
REGULARIZERS = ("none", "l1", "l2", "l1_l2")
FACTOR = "_factor"
"""What a regularizer's factor parameter adds to the regularizer's name."""


def kernel_params(kernel: str = "kernel", initializer: str = "glorot_uniform"
                  ) -> tuple[Param, ...]:
    """How the layer's ``kernel`` weights start and what penalty keeps them small: Keras's
    ``{kernel}_initializer`` (by default Keras's own for them, ``initializer``) and
    ``{kernel}_regularizer``, the latter as a choice and a factor (``keras_args`` turns the
    two into Keras's regularizer)."""
    weights = "weights" if kernel == "kernel" else f"{kernel} weights"
    keras_default = ("" if initializer == "glorot_uniform" else
                     f" Keras starts these {initializer}, which keeps a signal's size from "
                     "step to step.")
    return (
        Param(f"{kernel}_initializer", "choice", initializer,
              f"How the {weights} are drawn before training: glorot (Xavier) suits most "
              f"layers, he suits ReLU layers.{keras_default}", choices=INITIALIZERS),
        Param(f"{kernel}_regularizer", "choice", "none",
              f"A penalty on the {weights} added to the loss, to fight overfitting: l1 (sum of "
              "absolute values, pushes weights to zero), l2 (sum of squares, weight decay) or "
              "both.", choices=REGULARIZERS),
        Param(f"{kernel}_regularizer{FACTOR}", "float", 0.01,
              f"How strongly the {kernel} regularizer counts: the penalty is this times the "
              "sum (1e-4 to 1e-2 is usual).", 0, 10),
    )


def keras_names(params: tuple[Param, ...]) -> tuple[str, ...]:
    """The Keras arguments ``params`` make: their names, less the regularizers' factors
    (each is part of its regularizer)."""
    return tuple(p.name for p in params if not p.name.endswith(FACTOR))


def sequence_input(inputs: list[Shape], layer: str) -> Shape:
    """The first input's shape; raise LayerError, offering a Reshape into steps × features,
    unless it is a sequence of steps × features."""
    return ranked(inputs, 2, layer, "a sequence of steps × features")


def axis_index(axis: int, shape: Shape, layer: str, param: str = "axis") -> int:
    """Where Keras's ``axis`` (which counts the batch as axis 0, and from the end when it is
    negative) falls in ``shape``, which leaves the batch out; raise LayerError, offering the
    last axis for the layer's parameter ``param``, if nowhere."""
    rank = len(shape) + 1
    if not -rank < axis < rank or axis % rank == 0:
        raise LayerError(
            f"Axis {axis} is not an axis of this {layer}'s input {format_shape(shape)}: "
            f"use 1 to {rank - 1} (or -1 for the last), as axis 0 is the batch.",
            SetParam(param, -1),
        )
    return axis % rank - 1


def same_shape(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    """The shape rule of layers that keep their input's shape and learn nothing."""
    return inputs[0], 0


def shape_list(shapes: list[Shape]) -> str:
    """``8 × 8 × 16 and 8 × 8 × 32``, or ``a, b and c`` for more."""
    names = [format_shape(s) for s in shapes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]

