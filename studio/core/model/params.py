"""Typed layer parameters: kinds, defaults, valid ranges and plain-language checks."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from studio.core.base.messages import quoted

ParamKind = Literal["int", "float", "bool", "choice", "shape"]


@dataclass(frozen=True)
class Param:
    """One parameter of a layer type, with the rules a value must follow."""

    name: str
    kind: ParamKind
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_maximum: bool = False
    exclusive_minimum: bool = False
    choices: tuple[str, ...] = field(default_factory=tuple)
    optional: bool = False
    unset: str = "auto"
    """What an editor shows for an optional parameter left empty (None)."""
    allow_wildcard: bool = False
    required: bool = False
    """A project file must give it, as Keras has no default for it either; ``default`` only
    seeds a new layer. Other parameters left out of a file take their default."""
    axes: int = 1
    """An "int" parameter with more than one axis (a kernel's height and width) also takes one
    number per axis, as a list; one number means the same on every axis."""
    sides: bool = False
    """A per-axis parameter that may also give both sides of each axis: a list of two numbers
    per axis (top, bottom, left, right), as Keras's padding and cropping do."""
    title: str = ""
    """Its label where the one made from the name would misspell it (an acronym such as NMS);
    set from its layer type's ``labels``."""

    @property
    def label(self) -> str:
        """The name as shown to a person: ``kernel_size`` becomes ``Kernel size``, unless its
        layer type spells it out (``nms_iou`` is ``NMS IoU``)."""
        return self.title or self.name.replace("_", " ").capitalize()

    @property
    def words(self) -> str:
        """The name inside a sentence: ``kernel size``, and ``NMS IoU`` as its label spells it."""
        return self.title or self.name.replace("_", " ")

    def check(self, value: Any) -> str | None:
        """Return a plain-language reason why ``value`` is not allowed, or None if it is."""
        if value is None:
            return None if self.optional else f"{self.label} must be set."
        if self.kind == "bool":
            return None if isinstance(value, bool) else f"{self.label} must be true or false."
        if self.kind == "choice":
            if value in self.choices:
                return None
            return f"{self.label} must be one of {', '.join(self.choices)}, not {quoted(value)}."
        if self.kind == "shape":
            return self._check_shape(value)
        if self.axes > 1 and isinstance(value, list | tuple):
            return self._check_axes(value)
        if self.kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
            return f"{self.label} must be a whole number, not {quoted(value)}."
        if self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f"{self.label} must be a number, not {quoted(value)}."
            if not math.isfinite(value):
                return f"{self.label} must be a finite number."
        if self.minimum is not None:
            if self.exclusive_minimum and value <= self.minimum:
                return f"{self.label} must be more than {_fmt(self.minimum)}, not {_fmt(value)}."
            if value < self.minimum:
                return f"{self.label} must be at least {_fmt(self.minimum)}, not {_fmt(value)}."
        if self.maximum is not None:
            if self.exclusive_maximum and value >= self.maximum:
                return f"{self.label} must be less than {_fmt(self.maximum)}, not {_fmt(value)}."
            if not self.exclusive_maximum and value > self.maximum:
                return f"{self.label} must be at most {_fmt(self.maximum)}, not {_fmt(value)}."
        return None

    @property
    def axis_names(self) -> tuple[str, ...]:
        """What each number of a per-axis list stands for: ``height``, ``width``, ..."""
        return AXIS_NAMES.get(self.axes, tuple(f"axis {i + 1}" for i in range(self.axes)))

    def per_axis_form(self) -> str:
        """How a per-axis value may be written: ``one number, or one per axis (height,
        width)``, and with sides ``or one per side (top, bottom, left, right)``."""
        form = f"one number, or one per axis ({', '.join(self.axis_names)})"
        if not self.sides:
            return form
        sides = [side for axis in self.axis_names for side in SIDES.get(axis, ("before", "after"))]
        return f"{form}, or one per side ({', '.join(sides)})"

    def _check_axes(self, value: list | tuple) -> str | None:
        lengths = (self.axes, 2 * self.axes) if self.sides else (self.axes,)
        if len(value) not in lengths:
            return (f"{self.label} takes {self.per_axis_form()}, not "
                    f"{quoted(', '.join(str(v) for v in value))}.")
        one = Param(self.name, self.kind, self.default, "", self.minimum, self.maximum)
        for item in value:
            problem = one.check(item)
            if problem:
                return problem
        return None

    def sizes(self, value: int | list[int]) -> tuple[int, ...]:
        """A per-axis value as one number per axis; with sides, both sides' sum."""
        if self.sides:
            return tuple(a + b for a, b in self._pairs(value))
        return (value,) * self.axes if isinstance(value, int) else tuple(value)

    def _pairs(self, value: int | list[int]) -> tuple[tuple[int, int], ...]:
        """A value with sides as a (before, after) pair per axis."""
        if isinstance(value, int):
            return ((value, value),) * self.axes
        if len(value) == self.axes:
            return tuple((v, v) for v in value)
        return tuple((value[i], value[i + 1]) for i in range(0, len(value), 2))

    def to_keras(self, value: Any) -> Any:
        """The value as Keras takes it: a shape as a tuple, sides as a pair per axis."""
        if self.kind == "shape":
            return None if value is None else tuple(value)
        if self.sides and isinstance(value, list):
            return self._pairs(value)
        return value

    def from_keras(self, value: Any) -> Any:
        """A value as a Keras config stores it (``(3, 3)``, ``((0, 1), (0, 1))``) in this
        parameter's shortest form: one number when every axis agrees."""
        if self.kind != "int" or not isinstance(value, list | tuple) or not value:
            return value
        if all(isinstance(v, list | tuple) and len(v) == 2 for v in value):
            if any(a != b for a, b in value):
                return [side for pair in value for side in pair]
            value = [a for a, _ in value]
        return value[0] if all(v == value[0] for v in value) else list(value)

    def _check_shape(self, value: Any) -> str | None:
        if not isinstance(value, list | tuple) or not value:
            return f"{self.label} must be a list of sizes such as 28, 28, 1."
        wildcards = 0
        for dim in value:
            if isinstance(dim, bool) or not isinstance(dim, int):
                return f"{self.label} must hold whole numbers, not {quoted(dim)}."
            if dim == -1 and self.allow_wildcard:
                wildcards += 1
            elif dim < 1:
                return f"Every size in {self.words} must be at least 1, not {dim}."
        if wildcards > 1:
            return f"{self.label} may hold -1 (\"the rest\") only once."
        return None


AXIS_NAMES = {2: ("height", "width"), 3: ("depth", "height", "width")}
"""The axes of a 2-D and a 3-D window, in Keras's order."""
SIDES = {"height": ("top", "bottom"), "width": ("left", "right"), "depth": ("front", "back")}


def _fmt(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else quoted(value)


def format_shape(shape: tuple[int | None, ...] | list[int] | None) -> str:
    """Show a shape the way the app writes it everywhere: ``28 × 28 × 1``."""
    if shape is None:
        return "?"
    if len(shape) == 0:
        return "scalar"
    return " × ".join("?" if d is None else str(d) for d in shape)


def parse_shape(text: str) -> list[int]:
    """Parse ``"28, 28, 1"`` (commas, spaces or ×) into ``[28, 28, 1]``; raise ValueError."""
    parts = [p for p in text.replace("×", ",").replace("x", ",").replace(" ", ",").split(",") if p]
    if not parts:
        raise ValueError("Enter sizes such as 28, 28, 1.")
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise ValueError(
            f"{quoted(text)} is not a list of whole numbers such as 28, 28, 1.") from None
