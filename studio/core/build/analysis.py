"""Shape inference over the whole model, with plain-language problems pinned to layers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from studio.core.base.messages import plural
from studio.core.data.types import DataError, DatasetInfo
from studio.core.data.sources import describe
from studio.core.model.fixes import (
    Fix,
    classifier_fixes,
    flatten_fixes,
    regression_fixes,
    set_activation,
    set_input_dim,
    set_input_shape,
    set_units,
)
from studio.core.model.flops import layer_flops
from studio.core.model.graph import Graph, GraphError
from studio.core.model.registry import REGISTRY
from studio.core.model.layers import LayerError, Shape
from studio.core.model.params import format_shape
from studio.core.project.document import DatasetChoice, Project
from studio.core.data.image_folder import too_few_classes


@dataclass(frozen=True)
class Problem:
    """Something that stops training; ``node_id`` is None for whole-model problems.

    ``fixes`` are changes that would solve it, offered as one-click actions.
    """

    node_id: str | None
    message: str
    fixes: tuple[Fix, ...] = ()


@dataclass(frozen=True)
class NodeReport:
    """What shape inference found for one layer; ``flops`` are per sample, forward pass."""

    output_shape: Shape | None
    params: int
    flops: int = 0


@dataclass
class Analysis:
    """Shapes, parameter counts and problems for a whole model."""

    nodes: dict[str, NodeReport] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the model can be trained."""
        return not self.problems

    @property
    def total_params(self) -> int:
        """Parameters in all layers whose shapes are known."""
        return sum(r.params for r in self.nodes.values())

    @property
    def total_flops(self) -> int:
        """Estimated operations per sample in all layers whose shapes are known."""
        return sum(r.flops for r in self.nodes.values())

    def problem_at(self, node_id: str) -> str | None:
        """The problem pinned to ``node_id``, if any."""
        for p in self.problems:
            if p.node_id == node_id:
                return p.message
        return None

    @property
    def reason(self) -> str:
        """Why training cannot start, or an empty string."""
        if not self.problems:
            return ""
        first = self.problems[0]
        where = f"{first.node_id}: " if first.node_id else ""
        more = len(self.problems) - 1
        tail = f" (and {more} more {plural(more, 'problem')})" if more else ""
        return f"{where}{first.message}{tail}"


def analyze(graph: Graph, dataset: DatasetInfo | None = None) -> Analysis:
    """Infer every layer's output shape and parameter count and collect problems.

    With a dataset, the model must also fit it: one Input of the dataset's sample shape and
    one output per class. Without one, only whether the graph can be built is checked, and
    it may have several inputs and outputs.
    """
    result = Analysis()
    if not graph.nodes:
        result.problems.append(Problem(None, "The model is empty. Add an Input layer to start."))
        return result
    try:
        order = graph.topological_order()
    except GraphError as exc:
        result.problems.append(Problem(None, str(exc)))
        return result

    inputs = [n.id for n in graph.nodes if n.type == "Input"]
    if dataset is not None and not inputs:
        result.problems.append(Problem(None, "The model needs an Input layer."))
    for node_id in order:
        node = graph.node(node_id)
        feeds = graph.inputs_of(node_id)
        if node.type != "Input" and not feeds:
            result.problems.append(
                Problem(node_id, "Nothing is connected to this layer's input.")
            )
            continue
        if any(src not in result.nodes for src in feeds):
            continue
        shapes = [result.nodes[src].output_shape for src in feeds]
        try:
            shape, count = REGISTRY[node.type].output(node.params, shapes)
        except LayerError as exc:
            result.problems.append(Problem(node_id, str(exc)))
            continue
        flops = layer_flops(node.type, node.resolved_params(), shapes, shape, count)
        result.nodes[node_id] = NodeReport(shape, count, flops)

    if dataset is not None:
        _check_against_data(graph, dataset, inputs, result)
    return result


