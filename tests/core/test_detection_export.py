"""Exporting a detector: each format written and verified by its boxes (the share of the
Keras model's boxes the export finds again, and each one's mAP@0.5), checked against an
oracle computed here from the export reloaded on its own; a broken export flagged; the README
snippet decoding the boxes as the app does."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from studio.core.data.image_pipeline import preprocess_image_files
from studio.core.export.formats import FORMATS, load_answer
from studio.core.runs import folders as runs
from studio.core.tasks.detection.agreement import export_agreement
from studio.core.tasks.detection.average_precision import average_precision
from studio.core.tasks.detection.boxes import ImageBoxes
from studio.core.tasks.detection.decode import decode
from studio.core.tasks.detection.map_callback import SCORE_THRESHOLD as MAP_THRESHOLD
from studio.core.tasks.registry import task_for
from tests.core.test_detection_training import outputs_finding
from tests.core.test_export import (
    answers_changed,
    check_report,
    exports_of,
    flagged_keras_export,
)
from tests.core.test_predictor import keras_answers, run_prep


@pytest.fixture(scope="module")
def exported(detection_run, tmp_path_factory):
    """``export(fmt)``: the detection run exported in ``fmt`` (once per module), as (report,
    folder)."""
    return exports_of(detection_run, tmp_path_factory)


def validation_files(run: Path) -> list[Path]:
    """The run's validation images (``tests.detection_runs`` writes a YOLO set)."""
    return sorted((run.parent.parent / "digits" / "images" / "val").glob("*.png"))


def true_boxes(image: Path, side: int) -> ImageBoxes:
    """An image's YOLO boxes in pixels of a ``side`` × ``side`` input (squashed)."""
    label = image.parent.parent.parent / "labels" / "val" / f"{image.stem}.txt"
    rows = np.loadtxt(label, ndmin=2)
    centre, size = rows[:, 1:3] * side, rows[:, 3:5] * side
    return ImageBoxes(np.hstack([centre - size / 2, centre + size / 2]).astype(np.float32),
                      rows[:, 0].astype(np.int32))


@pytest.fixture(scope="module")
def keras_side(detection_run) -> dict:
    """The run's validation images as its model takes them, the Keras model's head outputs
    on them, and their true boxes in input pixels."""
    prep = run_prep(detection_run)
    files = validation_files(detection_run)
    x = preprocess_image_files(prep, files)
    return {"prep": prep, "x": x, "outputs": keras_answers(detection_run / runs.MODEL_FILE, x),
            "truths": [true_boxes(f, prep["decoding"]["input_size"][0]) for f in files]}


def oracle(keras_side: dict, fmt: str, folder: Path) -> dict:
    """The export in ``folder`` reloaded and compared with the Keras model here: the share
    of Keras's boxes (at the run's decoding settings) it finds with their class at IoU ≥ 0.9,
    and the mAP@0.5 of each on the true boxes."""
    prep, x, theirs = keras_side["prep"], keras_side["x"], keras_side["outputs"]
    settings = prep["decoding"]
    form = FORMATS[fmt]
    answer = load_answer(form, folder / form.file, prep, 1, 3 if form.quantised else 1)
    ours = np.concatenate([answer(x[i:i + 1]) for i in range(len(x))])
    size = tuple(settings["input_size"])

    def boxes(output, threshold):
        return decode(output, settings["stride"], size, size, "squash", threshold,
                      settings["nms_iou"], settings["max_boxes"])

    found = wanted = 0
    for mine, keras_output in zip(ours, theirs, strict=True):
        got, want = boxes(mine, settings["score_threshold"]), boxes(keras_output,
                                                                     settings["score_threshold"])
        free = list(range(len(got)))
        for box, kind in zip(want.boxes, want.classes, strict=True):
            hit = next((j for j in free if got.classes[j] == kind
                        and iou(box, got.boxes[j]) >= 0.9), None)
            if hit is not None:
                free.remove(hit)
                found += 1
        wanted += len(want)
    classes = len(prep["class_names"])

    def map50(outputs):
        return average_precision(keras_side["truths"], [boxes(o, MAP_THRESHOLD) for o in outputs],
                                 classes).map50 or 0.0

    return {"agreement": found / wanted * 100, "boxes": wanted, "map50": map50(ours),
            "keras_map50": map50(theirs)}


def iou(a, b) -> float:
    width = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - width * height
    return width * height / union


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_each_format_exports_a_detector_verified_by_its_boxes(keras_side, exported, fmt):
    report, out = exported(fmt)
    expected = oracle(keras_side, fmt, out)
    check_report(report, out, fmt, "box agreement", (99.0, 95.0),
                 {k: expected[k] for k in ("agreement", "map50", "keras_map50")})
    assert (f"finds {expected['agreement']:.1f}% of the Keras model's {expected['boxes']} boxes "
            f"(same class, IoU ≥ 0.9) in 4 validation samples") in report.note
    assert (f"mAP@0.5 {expected['map50']:.3f}, against the Keras model's "
            f"{expected['keras_map50']:.3f}.") in report.note
    readme = (out / "README.md").read_text()
    assert "are not in the exported graph but here, in NumPy" in readme


def test_an_export_answering_with_moved_boxes_is_flagged(detection_run, tmp_path, monkeypatch,
                                                         capsys):
    answers_changed(monkeypatch, lambda y: np.roll(y, 2, axis=2))  # every box two cells right
    report, printed, warned = flagged_keras_export(detection_run, tmp_path / "out", capsys)
    assert printed.splitlines()[1].startswith(
        f"Checked on 4 validation samples: box agreement {report['agreement']:.1f}% (threshold "
        f"99%), map50 {report['scores']['map50']:.3f}, keras_map50 "
        f"{report['scores']['keras_map50']:.3f}, largest difference ")
    assert warned.startswith("studio: warning: The Keras (.keras) export finds ")
    assert "under the 99% this format should reach" in warned


