"""Importing Keras models: known layers become registry nodes, the rest stays opaque, and the
rebuilt model has the same layers, parameters and outputs as the original."""

from __future__ import annotations

import zipfile
from collections import Counter

import keras
import numpy as np
import pytest

from studio.core.build.analysis import analyze
from studio.core.build.keras_import import (
    ImportFailure,
    apply_weights,
    import_model,
    import_model_with_weights,
)
from studio.core.build.keras_model import ModelError, build_keras_model
from studio.core.model.layers import OPAQUE_TYPE
from studio.core.project.document import load_project, save_project
from tests.keras_models import (
    BROKEN_MODEL_FILES,
    branched_model,
    issue22_layers_model,
    lambda_model,
    random_batch,
    rewrite_archive,
    two_input_model,
)


def round_trip(model, path):
    """Save ``model``, import it, rebuild it with the imported weights and compare."""
    return round_trip_with_weights(model, path)[0]


def round_trip_with_weights(model, path):
    """:func:`round_trip`, also returning the imported weights by node id."""
    model.save(path)
    project, weights = import_model_with_weights(path)
    rebuilt = build_keras_model(project.graph, project.name)
    assert len(_layers(rebuilt)) == len(_layers(model))
    assert rebuilt.count_params() == model.count_params()
    assert analyze(project.graph).total_params == model.count_params()
    apply_weights(rebuilt, weights)
    batch = random_batch(model)
    expected = _outputs(model, batch)
    actual = _outputs(rebuilt, batch)
    assert len(actual) == len(expected)
    for ours, theirs in zip(actual, expected, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    return project, weights


def _layers(model):
    """The model's layers, those of its nested models in their place, without InputLayers
    (a Sequential model does not list its own)."""
    found = []
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            found += _layers(layer)
        elif not isinstance(layer, keras.layers.InputLayer):
            found.append(layer)
    return found


def _outputs(model, batch):
    """The model's inference outputs for ``batch``, as a list of arrays. Called eagerly, as
    ``predict`` would trace each model into a graph first, which costs more than the batch."""
    prediction = model(batch[0] if len(batch) == 1 else batch, training=False)
    if not isinstance(prediction, list | tuple):
        prediction = [prediction]
    return [keras.ops.convert_to_numpy(output) for output in prediction]


def types(project) -> Counter:
    return Counter(n.type for n in project.graph.nodes)


def opaque_classes(project) -> set[str]:
    return {n.params["class_name"] for n in project.graph.nodes if n.type == OPAQUE_TYPE}


def test_mobilenet_v2_round_trip(tmp_path):
    model = keras.applications.MobileNetV2(input_shape=(96, 96, 3), weights=None, classes=10)
    project = round_trip(model, tmp_path / "mobilenet.keras")
    counts = types(project)
    assert (counts["Conv2D"], counts["BatchNormalization"], counts["Add"]) == (35, 52, 10)
    assert counts["ReLU"] == 35  # the ReLU6 after each convolution, as editable layers
    assert {n.params["max_value"] for n in project.graph.nodes if n.type == "ReLU"} == {6.0}
    assert opaque_classes(project) == set()
    assert (counts["DepthwiseConv2D"], counts["ZeroPadding2D"]) == (17, 4)
    assert project.name == "mobilenet"
    path = tmp_path / "mobilenet.studio.json"
    save_project(project, path)
    assert load_project(path).to_dict() == project.to_dict()


def test_resnet50_round_trip(tmp_path):
    model = keras.applications.ResNet50(input_shape=(64, 64, 3), weights=None, classes=10)
    project = round_trip(model, tmp_path / "resnet.keras")
    counts = types(project)
    # Its batch normalizations name the channel axis as 3, which is the same as -1.
    assert (counts["BatchNormalization"], counts["Activation"], counts["MaxPooling2D"]) == (
        53, 49, 1)
    assert opaque_classes(project) == set()


def test_the_new_convolution_and_resizing_layers_round_trip_as_editable_layers(tmp_path):
    layers = keras.layers
    image = keras.Input((15, 15, 3), name="image")
    x = layers.ZeroPadding2D(((0, 1), (0, 1)), name="pad")(image)
    x = layers.DepthwiseConv2D((3, 1), strides=2, depth_multiplier=2, name="depthwise",
                               depthwise_regularizer=keras.regularizers.L2(1e-4))(x)
    x = layers.SeparableConv2D(6, 3, padding="same", name="separable",
                               pointwise_initializer="he_uniform")(x)
    x = layers.Conv2DTranspose(4, (3, 2), strides=(2, 1), name="up_conv",
                               kernel_initializer="he_normal")(x)
    x = layers.UpSampling2D((1, 2), interpolation="bilinear", name="upsample")(x)
    x = layers.Cropping2D(((1, 0), (0, 2)), name="crop")(x)
    x = layers.Resizing(6, 5, interpolation="nearest", name="resize")(x)
    sequence = keras.Input((12, 3), name="sequence")
    s = layers.Conv1D(5, 4, strides=2, padding="causal", name="conv1d")(sequence)
    volume = keras.Input((4, 6, 6, 2), name="volume")
    v = layers.Conv3D(3, (2, 3, 3), strides=(1, 2, 1), name="conv3d",
                      kernel_regularizer="l1")(volume)
    joined = layers.Concatenate(name="joined")(
        [layers.Flatten(name=f"flat_{i}")(t) for i, t in enumerate((x, s, v))])
    model = keras.Model([image, sequence, volume], layers.Dense(3, name="out")(joined))
    project = round_trip(model, tmp_path / "new_layers.keras")
    assert opaque_classes(project) == set()
    graph = project.graph
    assert graph.node("pad").params == {"padding": [0, 1, 0, 1]}
    assert graph.node("crop").params == {"cropping": [1, 0, 0, 2]}
    assert graph.node("upsample").params == {"size": [1, 2], "interpolation": "bilinear"}
    assert graph.node("depthwise").params["kernel_size"] == [3, 1]
    assert graph.node("depthwise").params["depthwise_regularizer"] == "l2"
    assert graph.node("separable").params["pointwise_initializer"] == "he_uniform"
    assert graph.node("up_conv").params["strides"] == [2, 1]
    assert graph.node("conv1d").params["padding"] == "causal"
    assert graph.node("conv3d").params["kernel_size"] == [2, 3, 3]
    rebuilt = build_keras_model(graph)
    for layer in _layers(model):
        assert {**rebuilt.get_layer(layer.name).get_config(), "name": layer.name} == \
            layer.get_config()


def test_branched_model_round_trip(tmp_path):
    project = round_trip(branched_model(), tmp_path / "branched.keras")
    graph = project.graph
    assert graph.inputs_of("add") == ["left", "relu6", "depthwise"]
    assert graph.inputs_of("concat") == ["average", "left"]
    assert graph.node("left").type == "Conv2D"
    assert graph.node("left").params == {
        "filters": 4, "kernel_size": 3, "strides": 1, "padding": "same", "activation": "relu",
        "use_bias": True, **KERNEL_DEFAULTS,
    }
    assert graph.node("bn").params == {"momentum": 0.9, "epsilon": 0.001}
    assert graph.node("flat").params == {"target_shape": [-1]}
    assert {graph.node(i).type for i in ("add", "multiply", "average", "concat")} == {
        "Add", "Multiply", "Average", "Concatenate"}


@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_pooling_normalization_activation_shape_and_merge_layers_import_editable(
        tmp_path, suffix):
    model = issue22_layers_model()
    project = round_trip(model, tmp_path / f"layers{suffix}")
    graph = project.graph
    assert not opaque_classes(project)
    assert {n.id: n.type for n in graph.nodes if n.type != "Input"} == {
        layer.name: type(layer).__name__ for layer in _layers(model)}
    assert graph.node("relu6").params == {"max_value": 6.0, "negative_slope": 0.1,
                                          "threshold": 0.5}
    assert graph.node("prelu").params == {"shared_axes": [1]}
    assert graph.node("dot").params == {"axes": 2, "normalize": True}
    assert graph.node("group_norm").params["groups"] == 3
    assert graph.node("permute").params == {"dims": [2, 1]}
    path = tmp_path / "layers.studio.json"
    save_project(project, path)
    assert load_project(path).to_dict() == project.to_dict()


def test_several_inputs_and_outputs_round_trip(tmp_path):
    project = round_trip(two_input_model(), tmp_path / "two.keras")
    ids = project.graph.ids()
    assert ids[:2] == ["image", "extra"] and ids[-2:] == ["score", "classes"]
    assert not analyze(project.graph).problems


def test_legacy_h5_round_trip(tmp_path):
    project = round_trip(branched_model(), tmp_path / "branched.h5")
    assert project.graph.node("left").type == "Conv2D"


def nested_functional():
    """A functional model holding a Sequential model that holds a functional one (two levels
    deep), beside a second Sequential model whose layer has the same name as a nested one."""
    x = keras.Input((6,), name="x")
    inner_fn = keras.Model(x, keras.layers.Dense(3, activation="relu", name="dense")(x),
                           name="inner_fn")
    inner_seq = keras.Sequential([keras.Input((8,)), keras.layers.Dense(6, name="d1"), inner_fn],
                                 name="inner_seq")
    other = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3, name="dense")],
                             name="other")
    inputs = keras.Input((8,), name="inputs")
    joined = keras.layers.Add(name="add")([inner_seq(inputs), other(inputs)])
    return keras.Model(inputs, keras.layers.Dense(2, name="out")(joined))


