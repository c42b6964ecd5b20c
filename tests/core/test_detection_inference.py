"""Answering images with a detection run: boxes in the image's own pixels, decoded with the
run's settings, decoded again for other settings without the model, as JSON from
``studio infer`` and one CSV row per box."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from PIL import Image

from studio.cli import main
from studio.core.inference.batch import image_files, predict_folder, write_predictions_csv
from studio.core.inference.predictor import Predictor, redecoded
from studio.core.tasks.registry import task_for
from tests.detection_runs import SCORE_THRESHOLD

WIDTH, HEIGHT = 192, 96
"""A size unlike the model's 64 × 64 input (and not square), so boxes must be mapped."""


@pytest.fixture(scope="module")
def run(detection_run):
    return detection_run


@pytest.fixture(scope="module")
def predictor(run) -> Predictor:
    return Predictor.load(run)


@pytest.fixture(scope="module")
def images(run, tmp_path_factory) -> list:
    """Three demo images stretched to WIDTH × HEIGHT."""
    folder = tmp_path_factory.mktemp("wide")
    sources = image_files(run.parent.parent / "digits")[:3]
    paths = []
    for source in sources:
        path = folder / f"{source.stem}.png"
        Image.open(source).convert("RGB").resize((WIDTH, HEIGHT)).save(path)
        paths.append(path)
    return paths


def counting(predictor: Predictor, monkeypatch) -> list:
    """The batches the model is run on from now on."""
    calls = []
    model = predictor._call
    monkeypatch.setattr(predictor, "_call", lambda x: calls.append(len(x)) or model(x))
    return calls


def test_boxes_come_in_the_image_pixels_with_classes_and_scores(predictor, images):
    answers = predictor.predict_files(images)
    assert sum(len(p.boxes) for p in answers) > 0
    decoding = predictor.prep["decoding"]
    assert decoding["score_threshold"] == SCORE_THRESHOLD
    for answer in answers:
        assert answer.error is None and answer.task == "detection"
        assert answer.decoding == {**decoding, "image_size": [HEIGHT, WIDTH]}
        boxes = np.array(answer.boxes).reshape(-1, 4)
        assert np.all(boxes >= 0) and np.all(boxes[:, [0, 2]] <= WIDTH)
        assert np.all(boxes[:, [1, 3]] <= HEIGHT)
        assert set(answer.labels) <= set(decoding["class_names"])
        assert answer.probabilities == sorted(answer.probabilities, reverse=True)
        assert min(answer.probabilities, default=1) >= SCORE_THRESHOLD
        # The same output decoded in the model's 64 × 64 input, stretched as the image was
        (inside,) = task_for("detection").answers(answer.output[np.newaxis],
                                                  decoding["class_names"], 0, decoding)
        scale = [WIDTH / 64, HEIGHT / 64] * 2
        np.testing.assert_allclose(boxes, np.array(inside["boxes"]).reshape(-1, 4) * scale,
                                   rtol=1e-5, atol=1e-3)


def test_a_new_threshold_keeps_the_better_boxes_without_running_the_model(
        predictor, images, monkeypatch):
    (answer,) = predictor.predict_files(images[:1])
    calls = counting(predictor, monkeypatch)
    assert len(answer.boxes) >= 2
    same = redecoded(answer)
    assert same.boxes == answer.boxes and same.labels == answer.labels
    higher = float(np.median(answer.probabilities))
    fewer = redecoded(answer, score_threshold=higher)
    assert 0 < len(fewer.boxes) < len(answer.boxes)
    kept = {(label, tuple(box)) for label, box in zip(answer.labels, answer.boxes, strict=True)}
    assert {(label, tuple(box)) for label, box in
            zip(fewer.labels, fewer.boxes, strict=True)} <= kept
    assert min(fewer.probabilities) >= higher
    assert fewer.decoding["score_threshold"] == higher and fewer.output is answer.output
    looser = redecoded(answer, nms_iou=1.0)
    assert len(looser.boxes) >= len(answer.boxes)
    assert calls == []


def test_an_answer_that_kept_no_output_cannot_be_decoded_again(predictor, images):
    (answer,) = predictor.predict_files(images[:1])
    answer.output = None
    with pytest.raises(ValueError, match="keeps no model output"):
        redecoded(answer, score_threshold=0.5)


def test_infer_json_gives_the_boxes(run, predictor, images, capsys):
    assert main(["infer", str(run), str(images[0]), "--json"]) == 0
    (printed,) = json.loads(capsys.readouterr().out)
    (answer,) = predictor.predict_files(images[:1])
    assert printed["labels"] == answer.labels and len(printed["boxes"]) > 0
    np.testing.assert_allclose(printed["boxes"], answer.boxes, rtol=1e-5)
    np.testing.assert_allclose(printed["probabilities"], answer.probabilities, rtol=1e-5)
    assert "output" not in printed and "decoding" not in printed


def test_a_folder_is_written_one_row_per_box(predictor, images, tmp_path):
    broken = images[0].parent / "broken.png"
    broken.write_bytes(b"not an image")
    result = predict_folder(predictor, [*images, broken])
    target = tmp_path / "answers.csv"
    write_predictions_csv(result.predictions, target)
    with target.open(newline="") as file:
        header, *rows = list(csv.reader(file))
    assert header == ["file", "class", "score", "x_min", "y_min", "x_max", "y_max", "seconds",
                      "problem"]
    for answer in result.predictions[:-1]:
        mine = [row for row in rows if row[0] == answer.source]
        assert len(mine) == max(1, len(answer.boxes))
        for row, label, p, box in zip(mine, answer.labels, answer.probabilities, answer.boxes,
                                      strict=False):
            assert row[1] == label and float(row[2]) == pytest.approx(p, abs=1e-6)
            np.testing.assert_allclose([float(v) for v in row[3:7]], box, atol=0.01)
    (last,) = [row for row in rows if row[0] == str(broken)]
    assert last[1:7] == [""] * 6 and last[8]
