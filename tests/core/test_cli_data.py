"""``studio data FILE.csv`` and ``studio train PROJECT --data PATH``."""

from __future__ import annotations

import json

from studio.cli import main
from studio.core.project.document import load_project, save_project
from studio.core.runs.folders import RUN_FILE
from tests.helpers import digit_folder, tiny_project

CSV = "height,weight,name,species\n1,2,a,cat\n3,,b,dog\n5,6,c,cat\n7,8,d,dog\n,1,e,\n"


def test_csv_report_as_json(tmp_path, capsys):
    path = tmp_path / "pets.csv"
    path.write_text(CSV)
    assert main(["data", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["features"] == ["height", "weight"] and report["rows"] == 4
    assert report["classes"] == [{"name": "cat", "rows": 2}, {"name": "dog", "rows": 2}]
    assert report["missing_values"] == {"weight": 1}


def test_csv_report_as_text_with_a_chosen_label_and_regression(tmp_path, capsys):
    path = tmp_path / "pets.csv"
    path.write_text(CSV)
    assert main(["data", str(path), "--label", "weight", "--regression"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("pets.csv: 4 rows, table regression")
    assert "Label column: weight" in out and any(line.startswith("  range min 1") for line in out)
    assert "Note: Columns 'name', 'species' are left out: they hold text, not numbers." in out


def test_csv_with_a_missing_label_column_fails_in_one_line(tmp_path, capsys):
    path = tmp_path / "pets.csv"
    path.write_text(CSV)
    assert main(["data", str(path), "--label", "colour"]) == 1
    err = capsys.readouterr().err
    assert "'colour'" in err and "species" in err and err.count("\n") == 1


def test_train_on_a_folder_without_changing_the_project(tmp_path, capsys):
    digit_folder(tmp_path / "digits")
    project = tiny_project(epochs=1, units=2)
    path = tmp_path / "tiny.studio.json"
    save_project(project, path)
    before = path.read_bytes()
    assert main(["train", str(path), "--data", str(tmp_path / "digits"), "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[0]["type"] == "start" and events[0]["samples"] == 20
    assert events[-1]["status"] == "finished"
    run = json.loads((tmp_path / events[-1]["run_dir"] / RUN_FILE).read_text())
    assert run["status"] == "finished"
    assert path.read_bytes() == before and load_project(path).dataset.source == "bundled"