def nested_sequential():
    """A Sequential model holding a functional model, whose output the next layer takes."""
    x = keras.Input((8,), name="x")
    hidden = keras.layers.Dense(5, activation="tanh", name="d1")(x)
    inner_fn = keras.Model(x, keras.layers.Dense(4, name="d2")(hidden), name="inner_fn")
    return keras.Sequential([keras.Input((8,), name="inputs"), inner_fn,
                             keras.layers.Dense(2, activation="softmax", name="out")])


def nested_two_inputs():
    """A functional model holding one with two inputs, fed by a layer and by an input."""
    a, b = keras.Input((4,), name="a"), keras.Input((4,), name="b")
    joined = keras.layers.Concatenate(name="cat")([a, keras.layers.Dense(4, name="d1")(b)])
    inner_fn = keras.Model([a, b], joined, name="inner_fn")
    inputs, extra = keras.Input((4,), name="inputs"), keras.Input((4,), name="extra")
    hidden = keras.layers.Dense(4, name="dx")(inputs)
    return keras.Model([inputs, extra], keras.layers.Dense(2, name="out")(inner_fn([hidden,
                                                                                     extra])))


@pytest.mark.parametrize(("build", "holder", "edges"), [
    (nested_functional, "inner_seq", [
        ("inputs", "d1"), ("d1", "dense"), ("inputs", "other_dense"), ("dense", "add"),
        ("other_dense", "add"), ("add", "out")]),
    (nested_sequential, "inner_fn", [("inputs", "d1"), ("d1", "d2"), ("d2", "out")]),
    (nested_two_inputs, "inner_fn", [("inputs", "dx"), ("extra", "d1"), ("dx", "cat"),
                                     ("d1", "cat"), ("cat", "out")]),
])
@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_nested_models_are_flattened_into_editable_layers_and_round_trip(tmp_path, build,
                                                                          holder, edges, suffix):
    model = build()
    project, weights = round_trip_with_weights(model, tmp_path / f"nested{suffix}")
    graph = project.graph
    assert sorted(graph.edges) == sorted(edges)
    assert graph.ids()[0] == "inputs" and graph.ids()[-1] == "out"
    assert all(node.type != OPAQUE_TYPE for node in graph.nodes)
    d1 = model.get_layer(holder).get_layer("d1")  # the layer nested in ``holder``
    for ours, theirs in zip(weights["d1"], d1.get_weights(), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    assert not analyze(graph).problems


def _shared_nested(inputs):
    inner = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4, name="d")], name="inner")
    return inner(inner(inputs))


