"""The opaque ``Keras`` layer type: recorded shapes, project files, and rebuilding with Keras."""

from __future__ import annotations

import copy
import json

import keras
import pytest

from studio.core.build.analysis import analyze
from studio.core.build.keras_model import ModelError, keras_layer
from studio.core.model.graph import Graph, Node
from studio.core.model.layers import OPAQUE_TYPE, LayerError
from studio.core.model.registry import REGISTRY
from studio.core.project.document import Project, ProjectFileError, load_project, save_project

RELU6 = {
    "class_name": "ReLU",
    "config": {"name": "relu6", "trainable": True, "max_value": 6.0, "negative_slope": 0.0,
               "threshold": 0.0},
    "output_shape": [8, 8, 3],
    "param_count": 0,
    "input_shapes": [[8, 8, 3]],
}


def depthwise_params() -> dict:
    """An opaque DepthwiseConv2D with stride 2, recorded from Keras itself."""
    layer = keras.layers.DepthwiseConv2D(3, strides=2, padding="same", name="dw")
    output = layer(keras.Input((9, 9, 4)))
    return {
        "class_name": "DepthwiseConv2D",
        "config": json.loads(json.dumps(layer.get_config())),
        "output_shape": list(output.shape[1:]),
        "param_count": layer.count_params(),
        "input_shapes": [[9, 9, 4]],
    }


def imported_graph(params: dict, shape: list[int]) -> Graph:
    return Graph.from_chain([
        Node("input_1", "Input", {"shape": shape}),
        Node("imported", OPAQUE_TYPE, copy.deepcopy(params)),
    ])


def test_the_recorded_shape_and_count_hold_for_the_recorded_inputs():
    params = depthwise_params()
    assert REGISTRY[OPAQUE_TYPE].output(params, [(9, 9, 4)]) == ((5, 5, 4), 40)
    report = analyze(imported_graph(params, [9, 9, 4]))
    assert report.ok and report.nodes["imported"].output_shape == (5, 5, 4)


def test_other_inputs_are_explained_in_plain_words():
    with pytest.raises(LayerError) as error:
        REGISTRY[OPAQUE_TYPE].output(RELU6, [(28, 28, 1)])
    assert str(error.value) == (
        "This imported ReLU layer was recorded for inputs 8 × 8 × 3; its output for "
        "28 × 28 × 1 is not known without Keras. Give it back the inputs it was imported "
        "with, or replace it with a built-in layer."
    )
    report = analyze(imported_graph(RELU6, [28, 28, 1]))
    assert "recorded for inputs 8 × 8 × 3" in report.problem_at("imported")


def test_an_empty_imported_layer_is_a_problem_not_a_crash(tmp_path):
    graph = imported_graph({}, [8, 8, 3])
    assert "holds no imported Keras layer" in analyze(graph).problem_at("imported")
    path = tmp_path / "p.studio.json"
    save_project(Project(graph=graph), path)
    assert load_project(path).graph.node("imported").params == {}


def test_rebuilding_follows_the_keras_oracle():
    params = depthwise_params()
    node = Node("imported_dw", OPAQUE_TYPE, params)
    layer = keras_layer(node)
    assert type(layer) is keras.layers.DepthwiseConv2D and layer.name == "imported_dw"
    output = layer(keras.Input((9, 9, 4)))
    assert (list(output.shape[1:]), layer.count_params()) == (
        params["output_shape"], params["param_count"])
    assert json.loads(json.dumps({**layer.get_config(), "name": "dw"})) == params["config"]


@pytest.mark.parametrize("class_name", ["InputSpec", "deserialize", "NoSuchLayer"])
def test_only_built_in_keras_layers_are_rebuilt(class_name):
    with pytest.raises(ModelError, match=f"^x: '{class_name}' is not a built-in Keras layer"):
        keras_layer(Node("x", OPAQUE_TYPE, {**RELU6, "class_name": class_name}))


def test_a_lambda_layer_is_a_problem_and_keras_refuses_its_code():
    layer = keras.layers.Lambda(lambda t: t + 1.0, name="add_one")
    params = {**RELU6, "class_name": "Lambda",
              "config": keras.saving.serialize_keras_object(layer)["config"]}
    report = analyze(imported_graph(params, [8, 8, 3]))
    assert report.problem_at("imported") == (
        "This imported Lambda layer holds Python code, which Layer Studio does not run, so "
        "the model cannot be built. Replace it with built-in layers."
    )
    with pytest.raises(ModelError, match="^x: the imported Lambda layer cannot be rebuilt "
                                         r"\(Requested the deserialization of a `Lambda`"):
        keras_layer(Node("x", OPAQUE_TYPE, params))


def test_a_config_keras_refuses_is_a_model_error():
    params = {**RELU6, "config": {"max_value": "six"}}
    with pytest.raises(ModelError, match="^x: the imported ReLU layer cannot be rebuilt"):
        keras_layer(Node("x", OPAQUE_TYPE, params))


def _document(params: dict) -> dict:
    return Project(graph=imported_graph(params, [8, 8, 3])).to_dict()


def test_project_files_keep_imported_layers(tmp_path):
    project = Project(graph=imported_graph(RELU6, [8, 8, 3]))
    path = tmp_path / "p.studio.json"
    save_project(project, path)
    assert load_project(path).graph.node("imported").params == RELU6


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda p: p.pop("config"), "'config' is a required property"),
        (lambda p: p.update(config=[1, 2]), "model/nodes/1/params/config"),
        (lambda p: p.update(output_shape=[8, 0]), "model/nodes/1/params/output_shape/1"),
        (lambda p: p.update(param_count=-1), "model/nodes/1/params/param_count"),
        (lambda p: p.update(input_shapes=[]), "model/nodes/1/params/input_shapes"),
        (lambda p: p.update(class_name="os.system"), "model/nodes/1/params/class_name"),
        (lambda p: p.update(extra=1), "at model/nodes/1/params: unexpected key 'extra'"),
    ],
)
def test_imported_params_are_validated(tmp_path, mutate, where):
    document = _document(RELU6)
    mutate(document["model"]["nodes"][1]["params"])
    path = tmp_path / "p.studio.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ProjectFileError, match=where):
        load_project(path)


def test_other_layers_still_refuse_objects_as_params(tmp_path):
    document = _document(RELU6)
    document["model"]["nodes"][0]["params"]["shape"] = {"height": 8}
    path = tmp_path / "p.studio.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ProjectFileError, match="model/nodes/0/params/shape"):
        load_project(path)
