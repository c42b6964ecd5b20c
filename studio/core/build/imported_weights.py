"""Imported models keep their weights: importing writes them beside the project, and a model
built from the project gets them back, layer by layer, where the shapes still fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.core.build.keras_import import Weights
from studio.core.project.document import Project, save_project, weights_path_for
from studio.core.project.weights import WeightsError, read_weights, write_weights


def keep_weights(project: Project, weights: Weights, weights_path: str | Path) -> None:
    """Write a just imported model's weights (see ``import_model_with_weights``) to
    ``weights_path``, record them in ``project`` and have its training start from them. A
    model without weights keeps none, and nothing is written."""
    if any(len(values) for values in weights.values()):
        project.weights = write_weights(weights_path, weights)
        project.training.start_from = "imported"


def save_imported(project: Project, weights: Weights, path: Path) -> None:
    """Save a just imported project at ``path`` with its weights beside it
    (``NAME.weights.h5``); if either cannot be written, neither is left behind."""
    weights_path = weights_path_for(path)
    try:
        keep_weights(project, weights, weights_path)
        save_project(project, path)
    except BaseException:
        if project.weights is not None:
            weights_path.unlink(missing_ok=True)
        raise


def apply_imported_weights(model: Any, project: Project) -> list[str]:
    """Give each layer of ``model`` (built from ``project``) its imported weights, and return
    the ids of the layers left as they were because their weight shapes changed since the
    import. WeightsError (one line) if the project has none, or their file is missing or not
    the one recorded."""
    if project.weights is None:
        raise WeightsError("This project has no imported weights: import a Keras model with "
                           "its weights, or start from random weights.")
    ids = set(project.graph.ids())
    dropped = []
    for node_id, values in read_weights(project.weights).items():
        if node_id not in ids:
            continue
        layer = model.get_layer(node_id)
        if [tuple(w.shape) for w in layer.weights] != [v.shape for v in values]:
            dropped.append(node_id)
            continue
        layer.set_weights(values)
    return dropped
