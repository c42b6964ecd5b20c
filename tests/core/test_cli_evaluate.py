"""``studio evaluate RUN [--model final|CHECKPOINT] [--split validation|test] [--json]``: the
Evaluate tab's scores on the command line, the recorded metrics of a regression run, and one
line with exit 2 for a run, model or split that cannot be evaluated."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from studio.cli import main
from studio.core.inference.evaluation import evaluate_run
from studio.core.runs import folders as runs
from studio.core.runs.folders import runs_root
from studio.core.tasks.class_scores import evaluation_text
from tests.helpers import one_line_error, regression_project


def evaluate(capsys, *args: str) -> tuple[int, str]:
    """The exit code and what was printed; an error stays to be read by one_line_error."""
    code = main(["evaluate", *map(str, args)])
    return code, "" if code else capsys.readouterr().out


def test_the_test_split_is_scored_as_the_evaluate_tab_scores_it(cnn_run, capsys):
    code, out = evaluate(capsys, cnn_run, "--split", "test")
    assert code == 0
    expected = evaluate_run(cnn_run, "test")
    heading, text = out.split("\n", 1)
    assert heading == f"{cnn_run.name}, final model, test split"
    assert text == evaluation_text(expected) + "\n"
    first = text.splitlines()[0]
    assert first.startswith("999 samples: accuracy ") and f"{expected.loss:.4f}" in first
    assert "Confusion matrix (rows: true class, columns: answer)" in text
    assert [line.split()[0] for line in text.splitlines()[3:13]] == [str(d) for d in range(10)]


def test_json_holds_the_scores_and_a_checkpoint_is_named_by_its_epoch(cnn_run, capsys):
    code, out = evaluate(capsys, cnn_run, "--model", "1", "--json")
    assert code == 0
    document = json.loads(out)
    checkpoint = runs.checkpoints(cnn_run)[0][1]
    expected = evaluate_run(cnn_run, "validation", checkpoint).to_dict()
    assert document["model"] == str(checkpoint) and document["run"] == str(cnn_run)
    assert document["split"] == "validation" and document["samples"] == 2000
    assert document["accuracy"] == pytest.approx(expected["accuracy"])
    assert document["loss"] == pytest.approx(expected["loss"], rel=1e-5)
    assert np.array(document["confusion"]).sum() == 2000
    assert {"precision", "recall", "f1", "support"} <= set(document["per_class"][0])
    code, out = evaluate(capsys, cnn_run, "--model", checkpoint, "--json")
    assert code == 0 and json.loads(out)["accuracy"] == document["accuracy"]


def test_a_run_is_found_by_the_start_of_its_id_among_a_projects_runs(cnn_run, tmp_path,
                                                                     capsys):
    project = tmp_path / "p.studio.json"
    project.write_text("{}", encoding="utf-8")
    copy = runs_root(project) / cnn_run.name
    shutil.copytree(cnn_run, copy)
    code, out = evaluate(capsys, cnn_run.name[:15], "--project", project, "--json")
    assert code == 0 and json.loads(out)["run"] == str(copy)


@pytest.mark.parametrize(("args", "words"), [
    (["no-such-run"], ["There is no run no-such-run in "]),
    (["{run}", "--model", "7"], ["has no checkpoint of epoch 7 (checkpoints: 1, 2)"]),
    (["{run}", "--model", "best"], ["--model 'best' is neither final, a checkpoint's epoch",
                                    "checkpoints of", "1, 2"]),
    (["{run}", "--model", "{junk}"], ["junk.keras is not a Keras model file"]),
    (["{run}", "--split", "tset"], ["Unknown split 'tset': choose one of validation, test."]),
    (["{folder}"], ["is not a run folder"]),
])
def test_bad_runs_models_and_splits_are_one_line_with_exit_2(cnn_run, tmp_path, capsys, args,
                                                             words):
    junk = tmp_path / "junk.keras"
    junk.write_text("not a model")
    (tmp_path / "folder").mkdir()
    args = [a.format(run=cnn_run, junk=junk, folder=tmp_path / "folder") for a in args]
    assert evaluate(capsys, *args)[0] == 2
    one_line_error(capsys, *words)


def test_a_run_without_a_test_split_or_a_final_model_says_so(cnn_run, tmp_path, capsys):
    run = tmp_path / cnn_run.name
    shutil.copytree(cnn_run, run)
    snapshot = json.loads((run / runs.PROJECT_FILE).read_text())
    snapshot["dataset"]["test_split"] = 0
    (run / runs.PROJECT_FILE).write_text(json.dumps(snapshot))
    code, _ = evaluate(capsys, run, "--split", "test")
    assert code == 2
    one_line_error(capsys, "no test split")
    (run / runs.MODEL_FILE).unlink()
    code, _ = evaluate(capsys, run)
    assert code == 2
    one_line_error(capsys, "has no final model", "checkpoints: 1, 2")


@pytest.fixture(scope="module")
def regression_run(tmp_path_factory):
    from studio.core.training.trainer import train

    folder = tmp_path_factory.mktemp("regression")
    project = regression_project(folder)
    project.dataset.test_split = 0.1
    return train(project, folder / "runs").run_dir


def test_a_regression_run_prints_the_metrics_it_recorded(regression_run, tmp_path, capsys):
    rows = runs.read_metrics(regression_run)
    code, out = evaluate(capsys, regression_run)
    assert code == 0
    heading, metrics, note = out.splitlines()
    assert heading == (f"{regression_run.name}, final model, validation split, as recorded in "
                       "training:")
    assert metrics == f"val_loss {rows[-1]['val_loss']:.4f}  val_mae {rows[-1]['val_mae']:.4f}"
    assert note.startswith("Note: This run predicts numbers (regression)")
    code, out = evaluate(capsys, regression_run, "--model", "1", "--json")
    assert code == 0
    assert json.loads(out)["recorded"] == {"epoch": 1, "val_loss": rows[0]["val_loss"],
                                           "val_mae": rows[0]["val_mae"]}
    checkpoint = runs.checkpoints(regression_run)[0][1]
    code, out = evaluate(capsys, regression_run, "--model", checkpoint, "--json")
    assert code == 0 and json.loads(out)["recorded"]["epoch"] == 1
    code, out = evaluate(capsys, regression_run, "--model", regression_run / runs.MODEL_FILE)
    assert code == 0 and out.startswith(f"{regression_run.name}, final model, ")
    elsewhere = tmp_path / "model.keras"
    shutil.copy(regression_run / runs.MODEL_FILE, elsewhere)
    assert evaluate(capsys, regression_run, "--model", elsewhere)[0] == 2
    one_line_error(capsys, "recorded no metrics for ")
    code, out = evaluate(capsys, regression_run, "--split", "test", "--json")
    recorded = json.loads((regression_run / runs.RUN_FILE).read_text())["test"]
    assert code == 0 and json.loads(out)["recorded"] == recorded
    code, _ = evaluate(capsys, regression_run, "--split", "test", "--model", "1")
    assert code == 2
    one_line_error(capsys, "test scores for its final model only")


def test_the_text_shows_each_class_and_the_matrix_rows_true_columns_answered():
    from studio.core.tasks.class_scores import Evaluation

    true = np.array([0, 0, 0, 1, 1, 2])
    answers = np.eye(3)[[0, 0, 1, 1, 1, 1]]
    text = evaluation_text(Evaluation.of_answers("test", ["cat", "dog", "a long class name "
                                                          "cut short"], true, answers, 0.5))
    lines = text.splitlines()
    assert lines[0] == "6 samples: accuracy 66.67%, loss 0.5000, 2 mistakes"
    assert lines[2].split() == ["class", "precision", "recall", "F1", "support"]
    assert lines[3].split() == ["cat", "1.0000", "0.6667", "0.8000", "3"]
    assert lines[4].split() == ["dog", "0.5000", "1.0000", "0.6667", "2"]
    assert lines[5].split()[:4] == ["a", "long", "class", "na…"]  # 16 characters
    assert lines[9].split() == ["cat", "dog", "a", "long…"]
    assert [line.split()[-3:] for line in lines[10:13]] == [["2", "1", "0"], ["0", "2", "0"],
                                                            ["0", "1", "0"]]
    assert lines[13].startswith("Note: Precision is 0 for a class the model never answered")
