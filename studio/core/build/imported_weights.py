"""What a model starts from: an imported model's weights, which importing writes beside the
project, or a run's model; a model built from the project gets them layer by layer (by node
id), where the shapes still fit."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.messages import first_line
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
    return _give_weights(model, project, read_weights(project.weights))


def apply_model_weights(model: Any, project: Project, source: Path) -> list[str]:
    """Give each layer of ``model`` (built from ``project``) the weights of the layer of the
    same name in the Keras model file ``source`` (a run's final model or checkpoint, loaded
    in safe mode), and return the ids of those left as they were because their weight
    shapes differ there. WeightsError (one line) if the file cannot be loaded."""
    import keras

    try:
        other = keras.saving.load_model(source, compile=False, safe_mode=True)
    except Exception as exc:  # noqa: BLE001 - every loading failure is said in words
        raise WeightsError(f"{Path(source).name} cannot be loaded to start from "
                           f"({first_line(exc)}).") from None
    return _give_weights(model, project, {layer.name: layer.get_weights()
                                          for layer in other.layers})


def _give_weights(model: Any, project: Project, values: Mapping[str, list[np.ndarray]]
                  ) -> list[str]:
    """Set the weights ``values`` holds for the layers of the project's graph, where their
    shapes fit; return the ids of those left as they were (other shapes). Layers ``values``
    does not name keep their random start."""
    dropped = []
    for node_id in project.graph.ids():
        given = values.get(node_id)
        if not given:
            continue
        layer = model.get_layer(node_id)
        if [tuple(w.shape) for w in layer.weights] != [np.shape(v) for v in given]:
            dropped.append(node_id)
            continue
        layer.set_weights(given)
    return dropped
