"""Exporting a segmentation model: each format written and verified by pixel agreement (the
share of pixels given the Keras model's class) on up to 100 validation images, with the
export's mean IoU beside the Keras model's, checked against an oracle computed here from the
export reloaded on its own; a broken export flagged; the README snippet drawing the mask the
app draws."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from studio.core.data.image_pipeline import preprocess_image_files
from studio.core.export.formats import FORMATS, load_answer
from studio.core.runs import folders as runs
from studio.core.tasks.registry import task_for
from tests.core.test_export import (
    answers_changed,
    check_report,
    exports_of,
    flagged_keras_export,
)
from tests.core.test_predictor import keras_answers, run_prep


@pytest.fixture(scope="module")
def exported(trained_segmenter, tmp_path_factory):
    """``export(fmt)``: the segmentation run exported in ``fmt`` (once per module), as
    (report, folder)."""
    return exports_of(trained_segmenter, tmp_path_factory)


def validation_files(run: Path, kind: str = "images") -> list[Path]:
    """The run's validation images (or their masks: ``tests.segmentation_runs`` writes the
    demo set's images/ and masks/ folders)."""
    return sorted((run.parent.parent / "digits" / kind / "val").glob("*.png"))


def squashed(mask: np.ndarray, side: int) -> np.ndarray:
    """A mask squashed to ``side`` × ``side``: each pixel the class of the mask's pixel its
    centre lands in."""
    rows = ((np.arange(side) + 0.5) * mask.shape[0] / side).astype(int)
    columns = ((np.arange(side) + 0.5) * mask.shape[1] / side).astype(int)
    return mask[rows[:, None], columns[None, :]]


@pytest.fixture(scope="module")
def keras_side(trained_segmenter) -> dict:
    """The run's validation images as its model takes them, the Keras model's maps on them,
    and their true masks at the input's size."""
    prep = run_prep(trained_segmenter)
    x = preprocess_image_files(prep, validation_files(trained_segmenter))
    side = prep["image_size"][0]
    truths = [squashed(np.asarray(Image.open(f)), side)
              for f in validation_files(trained_segmenter, "masks")]
    return {"prep": prep, "x": x, "truths": np.stack(truths),
            "outputs": keras_answers(trained_segmenter / runs.MODEL_FILE, x)}


def mean_iou(truths: np.ndarray, masks: np.ndarray, classes: int) -> float:
    """The mean, over the classes in the truth or the masks, of each one's IoU."""
    ious = []
    for k in range(classes):
        union = np.sum((truths == k) | (masks == k))
        if union:
            ious.append(np.sum((truths == k) & (masks == k)) / union)
    return float(np.mean(ious))


def oracle(keras_side: dict, fmt: str, folder: Path) -> dict:
    """The export in ``folder`` reloaded and compared with the Keras model here: the share
    of pixels whose argmax is Keras's, and the mean IoU of each on the true masks."""
    form = FORMATS[fmt]
    answer = load_answer(form, folder / form.file, keras_side["prep"], 1)
    x = keras_side["x"]
    ours = np.argmax(np.concatenate([answer(x[i:i + 1]) for i in range(len(x))]), -1)
    theirs = np.argmax(keras_side["outputs"], -1)
    classes = keras_side["outputs"].shape[-1]
    return {"agreement": float(np.mean(ours == theirs) * 100),
            "mean_iou": mean_iou(keras_side["truths"], ours, classes),
            "keras_mean_iou": mean_iou(keras_side["truths"], theirs, classes)}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_each_format_exports_a_segmentation_model_verified_by_its_pixels(keras_side, exported,
                                                                          fmt):
    report, out = exported(fmt)
    expected = oracle(keras_side, fmt, out)
    check_report(report, out, fmt, "pixel agreement", (99.5, 98.0), expected)
    assert (f"gives the Keras model's class to {expected['agreement']:.2f}% of the pixels of 4 "
            f"validation samples") in report.note
    assert (f"mean IoU {expected['mean_iou']:.3f}, against the Keras model's "
            f"{expected['keras_mean_iou']:.3f}.") in report.note


def test_an_export_answering_with_moved_masks_is_flagged(trained_segmenter, tmp_path, monkeypatch,
                                                         capsys):
    """...and is checked on at most the task's number of validation samples (here 3)."""
    assert task_for("segmentation").export_samples == 100
    monkeypatch.setattr(type(task_for("segmentation")), "export_samples", 3)
    answers_changed(monkeypatch, lambda y: np.roll(y, 1, axis=-1))  # each pixel: the next class
    report, printed, warned = flagged_keras_export(trained_segmenter, tmp_path / "out", capsys)
    assert printed.splitlines()[1].startswith(
        f"Checked on 3 validation samples: pixel agreement {report['agreement']:.1f}% "
        f"(threshold 99.5%), mean_iou {report['scores']['mean_iou']:.3f}, keras_mean_iou "
        f"{report['scores']['keras_mean_iou']:.3f}, largest difference ")
    assert "under the 99.5% this format should reach" in warned


def test_the_readme_snippet_draws_the_mask_the_app_draws(trained_segmenter, exported, tmp_path,
                                                         monkeypatch, capsys):
    _, out = exported("onnx")
    picture = np.asarray(Image.open(validation_files(trained_segmenter)[0]))
    Image.fromarray(picture[:, :48]).save(out / "picture.png")  # not square: fitted back
    monkeypatch.chdir(out)
    code = re.search(r"```python\n(.*)```", (out / "README.md").read_text(), re.S)[1]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - our own snippet
    prep = run_prep(trained_segmenter)
    (answer,) = task_for("segmentation").image_answers(scope["outputs"], prep["class_names"],
                                                       0, prep, [(64, 48)])
    assert scope["mask"].shape == (64, 48) and len(answer["labels"]) > 0
    assert np.array_equal(scope["mask"], answer["mask"])
    assert np.array_equal(np.asarray(Image.open(out / "mask.png")), answer["mask"])
    shown = {label: area for label, area in zip(answer["labels"], answer["areas"], strict=True)}
    assert ast.literal_eval(capsys.readouterr().out) == shown
