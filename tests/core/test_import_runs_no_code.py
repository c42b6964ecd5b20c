"""Importing a model runs no code from the file, trusted or not: a Lambda layer's function is
never loaded, its output shape is read from the file, and the other layers keep their weights."""

from __future__ import annotations

import json
import zipfile

import h5py
import keras
import numpy as np
import pytest

from studio.core.build.keras_import import CodeRefused, ImportFailure, import_model_with_weights
from studio.core.build.keras_model import ModelError, build_keras_model
from studio.core.model.layers import OPAQUE_TYPE
from tests.keras_models import marker_lambda


def functional(marker):
    inputs = keras.Input((4,), name="x")
    hidden = keras.layers.Dense(3, name="d1")(inputs)
    return keras.Model(inputs, keras.layers.Dense(2, name="d2")(marker_lambda(marker)(hidden)))


def sequential(marker):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="d1"),
                             marker_lambda(marker), keras.layers.Dense(2, name="d2")])


def nested(marker):
    inner = keras.Sequential([keras.Input((3,)), marker_lambda(marker),
                              keras.layers.Dense(3, name="d9")], name="inner")
    inputs = keras.Input((4,), name="x")
    hidden = keras.layers.Dense(3, name="d1")(inputs)
    return keras.Model(inputs, keras.layers.Dense(2, name="d2")(inner(hidden)))


def saved(model, path, marker):
    """Save ``model``; building it may have run the lambda, so the marker is removed."""
    model.save(path)
    marker.unlink(missing_ok=True)
    return path


def stored_layers(path):
    if path.suffix == ".keras":
        with zipfile.ZipFile(path) as archive:
            config = json.loads(archive.read("config.json"))
    else:
        with h5py.File(path) as h5:
            config = json.loads(h5.attrs["model_config"])
    return {entry["config"]["name"]: entry for entry in config["config"]["layers"]}


@pytest.mark.parametrize(("build", "suffix"), [(functional, ".keras"), (functional, ".h5"),
                                               (sequential, ".keras")])
def test_a_trusted_lambda_is_imported_without_running(tmp_path, build, suffix):
    marker = tmp_path / "ran"
    model = build(marker)
    path = saved(model, tmp_path / f"model{suffix}", marker)
    with pytest.raises(CodeRefused):
        import_model_with_weights(path)
    project, weights = import_model_with_weights(path, trust=True)
    assert not marker.exists()
    node = project.graph.node("lam")
    assert node.type == OPAQUE_TYPE
    assert node.params["class_name"] == "Lambda"
    assert node.params["config"] == stored_layers(path)["lam"]["config"]
    assert node.params["output_shape"] == [3] and node.params["param_count"] == 0
    assert project.graph.inputs_of("d2") == ["lam"]
    for name in ("d1", "d2"):
        for ours, theirs in zip(weights[name], model.get_layer(name).get_weights(), strict=True):
            np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(ModelError, match="^lam: This imported Lambda layer holds Python code"):
        build_keras_model(project.graph)
    assert not marker.exists()
    model(np.ones((1, 4), np.float32))  # running the original model does write the marker
    assert marker.exists()


def test_a_lambda_in_a_nested_model_is_imported_without_running(tmp_path):
    marker = tmp_path / "ran"
    model = nested(marker)
    path = saved(model, tmp_path / "nested.keras", marker)
    project, weights = import_model_with_weights(path, trust=True)
    node = project.graph.node("lam")  # the nested model is flattened: the Lambda is a node
    assert node.type == OPAQUE_TYPE and node.params["output_shape"] == [3]
    assert node.params["class_name"] == "Lambda"
    assert node.params["config"] == stored_layers(path)["inner"]["config"]["layers"][1]["config"]
    assert project.graph.inputs_of("lam") == ["d1"] and project.graph.inputs_of("d9") == ["lam"]
    for ours, theirs in zip(weights["d9"], model.get_layer("inner").get_layer("d9").get_weights(),
                            strict=True):
        np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(ModelError, match="^lam: This imported Lambda layer holds Python code"):
        build_keras_model(project.graph)
    assert not marker.exists()


def output_lambda(marker, **settings):
    inputs = keras.Input((4,), name="x")
    return keras.Model(inputs, marker_lambda(marker, **settings)(inputs))


@pytest.mark.parametrize("build", [sequential, output_lambda])
def test_a_lambda_whose_shape_is_recorded_nowhere_is_refused(tmp_path, build):
    """A legacy .h5 Sequential records no shapes between layers; a model's output has no
    consumer recording its shape."""
    marker = tmp_path / "ran"
    path = saved(build(marker), tmp_path / "model.h5", marker)
    with pytest.raises(ImportFailure) as refused:
        import_model_with_weights(path, trust=True)
    assert str(refused.value) == (
        "model.h5: the output shape of Lambda layer lam is not recorded in the file, and Layer "
        "Studio does not run its code to find it.")
    assert not marker.exists()


def test_the_shape_set_on_a_lambda_is_used(tmp_path):
    marker = tmp_path / "ran"
    path = saved(output_lambda(marker, output_shape=(4,)), tmp_path / "model.keras", marker)
    project, _ = import_model_with_weights(path, trust=True)
    assert project.graph.node("lam").params["output_shape"] == [4]
    assert not marker.exists()
