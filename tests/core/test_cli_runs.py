"""``studio runs PROJECT [--json]``: a project's runs as a table or JSON."""

from __future__ import annotations

import json

import pytest

from studio.cli import main
from studio.core.runs.folders import runs_root
from studio.core.runs.index import INDEX_FILE
from tests.run_folders import dead_pid, write_run


@pytest.fixture
def project(tmp_path):
    """A project file with a finished run and a segmentation run whose process was
    killed."""
    path = tmp_path / "demo.studio.json"
    path.write_text("{}", encoding="utf-8")
    write_run(runs_root(path), 0, epochs=12)
    write_run(runs_root(path), 1, status="running", pid=dead_pid(), epochs=3,
              epochs_planned=10, task="segmentation",
              best={"val_mean_iou": 0.6, "val_loss": 0.25})
    return path


def test_runs_prints_a_table_oldest_first(project, capsys):
    assert main(["runs", str(project)]) == 0
    header, finished, killed, footer = capsys.readouterr().out.splitlines()
    assert header.split() == ["RUN", "STATUS", "STARTED", "DURATION", "EPOCHS", "BEST",
                              "SCORE", "VAL", "LOSS"]
    assert finished.split()[:10] == ["20260105-090000-0000-demo-cnn", "finished", "2026-01-05",
                                     "09:00", "18", "s", "12/12", "val", "accuracy", "81.1%"]
    assert killed.split()[1] == "interrupted" and "3/10" in killed
    assert killed.endswith("3/10    val mean IoU 60.0%  0.2500")
    assert footer == f"2 runs in {runs_root(project)}"


def test_runs_as_json(project, capsys):
    assert main(["runs", str(project), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(r["status"], r["recorded_status"], r["epochs"]) for r in found] == [
        ("finished", "finished", 12), ("interrupted", "running", 3)]
    assert found[0]["best"]["val_accuracy"] > 0.8 and found[0]["optimizer"] == "adam"
    assert [r["task"] for r in found] == ["classification", "segmentation"]


def test_runs_rebuilds_a_damaged_index_and_says_so(project, capsys):
    (runs_root(project) / INDEX_FILE).write_text("garbage", encoding="utf-8")
    assert main(["runs", str(project), "--json"]) == 0
    out, err = capsys.readouterr()
    assert len(json.loads(out)) == 2 and "rebuilt from the run folders" in err


def test_runs_of_a_project_without_runs_or_file(tmp_path, capsys):
    project = tmp_path / "new.studio.json"
    project.write_text("{}", encoding="utf-8")
    assert main(["runs", str(project)]) == 0
    assert capsys.readouterr().out.startswith("No runs yet in ")
    assert main(["runs", str(tmp_path / "missing.studio.json")]) == 1
    assert "missing.studio.json does not exist" in capsys.readouterr().err
