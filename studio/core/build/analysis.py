"""Shape inference over the whole model, with plain-language problems pinned to layers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.base.messages import plural
from studio.core.data.sources import describe
from studio.core.data.types import DataError, DatasetInfo
from studio.core.model.fixes import (
    COLOR_MODES,
    DataFix,
    Problem,
    read_images_with,
    set_input_dim,
    set_input_shape,
    suggested_fixes,
)
from studio.core.model.flops import layer_flops
from studio.core.model.graph import Graph, GraphError
from studio.core.model.layers import LayerError, Shape
from studio.core.model.params import format_shape
from studio.core.model.registry import REGISTRY
from studio.core.project.document import DatasetChoice, Project
from studio.core.tasks.registry import task_for


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
            result.problems.append(
                Problem(node_id, str(exc), suggested_fixes(node_id, exc.suggestions)))
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
    if not task_for(dataset.task).has_classes or dataset.num_classes >= 2:
        return None
    from studio.core.data.image_folder import too_few_classes  # with Pillow: not at start-up

    # Only an image folder is described with fewer than two classes (a CSV is refused sooner).
    return too_few_classes(Path(dataset.name), list(dataset.class_names))


def _check_against_data(
    graph: Graph, dataset: DatasetInfo, inputs: list[str], result: Analysis
) -> None:
    """The data can train a model; every Input receives the dataset's samples; every output
    answers as the dataset's task needs."""
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
    # A model made for another task than the data's is said before the symptoms (a detector
    # on class folders before the input size that does not match them).
    result.problems.sort(key=lambda problem: not problem.cause)


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
    it would fail with that shape, in which case the model is made for other data; and where
    only the images' channels differ, reading them with the Input's channels."""
    message = (f"The input shape {format_shape(shape)} does not match {dataset.title}, "
               f"whose samples are {format_shape(dataset.sample_shape)}.")
    data_fixes = _channel_fixes(shape, dataset.sample_shape)
    fix = set_input_shape(input_id, dataset.sample_shape)
    fixed = graph.copy()
    fix.apply(fixed)
    # An Embedding reads token ids: other data may fit its shapes, but not its meaning.
    reads_text = any(graph.node(i).type == "Embedding" for i in graph.outputs_of(input_id))
    fits = set(result.nodes) <= set(analyze(fixed, dataset).nodes)
    if fits and (dataset.vocabulary_size is not None or not reads_text):
        return Problem(input_id, message, (fix, *data_fixes))
    if reads_text:
        samples = f"{format_shape(shape)} token ids (text)"
    else:
        samples = format_shape(shape)
    return Problem(
        input_id,
        f"{message} This model is made for other data: its layers need samples of {samples}."
        f" {_data_hint(shape, samples)}",
        data_fixes,
    )


def _channel_fixes(shape: Shape, sample_shape: Shape) -> tuple[DataFix, ...]:
    """Reading the images with the Input's channels, if that is all that differs (an image
    model opened on grey demo images, then given a folder read as RGB, or the other way)."""
    if (len(shape) == len(sample_shape) == 3 and shape[:2] == sample_shape[:2]
            and shape[2] in COLOR_MODES and sample_shape[2] in COLOR_MODES):
        return (read_images_with(shape[2]),)
    return ()


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


def _check_output(graph: Graph, dataset: DatasetInfo, out: str, result: Analysis,
                  several: bool) -> None:
    """The output layer ``out`` ends as the dataset's task needs."""
    shapes = {node_id: report.output_shape for node_id, report in result.nodes.items()}
    result.problems.extend(
        task_for(dataset.task).check_output(graph, out, shapes, dataset, several))


def output_settings(graph: Graph, dataset: DatasetInfo) -> dict[str, Any]:
    """What the dataset's task needs to know of the model's (first) output to read its
    answers (a detector's grid and decoding settings; nothing for most tasks), for the
    pipelines and the run's record."""
    shapes = {node: report.output_shape for node, report in analyze(graph, dataset).nodes.items()}
    out = graph.sinks()[0] if graph.sinks() else None
    return {} if out is None else task_for(dataset.task).output_settings(graph, out, shapes)


def analyze_project(project: Project,
                    describe_data: Callable[[DatasetChoice], DatasetInfo] = describe) -> Analysis:
    """Analyze a project's model against its chosen dataset, as ``describe_data`` describes
    it; a dataset that cannot be described is the one problem."""
    try:
        info = describe_data(project.dataset)
    except DataError as exc:
        return Analysis(problems=[Problem(None, str(exc))])
    return analyze(project.graph, info)
