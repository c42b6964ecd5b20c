"""``studio infer RUN_OR_MODEL INPUT... [--top-k K] [--json]``: answers as lines or JSON,
exit 0 when all were answered, 1 when some could not be, 2 for a bad model or arguments."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from studio.cli import main
from studio.core.data.image_pipeline import preprocess_image_files
from studio.core.data.table_pipeline import preprocess_texts
from studio.core.runs import folders as runs
from studio.core.runs.folders import runs_root
from tests.core.test_predictor import (
    keras_answers,
    run_prep,
    saved_model,
    table_model_and_prep,
    trained_text_run,
    write_digits,
)

LINE = re.compile(r"^(?P<source>.+): (?P<answer>.+)  \((?P<ms>\d+\.\d) ms\)$")


@pytest.fixture
def digits(tmp_path) -> list[Path]:
    return write_digits(tmp_path / "digits", 3)


def expected_top(cnn_run: Path, paths: list[Path], model: str = runs.MODEL_FILE) -> list[str]:
    """The oracle's best class for each file."""
    x = preprocess_image_files(run_prep(cnn_run), paths)
    return [str(i) for i in keras_answers(cnn_run / model, x).argmax(axis=1)]


def infer(capsys, *args) -> tuple[int, list[str], str]:
    code = main(["infer", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_images_are_answered_one_line_each(cnn_run, digits, capsys):
    code, lines, err = infer(capsys, cnn_run, *digits, "--top-k", "3")
    assert code == 0 and err == ""
    matches = [LINE.match(line) for line in lines]
    assert [m["source"] for m in matches] == [str(p) for p in digits]
    answers = [re.findall(r"(\d) (\d+\.\d)%", m["answer"]) for m in matches]
    assert all(len(a) == 3 for a in answers)
    assert [a[0][0] for a in answers] == expected_top(cnn_run, digits)
    assert all(float(a[0][1]) >= float(a[1][1]) >= float(a[2][1]) for a in answers)


def test_bad_inputs_are_said_and_the_others_answered_with_exit_code_1(cnn_run, digits,
                                                                     tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    (tmp_path / "empty").mkdir()
    code, lines, _ = infer(capsys, cnn_run, digits[0], notes, tmp_path / "empty",
                           tmp_path / "gone.png", digits[1])
    assert code == 1
    assert lines[1:4] == [f"{notes}: error: not a JPEG, PNG, GIF, BMP, WebP or TIFF image",
                          f"{tmp_path / 'empty'}: error: a folder with no image files",
                          f"{tmp_path / 'gone.png'}: error: there is no such file"]
    assert [LINE.match(lines[i])["source"] for i in (0, 4)] == [str(digits[0]), str(digits[1])]


def test_folders_expand_to_their_images_and_json_lists_the_answers(cnn_run, digits, capsys):
    code, lines, _ = infer(capsys, cnn_run, digits[0].parent, "--json", "--top-k", "2")
    assert code == 0
    answers = json.loads("\n".join(lines))
    assert [a["source"] for a in answers] == [str(p) for p in digits]
    assert [a["labels"][0] for a in answers] == expected_top(cnn_run, digits)
    assert all(set(a) == {"source", "labels", "probabilities", "value", "seconds", "error",
                          "boxes", "areas", "percents"} and a["boxes"] is None
               and a["areas"] is None and a["percents"] is None
               and len(a["probabilities"]) == 2 and a["error"] is None for a in answers)


def test_a_run_is_found_by_its_id_or_the_start_of_it(cnn_run, digits, private_workspace,
                                                      tmp_path, capsys):
    shutil.copytree(cnn_run, private_workspace / "runs" / cnn_run.name)
    assert infer(capsys, cnn_run.name[:8], digits[0])[0] == 0
    project = tmp_path / "digits.studio.json"
    project.write_text("{}", encoding="utf-8")
    shutil.copytree(cnn_run, runs_root(project) / "20990101-000000-other")
    code, lines, _ = infer(capsys, "20990101", digits[0], "--project", project, "--json")
    assert code == 0 and json.loads("\n".join(lines))[0]["error"] is None
    code, lines, err = infer(capsys, "nosuchrun", digits[0])
    assert code == 2 and lines == []
    assert err == (f"studio: error: nosuchrun is not a file or folder, nor a run: There is "
                   f"no run nosuchrun in {private_workspace / 'runs'}.\n")


def test_a_checkpoint_answers_with_its_own_weights(cnn_run, digits, capsys):
    checkpoint = cnn_run / runs.CHECKPOINTS / runs.checkpoint_name(1)
    code, lines, _ = infer(capsys, checkpoint, *digits, "--json", "--top-k", "1")
    assert code == 0
    expected = expected_top(cnn_run, digits, f"{runs.CHECKPOINTS}/{runs.checkpoint_name(1)}")
    assert [a["labels"][0] for a in json.loads("\n".join(lines))] == expected


def test_a_model_file_without_preprocessing_says_which_options_to_give(cnn_run, digits,
                                                                       tmp_path, capsys):
    bare = tmp_path / "bare.keras"
    shutil.copy(cnn_run / runs.MODEL_FILE, bare)
    code, lines, err = infer(capsys, bare, digits[0])
    assert code == 2 and lines == [] and err.count("\n") == 1
    assert "bare.keras does not say how its images were prepared" in err
    assert err.endswith("Give: --size 28 28 --color grayscale --normalization "
                        "unit|symmetric (0..1 or -1..1).\n")
    code, lines, err = infer(capsys, bare, digits[0], "--size", "28", "28")
    assert code == 2 and "all three of --size H W, --color and --normalization" in err
    code, lines, _ = infer(capsys, bare, *digits, "--size", "28", "28", "--color", "grayscale",
                           "--normalization", "unit", "--top-k", "1")
    assert code == 0
    assert [LINE.match(line)["answer"].split()[0] for line in lines] == expected_top(cnn_run,
                                                                                     digits)
    code, _, err = infer(capsys, bare, digits[0], "--size", "32", "32", "--color", "rgb",
                         "--normalization", "unit")
    assert code == 2 and "takes inputs of shape 28 × 28 × 1" in err


def test_bad_models_and_arguments_exit_2_with_one_line(cnn_run, digits, tmp_path, capsys):
    junk = tmp_path / "junk.keras"
    junk.write_text("not a model")
    code, _, err = infer(capsys, junk, digits[0])
    assert code == 2
    assert err == ("studio: error: junk.keras is not a Keras model file: it is damaged, or "
                   "another kind of file named .keras.\n")
    code, _, err = infer(capsys, digits[0], digits[0])
    assert code == 2 and "digit-00000.png is not a Keras model file" in err
    code, _, err = infer(capsys, cnn_run, digits[0], "--top-k", "0")
    assert code == 2 and err == "studio: error: --top-k must be at least 1, not 0.\n"
    with pytest.raises(SystemExit) as usage:
        main(["infer", str(cnn_run)])
    assert usage.value.code == 2
    assert "INPUT" in capsys.readouterr().err


def test_csv_rows_are_answered_by_a_table_model(tmp_path, capsys):
    model, prep = table_model_and_prep()
    model_path = saved_model(tmp_path / "model", model, prep)
    rows = tmp_path / "rows.csv"
    rows.write_text("width,height\n1,2\n3,\n", encoding="utf-8")
    code, lines, _ = infer(capsys, model_path, rows, "--top-k", "2")
    assert code == 0
    assert [LINE.match(line)["source"] for line in lines] == [f"{rows} row 1", f"{rows} row 2"]
    assert all(re.fullmatch(r"(small|medium|large) \d+\.\d%  (small|medium|large) \d+\.\d%",
                            LINE.match(line)["answer"]) for line in lines)
    code, lines, _ = infer(capsys, model_path, tmp_path / "gone.csv", rows)
    assert code == 1 and len(lines) == 3
    assert lines[0] == f"{tmp_path / 'gone.csv'}: error: The CSV file {tmp_path / 'gone.csv'} " \
                       "does not exist."


def test_a_text_run_answers_each_row_of_a_csv_with_a_label_column(tmp_path, capsys):
    run = trained_text_run(tmp_path)
    reviews = tmp_path / "new reviews.csv"
    reviews.write_text('review,label\n"Loved it, great fun",good\nawful mess,bad\n',
                       encoding="utf-8")
    code, lines, err = infer(capsys, run, reviews, "--top-k", "1")
    assert code == 0 and err == ""
    matches = [LINE.match(line) for line in lines]
    assert [m["source"] for m in matches] == [f"{reviews} row 1", f"{reviews} row 2"]
    x = preprocess_texts(run_prep(run), ["Loved it, great fun", "awful mess"])
    best = keras_answers(run / runs.MODEL_FILE, x).argmax(axis=1)
    assert [m["answer"].split()[0] for m in matches] == [["bad", "good"][i] for i in best]
