"""The imported model answers without training: Keras's own model, Try's predictor,
``studio infer`` and the exported .keras give the same answers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from studio.cli import main
from studio.core.inference.predictor import Predictor
from studio.core.project.document import DatasetChoice, load_project, save_project
from studio.core.runs.folders import runs_root
from studio.core.runs.history import read_run
from studio.core.training.imported_model import find_imported_run, imported_model_run
from studio.core.training.trainer import TrainingError
from tests.helpers import digit_folder

CLASSES = ["0", "1"]


def grey_model():
    """A small classifier of 20 × 20 grey images, its weights random but fixed."""
    import keras

    keras.utils.set_random_seed(3)
    inputs = keras.Input((20, 20, 1), name="image")
    x = keras.layers.Conv2D(4, 3, activation="relu", name="conv")(inputs)
    x = keras.layers.Flatten(name="flat")(x)
    return keras.Model(inputs, keras.layers.Dense(2, activation="softmax", name="out")(x))


@pytest.fixture
def imported(tmp_path):
    """``grey_model`` imported with ``studio import``, set to read a folder of digits."""
    model = grey_model()
    model.save(tmp_path / "grey.keras")
    path = tmp_path / "grey.studio.json"
    assert main(["import", str(tmp_path / "grey.keras"), "-o", str(path)]) == 0
    project = load_project(path)
    project.dataset = DatasetChoice(source="folder", path=str(digit_folder(tmp_path / "digits")),
                                    image_size=[20, 20], color="grayscale")
    save_project(project, path)
    return path, model


def test_every_way_of_answering_gives_the_keras_models_answer(imported, tmp_path, capsys):
    path, model = imported
    image = tmp_path / "digits" / "1" / "3.png"
    pixels = np.asarray(Image.open(image), np.float32)[None, :, :, None] / 255.0
    expected = model.predict(pixels, verbose=0)[0]

    run = imported_model_run(load_project(path), runs_root(path))
    assert run.run_dir.name.endswith("imported-model") and read_run(run.run_dir).epochs == 0
    predictor = Predictor.load(run.run_dir)
    tried = predictor.outputs(predictor.model_inputs([image]))[0]
    assert np.abs(tried - expected).max() < 1e-5

    capsys.readouterr()
    assert main(["infer", str(path), str(image), "--json"]) == 0
    (answer,) = json.loads(capsys.readouterr().out)
    inferred = dict(zip(answer["labels"], answer["probabilities"], strict=True))
    assert np.abs(np.array([inferred[c] for c in CLASSES]) - expected).max() < 1e-5

    assert main(["export", str(path), "--format", "keras", "-o", str(tmp_path / "out")]) == 0
    import keras

    exported = keras.saving.load_model(tmp_path / "out" / "model.keras", compile=False)
    assert np.abs(exported.predict(pixels, verbose=0)[0] - expected).max() < 1e-5
    assert len(list(runs_root(path).iterdir())) == 1  # infer and export reused the run


def test_an_edit_or_new_weights_make_a_new_imported_model_run(imported):
    path, _ = imported
    project = load_project(path)
    run = imported_model_run(project, runs_root(path))
    assert find_imported_run(project, runs_root(path)) == run.run_dir
    project.graph.node("out").params["activation"] = "linear"
    assert find_imported_run(project, runs_root(path)) is None
    project = load_project(path)
    project.weights.sha256 = "0" * 64
    assert find_imported_run(project, runs_root(path)) is None


def test_a_project_without_imported_weights_is_refused_in_one_line(tmp_path, capsys):
    from studio.core.project.templates import demo_project

    save_project(demo_project(), tmp_path / "demo.studio.json")
    assert main(["infer", str(tmp_path / "demo.studio.json"), str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no imported weights" in err
    with pytest.raises(TrainingError):
        imported_model_run(demo_project(), tmp_path)
