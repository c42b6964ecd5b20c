"""Which layers keep their imported weights after an edit, told without TensorFlow.

Each layer type says the names and shapes Keras gives its weights (in ``layer.get_weights()``
order) from its parameters and input shapes (``LayerType.weight_shapes``). A layer keeps its
imported weights while these shapes equal the ones recorded at import; a layer whose shapes
changed starts from random weights, and only that layer. For a type whose weights are not
known without Keras (an imported opaque layer) the model built for training checks Keras's
own shapes (see ``apply_imported_weights``).
"""

from __future__ import annotations

from studio.core.build.analysis import Analysis
from studio.core.model.graph import Node
from studio.core.model.layers import LayerError, Shape
from studio.core.model.layers.base import Weights
from studio.core.model.params import format_shape
from studio.core.model.registry import layer_type
from studio.core.project.document import Project

DROPPED = "Imported weights dropped"
"""How the inspector's note on a layer that lost its imported weights begins."""


def weight_shapes(node: Node, inputs: list[Shape]) -> Weights | None:
    """The names and shapes of the weights Keras gives ``node`` for ``inputs``, or None if
    its type cannot tell them without Keras; raise LayerError if it cannot take ``inputs``."""
    return layer_type(node.type).weight_shapes(node.params, inputs)


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
    try:
        now = weight_shapes(graph.node(node_id), [report.output_shape for report in reports])
    except LayerError:
        return ""
    if now is None:
        return ("Imported weights: whether they still fit is unknown until the model is built "
                "(then they are kept if their shapes fit).")
    for index, (name, shape) in enumerate(now):
        if index >= len(recorded) or tuple(recorded[index]) != shape:
            return (f"{DROPPED}: the {name.replace('_', ' ')} is now "
                    f"{format_shape(shape)}; this layer starts from random weights.")
    if len(recorded) != len(now):
        return (f"{DROPPED}: the layer now has "
                f"{len(now)} weights, not {len(recorded)}; it starts from random weights.")
    return "Imported weights: kept."
