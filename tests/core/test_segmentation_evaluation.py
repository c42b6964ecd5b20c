"""Evaluating a segmentation run: the model answers its split batch by batch, the pixel
confusion matrix adds up (IGNORE pixels left out) and only the lowest-IoU images keep their
masks; the scores are keras.metrics.MeanIoU's, and ``studio evaluate`` prints them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from studio.cli import main
from studio.core.build.analysis import output_settings
from studio.core.data import sources as data
from studio.core.data.pipelines import make_pipelines
from studio.core.inference import evaluation as evaluation_module
from studio.core.inference.evaluation import evaluate_run
from studio.core.inference.predictor import Predictor
from studio.core.project.document import load_project
from studio.core.runs import folders as runs
from studio.core.tasks.registry import task_for
from studio.core.tasks.segmentation.evaluation import MaskTally, SegmentationEvaluation
from studio.core.tasks.segmentation.masks import IGNORE
from tests.segmentation_runs import SIDE

PROGRESS: list[tuple[str, int, int]] = []


@pytest.fixture(scope="module")
def evaluated(trained_segmenter) -> SegmentationEvaluation:
    """The run's validation split evaluated in batches of 3 (its 4 images: two batches)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evaluation_module, "BATCH_SIZE", 3)
        return evaluate_run(trained_segmenter, "validation",
                            on_progress=lambda *event: PROGRESS.append(event))


def keras_mean_iou(true: np.ndarray, outputs: np.ndarray, classes: int) -> float:
    """keras.metrics.MeanIoU of the answers ``outputs`` (probability maps) against ``true``."""
    import keras

    metric = keras.metrics.MeanIoU(classes, ignore_class=IGNORE, sparse_y_pred=False)
    metric.update_state(true, outputs)
    return float(metric.result())


def oracle(run) -> tuple[float, np.ndarray, np.ndarray]:
    """The run's Keras model's mean IoU (keras.metrics.MeanIoU) on its validation split
    straight from the training pipelines, with the true masks and the answers' masks."""
    project = load_project(run / runs.PROJECT_FILE)
    loaded = data.load(project.dataset)
    pipes = make_pipelines(loaded, project.dataset, 8, project.training.seed,
                           output=output_settings(project.graph, loaded.info))
    model = Predictor.load(run).model
    batches = [(y.numpy(), np.asarray(model(x, training=False)))
               for x, y in pipes.validation.take(pipes.validation_steps)]
    true = np.concatenate([y for y, _ in batches])
    outputs = np.concatenate([out for _, out in batches])
    return (keras_mean_iou(true, outputs, loaded.info.num_classes), true,
            outputs.argmax(axis=-1))


def test_a_segmentation_run_scores_as_keras_mean_iou_does(trained_segmenter,
                                                          evaluated):
    expected, true, answered = oracle(trained_segmenter)
    assert evaluated.split == "validation" and evaluated.size == 4
    assert evaluated.mean_iou == pytest.approx(expected, abs=1e-6)
    assert evaluated.pixel_accuracy == pytest.approx(np.mean(true == answered))
    assert evaluated.confusion.sum() == true.size
    # the one epoch's val_mean_iou, scored by training's metric, is the same number
    last = runs.read_metrics(trained_segmenter)[-1]
    assert evaluated.mean_iou == pytest.approx(last["val_mean_iou"], abs=1e-5)
    assert np.isfinite(evaluated.loss) and evaluated.loss > 0
    # each image's IoU, and the masks of the lowest, are those of the model's answers
    lowest = evaluated.lowest_iou(2)
    for position in lowest:
        shown_true, shown_answer = evaluated.masks(position)
        np.testing.assert_array_equal(shown_true, true[position])
        np.testing.assert_array_equal(shown_answer, answered[position])
        assert evaluated.image_iou[position] == pytest.approx(keras_mean_iou(
            true[position:position + 1], np.eye(11)[answered[position:position + 1]], 11))
    assert ("Answering 4 samples", 3, 4) in PROGRESS and PROGRESS[-1][1:] == (4, 4)


def test_the_tally_keeps_only_the_lowest_images_masks_and_leaves_ignore_out():
    rng = np.random.default_rng(3)
    true = rng.integers(0, 3, (7, 6, 6)).astype(np.uint8)
    true[:, 0] = IGNORE  # an outline row in every image
    answered = true.copy()
    answered[answered == IGNORE] = 2
    wrong = rng.random(answered.shape) < np.linspace(0, 0.6, 7)[:, None, None]
    answered[wrong] = rng.integers(0, 3, int(wrong.sum()))
    whole = SegmentationEvaluation.of_masks("test", ["a", "b", "c"], true, answered, 0.0)
    tally = MaskTally(3, kept=2)
    for start in range(0, 7, 3):
        tally.add(true[start:start + 3], answered[start:start + 3])
    streamed = tally.evaluation("test", ["a", "b", "c"], 0.0)
    np.testing.assert_array_equal(streamed.confusion, whole.confusion)
    np.testing.assert_array_equal(streamed.image_iou, whole.image_iou)
    assert streamed.ignored == whole.ignored == 7 * 6
    lowest = whole.lowest_iou(2)
    assert sorted(streamed.shown) == sorted(lowest.tolist())
    for position in lowest:
        np.testing.assert_array_equal(streamed.masks(position)[1], answered[position])
    assert streamed.masks(int(whole.lowest_iou(7)[-1])) is None
    expected = keras_mean_iou(true, np.eye(3)[answered], 3)
    assert streamed.mean_iou == pytest.approx(expected, abs=1e-6)


def evaluate(capsys, *args) -> tuple[int, str]:
    code = main(["evaluate", *map(str, args)])
    return code, capsys.readouterr().out


def test_studio_evaluate_prints_the_mean_iou_and_each_classs_iou(trained_segmenter,
                                                                 evaluated, capsys,
                                                                 monkeypatch):
    monkeypatch.setattr(evaluation_module, "BATCH_SIZE", 3)
    code, out = evaluate(capsys, trained_segmenter)
    assert code == 0
    heading, text = out.split("\n", 1)
    assert heading == f"{trained_segmenter.name}, final model, validation split"
    assert text == task_for("segmentation").evaluation_text(evaluated) + "\n"
    first = text.splitlines()[0]
    assert first.startswith(f"4 images, {4 * SIDE * SIDE:,} pixels scored: mean IoU ")
    assert f"mean IoU {evaluated.mean_iou:.1%}" in first
    rows = {line.split()[0]: line.split() for line in text.splitlines()[3:14]}
    assert sorted(rows) == sorted(["background", *map(str, range(10))])
    # --json writes the same evaluation (scored once above) as a document
    monkeypatch.setattr(evaluation_module, "evaluate_run", lambda *args, **kw: evaluated)
    code, out = evaluate(capsys, trained_segmenter, "--json")
    document = json.loads(out)
    assert code == 0 and document["mean_iou"] == pytest.approx(evaluated.mean_iou)
    assert [row["iou"] for row in document["per_class"]] == [
        None if np.isnan(v) else pytest.approx(v) for v in evaluated.iou]
    assert document["confusion"] == evaluated.confusion.tolist()
