"""Which layers keep their imported weights after an edit, told without TensorFlow.

Each layer type with weights has a rule giving the names and shapes Keras gives its weights
(in ``layer.get_weights()`` order) from its parameters and input shapes. A layer keeps its
imported weights while these shapes equal the ones recorded at import; a layer whose shapes
changed starts from random weights, and only that layer. For a type without a rule here the
editor cannot tell, and the model built for training checks Keras's own shapes (see
``apply_imported_weights``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studio.core.build.analysis import Analysis
from studio.core.model.graph import Node
from studio.core.model.layers import Shape
from studio.core.model.params import format_shape
from studio.core.project.document import Project

DROPPED = "Imported weights dropped"
"""How the inspector's note on a layer that lost its imported weights begins."""
Weights = list[tuple[str, Shape]]
Rule = Callable[[dict[str, Any], list[Shape]], Weights]


def _pair(value: Any) -> tuple[int, int]:
    """A kernel size as (height, width): Keras takes one number or one per axis."""
    return (value, value) if isinstance(value, int) else (value[0], value[1])


def _bias(params: dict[str, Any], units: int) -> Weights:
    return [("bias", (units,))] if params.get("use_bias", True) else []


def _dense(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    units = params["units"]
    return [("kernel", (inputs[0][-1], units)), *_bias(params, units)]


def _conv2d(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    filters = params["filters"]
    return [("kernel", (*_pair(params["kernel_size"]), inputs[0][-1], filters)),
            *_bias(params, filters)]


def _batch_norm(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    size = (inputs[0][-1],)
    return [(name, size) for name in ("gamma", "beta", "moving_mean", "moving_variance")]


def _embedding(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    return [("embeddings", (params["input_dim"], params["output_dim"]))]


def _recurrent(gates: int, bias: Callable[[int], Shape]) -> Rule:
    def rule(params: dict[str, Any], inputs: list[Shape]) -> Weights:
        units = params["units"]
        return [("kernel", (inputs[0][-1], gates * units)),
                ("recurrent_kernel", (units, gates * units)), ("bias", bias(units))]

    return rule


RULES: dict[str, Rule] = {
    "Dense": _dense,
    "Conv2D": _conv2d,
    "BatchNormalization": _batch_norm,
    "Embedding": _embedding,
    "LSTM": _recurrent(4, lambda units: (4 * units,)),
    "GRU": _recurrent(3, lambda units: (2, 3 * units)),  # Keras 3 resets after: two biases
}


def weight_shapes(node: Node, inputs: list[Shape]) -> Weights | None:
    """The names and shapes of the weights Keras gives ``node`` for ``inputs``, or None if
    this module has no rule for its type."""
    rule = RULES.get(node.type)
    return None if rule is None else rule(node.resolved_params(), inputs)


def imported_weights_note(project: Project, analysis: Analysis, node_id: str) -> str:
    """What becomes of the layer's imported weights, for the inspector: kept, or dropped
    and why (``Imported weights dropped: the kernel is now 3 × 3 × 16 × 64``). Empty if the
    layer has none, or its shapes are unknown until a problem is fixed."""
    recorded = project.weights.layers.get(node_id) if project.weights else None
    if not recorded:
        return ""
    graph = project.graph
    reports = [analysis.nodes.get(source) for source in graph.inputs_of(node_id)]
    if any(report is None or report.output_shape is None for report in reports):
        return ""
    now = weight_shapes(graph.node(node_id), [report.output_shape for report in reports])
    if now is None:
        return "Imported weights: kept while their shapes fit (checked when the model is built)."
    for index, (name, shape) in enumerate(now):
        if index >= len(recorded) or tuple(recorded[index]) != shape:
            return (f"{DROPPED}: the {name.replace('_', ' ')} is now "
                    f"{format_shape(shape)}; this layer starts from random weights.")
    if len(recorded) != len(now):
        return (f"{DROPPED}: the layer now has "
                f"{len(now)} weights, not {len(recorded)}; it starts from random weights.")
    return "Imported weights: kept."
