"""Turning a project's graph into a Keras model and compiling it. Imports Keras only when called."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from studio.core.base.messages import first_line
from studio.core.build.analysis import Analysis, analyze
from studio.core.build.optimizers import KerasCall, make_optimizer, schedule_call
from studio.core.data.types import DatasetInfo
from studio.core.model.applications import APPLICATION, build_application
from studio.core.model.graph import Graph, Node
from studio.core.model.layers import OPAQUE_TYPE, InputArguments, LayerType, Nested, Shape
from studio.core.model.layers.keras_args import keras_kwargs
from studio.core.model.registry import REGISTRY
from studio.core.project.document import TrainingSettings
from studio.core.tasks.registry import DEFAULT_TASK, task_for

_MODEL_CLASSES = {"Sequential": "keras.Sequential", "Functional": "keras.Model"}
"""Nested models, imported whole, by the class name Keras saves them under."""


class ModelError(ValueError):
    """The model cannot be built; the message is meant for a person."""


def layer_kwargs(node: Node, inputs: Sequence[Shape] = ()) -> dict[str, Any]:
    """Keyword arguments for the Keras class of a built-in node on ``inputs`` (the shapes it
    receives): its full parameters as Keras takes them, or what its type's ``to_keras`` hook
    makes of those, where a layer given to it is a ``Nested``."""
    layer_type = REGISTRY[node.type]
    kwargs = keras_kwargs(layer_type, node.resolved_params())
    if layer_type.to_keras is not None:
        return layer_type.to_keras(kwargs, list(inputs))
    return kwargs


def imported_class_path(class_name: str) -> str:
    """Where the built-in Keras class of an imported layer lives, e.g. ``keras.layers.ReLU``."""
    return _MODEL_CLASSES.get(class_name, f"keras.layers.{class_name}")


def imported_spec(node: Node) -> dict[str, Any]:
    """What ``keras.layers.deserialize`` needs to rebuild an opaque node, named after it."""
    return {
        "class_name": node.params["class_name"],
        "config": {**node.params["config"], "name": node.id},
    }


def keras_layer(node: Node, inputs: Sequence[Shape] = ()) -> Any:
    """A Keras layer for ``node`` with its full parameters (defaults filled in), on inputs of
    the shapes ``inputs`` (which only some layer types need)."""
    import keras

    if node.type == OPAQUE_TYPE:
        return _imported_layer(node)
    kwargs = {key: _nested_layer(value) for key, value in layer_kwargs(node, inputs).items()}
    return getattr(keras.layers, REGISTRY[node.type].keras_name)(name=node.id, **kwargs)


def _nested_layer(value: Any) -> Any:
    import keras

    return getattr(keras.layers, value.class_name)(**value.kwargs) if isinstance(
        value, Nested) else value


def calling_type(node: Node) -> LayerType:
    """The layer type whose call rule (see ``LayerType.arguments``) ``node``'s Keras layer is
    called by: its own, or for an imported layer that of its Keras class, if the palette has
    it (imported attention is still called on query and value)."""
    if node.type == OPAQUE_TYPE:
        return REGISTRY.get(node.params["class_name"], REGISTRY[OPAQUE_TYPE])
    return REGISTRY[node.type]


def input_arguments(class_name: str) -> InputArguments | None:
    """The call rule of Keras class ``class_name`` if it takes its inputs as separate
    arguments, which import reads backwards."""
    rule = REGISTRY[class_name].call_arguments if class_name in REGISTRY else None
    return rule if isinstance(rule, InputArguments) else None


def call_layer(node: Node, layer: Any, tensors: list[Any]) -> Any:
    """Call ``node``'s Keras layer on its input tensors as its layer type says."""
    args, kwargs = calling_type(node).arguments(tensors)
    return layer(*args, **kwargs)


def _imported_layer(node: Node) -> Any:
    """Rebuild an opaque node from its Keras config: built-in Keras classes only, and in Keras's
    safe mode, which refuses to load Python code."""
    import keras

    class_name = node.params["class_name"]
    cls: Any = keras
    for part in imported_class_path(class_name).split(".")[1:]:
        cls = getattr(cls, part, None)
    if not (isinstance(cls, type) and issubclass(cls, keras.layers.Layer)):
        raise ModelError(f"{node.id}: {class_name!r} is not a built-in Keras layer, so Layer "
                         "Studio cannot rebuild it.")
    try:
        return keras.layers.deserialize(imported_spec(node), custom_objects={class_name: cls})
    except Exception as exc:
        raise ModelError(
            f"{node.id}: the imported {class_name} layer cannot be rebuilt ({first_line(exc)})."
        ) from None


