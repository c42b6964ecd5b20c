"""Fine-tuning: a project imported with its weights, or started from a run's model, trains
from them, not from chance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.cli import main
from studio.core.project.document import load_project, save_project
from studio.core.project.weights import file_sha256
from studio.core.runs.folders import MODEL_FILE, runs_root
from studio.core.training.trainer import TrainingError, start_from_run, train
from tests.core.search_support import table_project

CLASSES = 4


@pytest.fixture(scope="module")
def imported_project(tmp_path_factory):
    """A table model trained to high accuracy by a run, imported with ``studio import``; its
    last validation accuracy, and the run."""
    folder = tmp_path_factory.mktemp("fine_tuning")
    project = quadrants(table_project(folder, rows=400))
    project.training.epochs, project.training.learning_rate = 15, 0.05
    trained = train(project, runs_root(folder / "table.studio.json"))
    accuracy = trained.epochs[-1]["val_accuracy"]
    assert accuracy >= 0.9
    out = folder / "imported.studio.json"
    assert main(["import", str(trained.run_dir / MODEL_FILE), "-o", str(out)]) == 0
    imported = load_project(out)
    imported.dataset = project.dataset
    imported.training.epochs, imported.training.batch_size = 1, 32
    return imported, accuracy, trained.run_dir


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


def first_batch(project, root) -> tuple[float, Path]:
    """The accuracy of a run's first batch (scored before its first update), and the run."""
    batches = []
    result = train(project, root, lambda e: batches.append(e) if e["type"] == "batch" else None,
                   report_every=1)
    return batches[0]["accuracy"], result.run_dir


def test_fine_tuning_starts_from_the_imported_accuracy(imported_project, tmp_path):
    project, accuracy, _ = imported_project
    assert project.training.start_from == "imported"
    tuned, _ = first_batch(project, tmp_path / "tuned")
    project.training.start_from = "random"
    fresh, _ = first_batch(project, tmp_path / "fresh")
    assert tuned >= 0.85 and tuned >= accuracy - 0.1, (tuned, accuracy)
    assert fresh <= 1 / CLASSES + 0.25, fresh  # chance, give or take a lucky batch


def test_the_run_records_the_weights_it_started_from(imported_project, tmp_path):
    project = imported_project[0]
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


def test_a_warm_start_from_a_run_starts_from_its_accuracy(imported_project, tmp_path):
    project, accuracy, run_dir = imported_project
    project = project.copy()
    project.weights = None  # nothing imported: the run's model is what it starts from
    start_from_run(project, run_dir / MODEL_FILE, run_dir.parent)
    assert project.training.start_model == f"{run_dir.name}/{MODEL_FILE}"
    warm, warmed = first_batch(project, run_dir.parent)
    assert warm >= max(0.85, accuracy - 0.1)
    config = json.loads((warmed / "config.json").read_text())
    assert config["started_from"] == {"kind": "run", "file": str(run_dir / MODEL_FILE),
                                      "run": run_dir.name,
                                      "sha256": file_sha256(run_dir / MODEL_FILE)}


def test_studio_train_init_from_a_run_or_a_checkpoint(imported_project, tmp_path, capsys):
    project, _, run_dir = imported_project
    path = run_dir.parent.parent.parent / "table.studio.json"  # the project of those runs
    project = project.copy()
    project.weights, project.training.start_from = None, "random"
    save_project(project, path)
    checkpoint = run_dir / "checkpoints" / "epoch-0015.keras"
    for given, started in ((run_dir.name[:15], run_dir / MODEL_FILE),
                           (str(checkpoint), checkpoint)):
        capsys.readouterr()
        assert main(["train", str(path), "--init-from", given, "--json"]) == 0
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        epoch = next(line for line in lines if line["type"] == "epoch")
        assert epoch["accuracy"] >= 0.85
        config = json.loads((Path(lines[-1]["run_dir"]) / "config.json").read_text())
        assert config["started_from"]["file"] == str(started)
        assert config["training"]["start_from"] == "run"
    assert load_project(path).training.start_from == "random"  # the file is not changed


def test_init_from_a_run_without_a_final_model_asks_for_a_checkpoint(tmp_path, capsys):
    from tests.helpers import tiny_project

    path = tmp_path / "p.studio.json"
    save_project(tiny_project(), path)
    run = runs_root(path) / "20260101-000000-tiny"
    (run / "checkpoints").mkdir(parents=True)
    (run / "run.json").write_text('{"status": "stopped"}')
    (run / "checkpoints" / "epoch-0001.keras").write_text("")
    assert main(["train", str(path), "--init-from", run.name]) == 1
    assert capsys.readouterr().err == (
        f"studio: error: --init-from: {run.name} has no final model; give one of its "
        f"checkpoint files instead (e.g. {run / 'checkpoints' / 'epoch-0001.keras'}).\n")
