"""Files Keras 2.x wrote (see tests/keras2_files.py: .h5 files, and a .keras archive whose
weights lie where Keras 3 does not look for them) open in Keras 3's safe mode: they load,
answer an image as the model they hold does, import as a graph with their weights, and are
answered by ``studio infer``; what cannot open says which layer and which key, in one line."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
from PIL import Image

from studio.cli import main
from studio.core.build.keras_import import (
    ImportFailure,
    apply_weights,
    import_model_with_weights,
    load_model_file,
)
from studio.core.build.keras_model import build_keras_model
from studio.core.inference.predictor import ModelFileError, Predictor, image_preprocessing
from studio.core.project.document import DatasetChoice, load_project, save_project
from tests.keras2_files import functional_h5, keras2_archive, relu6, teachable_machine_h5
from tests.keras_models import rewrite_archive

KERAS_2_FILES = {
    "teachable-machine": teachable_machine_h5,
    "functional": functional_h5,
    "model-class": lambda folder: functional_h5(folder, "Model"),
    "keras-2-archive": keras2_archive,
}


@pytest.fixture(params=list(KERAS_2_FILES))
def keras2(request, tmp_path):
    return KERAS_2_FILES[request.param](tmp_path)


def image_file(tmp_path, shape, seed=0):
    """A random RGB PNG of the model's input size."""
    pixels = np.random.default_rng(seed).integers(0, 256, (*shape[:2], 3), dtype=np.uint8)
    path = tmp_path / "image.png"
    Image.fromarray(pixels).save(path)
    return path


def prep_for(keras2):
    return image_preprocessing(keras2.input_shape, "rgb", "unit", class_names=["a", "b", "c"])


def test_a_keras_2_file_loads_and_answers_an_image_as_its_model_does(keras2, tmp_path):
    model = load_model_file(keras2.path)
    predictor = Predictor.load(keras2.path, prep_for(keras2))
    x = predictor.model_inputs([image_file(tmp_path, keras2.input_shape)])
    expected = np.asarray(keras2.reference(x))
    assert np.abs(np.asarray(model(x)) - expected).max() < 1e-5
    assert np.abs(predictor.outputs(x) - expected).max() < 1e-5
    # the reference's weights are random: answers this close mean every weight was read
    assert np.abs(expected - np.asarray(keras2.reference.__class__.from_config(
        keras2.reference.get_config())(x))).max() > 1e-3


def test_a_keras_2_file_imports_as_a_graph_with_its_weights(keras2, tmp_path):
    project, weights = import_model_with_weights(keras2.path)
    rebuilt = build_keras_model(project.graph, project.name)
    apply_weights(rebuilt, weights)
    x = np.random.default_rng(1).random((2, *keras2.input_shape), dtype=np.float32)
    assert np.abs(np.asarray(rebuilt(x)) - np.asarray(keras2.reference(x))).max() < 1e-5
    assert rebuilt.count_params() == keras2.reference.count_params()


TEACHABLE_NODES = [
    ("sequential_1_input", "Input"), ("Conv1_pad", "ZeroPadding2D"), ("Conv1", "Conv2D"),
    ("bn_Conv1", "BatchNormalization"), ("Conv1_relu", "ReLU"),
    ("expanded_conv_depthwise", "DepthwiseConv2D"),
    ("expanded_conv_depthwise_BN", "BatchNormalization"),
    ("expanded_conv_depthwise_relu", "ReLU"), ("expanded_conv_project", "Conv2D"),
    ("expanded_conv_project_BN", "BatchNormalization"),
    ("global_average_pooling2d_GlobalAveragePooling2D1", "GlobalAveragePooling2D"),
    ("dense_Dense1", "Dense"), ("dense_Dense2", "Dense")]
"""The Teachable Machine file's layers, its nested models flattened, every one editable (its
convolutions' VarianceScaling initializers are read as the he_normal and glorot_uniform they
are)."""


