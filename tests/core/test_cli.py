"""The ``studio`` command line: templates, headless training and one-line errors."""

from __future__ import annotations

import json

import pytest

from studio.cli import main
from studio.core.project.document import load_project, save_project
from studio.core.project.templates import TEMPLATES
from tests.helpers import tiny_project


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_new_writes_each_template(tmp_path, capsys, name):
    out = tmp_path / f"{name}.studio.json"
    assert main(["new", "--template", name, "-o", str(out)]) == 0
    assert load_project(out).graph.nodes


def test_new_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "p.studio.json"
    out.write_text("keep me")
    assert main(["new", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err
    assert out.read_text() == "keep me"


def test_train_json_lines(tmp_path, capsys):
    path = tmp_path / "tiny.studio.json"
    save_project(tiny_project(epochs=3), path)
    assert main(["train", str(path), "--epochs", "2", "--batch-size", "256", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["type"] for line in lines] == ["start", "epoch", "checkpoint", "epoch",
                                                "checkpoint", "done"]
    assert lines[1]["epoch"] == 1 and "val_accuracy" in lines[1]
    assert lines[-1]["status"] == "finished"
    run_dir = tmp_path / "runs" / "tiny"
    assert lines[-1]["run_dir"].startswith(str(run_dir))


def test_train_plain_prints_one_line_per_epoch(tmp_path, capsys):
    path = tmp_path / "tiny.studio.json"
    save_project(tiny_project(epochs=1), path)
    assert main(["train", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("epoch 1/1  ") and "val_accuracy" in out[0]
    assert out[1].startswith("Run finished: ")


@pytest.mark.parametrize(
    ("setup", "args", "words"),
    [
        (None, ["train", "missing.studio.json"], "does not exist"),
        ("broken", ["train", "p.studio.json"], "not valid JSON"),
        ("invalid", ["train", "p.studio.json"], "cannot be trained: dense_1: "),
        ("ok", ["train", "p.studio.json", "--epochs", "0"], "--epochs must be at least 1"),
    ],
)
def test_train_errors_exit_non_zero_with_one_line(tmp_path, capsys, monkeypatch, setup, args,
                                                  words):
    monkeypatch.chdir(tmp_path)
    if setup == "broken":
        (tmp_path / "p.studio.json").write_text('{"format_version": 1, "na')
    elif setup in ("invalid", "ok"):
        units = 3 if setup == "invalid" else 10
        save_project(tiny_project(units=units), tmp_path / "p.studio.json")
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("studio: error: ") and words in err
    assert err.count("\n") == 1