def _two_outputs(inputs, used):
    x = keras.Input((4,))
    inner = keras.Model(x, [keras.layers.Dense(2, name="a")(x), keras.layers.Dense(3, name="b")(x)],
                        name="inner")
    return keras.layers.Dense(2, name="out")(inner(inputs)[used])


@pytest.mark.parametrize(("build", "words"), [
    (_shared_nested, "layer inner is used 2 times (shared weights); each Layer Studio layer is "
                     "used once."),
    (lambda inputs: _two_outputs(inputs, 0),
     "nested model inner has 2 outputs; Layer Studio flattens only nested models with one "
     "output."),
    (lambda inputs: _two_outputs(inputs, 1),
     "the model uses output 2 of layer inner; Layer Studio layers have one output."),
])
def test_nested_models_that_cannot_be_flattened_are_refused_in_one_line(tmp_path, build,
                                                                        words):
    inputs = keras.Input((4,))
    keras.Model(inputs, build(inputs)).save(tmp_path / "m.keras")
    with pytest.raises(ImportFailure) as failure:
        import_model(tmp_path / "m.keras")
    assert str(failure.value) == f"m.keras: {words}"


def test_a_sequential_model_becomes_a_chain(tmp_path):
    model = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Flatten(),
                              keras.layers.Dense(10, activation="softmax")])
    project = round_trip(model, tmp_path / "seq.keras")
    assert project.graph.chain() is not None
    assert [n.type for n in project.graph.nodes] == ["Input", "Flatten", "Dense"]
    assert analyze(project.graph, _mnist()).ok


