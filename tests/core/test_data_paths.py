"""Data paths in projects and runs: a relative path is taken from the project file's folder,
a path typed on the command line from the current directory, and a project folder moved with
its data and runs keeps working, from any current directory."""

from __future__ import annotations

import json
import shutil

import numpy as np

from studio.cli import main
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project, load_project, save_project
from studio.core.runs import folders as runs
from tests.helpers import digit_folder, tiny_project


def stored(path) -> dict:
    """The dataset as written in a project file."""
    return json.loads(path.read_text(encoding="utf-8"))["dataset"]


def test_a_relative_data_path_is_kept_so_export_and_resume_work_from_anywhere(
        tmp_path, monkeypatch, capsys):
    home = tmp_path / "a"
    digit_folder(home / "good")
    save_project(tiny_project(units=2), home / "p.studio.json")
    monkeypatch.chdir(home)
    assert main(["train", "p.studio.json", "--data", "good", "--epochs", "1", "--json"]) == 0
    done = json.loads(capsys.readouterr().out.splitlines()[-1])
    run_dir = home / "runs" / "p" / done["run_dir"].rsplit("/", 1)[-1]
    assert stored(run_dir / runs.PROJECT_FILE)["path"] == "../../../good"
    assert json.loads((run_dir / runs.CONFIG_FILE).read_text())["dataset"]["path"] == str(
        home / "good")
    assert sorted(runs.read_fingerprint(run_dir)) == ["0", "1"]  # the digits' classes
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["export", str(run_dir), "--format", "keras", "-o", "out"]) == 0
    assert (elsewhere / "out" / "model.keras").is_file()
    moved = tmp_path / "moved"
    shutil.move(home, moved)
    run_dir = moved / run_dir.relative_to(home)
    assert main(["train", "--resume", str(run_dir), "--epochs", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["status"] == "finished"
    assert [row["epoch"] for row in runs.read_metrics(run_dir)] == [1, 2]
    assert load_project(run_dir / runs.PROJECT_FILE).dataset.path == str(moved / "good")


def test_a_csv_beside_the_project_trains_from_another_folder(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 2))
    rows = [f"{a:.3f},{b:.3f},{'big' if a + b > 0 else 'small'}" for a, b in x]
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "good.csv").write_text("a,b,size\n" + "\n".join(rows) + "\n")
    project = Project(name="Table", graph=Graph.from_chain([
        Node("input_1", "Input", {"shape": [2]}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})]))
    document = project.to_dict()
    document["dataset"].update(source="csv", path="good.csv", label_column="size")
    (tmp_path / "csv" / "tab.studio.json").write_text(json.dumps(document))
    monkeypatch.chdir(tmp_path)
    assert main(["train", "csv/tab.studio.json", "--epochs", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["status"] == "finished"


def test_data_inside_the_project_folder_is_stored_relative_and_outside_absolute(tmp_path):
    project = tiny_project()
    project.dataset = DatasetChoice(source="folder", path=str(tmp_path / "p" / "images"),
                                    validation_path=str(tmp_path / "shared" / "check"))
    path = tmp_path / "p" / "p.studio.json"
    save_project(project, path)
    assert (stored(path)["path"], stored(path)["validation_path"]) == (
        "images", str(tmp_path / "shared" / "check"))
    assert load_project(path) == project
    save_project(project, tmp_path / "p.studio.json")  # saved as elsewhere: the paths follow
    assert stored(tmp_path / "p.studio.json")["path"] == "p/images"
    assert load_project(tmp_path / "p.studio.json") == project