def data_problem(dataset: DatasetInfo) -> str | None:
    """What keeps the data itself from training any model, if anything: a classifier needs
    at least two classes. No change to the model can fix it, so it comes before the model's
    problems."""
    if dataset.task != "classification" or dataset.num_classes >= 2:
        return None

    # Only an image folder is described with fewer than two classes (a CSV is refused sooner).
    return too_few_classes(Path(dataset.name), list(dataset.class_names))


def _check_against_data(
    graph: Graph, dataset: DatasetInfo, inputs: list[str], result: Analysis
) -> None:
    """The data can train a model; every Input receives the dataset's samples; every output
    classifies its labels."""
    unusable = data_problem(dataset)
    if unusable:
        result.problems.append(Problem(None, unusable))
        return
    for input_id in inputs:
        shape = result.nodes[input_id].output_shape if input_id in result.nodes else None
        if shape is not None and shape != dataset.sample_shape:
            result.problems.append(_input_problem(graph, dataset, input_id, shape, result))
        if dataset.vocabulary_size is not None:
            _check_vocabulary(graph, dataset, input_id, result)
    sinks = graph.sinks()
    for out in sinks:
        if out in result.nodes:
            _check_output(graph, dataset, out, result, several=len(sinks) > 1)


def _check_vocabulary(graph: Graph, dataset: DatasetInfo, input_id: str, result: Analysis
                      ) -> None:
    """An Embedding that reads token ids must have a row for every id the data holds."""
    size = dataset.vocabulary_size
    for node_id in graph.outputs_of(input_id):
        node = graph.node(node_id)
        if node.type == "Embedding" and node.resolved_params()["input_dim"] < size:
            result.problems.append(Problem(
                node_id,
                f"This Embedding has rows for {node.resolved_params()['input_dim']:,} token "
                f"ids, but the texts of {dataset.title} use a vocabulary of {size:,}. Set "
                f"input_dim to {size:,}.",
                (set_input_dim(node_id, size),),
            ))


def _input_problem(
    graph: Graph, dataset: DatasetInfo, input_id: str, shape: Shape, result: Analysis
) -> Problem:
    """The Input does not match the data: offer the dataset's shape, unless the layers after
    it would fail with that shape, in which case the model is made for other data."""
    message = (f"The input shape {format_shape(shape)} does not match {dataset.title}, "
               f"whose samples are {format_shape(dataset.sample_shape)}.")
    fix = set_input_shape(input_id, dataset.sample_shape)
    fixed = graph.copy()
    fix.apply(fixed)
    if set(result.nodes) <= set(analyze(fixed, dataset).nodes):
        return Problem(input_id, message, (fix,))
    if any(graph.node(i).type == "Embedding" for i in graph.outputs_of(input_id)):
        samples = f"{format_shape(shape)} token ids (text)"
    else:
        samples = format_shape(shape)
    return Problem(
        input_id,
        f"{message} This model is made for other data: its layers need samples of {samples}."
        f" {_data_hint(shape, samples)}",
    )


def _data_hint(shape: Shape, samples: str) -> str:
    """Where a person can get samples of ``shape``."""
    if "text" in samples:
        return "Choose a CSV of texts with that sequence length in the Data view."
    if len(shape) == 3:
        return ("Choose images of that size in the Data view: an image folder, or another "
                "dataset read at that size.")
    if len(shape) == 1:
        return "Choose a CSV with that many numeric feature columns in the Data view."
    return "Layer Studio has no such dataset."


def _check_regression_output(graph: Graph, dataset: DatasetInfo, out: str, result: Analysis,
                             several: bool) -> None:
    """A regression model ends in one number, without softmax."""
    shape = result.nodes[out].output_shape
    params = graph.node(out).resolved_params()
    if params.get("activation") == "softmax":
        message = (f"This layer ends in softmax, which turns outputs into class probabilities, "
                   f"but {dataset.title} is a regression task: the model predicts a number.")
        fixes: tuple[Fix, ...] = (set_activation(out, "linear"),)
        if shape != (1,) and "units" in params:
            fixes = (set_activation(out, "linear"), set_units(out, 1))
    elif shape == (1,):
        return
    else:
        message = (f"The model's output is {format_shape(shape)}, but a regression model for "
                   f"{dataset.title} must output one number. End with Dense(1)."
                   + (" (Every layer that feeds nothing is an output of the model.)"
                      if several else ""))
        fixes = ((set_units(out, 1),) if "units" in params and len(shape) == 1
                 else regression_fixes(out, shape))
    result.problems.append(Problem(out, message, fixes))


