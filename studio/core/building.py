"""Turning a project's graph into a compiled Keras model. Imports Keras only when called."""

from __future__ import annotations

from typing import Any

from studio.core.analysis import analyze
from studio.core.data import DatasetInfo
from studio.core.graph import Graph, Node
from studio.core.project import TrainingSettings


class ModelError(ValueError):
    """The model cannot be built; the message is meant for a person."""


def keras_layer(node: Node) -> Any:
    """A Keras layer for ``node`` with its full parameters (defaults filled in)."""
    import keras

    params = node.resolved_params()
    if node.type == "Reshape":
        params["target_shape"] = tuple(params["target_shape"])
    return getattr(keras.layers, node.type)(name=node.id, **params)


def build_model(graph: Graph, dataset: DatasetInfo, name: str = "model") -> Any:
    """A functional ``keras.Model`` for ``graph``; raise ModelError if the graph is invalid."""
    import keras

    report = analyze(graph, dataset)
    if not report.ok:
        raise ModelError(report.reason)
    tensors: dict[str, Any] = {}
    for node_id in graph.topological_order():
        node = graph.node(node_id)
        if node.type == "Input":
            tensors[node_id] = keras.Input(shape=tuple(node.params["shape"]), name=node_id)
            continue
        feeds = [tensors[src] for src in graph.inputs_of(node_id)]
        tensors[node_id] = keras_layer(node)(feeds if len(feeds) > 1 else feeds[0])
    (input_id,) = [n.id for n in graph.nodes if n.type == "Input"]
    (output_id,) = graph.sinks()
    return keras.Model(tensors[input_id], tensors[output_id], name=_safe_name(name))


def outputs_probabilities(graph: Graph) -> bool:
    """True if the last layer ends in softmax, so the loss must not expect logits."""
    (output_id,) = graph.sinks()
    return graph.node(output_id).resolved_params().get("activation") == "softmax"


def compile_model(model: Any, graph: Graph, training: TrainingSettings) -> None:
    """Compile with the project's optimizer, learning rate, loss and metrics."""
    import keras

    optimizers = {
        "adam": keras.optimizers.Adam,
        "adamw": keras.optimizers.AdamW,
        "sgd": keras.optimizers.SGD,
        "rmsprop": keras.optimizers.RMSprop,
    }
    loss = keras.losses.SparseCategoricalCrossentropy(
        from_logits=not outputs_probabilities(graph)
    )
    model.compile(
        optimizer=optimizers[training.optimizer](learning_rate=training.learning_rate),
        loss=loss,
        metrics=list(training.metrics),
    )


def _safe_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name).strip("_")
    return cleaned or "model"
