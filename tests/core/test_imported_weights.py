"""Imported models keep their weights: in an HDF5 file beside the project, named and hashed
in it, written atomically, and given back to a model built from the project."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from studio.cli import main
from studio.core.build import imported_weights
from studio.core.build.imported_weights import apply_imported_weights, save_imported
from studio.core.build.keras_import import import_model_with_weights
from studio.core.build.keras_model import build_keras_model
from studio.core.project.document import load_project
from studio.core.project.weights import WeightsError, file_sha256, read_weights
from tests.keras_models import branched_model, random_batch


def imported(tmp_path):
    """``branched_model`` saved, imported with ``studio import`` as p.studio.json, and the
    original model."""
    model = branched_model()
    model.save(tmp_path / "branched.keras")
    out = tmp_path / "p.studio.json"
    assert main(["import", str(tmp_path / "branched.keras"), "-o", str(out)]) == 0
    return out, model


def test_studio_import_keeps_the_weights_beside_the_project(tmp_path):
    out, model = imported(tmp_path)
    weights = tmp_path / "p.weights.h5"
    document = json.loads(out.read_text())
    assert document["weights"]["file"] == "p.weights.h5"
    assert document["weights"]["sha256"] == file_sha256(weights)
    assert document["training"]["start_from"] == "imported"
    with h5py.File(weights, "r") as h5:  # plain arrays, nothing pickled
        datasets = []
        h5.visititems(lambda name, item: datasets.append(item)
                      if isinstance(item, h5py.Dataset) else None)
        assert datasets and all(d.dtype.kind == "f" for d in datasets)
        assert list(h5["left"]) == ["0", "1"]
    project = load_project(out)
    assert project.weights.layers["left"] == [[3, 3, 3, 4], [4]]
    rebuilt = build_keras_model(project.graph, project.name)
    assert apply_imported_weights(rebuilt, project) == []
    batch = random_batch(model)
    np.testing.assert_allclose(rebuilt.predict(batch, verbose=0), model.predict(batch, verbose=0),
                               atol=1e-6)


def test_the_weights_are_found_from_anywhere_and_checked_before_use(tmp_path, monkeypatch):
    out, _ = imported(tmp_path)
    monkeypatch.chdir(tmp_path.parent)
    project = load_project(out)
    assert project.weights.path == tmp_path / "p.weights.h5"
    assert set(read_weights(project.weights)) == set(project.weights.layers)

    with h5py.File(project.weights.path, "a") as h5:
        h5["left/1"][0] = 5.0
    with pytest.raises(WeightsError) as changed:
        read_weights(project.weights)
    assert str(changed.value).count("\n") == 0 and "SHA-256 differs" in str(changed.value)

    project.weights.path.unlink()
    with pytest.raises(WeightsError) as missing:
        apply_imported_weights(None, project)
    assert str(missing.value) == (
        f"The imported weights file p.weights.h5 is missing (expected at {tmp_path}); import "
        "the model again, or start from random weights.")


def test_an_existing_weights_file_is_not_overwritten_without_force(tmp_path, capsys):
    branched_model().save(tmp_path / "m.keras")
    (tmp_path / "p.weights.h5").write_text("keep me")
    out = tmp_path / "p.studio.json"
    assert main(["import", str(tmp_path / "m.keras"), "-o", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"studio: error: {tmp_path / 'p.weights.h5'} already exists; pass --force to "
        "overwrite it.\n")
    assert not out.exists() and (tmp_path / "p.weights.h5").read_text() == "keep me"
    assert main(["import", str(tmp_path / "m.keras"), "-o", str(out), "--force"]) == 0
    assert load_project(out).weights.sha256 == file_sha256(tmp_path / "p.weights.h5")


def test_a_project_that_cannot_be_written_leaves_no_weights_behind(tmp_path, monkeypatch):
    branched_model().save(tmp_path / "m.keras")
    project, weights = import_model_with_weights(tmp_path / "m.keras")

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(imported_weights, "save_project", disk_full)
    with pytest.raises(OSError):
        save_imported(project, weights, tmp_path / "p.studio.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.keras"]


def test_a_model_without_weights_gives_a_project_without_any(tmp_path, capsys):
    import keras

    inputs = keras.Input((4,), name="x")
    keras.Model(inputs, keras.layers.Flatten(name="flat")(inputs)).save(tmp_path / "m.keras")
    out = tmp_path / "p.studio.json"
    assert main(["import", str(tmp_path / "m.keras"), "-o", str(out)]) == 0
    assert "The model has no weights." in capsys.readouterr().out
    project = load_project(out)
    assert project.weights is None and project.training.start_from == "random"
    assert not (tmp_path / "p.weights.h5").exists()
