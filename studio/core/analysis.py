"""Shape inference over the whole model, with plain-language problems pinned to layers."""

from __future__ import annotations

from dataclasses import dataclass, field

from studio.core.data import DataError, DatasetInfo, dataset_info
from studio.core.graph import Graph, GraphError
from studio.core.layers import REGISTRY, LayerError, Shape
from studio.core.params import format_shape
from studio.core.project import Project


@dataclass(frozen=True)
class Problem:
    """Something that stops training; ``node_id`` is None for whole-model problems."""

    node_id: str | None
    message: str


@dataclass(frozen=True)
class NodeReport:
    """What shape inference found for one layer."""

    output_shape: Shape | None
    params: int


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
        tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        return f"{where}{first.message}{tail}"


def analyze(graph: Graph, dataset: DatasetInfo) -> Analysis:
    """Infer every layer's output shape and parameter count and collect problems."""
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
    if len(inputs) != 1:
        result.problems.append(
            Problem(None, "The model needs exactly one Input layer, "
                          f"but has {len(inputs)}.")
        )
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
        result.nodes[node_id] = NodeReport(shape, count)

    _check_against_data(graph, dataset, inputs, result)
    return result


def _check_against_data(
    graph: Graph, dataset: DatasetInfo, inputs: list[str], result: Analysis
) -> None:
    if len(inputs) == 1 and inputs[0] in result.nodes:
        shape = result.nodes[inputs[0]].output_shape
        if shape != dataset.sample_shape:
            result.problems.append(
                Problem(
                    inputs[0],
                    f"The input shape {format_shape(shape)} does not match {dataset.title}, "
                    f"whose samples are {format_shape(dataset.sample_shape)}.",
                )
            )
    sinks = graph.sinks()
    if len(sinks) != 1:
        names = ", ".join(sinks)
        result.problems.append(
            Problem(None, f"The model must end in exactly one layer, but these feed nothing: "
                          f"{names}.")
        )
        return
    out = sinks[0]
    if out not in result.nodes:
        return
    shape = result.nodes[out].output_shape
    node = graph.node(out)
    classes = dataset.num_classes
    if node.resolved_params().get("activation") == "softmax" and shape and shape[-1] != classes:
        result.problems.append(
            Problem(
                out,
                f"This softmax classifier has {shape[-1]} outputs, but {dataset.title} has "
                f"{classes} classes. Set units to {classes}.",
            )
        )
    elif shape != (classes,):
        hint = (
            " Add Flatten or GlobalAveragePooling2D before the last Dense layer."
            if len(shape) > 1
            else f" End with Dense({classes}, softmax)."
        )
        result.problems.append(
            Problem(
                out,
                f"The model's output is {format_shape(shape)}, but a classifier for "
                f"{dataset.title} must output {classes} values, one per class.{hint}",
            )
        )


def analyze_project(project: Project) -> Analysis:
    """Analyze a project's model against its chosen dataset."""
    try:
        info = dataset_info(project.dataset)
    except DataError as exc:
        return Analysis(problems=[Problem(None, str(exc))])
    return analyze(project.graph, info)
