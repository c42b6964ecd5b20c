"""Evaluating a detection run: mAP@0.5, mAP@[0.5:0.95], per-class AP, precision-recall curves
and each class's mistakes, through ``evaluate_run`` and ``studio evaluate``."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from studio.cli import main
from studio.core.build.analysis import output_settings
from studio.core.data import sources as data
from studio.core.data.pipelines import make_pipelines
from studio.core.inference import evaluation as evaluation_module
from studio.core.inference.evaluation import EvaluationCancelled, evaluate_run
from studio.core.inference.predictor import Predictor
from studio.core.project.document import load_project
from studio.core.runs import folders as runs
from studio.core.tasks.detection.average_precision import average_precision
from studio.core.tasks.detection.boxes import ImageBoxes
from studio.core.tasks.detection.decode import decode
from studio.core.tasks.detection.evaluation import DetectionEvaluation
from studio.core.tasks.detection.labels import BoxLabels
from studio.core.tasks.detection.targets import detection_targets
from studio.core.tasks.registry import task_for
from tests.core.test_detection_targets import perfect_output

MAP_THRESHOLD = 0.05
"""The score the oracle decodes down to: COCO's, and training's val_map50's."""


PROGRESS: list[tuple[str, int, int]] = []


@pytest.fixture(scope="module")
def evaluated(detection_run) -> DetectionEvaluation:
    return evaluate_run(detection_run, "validation",
                        on_progress=lambda *event: PROGRESS.append(event))


def oracle(run):
    """The run's validation images predicted by its Keras model, decoded with its recorded
    settings and scored by ``average_precision``, straight from the training pipelines."""
    project = load_project(run / runs.PROJECT_FILE)
    loaded = data.load(project.dataset)
    pipes = make_pipelines(loaded, project.dataset, 8, project.training.seed,
                           output=output_settings(project.graph, loaded.info))
    images, truths = pipes.scoring
    model = Predictor.load(run).model
    outputs = np.concatenate([np.asarray(model(x, training=False)) for x in images])
    settings = json.loads((run / runs.PREPROCESSING_FILE).read_text())["decoding"]
    size = tuple(settings["input_size"])
    found = [decode(output, settings["stride"], size, size, "squash", MAP_THRESHOLD,
                    settings["nms_iou"], settings["max_boxes"]) for output in outputs]
    return average_precision(truths, found, loaded.info.num_classes), len(truths)


def test_a_detection_run_scores_as_average_precision_does_directly(detection_run, evaluated):
    expected, images = oracle(detection_run)
    scores = evaluated.scores
    assert len(evaluated.truths) == images and evaluated.split == "validation"
    assert scores.map50 == pytest.approx(expected.map50, abs=1e-6)
    assert scores.map == pytest.approx(expected.map, abs=1e-6)
    assert scores.class_ap50 == pytest.approx(expected.class_ap50, abs=1e-6)
    assert scores.class_ap == pytest.approx(expected.class_ap, abs=1e-6)
    for ours, theirs in zip(scores.curves, expected.curves, strict=True):
        np.testing.assert_allclose(ours.precision, theirs.precision, atol=1e-6)
        np.testing.assert_allclose(ours.recall, theirs.recall, atol=1e-6)
    for ours, theirs in zip(scores.mistakes, expected.mistakes, strict=True):
        np.testing.assert_array_equal(ours.false_positive_images, theirs.false_positive_images)
        np.testing.assert_allclose(ours.false_positive_boxes, theirs.false_positive_boxes,
                                   atol=1e-3)
        np.testing.assert_array_equal(ours.missed_images, theirs.missed_images)
    # the one epoch's val_map50, scored by the training callback, is the same number
    last = runs.read_metrics(detection_run)[-1]
    assert scores.map50 == pytest.approx(last["val_map50"], abs=1e-6)
    assert np.isfinite(evaluated.loss) and evaluated.loss > 0


def test_the_evaluation_reports_progress_and_stops_when_asked(detection_run, evaluated):
    assert ("Answering 4 samples", 4, 4) in PROGRESS
    stop = threading.Event()
    stop.set()
    with pytest.raises(EvaluationCancelled):
        evaluate_run(detection_run, "validation", stop=stop)


