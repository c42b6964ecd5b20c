"""Small projects and data the tests build for themselves."""

from pathlib import Path

import numpy as np
from PIL import Image

from studio.core.model.graph import Graph, Node
from studio.core.project.document import Project


def digit_folder(folder: Path, per_class: int = 12, classes: str = "01") -> Path:
    """An image folder of random 20 × 20 grey PNGs, a subfolder per class: one for each
    character of ``classes`` (by default two, ``0`` and ``1``)."""
    rng = np.random.default_rng(0)
    for digit in classes:
        (folder / digit).mkdir(parents=True)
        for i in range(per_class):
            pixels = rng.integers(0, 256, (20, 20), dtype=np.uint8)
            Image.fromarray(pixels).save(folder / digit / f"{i}.png")
    return folder


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


def two_tower_project() -> Project:
    """Two Inputs fed the same images, and two softmax outputs (a main and an auxiliary head)."""
    nodes = [
        Node("left", "Input", {"shape": [28, 28, 1]}),
        Node("right", "Input", {"shape": [28, 28, 1]}),
        Node("flat_left", "Flatten", {}),
        Node("flat_right", "Flatten", {}),
        Node("joined", "Concatenate", {}),
        Node("main", "Dense", {"units": 10, "activation": "softmax"}),
        Node("aux", "Dense", {"units": 10, "activation": "softmax"}),
    ]
    edges = [("left", "flat_left"), ("right", "flat_right"), ("flat_left", "joined"),
             ("flat_right", "joined"), ("joined", "main"), ("flat_left", "aux")]
    project = Project(name="Two towers", graph=Graph(nodes=nodes, edges=edges))
    project.training.epochs = 1
    project.training.batch_size = 256
    return project


def small_cnn_project() -> Project:
    """A small convolutional classifier of MNIST-10k digits (one Conv2D, so Grad-CAM, the
    activation maps and the first layer's filters have something to show), 2 epochs with a
    checkpoint after each, and a held-out test split."""
    nodes = [
        Node("input_1", "Input", {"shape": [28, 28, 1]}),
        Node("conv2d_1", "Conv2D", {"filters": 8, "kernel_size": 3, "activation": "relu"}),
        Node("max_pooling2d_1", "MaxPooling2D", {}),
        Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dense", {"units": 10, "activation": "softmax"}),
    ]
    project = Project(name="Small CNN", graph=Graph.from_chain(nodes))
    project.training.epochs = 2
    project.training.batch_size = 128
    project.dataset.test_split = 0.1
    return project


def regression_project(folder: Path, epochs: int = 2) -> Project:
    """One Dense unit learning a price from three features of a 200-row CSV in ``folder``."""
    from studio.core.project.document import DatasetChoice

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    y = x @ [1.0, -2.0, 0.5] + 3
    path = folder / "houses.csv"
    path.write_text("a,b,c,price\n" + "\n".join(
        ",".join(f"{v:.4f}" for v in (*row, target)) for row, target in zip(x, y, strict=True)))
    project = Project(name="Houses", graph=Graph.from_chain([
        Node("input_1", "Input", {"shape": [3]}),
        Node("dense_1", "Dense", {"units": 1}),
    ]))
    project.dataset = DatasetChoice(source="csv", path=str(path), task="regression")
    project.training.epochs = epochs
    project.training.learning_rate = 0.05
    return project


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder`` (hidden ones too) with its bytes (None for a folder)."""
    return {str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes()
            for p in sorted(folder.rglob("*"))}


def one_line_error(capsys, *words: str) -> str:
    """The command's stderr, checked to be one ``studio: error:`` line holding ``words``."""
    err = capsys.readouterr().err
    assert err.startswith("studio: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    return err
