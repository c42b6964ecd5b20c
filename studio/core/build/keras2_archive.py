"""The weights of a ``.keras`` archive Keras 2 wrote (tf.keras 2.12 to 2.15).

Keras 2's ``saving_lib`` stored each layer's variables under the path it reached the layer
by, walking ``dir(model)`` in order: the first attribute holding layers is the model's
``_layer_checkpoint_dependencies``, a dict that lists each layer with weights twice (as
``layer_with_weights-i`` and ``layer-j``) and every other layer once. Each listing gets the
next name of its class (``conv2d``, ``conv2d_1``...), but only a layer's first listing is
saved, so a second Conv2D lies under ``conv2d_2``, where Keras 3, which counts each layer
once, looks for ``conv2d_1``. Here those paths are walked as Keras 2 made them.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

from studio.core.base.archives import ArchiveRefused, check_member, read_member
from studio.core.base.messages import count

WEIGHTS_MEMBER = "model.weights.h5"
DEPENDENCIES = "_layer_checkpoint_dependencies"


def written_by_keras_2(path: Path) -> bool:
    """Whether a model file is in a format Keras 2 wrote: HDF5 (``.h5``), or an archive
    whose metadata names a Keras 1 or 2 version."""
    if path.suffix.lower() != ".keras":
        return True
    try:
        metadata = json.loads(read_member(path, "metadata.json"))
    except (ArchiveRefused, KeyError, OSError, ValueError, zipfile.BadZipFile):
        return False  # Keras 3 reads it, or says why it cannot
    version = metadata.get("keras_version") if isinstance(metadata, dict) else None
    return isinstance(version, str) and version.startswith(("1.", "2."))


def load_weights(model: Any, path: Path) -> None:
    """Give ``model`` (built from the archive's config) the weights Keras 2 stored in the
    archive at ``path``; ValueError naming the layer whose weights are missing or do not fit."""
    import h5py

    with zipfile.ZipFile(path) as archive:
        info = check_member(archive, path, WEIGHTS_MEMBER)  # a bomb is refused
        with archive.open(info) as member, h5py.File(member, "r") as h5:  # read as needed
            _load_model(model, h5, "", set())


def _load_model(model: Any, h5: Any, prefix: str, visited: set[int]) -> None:
    import keras

    used: dict[str, int] = {}
    for layer in _listings(model):
        name = _unique(_snake_case(type(layer).__name__), used)
        if id(layer) in visited:
            continue  # Keras 2 named this listing, then skipped what it had saved already
        visited.add(id(layer))
        path = f"{prefix}{DEPENDENCIES}/{name}"
        if isinstance(layer, keras.Model):
            _load_model(layer, h5, f"{path}/", visited)
        elif layer.weights:
            _load_layer(layer, h5, path)


def _listings(model: Any) -> list[Any]:
    """The values of Keras 2's ``_layer_checkpoint_dependencies`` of ``model``, in order."""
    listed = []
    for layer in model.layers:
        if layer.weights:
            listed.append(layer)  # as layer_with_weights-i
        listed.append(layer)  # as layer-j
    return listed


def _load_layer(layer: Any, h5: Any, path: str) -> None:
    variables = layer.trainable_weights + layer.non_trainable_weights  # Keras 2's order
    stored = h5.get(f"{path}/vars")
    if stored is None or len(stored) != len(variables):
        found = 0 if stored is None else len(stored)
        raise ValueError(f"layer {layer.name} has {count(len(variables), 'weight')}, but the "
                         f"file holds {found} for it (at {path})")
    for index, variable in enumerate(variables):
        value = stored[str(index)][()]
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(f"weight {index} of layer {layer.name} has shape "
                             f"{tuple(variable.shape)}, but the file holds {tuple(value.shape)}")
        variable.assign(value)


def _unique(name: str, used: dict[str, int]) -> str:
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def _snake_case(name: str) -> str:
    """A class name as Keras 2 named its saved state (``DepthwiseConv2D`` becomes
    ``depthwise_conv2d``)."""
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()
    return name if not name.startswith("_") else f"private{name}"
