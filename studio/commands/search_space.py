"""``studio search PROJECT --dim TARGET=V1,V2,... --dim TARGET=LOW:HIGH[:log][:COUNT]
[--epochs N]``: a search space typed on the command line, checked with the messages the
dimension dialog shows."""

from __future__ import annotations

import difflib

from studio.commands.errors import UsageError
from studio.core.base.messages import quoted
from studio.core.model.params import Param
from studio.core.project.document import SCALES, Dimension, Project
from studio.core.search.space import (
    DEFAULT_POINTS,
    SearchSpaceError,
    check_dimension,
    param_for,
    parse_number,
    parse_values,
    search_targets,
    training_target,
)

DIM_FORM = "TARGET=V1,V2,... or TARGET=LOW:HIGH[:log][:COUNT]"
POINTS = Param("Number of points", "int", DEFAULT_POINTS, "")
"""A range's number of points, read as the dimension dialog reads it (check_dimension checks
its value)."""


def add_arguments(parser) -> None:
    """``--dim`` and ``--epochs`` of ``studio search``."""
    parser.add_argument("--dim", action="append", metavar="TARGET=VALUES", default=[],
                        help="search this value instead of the project's search space (repeat "
                        "for each value): TARGET=V1,V2,... lists values (numbers, choices, on "
                        "or off), TARGET=LOW:HIGH[:log][:COUNT] a range cut into COUNT points "
                        f"(default {DEFAULT_POINTS}) on a linear or log scale. TARGET is "
                        "training.SETTING (learning_rate, batch_size, optimizer, epochs, ...), "
                        "layer.LAYER_ID.PARAMETER (layer.dense_1.units) or "
                        "layer.LAYER_ID.present=on,off (whether a layer that keeps its input's "
                        "shape, as a Dropout, is in the model) or block.BLOCK.repeats=0,1,2 "
                        "(how many times a block marked on the canvas is in the model)")
    parser.add_argument("--epochs", type=int, metavar="N",
                        help="train each trial for N epochs (instead of the project's)")


def _target(project: Project, typed: str, spec: str) -> tuple[str, Param]:
    """The target ``typed`` (in ``--dim spec``) names and its rules, or a UsageError
    suggesting the closest target."""
    target = typed.strip()
    try:
        return target, param_for(project, target)
    except SearchSpaceError as exc:
        close = difflib.get_close_matches(target, search_targets(project), n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        raise UsageError(f"--dim {quoted(spec)}: {exc}{hint}") from None


def parse_dimension(project: Project, spec: str) -> Dimension:
    """The dimension ``--dim spec`` describes, checked against the parameter's rules as the
    dimension dialog checks it; UsageError names the problem in one line."""
    typed, sep, values = spec.partition("=")
    if not sep or not typed.strip() or not values.strip():
        raise UsageError(f"--dim {quoted(spec)} is not {DIM_FORM}.")
    target, param = _target(project, typed, spec)
    try:
        dimension = (_range(target, values, param) if ":" in values
                     else Dimension(target, values=parse_values(values, param)))
        check_dimension(project, dimension)
    except SearchSpaceError as exc:
        raise UsageError(f"--dim {quoted(spec)}: {exc}") from None
    return dimension


def _range(target: str, text: str, param: Param) -> Dimension:
    """``LOW:HIGH[:log|linear][:COUNT]`` as a range; a parameter that is not a number gets the
    core's message for a range of it."""
    if param.kind not in ("int", "float"):
        return Dimension(target)  # a range without ends: check_dimension says why not
    low, high, *rest = text.split(":")
    scale = "linear"
    count: int | float = DEFAULT_POINTS
    if rest and (rest[0].strip().lower() in SCALES or len(rest) == 2):
        scale = rest.pop(0).strip().lower()  # check_dimension refuses another scale
        if rest:
            count = parse_number(rest.pop(0), POINTS)
    elif rest:
        count = _points(rest.pop(0), param)
    if rest:
        raise SearchSpaceError(f"a range is LOW:HIGH[:log][:COUNT], not {quoted(text)}.")
    return Dimension(target, low=float(parse_number(low, param)),
                     high=float(parse_number(high, param)), scale=scale, count=int(count))


def _points(text: str, param: Param) -> int | float:
    """The COUNT of a range given without a scale, or what else it might have meant."""
    try:
        return parse_number(text, POINTS)
    except SearchSpaceError:
        raise SearchSpaceError(f"{param.label}: {quoted(text.strip())} is neither a scale "
                               "(linear or log) nor a number of points.") from None


def apply_space(project: Project, dims: list[str], epochs: int | None) -> None:
    """Set ``project``'s search space to ``dims`` (if any) and its trials' epochs."""
    if dims:
        project.search.dimensions = [parse_dimension(project, spec) for spec in dims]
    if epochs is None:
        return
    problem = param_for(project, training_target("epochs")).check(epochs)
    if problem:
        raise UsageError(f"--epochs: {problem}")
    if any(d.target == training_target("epochs") for d in project.search.dimensions):
        raise UsageError("--epochs sets every trial's epochs, but the search varies them "
                         "(training.epochs is a dimension): give one or the other.")
    project.training.epochs = epochs
