"""The rewriting of Keras 2 model configs for Keras 3: each known legacy form, configs Keras 3
wrote left as they are, and what cannot be rewritten refused naming the layer and key."""

from __future__ import annotations

import copy
import json
import zipfile

import h5py
import pytest

from studio.core.build.legacy_config import LegacyRefused, modernised
from tests.keras2_files import (
    POLICY,
    batch_norm,
    conv2d,
    dense,
    depthwise,
    functional,
    input_layer,
    sequential,
)
from tests.keras_models import branched_model, two_input_model


def inner(entry):
    return entry["config"]


def test_keras_2_layer_settings_become_what_keras_3_reads():
    stored = functional("f", [(input_layer("image", (8, 8, 3)), []),
                              (depthwise("dw", dtype=POLICY), ["image"]),
                              (batch_norm("bn"), ["dw"])], "bn", class_name="Model")
    before = copy.deepcopy(stored)
    rewritten = modernised(stored, modules=False)
    assert stored == before  # the stored config is read, never changed
    image, dw, bn = inner(rewritten)["layers"]
    assert rewritten["class_name"] == "Functional"
    assert "batch_input_shape" not in inner(image) and inner(image)["batch_shape"] == [
        None, 8, 8, 3]
    assert "groups" not in inner(dw) and inner(dw)["dtype"] == "float32"
    assert inner(bn)["axis"] == 3
    assert inner(rewritten)["input_layers"] == ["image", 0, 0]  # one input, not a list of one
    assert inner(rewritten)["output_layers"] == ["bn", 0, 0]


def test_initializers_get_the_module_keras_3_archives_name():
    conv = conv2d("conv", 4, 3, regularizer={"class_name": "L2", "config": {"l2": 0.1}})
    legacy_h5 = inner(modernised(conv, modules=False))
    assert legacy_h5["kernel_initializer"] == {"class_name": "VarianceScaling", "config": {
        "scale": 2.0, "mode": "fan_in", "distribution": "truncated_normal", "seed": None}}
    archive = modernised(conv, modules=True)
    assert (archive["module"], archive["registered_name"]) == ("keras.layers", None)
    assert inner(archive)["kernel_initializer"]["module"] == "keras.initializers"
    assert inner(archive)["kernel_regularizer"] == {
        "class_name": "L2", "config": {"l2": 0.1}, "module": "keras.regularizers",
        "registered_name": None}
    engine = {"module": "keras.engine.functional", "class_name": "Functional",
              "config": inner(functional("f", [(input_layer("x", (2,)), [])], "x")),
              "registered_name": "Functional"}
    assert modernised(engine, modules=True)["module"] == "keras"


def test_a_sequential_input_shape_moves_to_an_input_layer_of_its_own():
    head = sequential("head", [dense("d1", 4, "relu", batch_input_shape=[None, 6]),
                               dense("d2", 2, "softmax", batch_input_shape=[None, 4])])
    layers = inner(modernised(head, modules=False))["layers"]
    assert [entry["class_name"] for entry in layers] == ["InputLayer", "Dense", "Dense"]
    assert inner(layers[0]) == {"batch_shape": [None, 6], "dtype": "float32",
                                "name": "d1_input"}
    assert not any("batch_input_shape" in inner(entry) for entry in layers[1:])
    # a nested model's own input gives the outer Sequential its input, as in Keras 2
    outer = sequential("outer", [functional("base", [(input_layer("x", (5,)), [])], "x"), head])
    first = inner(modernised(outer, modules=False))["layers"][0]
    assert inner(first) == {"batch_shape": [None, 5], "dtype": "float32", "name": "base_input"}


def test_a_depthwise_convolution_with_groups_is_refused():
    entry = depthwise("dw")
    inner(entry)["groups"] = 3
    with pytest.raises(LegacyRefused, match=r"^layer dw \(DepthwiseConv2D\) has the setting "
                                            r"'groups' = 3, which a depthwise convolution "
                                            r"cannot have\.$"):
        modernised(sequential("s", [entry]), modules=False)


@pytest.mark.parametrize("build", [branched_model, two_input_model])
def test_configs_keras_3_wrote_are_left_as_they_are(tmp_path, build):
    model = build()
    model.save(tmp_path / "model.keras")
    model.save(tmp_path / "model.h5")
    with zipfile.ZipFile(tmp_path / "model.keras") as archive:
        archived = json.loads(archive.read("config.json"))
    with h5py.File(tmp_path / "model.h5") as h5:
        legacy = json.loads(h5.attrs["model_config"])
    assert modernised(archived, modules=True) == archived
    assert modernised(legacy, modules=False) == legacy
