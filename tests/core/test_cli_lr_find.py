"""``studio lr-find PROJECT [--json]``: the range test's suggestion and curve on the command
line, and one line with exit 2 for a project or range that cannot be used."""

from __future__ import annotations

import json

import pytest

from studio.cli import main
from studio.core.project.document import save_project
from tests.helpers import one_line_error, regression_project, snapshot


@pytest.fixture
def project_file(tmp_path):
    project = regression_project(tmp_path)
    project.training.optimizer = "sgd"
    project.training.momentum = 0.0
    path = tmp_path / "houses.studio.json"
    save_project(project, path)
    return path


def test_json_holds_the_suggestion_with_the_rates_and_losses(project_file, capsys):
    before = snapshot(project_file.parent)
    assert main(["lr-find", str(project_file), "--json", "--batches", "40"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert set(found) == {"rates", "losses", "smoothed", "suggestion", "status"}
    assert 0 < len(found["rates"]) == len(found["losses"]) == len(found["smoothed"]) <= 40
    assert found["rates"][0] == pytest.approx(1e-7)
    assert found["rates"][0] <= found["suggestion"] <= found["rates"][-1]
    assert snapshot(project_file.parent) == before  # no runs folder, the project unchanged


def test_the_text_says_the_suggestion_then_a_short_table(project_file, capsys):
    assert main(["lr-find", str(project_file), "--batches", "40"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Suggested learning rate: ") and "batches" in lines[0]
    assert lines[1].split() == ["rate", "loss"] and 3 < len(lines) - 2 <= 14


@pytest.mark.parametrize("arguments, words", [
    (["missing.studio.json"], ("missing.studio.json", "not a project file")),
    (["{project}", "--start", "1", "--end", "0.1"], ("grow",)),
    (["{project}", "--batches", "2"], ("at least 10 batches",)),
])
def test_bad_input_is_one_line_and_exit_2(project_file, capsys, arguments, words):
    args = [a.format(project=project_file) for a in arguments]
    assert main(["lr-find", *args]) == 2
    one_line_error(capsys, *words)
