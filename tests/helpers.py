"""Small projects and data the tests build for themselves."""

from studio.core.graph import Graph, Node
from studio.core.project import Project


def tiny_project(epochs: int = 1, units: int = 10, activation: str = "softmax") -> Project:
    """A small, fast project: Flatten and one Dense layer on MNIST-10k."""
    nodes = [
        Node("input_1", "Input", {"shape": [28, 28, 1]}),
        Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dense", {"units": units, "activation": activation}),
    ]
    project = Project(name="Tiny", graph=Graph.from_chain(nodes))
    project.training.epochs = epochs
    project.training.batch_size = 128
    return project
