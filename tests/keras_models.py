"""Small Keras models the import and export tests save, import and rebuild."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def branched_model() -> Any:
    """One input, branches joined by Add, Multiply, Average and Concatenate, opaque layers."""
    import keras

    layers = keras.layers
    image = keras.Input(shape=(8, 8, 3), name="image")
    left = layers.Conv2D(4, 3, padding="same", activation="relu", name="left")(image)
    right = layers.Conv2D(4, 1, use_bias=False, name="right")(image)
    right = layers.ReLU(max_value=6.0, name="relu6")(right)
    deep = layers.DepthwiseConv2D(3, padding="same", name="depthwise")(right)
    added = layers.Add(name="add")([left, right, deep])
    product = layers.Multiply(name="multiply")([left, deep])
    mean = layers.Average(name="average")([added, product])
    joined = layers.Concatenate(name="concat")([mean, left])
    normed = layers.BatchNormalization(momentum=0.9, name="bn")(joined)
    flat = layers.Reshape((-1,), name="flat")(normed)
    hidden = layers.Dense(6, activation="tanh", name="hidden")(flat)
    out = layers.Dense(10, activation="softmax", name="out")(hidden)
    return keras.Model(image, out, name="branched")


def two_input_model() -> Any:
    """Two inputs and two outputs, joined in the middle."""
    import keras

    layers = keras.layers
    image = keras.Input(shape=(6, 6, 2), name="image")
    extra = keras.Input(shape=(5,), name="extra")
    pooled = layers.GlobalAveragePooling2D(name="pool")(
        layers.Conv2D(3, 3, name="conv")(image)
    )
    joined = layers.Concatenate(name="join")([pooled, layers.Dense(4, name="embed")(extra)])
    score = layers.Dense(1, activation="sigmoid", name="score")(joined)
    classes = layers.Dense(3, activation="softmax", name="classes")(joined)
    return keras.Model([image, extra], [score, classes], name="two_inputs")


def lambda_model() -> Any:
    """A model whose Lambda layer holds Python code."""
    import keras

    inputs = keras.Input(shape=(4,), name="x")
    doubled = keras.layers.Lambda(lambda t: t * 2.0, name="lambda_1")(inputs)
    return keras.Model(inputs, keras.layers.Dense(2, name="dense")(doubled))


def marker_lambda(marker: Path, **kwargs: Any) -> Any:
    """A Lambda layer named ``lam`` that doubles its input and, whenever it runs, creates
    ``marker``: the file shows whether anything ran the code."""
    import keras

    path = str(marker)  # a closure, which Keras saves with the function's code
    return keras.layers.Lambda(lambda t: (open(path, "w").close(), t * 2.0)[1], name="lam",
                               **kwargs)


def random_batch(model: Any, size: int = 3, seed: int = 0) -> list[np.ndarray]:
    """Random float inputs for every input of ``model``."""
    rng = np.random.default_rng(seed)
    return [rng.random((size, *t.shape[1:]), dtype=np.float32) for t in model.inputs]


def rewrite_archive(path: Path, name: str, change: Callable[[bytes], bytes]) -> None:
    """Rewrite member ``name`` of the zip archive at ``path`` with ``change``."""
    with zipfile.ZipFile(path) as archive:
        members = {member: archive.read(member) for member in archive.namelist()}
    members[name] = change(members[name])
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)


def odd_config_h5(folder: Path) -> Path:
    """A legacy .h5 file whose model config is a number, not JSON text."""
    import h5py

    path = folder / "odd.h5"
    with h5py.File(path, "w") as h5:
        h5.attrs["model_config"] = 5
    return path


def deep_config_keras(folder: Path) -> Path:
    """A .keras file whose config is nested too deeply for a JSON reader."""
    path = folder / "deep.keras"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("config.json", "[" * 100_000 + "]" * 100_000)
    return path


def nested_config_keras(folder: Path) -> Path:
    """A .keras file whose config a JSON reader reads, but nested deeper than any model."""
    path = folder / "nested.keras"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("config.json", '{"a": ' * 700 + "1" + "}" * 700)
    return path


def input_only_keras(folder: Path) -> Path:
    """A Sequential model holding only its input."""
    import keras

    path = folder / "input_only.keras"
    keras.Sequential([keras.Input((4,))]).save(path)
    return path


def bomb_keras(folder: Path) -> Path:
    """A .keras file of 8 KB whose config.json inflates 1,024 times, to 8 MB of spaces."""
    path = folder / "bomb.keras"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("config.json", '{"class_name": "Functional"' + " " * 2**23 + "}")
    return path


BROKEN_MODEL_FILES = [
    (odd_config_h5, "odd.h5: the file holds no readable model configuration."),
    (deep_config_keras, "deep.keras: the file holds no readable model configuration."),
    (nested_config_keras, "nested.keras: the model config is nested more than 200 levels deep, "
                          "which no Keras model needs."),
    (bomb_keras, "bomb.keras: its config.json inflates from 8 KB to 8 MB, more than 1000 "
                 "times (a decompression bomb)."),
    (input_only_keras, "input_only.keras: the model has no layers between its input and output."),
]
"""Files Keras may write or read that import must refuse, each with its one-line reason."""


def issue22_layers_model() -> Any:
    """Every pooling, normalization, activation, shape and merge layer issue 22 added, each
    with settings other than its defaults, over a sequence input and an image input."""
    import keras

    layers = keras.layers
    seq = keras.Input(shape=(12, 4), name="seq")
    x = layers.LayerNormalization(epsilon=1e-5, name="layer_norm")(seq)
    x = layers.MaxPooling1D(2, name="max_pool_1d")(x)
    x = layers.AveragePooling1D(3, strides=1, padding="same", name="avg_pool_1d")(x)
    x = layers.GaussianNoise(0.2, name="noise")(x)
    turned = layers.PReLU(shared_axes=[1], name="prelu")(layers.Permute((2, 1), name="permute")(x))
    scores = layers.Softmax(axis=1, name="softmax")(turned)
    dot = layers.Dot(axes=2, normalize=True, name="dot")([scores, turned])
    mean = layers.GlobalAveragePooling1D(name="gap_1d")(x)
    peak = layers.GlobalMaxPooling1D(name="gmp_1d")(layers.ELU(0.5, name="elu")(x))
    image = keras.Input(shape=(8, 8, 6), name="image")
    y = layers.GroupNormalization(groups=3, name="group_norm")(image)
    y = layers.SpatialDropout2D(0.3, name="spatial_drop")(y)
    y = layers.LeakyReLU(0.1, name="leaky")(y)
    y = layers.ReLU(max_value=6.0, negative_slope=0.1, threshold=0.5, name="relu6")(y)
    joined = layers.Concatenate(name="join")([
        layers.Flatten(name="flat")(dot),
        layers.Subtract(name="subtract")([mean, peak]),
        layers.Maximum(name="maximum")([mean, peak]),
        layers.Minimum(name="minimum")([mean, peak]),
        layers.GlobalMaxPooling2D(name="gmp_2d")(y),
    ])
    return keras.Model([seq, image], layers.Dense(3, name="out")(joined), name="issue22")


def imported_branched(folder: Path) -> tuple[Any, Any]:
    """The branched model saved in ``folder`` and imported with its weights kept beside the
    project (``m.weights.h5``), training starting from them: (project, the Keras model)."""
    from studio.core.build.imported_weights import keep_weights
    from studio.core.build.keras_import import import_model_with_weights

    model = branched_model()
    model.save(folder / "m.keras")
    project, weights = import_model_with_weights(folder / "m.keras")
    keep_weights(project, weights, folder / "m.weights.h5")
    return project, model