def _mnist():
    from studio.core.data.bundled import MNIST_10K

    return MNIST_10K


@pytest.mark.parametrize(
    "layer",
    [
        lambda: keras.layers.Conv2D(4, 3, dilation_rate=2),
        lambda: keras.layers.Conv2D(4, 3, kernel_initializer=keras.initializers.HeNormal(7)),
        lambda: keras.layers.Conv2D(4, 3, kernel_regularizer=keras.regularizers.L1L2(0.1, 0.2)),
        lambda: keras.layers.Conv2D(4, 3, kernel_initializer=keras.initializers.VarianceScaling(3)),
        lambda: keras.layers.Conv2D(4, 3, bias_regularizer="l2"),
        lambda: keras.layers.Conv2D(6, 3, groups=3),
        lambda: keras.layers.Conv2DTranspose(4, 3, strides=2, output_padding=1),
        lambda: keras.layers.Dense(4, activation="swish"),
        lambda: keras.layers.BatchNormalization(center=False),
        lambda: keras.layers.Resizing(4, 4, pad_to_aspect_ratio=True),
    ],
)
def test_settings_the_registry_cannot_express_keep_the_layer_opaque(tmp_path, layer):
    inputs = keras.Input((8, 8, 3))
    original = layer()
    model = keras.Model(inputs, original(inputs))
    project = round_trip(model, tmp_path / "m.keras")
    node = project.graph.nodes[-1]
    assert node.type == OPAQUE_TYPE
    assert node.params["class_name"] == type(original).__name__
    assert node.params["input_shapes"] == [[8, 8, 3]]
    assert node.params["output_shape"] == list(original.output.shape[1:])
    rebuilt = build_keras_model(project.graph).get_layer(node.id)
    assert {**rebuilt.get_config(), "name": original.name} == original.get_config()


KERNEL_DEFAULTS = {"kernel_initializer": "glorot_uniform", "kernel_regularizer": "none",
                   "kernel_regularizer_factor": 0.01}


