"""An edit that changes a layer's weight shapes drops that layer's imported weights only,
told without TensorFlow; the shape rules are checked against Keras."""

from __future__ import annotations

import numpy as np
import pytest

from studio.core.build.analysis import analyze
from studio.core.build.imported_weights import apply_imported_weights
from studio.core.build.keras_model import build_keras_model, keras_layer
from studio.core.build.weight_shapes import imported_weights_note, weight_shapes
from studio.core.model.graph import Node
from tests.keras_models import imported_branched

CASES = [
    (Node("d", "Dense", {"units": 7}), (5,)),
    (Node("d", "Dense", {"units": 3, "use_bias": False}), (4, 6)),
    (Node("c", "Conv2D", {"filters": 8, "kernel_size": 5}), (12, 12, 3)),
    (Node("c", "Conv2D", {"filters": 2, "kernel_size": 1, "use_bias": False}), (6, 6, 4)),
    (Node("b", "BatchNormalization", {}), (6, 6, 5)),
    (Node("e", "Embedding", {"input_dim": 50, "output_dim": 8}), (10,)),
    (Node("l", "LSTM", {"units": 6}), (10, 4)),
    (Node("g", "GRU", {"units": 5}), (10, 3)),
]


@pytest.mark.parametrize(("node", "shape"), CASES, ids=[n.type for n, _ in CASES])
def test_weight_shapes_are_those_keras_gives(node, shape):
    layer = keras_layer(node)
    layer.build((None, *shape))
    expected = [(w.name, tuple(w.shape)) for w in layer.weights]
    assert weight_shapes(node, [shape]) == expected


def test_weights_are_none_where_known_and_unknown_without_keras():
    assert weight_shapes(Node("i", "Input", {"shape": [4]}), []) == []
    assert weight_shapes(Node("f", "Flatten", {}), [(3, 4)]) == []
    assert weight_shapes(Node("m", "Application", {"name": "MobileNetV2"}), [(96, 96, 3)]) is None
    opaque = Node("k", "Keras", {"class_name": "Foo", "config": {}, "input_shapes": [[4]],
                                 "output_shape": [4], "param_count": 20})
    assert weight_shapes(opaque, [(4,)]) is None


@pytest.fixture
def imported(tmp_path):
    return imported_branched(tmp_path)


def notes(project):
    analysis = analyze(project.graph)
    return {node: imported_weights_note(project, analysis, node) for node in project.graph.ids()}


def test_an_edit_drops_the_weights_of_the_layers_whose_shapes_change_only(imported):
    project, model = imported
    before = notes(project)
    assert before["left"] == before["hidden"] == "Imported weights: kept."
    assert before["image"] == before["add"] == ""  # no weights to keep
    project.graph.node("left").params["kernel_size"] = 5  # padding same: same output shape
    after = notes(project)
    assert after["left"] == ("Imported weights dropped: the kernel is now 5 × 5 × 3 × 4; "
                             "this layer starts from random weights.")
    assert {n: t for n, t in after.items() if n != "left"} == \
        {n: t for n, t in before.items() if n != "left"}

    rebuilt = build_keras_model(project.graph, project.name)
    assert apply_imported_weights(rebuilt, project) == ["left"]
    for name in ("right", "hidden", "out", "bn"):
        for ours, theirs in zip(rebuilt.get_layer(name).get_weights(),
                                model.get_layer(name).get_weights(), strict=True):
            np.testing.assert_array_equal(ours, theirs)


def test_a_wider_layer_drops_its_own_weights_and_those_it_feeds(imported):
    project, _ = imported
    project.graph.node("hidden").params["units"] = 9
    after = notes(project)
    assert after["hidden"].startswith("Imported weights dropped: the kernel is now ")
    assert after["out"] == ("Imported weights dropped: the kernel is now 9 × 10; this layer "
                            "starts from random weights.")
    assert after["left"] == "Imported weights: kept."


def test_telling_which_weights_are_kept_loads_no_tensorflow(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from studio.core.build.analysis import analyze\n"
        "from studio.core.build.weight_shapes import imported_weights_note\n"
        "from studio.core.project.document import load_project\n"
        f"project = load_project({str(tmp_path / 'p.studio.json')!r})\n"
        "analysis = analyze(project.graph)\n"
        "print(imported_weights_note(project, analysis, 'dense_1'))\n"
        "print(sorted({'tensorflow', 'keras', 'h5py'} & set(sys.modules)))\n"
    )
    from studio.core.project.document import save_project
    from studio.core.project.weights import ImportedWeights
    from tests.helpers import tiny_project

    project = tiny_project()
    project.weights = ImportedWeights(str(tmp_path / "p.weights.h5"), "0" * 64,
                                      {"dense_1": [[784, 10], [10]]})
    save_project(project, tmp_path / "p.studio.json")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout
    assert shown == "Imported weights: kept.\n[]\n"
