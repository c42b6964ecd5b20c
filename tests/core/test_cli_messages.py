"""The command line says what is wrong, not something nearby: the data rather than a model
fix, exit codes that mean something, notes of ours rather than libraries' warnings."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from studio.cli import main
from studio.core.analysis import analyze
from studio.core.data import describe
from studio.core.project import DatasetChoice, save_project
from studio.core.runs import checkpoints, runs_root
from tests.core.test_image_folder import save
from tests.helpers import one_line_error, tiny_project


@pytest.mark.parametrize(("classes", "words"), [
    ([], "holds no class folders: put each class's images in its own subfolder."),
    (["cats"], "has one class folder ('cats'); a classifier needs at least two classes."),
])
def test_training_on_a_folder_of_too_few_classes_says_what_is_wrong_with_the_data(
        tmp_path, capsys, classes, words):
    folder = tmp_path / "images"
    folder.mkdir()
    for name in classes:
        for i in range(3):
            save(folder / name / f"{i}.png", color=i * 60)
    project = tmp_path / "p.studio.json"
    save_project(tiny_project(), project)
    assert main(["train", str(project), "--data", str(folder)]) == 1
    err = one_line_error(capsys, str(folder), words)
    assert "units" not in err and "model" not in err
    assert not runs_root(project).exists()
    info = describe(DatasetChoice(source="folder", path=str(folder)))
    (problem,) = analyze(tiny_project().graph, info).problems  # the app says the same
    assert problem.message.endswith(words) and not problem.fixes


def test_training_on_class_folders_without_images_says_so(tmp_path, capsys):
    folder = tmp_path / "images"
    for name in ("cats", "dogs"):
        (folder / name).mkdir(parents=True)
        (folder / name / "notes.txt").write_text("not an image")
    project = tmp_path / "p.studio.json"
    save_project(tiny_project(units=2), project)
    assert main(["train", str(project), "--data", str(folder)]) == 1
    one_line_error(capsys, f"{folder} holds no usable images in its class folders.")


@pytest.mark.parametrize(("classes", "code"), [([], 1), (["cats"], 1), (["cats", "dogs"], 0)])
def test_studio_data_exits_1_when_the_data_cannot_be_trained_on(tmp_path, capsys, classes,
                                                                code):
    for i, name in enumerate(classes):
        save(tmp_path / "images" / name / "1.png", color=i * 90)
    (tmp_path / "images").mkdir(exist_ok=True)
    assert main(["data", str(tmp_path / "images"), "--json"]) == code
    report = json.loads(capsys.readouterr().out)
    assert bool(report["blocking"]) == (code == 1)
    assert report["blocking"] == report["problems"][:len(report["blocking"])]
    assert main(["data", str(tmp_path / "images")]) == code
    out = capsys.readouterr().out.splitlines()
    assert all(f"Problem: {problem}" in out for problem in report["blocking"])


def test_studio_data_help_gives_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["data", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert ("Exit code 0 when the data can be trained on (warnings may be printed), 1 when a "
            "problem blocks training") in out and "2 for a path or arguments" in out


def test_ctrl_c_during_training_exits_130_and_says_how_to_resume(tmp_path, capsys):
    project = tmp_path / "p.studio.json"
    save_project(tiny_project(epochs=40), project)
    command = [sys.executable, "-m", "studio", "train", str(project)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=tmp_path,
                             env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        for line in child.stdout:
            if line.startswith("epoch 1/40"):
                child.send_signal(signal.SIGINT)
                break
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 130, err
    run_dir = next(runs_root(project).iterdir())
    assert f"Run stopped: {run_dir}" in out.splitlines()
    said = "studio: stopped by Ctrl+C; resume the run with: studio train --resume "
    assert err.splitlines()[-1] == said + str(run_dir)
    kept = max(epoch for epoch, _ in checkpoints(run_dir))
    assert main(["train", "--resume", str(run_dir), "--epochs", str(kept + 1)]) == 0
    assert f"Run finished: {run_dir}" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["workspace", "project"])
def test_an_unknown_run_names_the_runs_folder_it_looked_in(tmp_path, capsys, monkeypatch,
                                                           where):
    monkeypatch.setenv("LAYER_STUDIO_HOME", str(tmp_path / "home"))
    project = tmp_path / "p.studio.json"
    save_project(tiny_project(), project)
    given = ["--project", str(project)] * (where == "project")
    root = runs_root(project if where == "project" else None)
    for command in (["infer", "nosuchrun", str(tmp_path / "x.png")],
                    ["export", "nosuchrun", "--format", "keras", "-o", str(tmp_path / "out")]):
        assert main(command + given) == 2
        err = capsys.readouterr().err
        assert err.endswith(f"There is no run nosuchrun in {root}.\n") and err.count("\n") == 1
    assert "runs/runs" not in str(root)