@pytest.mark.parametrize(
    ("layer", "params"),
    [
        (lambda: keras.layers.Conv2D(4, 3, strides=(2, 1)), {"strides": [2, 1]}),
        (lambda: keras.layers.Conv2D(4, (3, 5)), {"kernel_size": [3, 5]}),
        (lambda: keras.layers.Conv2D(4, 3, kernel_regularizer="l2"),
         {"kernel_regularizer": "l2", "kernel_regularizer_factor": 0.01}),
        (lambda: keras.layers.Conv2D(4, 3, kernel_regularizer=keras.regularizers.L2(1e-4)),
         {"kernel_regularizer": "l2", "kernel_regularizer_factor": 1e-4}),
        (lambda: keras.layers.Conv2D(4, 3, kernel_regularizer=keras.regularizers.L1L2(3e-4,
                                                                                      3e-4)),
         {"kernel_regularizer": "l1_l2", "kernel_regularizer_factor": 3e-4}),
        (lambda: keras.layers.Conv2D(4, 3, kernel_initializer="he_normal"),
         {"kernel_initializer": "he_normal"}),
        (lambda: keras.layers.Conv2D(4, 3, kernel_initializer=keras.initializers.Orthogonal()),
         {"kernel_initializer": "orthogonal"}),
        (lambda: keras.layers.Dense(4, kernel_regularizer=keras.regularizers.L1(0.05)),
         {"kernel_regularizer": "l1", "kernel_regularizer_factor": 0.05}),
        (lambda: keras.layers.MaxPooling2D(2, strides=(1, 2)), {"strides": [1, 2]}),
        (lambda: keras.layers.AveragePooling2D((3, 1)), {"pool_size": [3, 1], "strides": [3, 1]}),
    ],
)
def test_per_axis_sizes_initializers_and_regularizers_import_as_editable_layers(
        tmp_path, layer, params):
    inputs = keras.Input((8, 8, 3))
    original = layer()
    model = keras.Model(inputs, original(inputs))
    project = round_trip(model, tmp_path / "m.keras")
    node = project.graph.nodes[-1]
    assert node.type == type(original).__name__
    expected = {**(KERNEL_DEFAULTS if "kernel_initializer" in node.params else {}), **params}
    imported = {key: node.params[key] for key in expected}
    if "kernel_regularizer_factor" in imported:  # Keras keeps an L1 factor as a 32-bit float
        imported["kernel_regularizer_factor"] = float(
            f"{imported['kernel_regularizer_factor']:.7g}")
    assert imported == expected
    rebuilt = build_keras_model(project.graph).get_layer(node.id)
    assert {**rebuilt.get_config(), "name": original.name} == original.get_config()


def test_a_channels_first_layer_stays_opaque(tmp_path):
    inputs = keras.Input((3, 8, 8))
    model = keras.Model(inputs, keras.layers.Conv2D(4, 3, data_format="channels_first")(inputs))
    model.save(tmp_path / "m.keras")
    node = import_model(tmp_path / "m.keras").graph.nodes[-1]
    assert node.type == OPAQUE_TYPE
    assert node.params["config"]["data_format"] == "channels_first"
    assert node.params["output_shape"] == [4, 6, 6]


def test_a_lambda_layer_is_refused_unless_trusted(tmp_path):
    path = tmp_path / "model.keras"
    lambda_model().save(path)
    with pytest.raises(ImportFailure) as refused:
        import_model(path)
    assert str(refused.value) == (
        "model.keras contains a Lambda layer (lambda_1), which holds Python code. Layer Studio "
        "does not run code from files unless you trust the file."
    )
    project = import_model(path, trust=True)
    node = project.graph.node("lambda_1")
    assert node.type == OPAQUE_TYPE and node.params["class_name"] == "Lambda"
    assert "Lambda layer holds Python code" in analyze(project.graph).problem_at("lambda_1")
    with pytest.raises(ModelError, match="^lambda_1: This imported Lambda layer holds Python "
                                         "code, which Layer Studio does not run"):
        build_keras_model(project.graph)


def test_a_lambda_in_a_legacy_h5_file_is_refused(tmp_path):
    path = tmp_path / "model.h5"
    lambda_model().save(path)
    with pytest.raises(ImportFailure, match=r"^model\.h5 contains a Lambda layer \(lambda_1\)"):
        import_model(path)


def test_a_shared_layer_is_refused(tmp_path):
    inputs = keras.Input((4,))
    shared = keras.layers.Dense(4, name="shared")
    model = keras.Model(inputs, shared(shared(inputs)))
    model.save(tmp_path / "m.keras")
    with pytest.raises(ImportFailure, match=r"^m\.keras: layer shared is used 2 times"):
        import_model(tmp_path / "m.keras")


def test_an_output_that_also_feeds_a_layer_is_refused(tmp_path):
    inputs = keras.Input((4,))
    first = keras.layers.Dense(4, name="first")(inputs)
    model = keras.Model(inputs, [first, keras.layers.Dense(2, name="second")(first)])
    model.save(tmp_path / "m.keras")
    with pytest.raises(ImportFailure, match="layer first is both an output and the input of "
                                            "second"):
        import_model(tmp_path / "m.keras")


