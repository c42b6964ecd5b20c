"""Issue 24's segmentation training end to end: ``studio train`` on a segmentation project
trains a tiny model for one epoch and logs the loss, its cross-entropy and Dice parts, pixel
accuracy and mean IoU for training and validation, with the classes weighed in the loss;
resuming reloads the checkpoint (the task's Keras objects registered) and goes on; ``studio
data`` prints a segmentation folder's health report."""

from __future__ import annotations

import contextlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from studio.cli import main
from studio.core.project.document import save_project
from studio.core.runs.folders import read_metrics
from studio.core.runs.history import read_run
from studio.core.training.trainer import resume
from tests.core.test_segmentation_data import pair
from tests.segmentation_runs import demo_folder, segmenter

SCORES = ("loss", "cross_entropy_loss", "dice_loss", "pixel_accuracy", "mean_iou")


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    return demo_folder(tmp_path_factory.mktemp("digits") / "digits")


@pytest.fixture(scope="module")
def trained(digits):
    """One epoch trained by ``studio train`` with balanced classes: its JSON lines."""
    project = segmenter(digits)
    project.dataset.class_weights = True
    path = digits.parent / "pixels.studio.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        save_project(project, path)
        assert main(["train", str(path), "--json"]) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_studio_train_logs_the_loss_its_parts_pixel_accuracy_and_mean_iou(trained):
    (epoch,) = [line for line in trained if line["type"] == "epoch"]
    for name in SCORES:
        for logged in (name, f"val_{name}"):
            assert np.isfinite(epoch[logged]), logged
    for prefix in ("", "val_"):  # the default loss is the sum of both parts
        assert epoch[f"{prefix}loss"] == pytest.approx(
            epoch[f"{prefix}cross_entropy_loss"] + epoch[f"{prefix}dice_loss"], rel=1e-4)
        assert 0.0 <= epoch[f"{prefix}mean_iou"] <= epoch[f"{prefix}pixel_accuracy"] <= 1.0
        # pixel accuracy is no output's accuracy: no classifier's accuracy is made of it
        assert f"{prefix}accuracy" not in epoch
    assert trained[-1]["status"] == "finished"


def test_a_run_records_its_best_mean_iou_and_the_pickers_show_it(trained_segmenter):
    run = read_run(trained_segmenter)
    (row,) = read_metrics(trained_segmenter)
    for name in ("val_mean_iou", "val_pixel_accuracy", "mean_iou", "val_loss"):
        assert run.best[name] == pytest.approx(row[name])
    assert run.task == "segmentation"
    assert run.headline() == f"val mean IoU {row['val_mean_iou'] * 100:.1f}%"


def test_the_classes_are_weighed_in_the_saved_loss_and_resuming_goes_on(trained):
    run_dir = Path(trained[-1]["run_dir"])
    prep = json.loads((run_dir / "preprocessing.json").read_text())
    assert prep["task"] == "segmentation" and prep["image_size"] == [16, 16]
    with zipfile.ZipFile(run_dir / "model.keras") as saved:
        loss = json.loads(saved.read("config.json"))["compile_config"]["loss"]
    assert (loss["class_name"], loss["config"]["kind"]) == ("SegmentationLoss",
                                                           "cross_entropy_dice")
    weights = loss["config"]["class_weights"]
    assert len(weights) == 11 and min(weights) < 1.0 < max(weights)
    again = resume(run_dir, epochs=2)
    assert again.status == "finished", again
    assert [row["epoch"] for row in again.epochs] == [1, 2]
    assert all(f"val_{name}" in again.epochs[1] for name in SCORES)


def test_studio_data_prints_a_segmentation_folders_health(digits, tmp_path, capsys):
    assert main(["data", str(digits)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{digits}: segmentation dataset (images and masks folders), "
                             "12 images, 49,152 pixels in 11 classes; train 8, validation 4")
    assert out[1].startswith("  background: ")
    assert out[-1].startswith("Problem: The classes are strongly imbalanced in images")
    assert main(["data", str(digits / "images"), "--masks", str(digits / "masks"),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["layout"], report["total_images"]) == ("separate", 12)
    pair(tmp_path / "one" / "images", tmp_path / "one" / "masks", "a",
         np.zeros((3, 4), np.uint8))
    assert main(["data", str(tmp_path / "one")]) == 1  # one class: blocks training
    assert "Problem: The masks hold one class only" in capsys.readouterr().out
    assert main(["data", str(tmp_path / "none"), "--segmentation"]) == 2


def test_the_project_chooses_the_loss_and_a_logits_output_is_scored_as_logits(digits):
    from studio.core.build.keras_model import build_model, compile_model
    from studio.core.data import sources

    project = segmenter(digits)
    project.graph.node("conv2d_2").params["activation"] = "linear"
    project.training.loss = "dice"
    model = build_model(project.graph, sources.describe(project.dataset), project.name)
    compile_model(model, project.graph, project.training, "segmentation", steps_per_epoch=1,
                  class_weights=[2.0] * 11)
    compiled = model.get_compile_config()
    config = compiled["loss"]["config"]
    assert (config["kind"], config["from_logits"], config["class_weights"]) == (
        "dice", True, [2.0] * 11)
    metrics = [m["config"] for m in compiled["metrics"]]
    assert [m["name"] for m in metrics] == ["pixel_accuracy", "mean_iou", "cross_entropy_loss",
                                            "dice_loss"]
    assert all((m["from_logits"], m["class_weights"]) == (True, [2.0] * 11)
               for m in metrics[2:])  # the parts as the loss computes them