def test_the_teachable_machine_file_imports_its_nested_models_as_one_flat_chain(tmp_path):
    keras2 = teachable_machine_h5(tmp_path)
    project, weights = import_model_with_weights(keras2.path)
    graph = project.graph
    assert [(n.id, n.type) for n in graph.nodes] == TEACHABLE_NODES
    assert graph.chain() is not None
    assert graph.node("Conv1").params["kernel_initializer"] == "he_normal"
    assert graph.node("expanded_conv_depthwise").params["depthwise_initializer"] == (
        "glorot_uniform")
    base = keras2.reference.get_layer("sequential_1").get_layer("model1")
    for ours, theirs in zip(weights["bn_Conv1"], base.get_layer("bn_Conv1").get_weights(),
                            strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_studio_import_and_infer_open_a_keras_2_file(keras2, tmp_path, capsys):
    out = tmp_path / "imported.studio.json"
    assert main(["import", str(keras2.path), "-o", str(out)]) == 0
    assert load_project(out).graph.nodes
    capsys.readouterr()
    image = image_file(tmp_path, keras2.input_shape)
    height, width = keras2.input_shape[:2]
    assert main(["infer", str(keras2.path), str(image), "--json", "--size", str(height),
                 str(width), "--color", "rgb", "--normalization", "unit"]) == 0
    (answer,) = json.loads(capsys.readouterr().out)
    predictor = Predictor.load(keras2.path, prep_for(keras2))
    expected = np.asarray(keras2.reference(predictor.model_inputs([image])))[0]
    assert answer["labels"][0] == str(expected.argmax())
    assert answer["probabilities"][0] == pytest.approx(expected.max(), abs=1e-5)


def test_studio_infer_answers_an_imported_teachable_machine_project_as_its_file(tmp_path,
                                                                              capsys):
    keras2 = teachable_machine_h5(tmp_path)
    project_path = tmp_path / "imported.studio.json"
    assert main(["import", str(keras2.path), "-o", str(project_path)]) == 0
    folder = tmp_path / "classes"
    for index in range(3):  # the classes the project reads, named as infer names the file's
        (folder / str(index)).mkdir(parents=True)
        image_file(tmp_path, keras2.input_shape, seed=index).rename(folder / str(index) / "0.png")
    project = load_project(project_path)
    project.dataset = DatasetChoice(source="folder", path=str(folder), image_size=[16, 16],
                                    color="rgb", normalization="unit")
    save_project(project, project_path)
    image = image_file(tmp_path, keras2.input_shape, seed=7)
    capsys.readouterr()
    answers = []
    for model in ([str(project_path)],
                  [str(keras2.path), "--size", "16", "16", "--color", "rgb",
                   "--normalization", "unit"]):
        assert main(["infer", model[0], str(image), "--json", *model[1:]]) == 0
        (answer,) = json.loads(capsys.readouterr().out)
        answers.append(dict(zip(answer["labels"], answer["probabilities"], strict=True)))
    ours, theirs = answers
    assert sorted(ours) == sorted(theirs) == ["0", "1", "2"]
    assert max(abs(ours[label] - theirs[label]) for label in ours) < 1e-5


TF_OP = {"class_name": "TFOpLambda", "config": {
    "name": "tf.math.multiply", "trainable": True, "dtype": "float32",
    "function": "math.multiply"}}
SLICING = {"class_name": "SlicingOpLambda", "config": {
    "name": "tf.__operators__.getitem", "trainable": True, "dtype": "float32",
    "function": "__operators__.getitem"}}
UNKNOWN_KEY = {"class_name": "ReLU", "config": {**relu6("relu_2")["config"], "clip_mode": "soft"}}
REFUSALS = [
    (TF_OP, "layer tf.math.multiply (TFOpLambda) calls a TensorFlow function (math.multiply), "
            "recorded by Keras 2 as code: Keras 3 cannot rebuild it, and Layer Studio does not "
            "run code from files."),
    (SLICING, "layer tf.__operators__.getitem (SlicingOpLambda) calls a TensorFlow slicing "
              "operation (__operators__.getitem), recorded by Keras 2 as code: Keras 3 cannot "
              "rebuild it, and Layer Studio does not run code from files."),
    (UNKNOWN_KEY, "layer relu_2 (ReLU) has the setting 'clip_mode', which Keras 3 does not "
                  "know."),
]


@pytest.mark.parametrize(("layer", "words"), REFUSALS)
def test_what_keras_3_cannot_rebuild_is_refused_in_one_line(tmp_path, capsys, layer, words):
    path = functional_h5(tmp_path, inserted=layer).path
    with pytest.raises(ImportFailure) as failure:
        import_model_with_weights(path)
    assert str(failure.value) == f"functional.h5: {words}"
    with pytest.raises(ModelFileError) as refused:
        Predictor.load(path, image_preprocessing((8, 8, 3), "rgb", "unit"))
    assert str(refused.value) == f"functional.h5: {words}"
    out = tmp_path / "p.studio.json"
    assert main(["import", str(path), "-o", str(out)]) == 1
    assert capsys.readouterr().err == f"studio: error: functional.h5: {words}\n"
    assert not out.exists()
    image = image_file(tmp_path, (8, 8, 3))
    assert main(["infer", str(path), str(image), "--size", "8", "8", "--color", "rgb",
                 "--normalization", "unit"]) == 2
    out_text, err = capsys.readouterr()
    assert out_text == "" and err == f"studio: error: functional.h5: {words}\n"


def test_an_archive_missing_a_layers_weights_names_the_layer(tmp_path):
    path = keras2_archive(tmp_path).path

    def without_conv2d_2(data: bytes) -> bytes:
        weights = tmp_path / "weights.h5"
        weights.write_bytes(data)
        with h5py.File(weights, "a") as h5:
            del h5["_layer_checkpoint_dependencies/conv2d_2"]
        return weights.read_bytes()

    rewrite_archive(path, "model.weights.h5", without_conv2d_2)
    with pytest.raises(ImportFailure) as failure:
        load_model_file(path)
    assert str(failure.value) == (
        "keras2.keras: Keras cannot load it (layer conv2d_1 has 1 weight, but the file holds "
        "0 for it (at _layer_checkpoint_dependencies/conv2d_2)).")
