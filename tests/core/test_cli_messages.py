"""The command line says what is wrong, not something nearby: the data rather than a model
fix, exit codes that mean something, notes of ours rather than libraries' warnings."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

from studio.cli import main
from studio.core.build.analysis import analyze
from studio.core.data import sources as data
from studio.core.data.sources import describe
from studio.core.project.document import DatasetChoice, save_project
from studio.core.runs import folders as runs
from studio.core.runs.folders import checkpoints, runs_root
from tests.core.test_image_folder import save
from tests.core.test_predictor import write_digits
from tests.helpers import one_line_error, tiny_project


def image_classes(folder: Path, counts: dict[str, int]) -> Path:
    """Class folders of small grey PNGs, a different shade for each image."""
    for k, (name, n) in enumerate(counts.items()):
        for i in range(n):
            save(folder / name / f"{i}.png", mode="L", size=(28, 28), color=40 * k + 7 * i)
    return folder


@pytest.mark.parametrize(("classes", "words"), [
    ([], "holds no class folders: put each class's images in its own subfolder."),
    (["cats"], "has one class folder ('cats'); a classifier needs at least two classes."),
])
def test_training_on_a_folder_of_too_few_classes_says_what_is_wrong_with_the_data(
        tmp_path, capsys, classes, words):
    folder = tmp_path / "images"
    folder.mkdir()
    image_classes(folder, dict.fromkeys(classes, 3))
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
    one_line_error(capsys, f"{folder}'s class folders hold no images yet: add some to each "
                           "class (the Data view's Edit tab, or copy files into the folders).")
    (folder / "cats" / "broken.png").write_bytes(b"not a picture")  # an image, unusable
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


def test_a_model_file_with_members_outside_it_is_noted_not_warned(cnn_run, tmp_path, capsys):
    hostile = tmp_path / "models" / "hostile.keras"
    hostile.parent.mkdir()
    shutil.copy(cnn_run / runs.MODEL_FILE, hostile)
    with zipfile.ZipFile(hostile, "a") as archive:
        archive.writestr("../../escaped.txt", "outside")
    (digit,) = write_digits(tmp_path / "digits", 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["infer", str(hostile), str(digit), "--size", "28", "28", "--color",
                     "grayscale", "--normalization", "unit"]) == 0
    assert not [w for w in caught if "Skipping invalid path" in str(w.message)]
    assert capsys.readouterr().err == (
        "Note: hostile.keras holds 1 file whose path leads outside the model file (e.g. "
        "'../../escaped.txt'), a sign of a damaged or hostile file: it was skipped, and "
        "nothing was written outside.\n")
    assert not list(tmp_path.rglob("escaped.txt"))


@pytest.mark.parametrize(("counts", "words"), [
    ({"cats": 1, "dogs": 1}, "No sample is kept for validation, as every class has a single "
                             "one"),
    ({"cats": 1, "dogs": 4}, "1 class has a single sample ('cats'), kept for training"),
])
def test_classes_too_small_for_validation_are_noted_without_keras_warnings(tmp_path, capsys,
                                                                           counts, words):
    folder = image_classes(tmp_path / "images", counts)
    project = tmp_path / "p.studio.json"
    save_project(tiny_project(units=2), project)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["train", str(project), "--data", str(folder)]) == 0
    assert not [w for w in caught if "ran out of data" in str(w.message)]
    out = capsys.readouterr().out.splitlines()
    notes = [line for line in out if line.startswith("Note: ")]
    assert len(notes) == 1 and notes[0].startswith(f"Note: {words}")
    loaded = data.load(DatasetChoice(source="folder", path=str(folder), image_size=[28, 28]))
    assert any(note.startswith(words) for note in loaded.split_notes())
    none_asked = DatasetChoice(source="folder", path=str(folder), validation_split=0.0)
    assert not data.resplit(loaded, none_asked).split_notes()  # no validation was asked for


@pytest.mark.parametrize(("rows", "args", "said"), [
    ("a,b,label\n1e308,2,x\n1,3,y\n-1e308,4,x\n2,5,y\n", [],
     "Note: Column 'a' holds 2 numbers too large for the model's 32-bit floats (over 3.4e+38, "
     "e.g. '1e308' on line 2); they count as missing."),
    ("a,b,label\n1,2,3e38\n3,4,-3e38\n5,6,3.3e38\n", ["--regression"],
     "  range min -3e+38, max 3.3e+38, mean 1.1e+38, std 2.902e+38"),
])
def test_numbers_beyond_32_bit_floats_are_noted_without_numpy_warnings(tmp_path, capsys, rows,
                                                                       args, said):
    table = tmp_path / "data.csv"
    table.write_text(rows)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["data", str(table), *args]) == 0
    assert not caught
    assert said in capsys.readouterr().out.splitlines()


def test_a_regression_label_beyond_32_bit_floats_is_refused_in_one_line(tmp_path, capsys):
    table = tmp_path / "data.csv"
    table.write_text("a,b,label\n1,2,1e308\n3,4,5\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["data", str(table), "--regression"]) == 1
    assert not caught
    one_line_error(capsys, "Regression needs a number (within ±3.4e+38)", "line 2: '1e308'")
