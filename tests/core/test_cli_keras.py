"""``studio import`` and ``studio export-code``: files written, one-line errors, exit codes."""

from __future__ import annotations

import pytest

from studio.cli import main
from studio.core.project.document import load_project, save_project
from studio.core.project.templates import demo_project
from tests.helpers import regression_project
from tests.keras_models import BROKEN_MODEL_FILES, branched_model, lambda_model


def one_line_error(capsys, *words):
    err = capsys.readouterr().err
    assert err.startswith("studio: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err
    return err


def test_import_writes_a_project(tmp_path, capsys):
    branched_model().save(tmp_path / "branched.keras")
    out = tmp_path / "branched.studio.json"
    assert main(["import", str(tmp_path / "branched.keras"), "-o", str(out)]) == 0
    project = load_project(out)
    assert project.graph.node("left").type == "Conv2D"
    assert capsys.readouterr().out == (
        f"Wrote {out}: 13 layers, all editable. Its weights are in "
        "branched.weights.h5.\n"
    )


def test_import_refuses_a_lambda_layer_without_trust(tmp_path, capsys):
    lambda_model().save(tmp_path / "model.keras")
    out = tmp_path / "p.studio.json"
    assert main(["import", str(tmp_path / "model.keras"), "-o", str(out)]) == 1
    one_line_error(capsys, "model.keras contains a Lambda layer (lambda_1), which holds Python "
                           "code", "unless you trust the file")
    assert not out.exists()
    assert main(["import", str(tmp_path / "model.keras"), "-o", str(out), "--trust"]) == 0
    assert load_project(out).graph.node("lambda_1").params["class_name"] == "Lambda"


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        (None, "missing.keras: the file does not exist."),
        ("junk", "missing.keras: not a readable Keras model file"),
        ("exists", "p.studio.json already exists; pass --force"),
    ],
)
def test_import_errors(tmp_path, capsys, monkeypatch, setup, words):
    monkeypatch.chdir(tmp_path)
    if setup == "junk":
        (tmp_path / "missing.keras").write_text("junk")
    if setup == "exists":
        branched_model().save(tmp_path / "missing.keras")
        (tmp_path / "p.studio.json").write_text("keep me")
    assert main(["import", "missing.keras", "-o", "p.studio.json"]) == 1
    one_line_error(capsys, words)
    if setup == "exists":
        assert (tmp_path / "p.studio.json").read_text() == "keep me"


@pytest.mark.parametrize(("make", "words"), BROKEN_MODEL_FILES)
def test_import_refuses_broken_models_in_one_line(tmp_path, capsys, make, words):
    out = tmp_path / "p.studio.json"
    assert main(["import", str(make(tmp_path)), "-o", str(out)]) == 1
    assert one_line_error(capsys) == f"studio: error: {words}\n"
    assert not out.exists()


def test_export_code_writes_a_script_for_a_csv_project(tmp_path, capsys):
    save_project(regression_project(tmp_path), tmp_path / "houses.studio.json")
    out = tmp_path / "code" / "houses.py"
    assert main(["export-code", str(tmp_path / "houses.studio.json"), "-o", str(out)]) == 0
    text = out.read_text()
    compile(text, str(out), "exec")
    assert f"DATA = Path({str(tmp_path / 'houses.csv')!r})" in text
    assert "FEATURE_COLUMNS = ['a', 'b', 'c']" in text and "MeanSquaredError()" in text


def test_export_code_writes_a_script(tmp_path, capsys):
    save_project(demo_project(), tmp_path / "demo.studio.json")
    out = tmp_path / "demo.py"
    assert main(["export-code", str(tmp_path / "demo.studio.json"), "-o", str(out)]) == 0
    compile(out.read_text(), str(out), "exec")
    assert "keras.layers.Conv2D(\n        filters=32, kernel_size=3" in out.read_text()
    assert capsys.readouterr().out == f"Wrote {out}; run it with: python {out}\n"


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        (None, "p.studio.json: the file does not exist."),
        ("broken", "not valid JSON"),
        ("lambda", "lambda_1: This imported Lambda layer holds Python code"),
        ("exists", "p.py already exists; pass --force"),
        ("misfit", "The model does not fit MNIST-10k yet: input_1: The input shape"),
        ("no folder", "The image folder"),
        ("adamw", "AdamW with no weight decay is plain Adam"),
    ],
)
def test_export_code_errors(tmp_path, capsys, monkeypatch, setup, words):
    monkeypatch.chdir(tmp_path)
    if setup == "broken":
        (tmp_path / "p.studio.json").write_text('{"format_version": 2, "na')
    elif setup == "lambda":
        lambda_model().save(tmp_path / "model.keras")
        assert main(["import", "model.keras", "-o", "p.studio.json", "--trust"]) == 0
        capsys.readouterr()
    elif setup == "exists":
        save_project(demo_project(), tmp_path / "p.studio.json")
        (tmp_path / "p.py").write_text("keep me")
    elif setup in ("misfit", "no folder", "adamw"):
        project = demo_project()
        if setup == "misfit":
            project.dataset.image_size = [32, 32]
        elif setup == "adamw":
            project.training.optimizer, project.training.weight_decay = "adamw", 0.0
        else:
            project.dataset.source, project.dataset.path = "folder", str(tmp_path / "gone")
        save_project(project, tmp_path / "p.studio.json")
    assert main(["export-code", "p.studio.json", "-o", "p.py"]) == 1
    one_line_error(capsys, words)
    assert not (tmp_path / "p.py").exists() or (tmp_path / "p.py").read_text() == "keep me"