def _check_output(graph: Graph, dataset: DatasetInfo, out: str, result: Analysis,
                  several: bool) -> None:
    if dataset.task == "regression":
        _check_regression_output(graph, dataset, out, result, several)
        return
    shape = result.nodes[out].output_shape
    params = graph.node(out).resolved_params()
    classes = dataset.num_classes
    if params.get("activation") == "softmax" and shape and shape[-1] != classes:
        result.problems.append(
            Problem(
                out,
                f"This softmax classifier has {shape[-1]} outputs, but {dataset.title} has "
                f"{classes} classes. Set units to {classes}.",
                (set_units(out, classes),) if "units" in params else (),
            )
        )
        return
    if shape == (classes,):
        return
    if len(shape) > 1:
        hint = " Add Flatten or GlobalAveragePooling2D before the last Dense layer."
        fixes = _fixes_for_many_dims(graph, out, shape, classes, result)
    else:
        hint = f" End with Dense({classes}, softmax)."
        fixes = classifier_fixes(out, shape, classes)
    result.problems.append(
        Problem(
            out,
            f"The model's output is {format_shape(shape)}, but a classifier for "
            f"{dataset.title} must output {classes} values, one per class.{hint}"
            + (" (Every layer that feeds nothing is an output of the model.)" if several
               else ""),
            fixes,
        )
    )


def _fixes_for_many_dims(
    graph: Graph, out: str, shape: Shape, classes: int, result: Analysis
) -> tuple[Fix, ...]:
    """Fixes for an output with several dimensions, to pin on the output's problem.

    If a Dense layer before the output is fed several dimensions, that layer is the cause:
    it gets its own problem with the fixes, and the output's problem gets none.
    """
    dense = _first_dense_fed_many_dims(graph, result)
    if dense is None:
        return classifier_fixes(out, shape, classes)
    fixes = flatten_fixes(*dense)
    if dense[0] == out:
        return fixes
    result.problems.append(_unflattened_dense_problem(*dense, fixes))
    return ()


def _first_dense_fed_many_dims(graph: Graph, result: Analysis) -> tuple[str, Shape] | None:
    """The first Dense layer whose input has more than one dimension, with that input shape."""
    for node_id in result.nodes:
        feeds = graph.inputs_of(node_id)
        if graph.node(node_id).type == "Dense" and len(feeds) == 1:
            shape = result.nodes[feeds[0]].output_shape
            if shape is not None and len(shape) > 1:
                return node_id, shape
    return None


def _unflattened_dense_problem(node_id: str, shape: Shape, fixes: tuple[Fix, ...]) -> Problem:
    kind = {2: "sequence", 3: "image"}.get(len(shape), "tensor")
    return Problem(
        node_id,
        f"This Dense layer receives {_article(shape[0])} {format_shape(shape)} {kind}, so its "
        "output keeps those dimensions. Flatten it first.",
        fixes,
    )


def analyze_project(project: Project,
                    describe_data: Callable[[DatasetChoice], DatasetInfo] = describe) -> Analysis:
    """Analyze a project's model against its chosen dataset, as ``describe_data`` describes
    it; a dataset that cannot be described is the one problem."""
    try:
        info = describe_data(project.dataset)
    except DataError as exc:
        return Analysis(problems=[Problem(None, str(exc))])
    return analyze(project.graph, info)


def _article(number: int) -> str:
    """``an`` before numbers said with a vowel sound (8, 11, 18, 80, 11 000), else ``a``."""
    digits = str(number)
    eleven = len(digits) % 3 == 2 and digits[:2] in ("11", "18")
    return "an" if digits.startswith("8") or eleven else "a"
