"""Model files as Keras 2.x wrote them, written here with h5py, beside the Keras 3 model they
hold (the reference the tests compare answers with).

The layout follows Keras 2's ``saving/hdf5_format.py`` (``save_model_to_hdf5`` and
``save_weights_to_hdf5_group``): the model's JSON config in the root attribute
``model_config``, ``keras_version`` and ``backend`` beside it, and a ``model_weights`` group
whose ``layer_names`` attribute lists every layer of ``model.layers`` (a functional model's
InputLayer included, a Sequential model's left out), each layer a group whose
``weight_names`` attribute lists its weights, trainable ones first, as ``owner/name:0``
datasets. The layer configs are those ``get_config`` returned in tf.keras 2.x, with the forms
Keras 3 rejects: ``groups`` on ``DepthwiseConv2D``, ``batch_input_shape``, ``Policy`` dtypes,
initializers and regularizers without a ``module``, ``Model`` as a functional model's class.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

KERAS_2 = "2.12.0"
TEACHABLE_KERAS = "2.3.0-tf"  # an older tf.keras, as in Teachable Machine's Keras export
POLICY = {"class_name": "Policy", "config": {"name": "float32"}}
L2 = {"class_name": "L2", "config": {"l2": 9.999999747378752e-05}}
L1L2 = {"class_name": "L1L2", "config": {"l1": 0.0, "l2": 9.999999747378752e-05}}


@dataclass
class Keras2File:
    """A Keras 2 model file and the Keras 3 model with the same layers and weights."""

    path: Path
    reference: Any
    input_shape: tuple[int, ...]


def _object(class_name: str, **config: Any) -> dict[str, Any]:
    return {"class_name": class_name, "config": config}


def _layer(class_name: str, name: str, dtype: Any = "float32", **config: Any) -> dict[str, Any]:
    return _object(class_name, name=name, trainable=True, dtype=dtype, **config)


def _none(*keys: str) -> dict[str, None]:
    return dict.fromkeys(keys)


def input_layer(name: str, shape: tuple[int, ...]) -> dict[str, Any]:
    return _object("InputLayer", batch_input_shape=[None, *shape], dtype="float32",
                   sparse=False, ragged=False, name=name)


def conv2d(name: str, filters: int, kernel: int, *, strides: int = 1, padding: str = "same",
           dtype: Any = "float32", regularizer: Any = None) -> dict[str, Any]:
    return _layer("Conv2D", name, dtype, filters=filters, kernel_size=[kernel, kernel],
                  strides=[strides, strides], padding=padding, data_format="channels_last",
                  dilation_rate=[1, 1], groups=1, activation="linear", use_bias=False,
                  kernel_initializer=_object("VarianceScaling", scale=2.0, mode="fan_in",
                                             distribution="normal", seed=None),
                  bias_initializer=_object("Zeros"), kernel_regularizer=regularizer,
                  **_none("bias_regularizer", "activity_regularizer", "kernel_constraint",
                          "bias_constraint"))


def depthwise(name: str, dtype: Any = "float32") -> dict[str, Any]:
    """A DepthwiseConv2D as tf.keras 2.x stored it: with the ``groups`` of Conv2D."""
    return _layer("DepthwiseConv2D", name, dtype, kernel_size=[3, 3], strides=[1, 1],
                  padding="same", data_format="channels_last", dilation_rate=[1, 1], groups=1,
                  activation="linear", use_bias=False, bias_initializer=_object("Zeros"),
                  **_none("bias_regularizer", "activity_regularizer", "bias_constraint"),
                  depth_multiplier=1,
                  depthwise_initializer=_object("VarianceScaling", scale=1, mode="fan_avg",
                                                distribution="uniform", seed=None),
                  **_none("depthwise_regularizer", "depthwise_constraint"))


def batch_norm(name: str, dtype: Any = "float32") -> dict[str, Any]:
    return _layer("BatchNormalization", name, dtype, axis=[3], momentum=0.999, epsilon=0.001,
                  center=True, scale=True, beta_initializer=_object("Zeros"),
                  gamma_initializer=_object("Ones"),
                  moving_mean_initializer=_object("Zeros"),
                  moving_variance_initializer=_object("Ones"),
                  **_none("beta_regularizer", "gamma_regularizer", "beta_constraint",
                          "gamma_constraint"))


def relu6(name: str) -> dict[str, Any]:
    return _layer("ReLU", name, max_value=6.0, negative_slope=0.0, threshold=0.0)


def zero_padding(name: str) -> dict[str, Any]:
    return _layer("ZeroPadding2D", name, padding=[[0, 1], [0, 1]],
                  data_format="channels_last")


def global_pooling(name: str) -> dict[str, Any]:
    return _layer("GlobalAveragePooling2D", name, data_format="channels_last")


def dense(name: str, units: int, activation: str, *, dtype: Any = "float32",
          regularizer: Any = None, **extra: Any) -> dict[str, Any]:
    return _layer("Dense", name, dtype, **extra, units=units, activation=activation,
                  use_bias=True, kernel_initializer=_object("GlorotUniform", seed=None),
                  bias_initializer=_object("Zeros"), kernel_regularizer=regularizer,
                  **_none("bias_regularizer", "activity_regularizer", "kernel_constraint",
                          "bias_constraint"))


def sequential(name: str, layers: list[dict[str, Any]]) -> dict[str, Any]:
    return _object("Sequential", name=name, layers=layers)


def functional(name: str, layers: list[tuple[dict[str, Any], list[str]]], output: str,
               class_name: str = "Functional") -> dict[str, Any]:
    """A functional model of (layer, names of the layers feeding it) pairs, one input."""
    entries = [{**entry, "name": entry["config"]["name"],
                "inbound_nodes": [[[source, 0, 0, {}] for source in sources]] if sources else []}
               for entry, sources in layers]
    return _object(class_name, name=name, layers=entries,
                   input_layers=[[entries[0]["name"], 0, 0]], output_layers=[[output, 0, 0]])


def write_h5(path: Path, config: dict[str, Any], layers: list[tuple[str, Any]],
             keras_version: str = KERAS_2) -> Path:
    """Write a Keras 2 HDF5 model file: ``config``, and the weights of ``layers`` (the
    model's ``model.layers`` as Keras 2 lists them: names and Keras 3 reference layers, or
    None for a layer without weights) as ``save_weights_to_hdf5_group`` stored them."""
    import h5py

    with h5py.File(path, "w") as h5:  # model_metadata: a dict is stored as JSON bytes
        h5.attrs["keras_version"] = keras_version
        h5.attrs["backend"] = "tensorflow"
        h5.attrs["model_config"] = json.dumps(config).encode("utf8")
        group = h5.create_group("model_weights")
        group.attrs["layer_names"] = [name.encode("utf8") for name, _ in layers]
        group.attrs["backend"] = b"tensorflow"
        group.attrs["keras_version"] = keras_version.encode("utf8")
        for name, layer in sorted(layers, key=lambda pair: pair[0]):
            weights = legacy_weights(layer) if layer is not None else []
            layer_group = group.create_group(name)
            layer_group.attrs["weight_names"] = [w.encode("utf8") for w, _ in weights]
            for weight_name, value in weights:
                layer_group.create_dataset(weight_name, value.shape, dtype=value.dtype)[...] = value
    return path


def legacy_weights(layer: Any) -> list[tuple[str, np.ndarray]]:
    """A layer's weights in the order Keras 2's h5 files keep (trainable first), each named
    ``owner/name:0`` as TensorFlow named it."""
    variables = layer.trainable_weights + layer.non_trainable_weights
    return [("/".join(v.path.split("/")[-2:]) + ":0", np.asarray(v.numpy()))
            for v in variables]


def randomised(model: Any, seed: int = 0) -> Any:
    """``model`` with random weights (variances positive), so that any weight read wrong
    changes its answers."""
    rng = np.random.default_rng(seed)
    model.set_weights([rng.uniform(0.5, 1.5, w.shape).astype(np.float32)
                       if "variance" in v.path else
                       rng.normal(0, 0.5, w.shape).astype(np.float32)
                       for v, w in zip(model.weights, model.get_weights(), strict=True)])
    return model


def teachable_machine_h5(folder: Path) -> Keras2File:
    """A Teachable-Machine-style export: a MobileNet-like base (a functional model named
    ``Model``, with a DepthwiseConv2D carrying ``groups``) and pooling in one Sequential, a
    Dense head in a second Sequential whose first layer records ``batch_input_shape``, both
    inside an outer Sequential; no Sequential has an InputLayer, as tf.keras 2.3 wrote them."""
    import keras

    layers = keras.layers
    shape = (16, 16, 3)
    image = keras.Input(shape, name="input_1")
    x = layers.ZeroPadding2D(((0, 1), (0, 1)), name="Conv1_pad")(image)
    x = layers.Conv2D(8, 3, strides=2, padding="valid", use_bias=False, name="Conv1")(x)
    x = layers.BatchNormalization(momentum=0.999, name="bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    x = layers.DepthwiseConv2D(3, padding="same", use_bias=False, name="expanded_conv_depthwise")(x)
    x = layers.BatchNormalization(momentum=0.999, name="expanded_conv_depthwise_BN")(x)
    x = layers.ReLU(6.0, name="expanded_conv_depthwise_relu")(x)
    x = layers.Conv2D(4, 1, use_bias=False, name="expanded_conv_project")(x)
    x = layers.BatchNormalization(momentum=0.999, name="expanded_conv_project_BN")(x)
    base = keras.Model(image, x, name="model1")
    pooling = "global_average_pooling2d_GlobalAveragePooling2D1"  # as Teachable Machine names it
    features = keras.Sequential([base, layers.GlobalAveragePooling2D(name=pooling)],
                                name="sequential_1")
    head = keras.Sequential([keras.Input((4,)),
                             layers.Dense(10, activation="relu", name="dense_Dense1"),
                             layers.Dense(3, activation="softmax", name="dense_Dense2")],
                            name="sequential_2")
    reference = randomised(keras.Sequential([keras.Input(shape), features, head],
                                            name="sequential_3"))
    base_config = functional("model1", [
        (input_layer("input_1", shape), []),
        (zero_padding("Conv1_pad"), ["input_1"]),
        (conv2d("Conv1", 8, 3, strides=2, padding="valid"), ["Conv1_pad"]),
        (batch_norm("bn_Conv1"), ["Conv1"]),
        (relu6("Conv1_relu"), ["bn_Conv1"]),
        (depthwise("expanded_conv_depthwise"), ["Conv1_relu"]),
        (batch_norm("expanded_conv_depthwise_BN"), ["expanded_conv_depthwise"]),
        (relu6("expanded_conv_depthwise_relu"), ["expanded_conv_depthwise_BN"]),
        (conv2d("expanded_conv_project", 4, 1), ["expanded_conv_depthwise_relu"]),
        (batch_norm("expanded_conv_project_BN"), ["expanded_conv_project"]),
    ], "expanded_conv_project_BN", class_name="Model")
    config = sequential("sequential_3", [
        sequential("sequential_1", [
            base_config, global_pooling(pooling)]),
        sequential("sequential_2", [
            dense("dense_Dense1", 10, "relu", batch_input_shape=[None, 4]),
            dense("dense_Dense2", 3, "softmax")]),
    ])
    path = write_h5(folder / "keras_model.h5", config,
                    [("sequential_1", features), ("sequential_2", head)], TEACHABLE_KERAS)
    return Keras2File(path, reference, shape)


def functional_h5(folder: Path, class_name: str = "Functional",
                  inserted: dict[str, Any] | None = None) -> Keras2File:
    """A functional model as tf.keras 2.x wrote it, under ``class_name`` (``Model`` before
    tf.keras 2.4, ``Functional`` after): an InputLayer with ``batch_input_shape``, a legacy
    L2 regularizer and ``Policy`` dtypes, a BatchNormalization axis list, a DepthwiseConv2D
    with ``groups`` and a branch joined by Add. An ``inserted`` layer entry (without
    weights) goes between the ReLU and what it feeds; the reference then lacks it."""
    import keras

    layers = keras.layers
    shape = (8, 8, 3)
    image = keras.Input(shape, name="image")
    conv = layers.Conv2D(6, 3, padding="same", use_bias=False, name="conv",
                         kernel_regularizer=keras.regularizers.L2(1e-4))(image)
    normed = layers.BatchNormalization(momentum=0.999, name="bn")(conv)
    relu = layers.ReLU(6.0, name="relu")(normed)
    deep = layers.DepthwiseConv2D(3, padding="same", use_bias=False, name="dw")(relu)
    added = layers.Add(name="add")([relu, deep])
    pooled = layers.GlobalAveragePooling2D(name="pool")(added)
    out = layers.Dense(3, activation="softmax", name="out")(pooled)
    reference = randomised(keras.Model(image, out, name="legacy_functional"))
    relu = inserted["config"]["name"] if inserted else "relu"
    config = functional("legacy_functional", [
        (input_layer("image", shape), []),
        (conv2d("conv", 6, 3, dtype=POLICY, regularizer=L2 if class_name == "Functional"
                else L1L2), ["image"]),
        (batch_norm("bn", dtype=POLICY), ["conv"]),
        (relu6("relu"), ["bn"]),
        *([(inserted, ["relu"])] if inserted else []),
        (depthwise("dw", dtype=POLICY), [relu]),
        (_layer("Add", "add"), [relu, "dw"]),
        (global_pooling("pool"), ["add"]),
        (dense("out", 3, "softmax", dtype=POLICY), ["pool"]),
    ], "out", class_name=class_name)
    version = KERAS_2 if class_name == "Functional" else TEACHABLE_KERAS
    named = [(layer.name, layer if layer.weights else None) for layer in reference.layers]
    if inserted:
        named.insert(4, (relu, None))
    path = write_h5(folder / f"{class_name.lower()}.h5", config, named, version)
    return Keras2File(path, reference, shape)


def _saved_in_archive(value: Any, module: str = "keras.layers") -> Any:
    """A layer entry (with its initializers and regularizers) as tf.keras 2.12's
    ``serialization_lib`` wrote it into a ``.keras`` archive: each object with its module."""
    if not (isinstance(value, dict) and "class_name" in value):
        return value
    config = {key: _saved_in_archive(item, next(
        (f"keras.{kind}s" for kind in ("initializer", "regularizer", "constraint")
         if key.endswith(f"_{kind}")), module)) for key, item in value["config"].items()}
    return {"module": module, "class_name": value["class_name"], "config": config,
            "registered_name": None}


def keras2_archive(folder: Path) -> Keras2File:
    """A ``.keras`` archive as tf.keras 2.12's ``saving_lib`` wrote it: ``metadata.json``
    naming Keras 2, ``config.json`` with ``groups`` on the DepthwiseConv2D and the input's
    ``batch_input_shape``, and ``model.weights.h5`` with each layer's variables under
    ``_layer_checkpoint_dependencies/<class>[_n]/vars/<i>``, numbered as Keras 2 counted
    (the second Conv2D lies under ``conv2d_2``)."""
    import zipfile

    import h5py
    import keras

    layers = keras.layers
    shape = (8, 8, 3)
    reference = randomised(keras.Sequential([
        keras.Input(shape, name="input_1"),
        layers.Conv2D(6, 3, padding="same", use_bias=False, name="conv2d"),
        layers.BatchNormalization(momentum=0.999, name="batch_normalization"),
        layers.ReLU(6.0, name="re_lu"),
        layers.DepthwiseConv2D(3, padding="same", use_bias=False, name="depthwise_conv2d"),
        layers.Conv2D(4, 1, padding="same", use_bias=False, name="conv2d_1"),
        layers.GlobalAveragePooling2D(name="global_average_pooling2d"),
        layers.Dense(3, activation="softmax", name="dense"),
    ], name="sequential"))
    entries = [input_layer("input_1", shape), conv2d("conv2d", 6, 3),
               batch_norm("batch_normalization"), relu6("re_lu"),
               depthwise("depthwise_conv2d"), conv2d("conv2d_1", 4, 1),
               global_pooling("global_average_pooling2d"), dense("dense", 3, "softmax")]
    config = {"module": "keras", "class_name": "Sequential",
              "config": {"name": "sequential",
                         "layers": [_saved_in_archive(entry) for entry in entries]},
              "registered_name": None, "build_config": {"input_shape": [None, *shape]},
              "compile_config": None}
    stored = {"conv2d": "conv2d", "batch_normalization": "batch_normalization",
              "re_lu": "re_lu", "depthwise_conv2d": "depthwise_conv2d", "conv2d_2": "conv2d_1",
              "global_average_pooling2d": "global_average_pooling2d", "dense": "dense"}
    weights = io.BytesIO()
    with h5py.File(weights, "w") as h5:
        h5.create_group("vars")  # the model's own, which it has none of
        for path, name in stored.items():
            group = h5.create_group(f"_layer_checkpoint_dependencies/{path}/vars")
            layer = reference.get_layer(name)
            for index, variable in enumerate(layer.trainable_weights
                                             + layer.non_trainable_weights):
                group.create_dataset(str(index), data=np.asarray(variable.numpy()))
    path = folder / "keras2.keras"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("metadata.json", json.dumps(
            {"keras_version": KERAS_2, "date_saved": "2023-05-04@10:11:12"}))
        archive.writestr("config.json", json.dumps(config))
        archive.writestr("model.weights.h5", weights.getvalue())
    return Keras2File(path, reference, shape)