def build_keras_model(graph: Graph, name: str = "model") -> Any:
    """A functional ``keras.Model`` for ``graph`` alone; raise ModelError if it cannot be built.

    There may be several inputs and outputs, in the order of ``model_endpoints``.
    """
    return _assemble(graph, analyze(graph), name)


def build_model(graph: Graph, dataset: DatasetInfo, name: str = "model") -> Any:
    """A functional ``keras.Model`` for ``graph``; raise ModelError unless it fits ``dataset``."""
    return _assemble(graph, analyze(graph, dataset), name)


def _assemble(graph: Graph, report: Analysis, name: str) -> Any:
    import keras

    if not report.ok:
        raise ModelError(report.reason)
    tensors: dict[str, Any] = {}
    for node_id in graph.topological_order():
        node = graph.node(node_id)
        if node.type == "Input":
            tensors[node_id] = keras.Input(shape=tuple(node.params["shape"]), name=node_id)
            continue
        feeds = [tensors[src] for src in graph.inputs_of(node_id)]
        shapes = [tuple(feed.shape[1:]) for feed in feeds]
        layer = (build_application(node.resolved_params(), shapes[0], node.id)
                 if node.type == APPLICATION.name else keras_layer(node, shapes))
        tensors[node_id] = call_layer(node, layer, feeds)
    inputs, outputs = model_endpoints(graph)
    return keras.Model(
        _one_or_list([tensors[i] for i in inputs]),
        _one_or_list([tensors[i] for i in outputs]),
        name=keras_model_name(name),
    )


def model_endpoints(graph: Graph) -> tuple[list[str], list[str]]:
    """Ids of the model's inputs (the Input layers) and outputs (layers that feed nothing)."""
    return [n.id for n in graph.nodes if n.type == "Input"], graph.sinks()


def _one_or_list(tensors: list[Any]) -> Any:
    return tensors[0] if len(tensors) == 1 else tensors


def ends_in_softmax(node: Node) -> bool:
    """Whether ``node``'s output is a softmax, for built-in and imported (opaque) layers alike."""
    if node.type != OPAQUE_TYPE:
        return node.type == "Softmax" or node.resolved_params().get("activation") == "softmax"
    config = node.params.get("config") or {}
    return node.params.get("class_name") == "Softmax" or config.get("activation") == "softmax"


def outputs_probabilities(graph: Graph) -> list[bool]:
    """For each output, in model order: True if it ends in softmax, so its loss must not
    expect logits."""
    return [ends_in_softmax(graph.node(output_id)) for output_id in model_endpoints(graph)[1]]


def compile_model(model: Any, graph: Graph, training: TrainingSettings,
                  task: str = DEFAULT_TASK, steps_per_epoch: int | None = None,
                  class_weights: Sequence[float] | None = None) -> None:
    """Compile with the project's optimizer and learning-rate schedule, loss and metrics.

    ``steps_per_epoch`` (batches per epoch) times the schedules that change per step; the
    constant and reduce-on-plateau ones do without it. The ``task`` gives the loss and
    metrics, and ``class_weights`` (one per class, for a task that weighs them in its loss:
    ``Pipelines.loss_class_weights``) weigh them. Raise ValueError if the optimizer settings
    cannot work (``optimizers.schedule_problems`` says why).
    """

    if steps_per_epoch is None and isinstance(schedule_call(training), KerasCall):
        raise ValueError(f"The {training.schedule.kind} learning-rate schedule needs the "
                         "number of steps per epoch.")
    learns = task_for(task)
    probabilities = outputs_probabilities(graph)
    losses = learns.losses(probabilities, training.loss, class_weights)
    metrics = learns.metrics(training.metrics, probabilities, class_weights)
    several = len(losses) > 1
    model.compile(
        optimizer=make_optimizer(training, steps_per_epoch or 1),
        loss=losses if several else losses[0],
        metrics=[list(metrics) for _ in losses] if several else metrics,
    )


def keras_model_name(name: str) -> str:
    """A project name made safe as a Keras model name."""
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name).strip("_")
    return cleaned or "model"
