"""Batch inference: finding a folder's images, answering thousands of files in batches with
progress and stop, bad files as error rows, CSV rows answered, and answers saved as CSV."""

from __future__ import annotations

import csv
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from studio.core.data.image_pipeline import preprocess_image_files
from studio.core.data.table_pipeline import preprocess_rows, preprocess_texts
from studio.core.data.types import DataError
from studio.core.inference.batch import (
    csv_records,
    image_files,
    predict_csv,
    predict_folder,
    write_predictions_csv,
)
from studio.core.inference.predictor import Prediction, Predictor
from studio.core.project.document import DatasetChoice, Project, save_project
from studio.core.runs import folders as runs
from tests.core.test_predictor import (
    keras_answers,
    saved_model,
    table_model_and_prep,
    text_model_and_prep,
    write_digits,
)


@pytest.fixture(scope="module")
def cnn(cnn_run) -> Predictor:
    return Predictor.load(cnn_run)


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_image_files_are_found_at_any_depth_sorted_and_a_link_loop_ends(tmp_path):
    (tmp_path / "b" / "deep").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    for name in ("b/deep/z.PNG", "a.jpg", "b/c.webp", "b/notes.txt", ".hidden/x.png",
                 "m.tiff", "b/deep/readme"):
        (tmp_path / name).write_bytes(b"x")
    os.symlink(tmp_path, tmp_path / "b" / "loop")
    os.symlink(tmp_path / "a.jpg", tmp_path / "b" / "link.jpg")
    found = image_files(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a.jpg", "b/c.webp", "b/deep/z.PNG", "b/link.jpg", "m.tiff"]
    stop = threading.Event()
    stop.set()
    assert image_files(tmp_path, stop) == []
    assert image_files(tmp_path / "no such folder") == []


def test_thousands_of_files_with_bad_ones_among_them_are_answered_in_order(cnn, cnn_run,
                                                                          tmp_path):
    folder = tmp_path / "many"
    digits = write_digits(folder / "digits", 2000)
    (folder / "bad").mkdir()
    (folder / "bad" / "empty.png").write_bytes(b"")
    (folder / "bad" / "text.jpg").write_text("a note")
    (folder / "bad" / "cut.png").write_bytes(digits[0].read_bytes()[:50])
    paths = image_files(folder)
    assert len(paths) == 2003
    events = []
    result = predict_folder(cnn, paths, top_k=2, batch_size=256,
                            on_progress=lambda *event: events.append(event))
    assert not result.stopped and result.seconds > 0
    assert [p.source for p in result.predictions] == [str(p) for p in paths]
    assert [(Path(p.source).name, p.error) for p in result.predictions[:3]] == [
        ("cut.png", "truncated or corrupt"), ("empty.png", "empty file (0 bytes)"),
        ("text.jpg", "not a JPEG, PNG, GIF, BMP, WebP or TIFF image")]
    answered = result.predictions[3:]
    assert all(p.error is None and len(p.labels) == 2 and p.thumbnail is None
               for p in answered)
    expected = keras_answers(cnn_run / runs.MODEL_FILE, preprocess_image_files(cnn.prep, digits))
    assert [p.labels[0] for p in answered] == [str(i) for i in expected.argmax(axis=1)]
    assert np.allclose([p.probabilities[0] for p in answered], expected.max(axis=1), atol=1e-5)
    single = cnn.predict_files(digits[:3], top_k=2)
    assert [p.labels for p in answered[:3]] == [p.labels for p in single]
    checking = [e for e in events if e[0] == "Checking images"]
    answering = [e for e in events if e[0] == "Answering images"]
    assert checking[-1] == ("Checking images", 2003, 2003)
    assert [done for _, done, _ in answering] == [256 * i for i in range(1, 8)] + [2000]
    assert {total for _, _, total in answering} == {2000}


def test_stopping_keeps_the_answers_so_far(cnn, tmp_path):
    paths = write_digits(tmp_path, 300)
    stop = threading.Event()

    def on_progress(what, done, total):
        if what == "Answering images" and done >= 64:
            stop.set()

    result = predict_folder(cnn, paths, on_progress=on_progress, stop=stop, batch_size=64)
    assert result.stopped
    assert [p.source for p in result.predictions] == [str(p) for p in paths[:64]]
    assert all(p.error is None and p.labels for p in result.predictions)
    assert predict_folder(cnn, paths, stop=stop).predictions == []
    assert predict_folder(cnn, paths, stop=stop).stopped
    assert not predict_folder(cnn, []).stopped


def test_a_file_gone_after_the_check_is_an_error_row_and_its_batch_goes_on(cnn, tmp_path):
    paths = write_digits(tmp_path, 10)

    def on_progress(what, done, total):
        if what == "Checking images":
            paths[4].unlink()

    result = predict_folder(cnn, paths, on_progress=on_progress, batch_size=8,
                            thumbnails=True)
    assert [p.error is None for p in result.predictions] == [True] * 4 + [False] + [True] * 5
    assert result.predictions[4].error == "there is no such file"
    assert result.predictions[0].thumbnail.shape == (28, 28, 1)


def test_answers_are_saved_as_csv_atomically(tmp_path):
    predictions = [
        Prediction("a.png", ["7", "1", "9"], [0.9, 0.06, 0.04], None, 0.0021),
        Prediction("b.png", error="truncated or corrupt"),
        Prediction("row 1", value=[2.5, -1.0], seconds=0.5),
    ]
    target = tmp_path / "out" / "answers.csv"
    target.parent.mkdir()
    target.write_text("old")
    write_predictions_csv(predictions, target)
    assert read_csv(target) == [
        ["file", "answer", "probability", "next", "seconds", "problem"],
        ["a.png", "7", "0.900000", "1:0.060000;9:0.040000", "0.002100", ""],
        ["b.png", "", "", "", "0.000000", "truncated or corrupt"],
        ["row 1", "2.5;-1", "", "", "0.500000", ""],
    ]
    assert os.listdir(target.parent) == ["answers.csv"]


def test_csv_rows_are_answered_by_a_table_model(tmp_path):
    model, prep = table_model_and_prep()
    predictor = Predictor.load(saved_model(tmp_path / "model", model, prep))
    table = tmp_path / "rows.csv"
    table.write_text("height;width;label\n2;1.5;x\n\n;;\n7;;y\n", encoding="utf-8")
    records = csv_records(table)
    assert records == [{"height": "2", "width": "1.5", "label": "x"},
                       {"height": "7", "width": "", "label": "y"}]
    predictions = predict_csv(predictor, table, top_k=3)
    assert [p.source for p in predictions] == [f"{table} row {i}" for i in (1, 2)]
    expected = keras_answers(predictor.path, preprocess_rows(prep, records))
    assert [p.labels[0] for p in predictions] == [prep["class_names"][i]
                                                  for i in expected.argmax(axis=1)]
    other = tmp_path / "other.csv"
    other.write_text("colour,size\nred,3\n", encoding="utf-8")
    with pytest.raises(DataError, match="other.csv has none of the columns the model was "
                                        "trained on \\(width, height\\)"):
        predict_csv(predictor, other)
    header_only = tmp_path / "header.csv"
    header_only.write_text("width,height\n", encoding="utf-8")
    with pytest.raises(DataError, match="holds no rows"):
        predict_csv(predictor, header_only)
    with pytest.raises(DataError, match="does not exist"):
        predict_csv(predictor, tmp_path / "gone.csv")


def test_csv_texts_come_from_the_runs_text_column_or_the_one_asked(tmp_path):
    model, prep = text_model_and_prep()
    run = tmp_path / "run"
    predictor = Predictor.load(saved_model(run, model, prep))
    reviews = tmp_path / "reviews.csv"
    reviews.write_text("id,review\n1,A good film\n2,\"bad, bad plot\"\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"has several columns \(id, review\): say which"):
        predict_csv(predictor, reviews)
    texts = ["A good film", "bad, bad plot"]
    expected = keras_answers(predictor.path, preprocess_texts(prep, texts))
    asked = predict_csv(predictor, reviews, top_k=1, text_column="review")
    assert [p.labels[0] for p in asked] == [["bad", "good"][i] for i in expected.argmax(axis=1)]
    with pytest.raises(DataError, match="has no column 'text'"):
        predict_csv(predictor, reviews, text_column="text")
    project = Project(name="Reviews", dataset=DatasetChoice(source="csv", text_column="review"))
    save_project(project, run / runs.PROJECT_FILE)
    assert [p.probabilities for p in predict_csv(predictor, reviews, top_k=1)] == [
        p.probabilities for p in asked]
    single = tmp_path / "single.csv"
    single.write_text("words\ngood film\n", encoding="utf-8")
    assert predict_csv(predictor, single)[0].source == f"{single} row 1"


def test_an_image_model_does_not_answer_csv_rows(cnn, tmp_path):
    table = tmp_path / "rows.csv"
    table.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(DataError, match="this model answers images, not CSV rows"):
        predict_csv(cnn, table)