def test_mistakes_are_found_at_iou_half_and_given_in_each_images_own_pixels():
    # Input 32 x 32 at stride 4; the images are 64 x 48 (height, width) as stored, squashed
    # to the input: x scales by 32 / 48, y by 32 / 64.
    classes, grid, stride = 2, (8, 8), 4
    sizes = [(64, 48), (64, 48)]
    scale = np.array([32 / 48, 32 / 64, 32 / 48, 32 / 64], np.float32)
    true = [ImageBoxes(np.array([[6, 8, 30, 40], [24, 20, 45, 60]], np.float32),
                       np.array([0, 1], np.int32)),
            ImageBoxes(np.array([[3, 4, 27, 36]], np.float32), np.array([1], np.int32))]
    # image 0: both boxes found; image 1: its box missed, a class-0 box found where none is
    answered = [true[0], ImageBoxes(np.array([[21, 28, 45, 60]], np.float32),
                                    np.array([0], np.int32))]
    outputs = np.stack([perfect_output(detection_targets(
        a.boxes * scale, a.classes, classes, grid, stride).numpy(), classes)
        for a in answered]).astype(np.float32)
    decoding = {"stride": stride, "input_size": [32, 32], "resize": "squash",
                "nms_iou": 0.5, "max_boxes": 100}
    evaluation = DetectionEvaluation.of_outputs(
        "validation", ["a", "b"], outputs, BoxLabels.of(true, sizes), decoding, 0.5,
        np.array([7, 3]))
    # a: its one box found, ranked before the false positive (equal scores: image order);
    # b: one of its two boxes found, so precision 1 at COCO's recalls 0, 0.01, ..., 0.5
    assert evaluation.scores.class_ap50 == pytest.approx((1.0, 51 / 101))
    (wrong,) = evaluation.image_mistakes(0)
    assert wrong.position == 1 and wrong.image_size == (64, 48) and not len(wrong.missed)
    np.testing.assert_allclose(wrong.false_positives, [[21, 28, 45, 60]], atol=1e-3)
    (missed,) = evaluation.image_mistakes(1)
    assert missed.position == 1 and not len(missed.false_positives)
    np.testing.assert_allclose(missed.missed, [[3, 4, 27, 36]], atol=1e-3)
    assert evaluation.sample_indices([missed.position]) == [3]
    document = evaluation.to_dict()
    assert [row["false_positives"] for row in document["per_class"]] == [1, 0]
    assert [row["missed"] for row in document["per_class"]] == [0, 1]
    assert document["images"] == 2 and document["boxes"] == 3


def evaluate(capsys, *args) -> tuple[int, str]:
    code = main(["evaluate", *map(str, args)])
    return code, capsys.readouterr().out


def test_studio_evaluate_prints_the_maps_and_each_classs_ap(detection_run, evaluated,
                                                            capsys, monkeypatch):
    code, out = evaluate(capsys, detection_run)
    assert code == 0
    heading, text = out.split("\n", 1)
    assert heading == f"{detection_run.name}, final model, validation split"
    assert text == task_for("detection").evaluation_text(evaluated) + "\n"
    scores = evaluated.scores
    first = text.splitlines()[0]
    assert first.startswith(f"4 images, {evaluated.box_count} boxes: mAP@0.5 ")
    assert f"mAP@0.5 {scores.map50:.1%}" in first and f"[0.5:0.95] {scores.map:.1%}" in first
    rows = {line.split()[0]: line.split() for line in text.splitlines()[3:13]}
    assert sorted(rows) == [str(d) for d in range(10)]
    for k, row in enumerate(rows[str(d)] for d in range(10)):
        ap = scores.class_ap50[k]
        assert row[1] == ("—" if ap is None else f"{ap:.1%}")
        assert int(row[4]) == len(scores.mistakes[k].false_positive_boxes)
    # --json writes the same evaluation (scored once above) as a document
    monkeypatch.setattr(evaluation_module, "evaluate_run", lambda *args, **kw: evaluated)
    code, out = evaluate(capsys, detection_run, "--json")
    document = json.loads(out)
    assert code == 0 and document["map50"] == pytest.approx(scores.map50)
    assert document["map"] == pytest.approx(scores.map)
    assert [row["ap50"] for row in document["per_class"]] == pytest.approx(
        list(scores.class_ap50))
    assert [row["ap"] for row in document["per_class"]] == pytest.approx(list(scores.class_ap))
