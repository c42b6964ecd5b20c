"""Fine-tuning: a project imported with its weights trains from them, not from chance."""

from __future__ import annotations

import pytest

from studio.cli import main
from studio.core.project.document import load_project
from studio.core.runs.folders import MODEL_FILE
from studio.core.training.trainer import TrainingError, train
from tests.core.search_support import table_project

CLASSES = 4


@pytest.fixture(scope="module")
def imported_project(tmp_path_factory):
    """A table model trained to high accuracy by a run, imported with ``studio import``; and
    its last validation accuracy."""
    folder = tmp_path_factory.mktemp("fine_tuning")
    project = quadrants(table_project(folder, rows=400))
    project.training.epochs, project.training.learning_rate = 15, 0.05
    trained = train(project, folder / "runs")
    accuracy = trained.epochs[-1]["val_accuracy"]
    assert accuracy >= 0.9
    out = folder / "imported.studio.json"
    assert main(["import", str(trained.run_dir / MODEL_FILE), "-o", str(out)]) == 0
    imported = load_project(out)
    imported.dataset = project.dataset
    imported.training.epochs, imported.training.batch_size = 1, 32
    return imported, accuracy


def quadrants(project):
    """``project``'s table relabelled by the quadrant of its first two features: four classes,
    so a model that knows nothing is right one time in four."""
    path = project.dataset.path
    lines = open(path).read().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    labels = [f"q{(float(r[0]) > 0) * 2 + (float(r[1]) > 0)}" for r in rows]
    with open(path, "w") as file:
        file.write("\n".join([lines[0], *(",".join([*r[:-1], q]) for r, q in zip(
            rows, labels, strict=True))]))
    project.graph.node("dense_1").params["units"] = 16
    project.graph.node("dense_2").params["units"] = CLASSES
    return project


def first_batch_accuracy(project, root) -> float:
    batches = []
    train(project, root, lambda e: batches.append(e) if e["type"] == "batch" else None,
          report_every=1)
    return batches[0]["accuracy"]


def test_fine_tuning_starts_from_the_imported_accuracy(imported_project, tmp_path):
    project, accuracy = imported_project
    assert project.training.start_from == "imported"
    tuned = first_batch_accuracy(project, tmp_path / "tuned")
    project.training.start_from = "random"
    fresh = first_batch_accuracy(project, tmp_path / "fresh")
    assert tuned >= 0.85 and tuned >= accuracy - 0.1, (tuned, accuracy)
    assert fresh <= 1 / CLASSES + 0.25, fresh  # chance, give or take a lucky batch


def test_the_run_records_the_weights_it_started_from(imported_project, tmp_path):
    import json

    project, _ = imported_project
    project.training.start_from = "imported"
    run = train(project, tmp_path)
    config = json.loads((run.run_dir / "config.json").read_text())
    assert config["training"]["start_from"] == "imported"
    assert config["started_from"] == {"kind": "imported", "file": project.weights.file,
                                      "sha256": project.weights.sha256}


def test_missing_imported_weights_stop_the_run_in_one_line(imported_project, tmp_path):
    project = imported_project[0].copy()
    project.weights.file = str(tmp_path / "gone.weights.h5")
    with pytest.raises(TrainingError) as failed:
        train(project, tmp_path / "runs")
    assert str(failed.value).startswith("The imported weights file gone.weights.h5 is missing")
    assert "\n" not in str(failed.value)