@pytest.mark.parametrize(
    ("used", "words"),
    [(0, "layer lstm has several outputs; Layer Studio layers have one."),
     (1, "the model uses output 2 of layer lstm; Layer Studio layers have one output.")],
)
def test_layers_with_several_outputs_are_refused(tmp_path, used, words):
    inputs = keras.Input((5, 3))
    outputs = keras.layers.LSTM(4, return_state=True, name="lstm")(inputs)
    keras.Model(inputs, keras.layers.Dense(2)(outputs[used])).save(tmp_path / "m.keras")
    with pytest.raises(ImportFailure) as failure:
        import_model(tmp_path / "m.keras")
    assert str(failure.value) == f"m.keras: {words}"


def test_recurrent_layers_and_dropout_round_trip(tmp_path):
    inputs = keras.Input((5, 3))
    hidden = keras.layers.LSTM(4, return_sequences=True, name="lstm")(inputs)
    hidden = keras.layers.Dropout(0.3, name="drop")(keras.layers.GRU(3, name="gru")(hidden))
    project = round_trip(keras.Model(inputs, hidden), tmp_path / "rnn.keras")
    assert [n.type for n in project.graph.nodes] == ["Input", "LSTM", "GRU", "Dropout"]


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda x: keras.layers.Dense(2, name="dense")(x * 2.0),
         r"the model applies the operation Multiply \(multiply\) outside any layer"),
        (lambda x: keras.layers.GRU(2, name="gru")(
            keras.layers.Embedding(9, 3, mask_zero=True)(x)),
         "the model applies the operation NotEqual"),
    ],
)
def test_operations_outside_layers_are_refused(tmp_path, build, words):
    inputs = keras.Input((5,))
    keras.Model(inputs, build(inputs)).save(tmp_path / "m.keras")
    with pytest.raises(ImportFailure, match=words):
        import_model(tmp_path / "m.keras")


def test_variable_sizes_are_refused(tmp_path):
    inputs = keras.Input((None, 3), name="tokens")
    keras.Model(inputs, keras.layers.Dense(2)(inputs)).save(tmp_path / "m.keras")
    with pytest.raises(ImportFailure, match=r"input tokens has a size that varies \(\? × 3\)"):
        import_model(tmp_path / "m.keras")


def _weights_only(tmp_path):
    path = tmp_path / "w.weights.h5"
    keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]).save_weights(path)
    return path.rename(tmp_path / "w.h5")


def _zip_without_config(tmp_path):
    path = tmp_path / "empty.keras"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("metadata.json", "{}")
    return path


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda tmp: tmp / "missing.keras", "missing.keras: the file does not exist."),
        (lambda tmp: _write(tmp / "notes.txt", "hello"), "notes.txt: not a Keras model file."),
        (lambda tmp: _write(tmp / "junk.keras", "not a zip"), "junk.keras: not a readable "
                                                              "Keras model file"),
        (lambda tmp: _write(tmp / "junk.h5", "not hdf5"), "junk.h5: not a readable Keras"),
        (_zip_without_config, "empty.keras: not a readable Keras model file"),
        (_weights_only, "w.h5: the file holds no model, only weights."),
        *BROKEN_MODEL_FILES,
    ],
)
def test_unreadable_files_are_explained(tmp_path, make, words):
    with pytest.raises(ImportFailure) as failure:
        import_model(make(tmp_path))
    assert str(failure.value).startswith(words)
    assert "\n" not in str(failure.value)


def test_a_model_keras_cannot_load_is_explained(tmp_path):
    path = tmp_path / "custom.keras"
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, name="dense")])
    model.save(path)
    rewrite_archive(path, "config.json", lambda text: text.replace(b'"Dense"', b'"NoSuchLayer"'))
    with pytest.raises(ImportFailure) as failure:
        import_model(path)
    assert str(failure.value) == (
        "custom.keras: layer dense (NoSuchLayer) is of a class Keras does not know: it was "
        "saved from custom Python code, which is not in the file.")


def _write(path, text):
    path.write_text(text)
    return path