@pytest.mark.parametrize("fmt", ["onnx", "tflite-int8"])  # int8: three outputs, tied scores
def test_the_readme_snippet_finds_the_boxes_the_app_finds(detection_run, exported, tmp_path,
                                                          monkeypatch, capsys, fmt):
    _, out = exported(fmt)
    image = validation_files(detection_run)[0]
    (out / "picture.png").write_bytes(image.read_bytes())
    monkeypatch.chdir(out)
    code = re.search(r"```python\n(.*)```", (out / "README.md").read_text(), re.S)[1]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - our own snippet
    found, prep = scope["found"], run_prep(detection_run)
    width, height = scope["image"].size
    (answer,) = task_for("detection").image_answers(scope["outputs"], prep["class_names"], 0,
                                                    prep, [(height, width)])
    assert len(found) == len(answer["boxes"]) > 0 and (width, height) == (128, 128)
    assert [name for name, *_ in found] == answer["labels"]
    assert np.allclose([score for _, score, *_ in found], answer["probabilities"], atol=1e-6)
    assert np.allclose([f[2:] for f in found], answer["boxes"], atol=1e-3)
    assert capsys.readouterr().out.count("\n") == len(found)


def test_the_agreement_counts_boxes_found_again_and_compares_the_maps():
    truths = [ImageBoxes(np.array([[4, 4, 20, 28], [30, 30, 60, 50]], np.float32),
                         np.array([1, 2], np.int32)),
              ImageBoxes(np.array([[10, 36, 30, 60]], np.float32), np.array([0], np.int32))]
    settings = {"stride": 8, "input_size": [64, 64], "score_threshold": 0.3, "nms_iou": 0.5,
                "max_boxes": 100}
    keras = outputs_finding(truths, 3, 8)
    same = export_agreement(keras, keras, settings, truths)
    assert (same.percent, same.scores) == (100.0, pytest.approx({"map50": 1, "keras_map50": 1}))
    assert same.words == ("finds 100.0% of the Keras model's 3 boxes (same class, IoU ≥ 0.9) "
                          "in 2 validation samples")
    wrong = keras.copy()
    wrong[1, ..., :3] = wrong[1][..., [1, 2, 0]]  # the second image's box takes another class
    moved = export_agreement(wrong, keras, settings, truths)
    assert moved.percent == pytest.approx(200 / 3)
    # class 0 is missed (AP 0); class 2's extra box ranks after its true one (AP 1)
    assert moved.scores == pytest.approx({"map50": 2 / 3, "keras_map50": 1.0})
    assert moved.scores_words == "mAP@0.5 0.667, against the Keras model's 1.000."
    empty = np.full_like(keras, -10.0)
    assert export_agreement(empty, empty, settings, None).words == (
        "finds no box in 2 validation samples, nor does the Keras model")
    assert export_agreement(keras, empty, settings, None).percent == 0.0



def test_the_int8_export_splits_the_head_into_parts_answering_as_it_does(detection_run,
                                                                          exported):
    import tensorflow as tf

    from studio.core.inference.predictor import Predictor

    model = Predictor.load(detection_run).model
    task = task_for("detection")
    assert task.export_model(model, False) == (model, 1)
    split, parts = task.export_model(model, True)
    x = np.random.default_rng(0).random((2, *model.inputs[0].shape[1:]), np.float32)
    joined = np.concatenate([np.asarray(part) for part in split(x)], axis=-1)
    assert parts == 3 and np.allclose(joined, np.asarray(model(x)), atol=1e-6)
    _, out = exported("tflite-int8")
    interpreter = tf.lite.Interpreter(model_path=str(out / "model.tflite"))
    answers = interpreter.get_signature_runner().get_output_details().values()
    assert [answer["shape"][-1] for answer in answers] == [10, 2, 2]
    assert len({answer["quantization"] for answer in answers}) == 3


def test_int8_rounds_a_detectors_log_sizes_at_their_own_scale_not_the_heatmaps(tmp_path):
    """A head whose heatmap logits span 20 (−16.8 to 3.2, as trained ones do) and log sizes 2:
    in one int8 output the sizes are rounded to the heatmaps' scale (20 / 255); split, to
    theirs (2 / 255)."""
    import keras

    from studio.core.export.formats import write_model

    inputs = keras.Input((4, 4, 2))
    head = keras.layers.Conv2D(3 + 4, 1)
    model = keras.Model(inputs, head(inputs))
    head.set_weights([np.array([[[[20, 0, 20, 4, 0, 2, 0], [0, 20, 0, 0, 4, 0, 2]]]], np.float32),
                      np.array([-16.8, -16.8, -16.8, -2, -2, 0, 0], np.float32)])
    x = np.random.default_rng(1).random((100, 4, 4, 2), np.float32)
    expected = np.asarray(model(x))
    errors = []
    for converted, parts in ((model, 1), task_for("detection").export_model(model, True)):
        folder = tmp_path / str(parts)
        folder.mkdir()
        path = write_model(FORMATS["tflite-int8"], converted, Path(), folder, x)
        answer = load_answer(FORMATS["tflite-int8"], path, {}, 1, parts)
        got = np.concatenate([answer(x[i:i + 1]) for i in range(len(x))])
        errors.append(np.abs(got - expected)[..., 5:].mean())
    one, split = errors
    assert split < 0.01 < one and split < one / 3

