"""Starter projects: the demo CNN, a small MLP and LeNet-5, all on MNIST-10k."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studio.core.graph import Graph, Node
from studio.core.project import Project

LayerList = list[tuple[str, dict[str, Any]]]

_IMAGE = ("Input", {"shape": [28, 28, 1]})
_CLASSIFIER = ("Dense", {"units": 10, "activation": "softmax"})


def _cnn() -> LayerList:
    return [
        _IMAGE,
        ("Conv2D", {"filters": 32, "kernel_size": 3}),
        ("MaxPooling2D", {"pool_size": 2}),
        ("Conv2D", {"filters": 64, "kernel_size": 3}),
        ("MaxPooling2D", {"pool_size": 2}),
        ("Conv2D", {"filters": 64, "kernel_size": 3}),
        ("Flatten", {}),
        ("Dense", {"units": 64, "activation": "relu"}),
        _CLASSIFIER,
    ]


def _mlp() -> LayerList:
    return [
        _IMAGE,
        ("Flatten", {}),
        ("Dense", {"units": 128, "activation": "relu"}),
        ("Dropout", {"rate": 0.2}),
        _CLASSIFIER,
    ]


def _lenet5() -> LayerList:
    return [
        _IMAGE,
        ("Conv2D", {"filters": 6, "kernel_size": 5, "padding": "same", "activation": "tanh"}),
        ("AveragePooling2D", {"pool_size": 2}),
        ("Conv2D", {"filters": 16, "kernel_size": 5, "activation": "tanh"}),
        ("AveragePooling2D", {"pool_size": 2}),
        ("Flatten", {}),
        ("Dense", {"units": 120, "activation": "tanh"}),
        ("Dense", {"units": 84, "activation": "tanh"}),
        _CLASSIFIER,
    ]


TEMPLATES: dict[str, tuple[str, Callable[[], LayerList]]] = {
    "cnn": ("Small CNN on MNIST-10k", _cnn),
    "mlp": ("Multi-layer perceptron on MNIST-10k", _mlp),
    "lenet5": ("LeNet-5 on MNIST-10k", _lenet5),
}


def from_template(name: str) -> Project:
    """A new project from the template called ``name``; raise KeyError if there is none."""
    if name not in TEMPLATES:
        raise KeyError(f"Unknown template {name!r}; choose from {', '.join(TEMPLATES)}.")
    title, layers = TEMPLATES[name]
    graph = Graph()
    nodes = []
    for layer_type, params in layers():
        node = Node(graph.new_id(layer_type), layer_type, dict(params))
        graph.nodes.append(node)
        nodes.append(node)
    return Project(name=title, graph=Graph.from_chain(nodes))


def demo_project() -> Project:
    """The project the app opens on: the small CNN on MNIST-10k."""
    return from_template("cnn")
