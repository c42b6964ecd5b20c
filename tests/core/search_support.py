"""What the search tests share: a tiny table project, its search settings, and a grid whose
trials fail in two ways."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Dimension, Project
from studio.core.runs.history import read_run
from studio.core.search.state import SearchResult


def table_project(folder: Path, rows: int = 200) -> Project:
    """Two features decide the class of a small CSV table; a Dense model learns it."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, 4))
    labels = np.where(x[:, 0] + x[:, 1] > 0, "yes", "no")
    path = folder / "table.csv"
    path.write_text("a,b,c,d,label\n" + "\n".join(
        ",".join(f"{v:.3f}" for v in row) + f",{label}" for row, label in zip(x, labels,
                                                                                 strict=True)))
    project = Project(name="Table", graph=Graph.from_chain([
        Node("input_1", "Input", {"shape": [4]}),
        Node("dense_1", "Dense", {"units": 8, "activation": "relu"}),
        Node("dense_2", "Dense", {"units": 2, "activation": "softmax"}),
    ]))
    project.dataset = DatasetChoice(source="csv", path=str(path), validation_split=0.25)
    project.training.epochs = 2
    project.training.batch_size = 32
    return project


def searched(project: Project, strategy: str, *dimensions: Dimension, trials: int = 4,
             workers: int = 2) -> Project:
    project.search.dimensions = list(dimensions)
    project.search.strategy = strategy
    project.search.trials = trials
    project.search.workers = workers
    return project


LEARNING_RATES = Dimension("training.learning_rate", values=[0.01, 0.001])
UNITS = Dimension("layer.dense_1.units", values=[4, 8])


def failing_grid(folder: Path) -> Project:
    """A grid of four trials: one finishes, a softmax of 3 units for 2 classes cannot be
    trained, and a learning rate of 10 makes the loss NaN."""
    project = searched(table_project(folder), "grid",
                       Dimension("layer.dense_2.units", values=[2, 3]),
                       Dimension("training.learning_rate", values=[0.01, 10.0]))
    project.training.optimizer, project.training.momentum = "sgd", 0.9
    project.training.batch_size = 8
    project.graph.node("dense_1").params["activation"] = "linear"  # so 10 makes the loss NaN
    return project


def check_failing_grid(result: SearchResult) -> None:
    """The failing grid's trials failed with their reasons, and the search went on."""
    by_params = {(t.params["layer.dense_2.units"], t.params["training.learning_rate"]): t
                 for t in result.trials}
    assert by_params[2, 0.01].status == "finished"
    invalid = by_params[3, 0.01]
    assert invalid.status == "failed" and "cannot be trained" in invalid.reason
    diverged = by_params[2, 10.0]
    assert diverged.status == "failed" and "diverged" in diverged.reason
    assert read_run(Path(diverged.run_dir)).status == "failed"
    assert result.best is by_params[2, 0.01]
