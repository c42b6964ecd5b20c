"""Training a detector with the one trainer: a detection dataset in the project, its pipeline,
the task's output check, loss parts and mAP in every epoch, resume; and the one-line errors for
a dataset of the other kind."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace

import jsonschema
import numpy as np
import pytest
from PIL import Image

from studio.core.build.analysis import analyze, output_settings
from studio.core.data import sources
from studio.core.data.detection import demo, formats
from studio.core.data.detection import source as detection_source
from studio.core.data.pipelines import make_pipelines
from studio.core.data.splits import layout_splits
from studio.core.data.types import DataError, DataPending
from studio.core.model.graph import Graph, Node
from studio.core.project.document import (
    DatasetChoice,
    Project,
    SearchSettings,
    project_schema,
)
from studio.core.project.migrations import migrate
from studio.core.project.templates import small_detector, small_detector_training
from studio.core.tasks.detection.boxes import ImageBoxes
from studio.core.tasks.detection.labels import BoxLabels
from studio.core.tasks.detection.map_callback import map_scores, scoring_interval
from studio.core.tasks.registry import task_for
from studio.core.training.trainer import resume, train
from tests.helpers import digit_folder

SIDE = 64


@pytest.fixture(scope="module")
def yolo_set(tmp_path_factory):
    """The demo set's first 8 training and 4 validation images, written as a YOLO dataset."""
    root = tmp_path_factory.mktemp("detection") / "digits"
    demo.write_demo(root, "yolo", demo.generate(train=8, validation=4))
    return root


def detector(root) -> Project:
    """Two strided convolutions (a stride of 8) and a DetectionHead, on the set at 64 × 64."""
    graph = Graph.from_chain([
        Node("input_1", "Input", {"shape": [SIDE, SIDE, 3]}),
        Node("conv2d_1", "Conv2D", {"filters": 8, "kernel_size": 3, "strides": 4,
                                    "padding": "same", "activation": "relu"}),
        Node("conv2d_2", "Conv2D", {"filters": 8, "kernel_size": 3, "strides": 2,
                                    "padding": "same", "activation": "relu"}),
        Node("head", "DetectionHead", {"classes": 10})])
    project = Project(name="Digits", graph=graph)
    project.dataset = DatasetChoice(source="detection", path=str(root), task="detection",
                                    image_size=[SIDE, SIDE], cache="memory")
    project.training.epochs = 1
    project.training.batch_size = 4
    return project


def test_train_logs_the_loss_parts_and_map_and_resume_continues(yolo_set, tmp_path):
    project = detector(yolo_set)
    # The best checkpoint by val_map50 is written only if the score reaches the epoch's logs
    # before the checkpoint callback reads them; resuming needs it.
    project.training.checkpoints.keep_best_only = True
    project.training.checkpoints.monitor = "val_map50"
    project.training.early_stopping.enabled = True
    project.training.early_stopping.monitor = "val_map50"
    result = train(project, tmp_path / "runs")
    assert result.status == "finished", result
    (epoch,) = result.epochs
    for name in ("loss", "heatmap_loss", "size_loss", "offset_loss", "val_loss",
                 "val_heatmap_loss", "val_size_loss", "val_offset_loss"):
        assert np.isfinite(epoch[name]), name
    assert 0.0 <= epoch["val_map50"] <= 1.0 and 0.0 <= epoch["val_map"] <= epoch["val_map50"]
    prep = json.loads((result.run_dir / "preprocessing.json").read_text())
    assert prep["task"] == "detection" and prep["image_size"] == [SIDE, SIDE]
    assert prep["decoding"] == {
        "stride": 8, "input_size": [SIDE, SIDE], "grid": [8, 8], "resize": "squash",
        "class_names": [str(d) for d in range(10)], "score_threshold": 0.3, "nms_iou": 0.5,
        "max_boxes": 100}
    config = json.loads((result.run_dir / "config.json").read_text())
    assert config["samples"] == {"train": 8, "validation": 4, "test": 0}

    again = resume(result.run_dir, epochs=2)
    assert again.status == "finished"
    assert [row["epoch"] for row in again.epochs] == [1, 2]
    assert "val_map50" in again.epochs[1] and again.epochs[0] == epoch


def test_the_pipeline_maps_boxes_to_the_input_and_targets_their_centres(yolo_set):
    choice = detector(yolo_set).dataset
    choice.augmentation.flip_horizontal = True
    loaded = sources.load(choice)
    with pytest.raises(DataError, match="Streaming boxes needs the model's DetectionHead"):
        make_pipelines(loaded, choice, 4, 0)
    head = output_settings(detector(yolo_set).graph, loaded.info)
    assert head == {"grid": [8, 8], "score_threshold": 0.3, "nms_iou": 0.5, "max_boxes": 100}
    pipes = make_pipelines(loaded, choice, 4, 0, output=head)
    x, y = next(iter(pipes.validation))
    assert x.shape == (4, SIDE, SIDE, 3) and y.shape == (4, 8, 8, 15)
    _, truths = pipes.scoring
    first = loaded.labels.image(loaded.splits["validation"][0])
    expected = first.boxes * SIDE / demo.SIDE  # squashed from 128 to 64 pixels
    np.testing.assert_allclose(truths[0].boxes, expected, rtol=1e-6)
    centres = {(int(r), int(c)) for c, r in (expected[:, :2] + expected[:, 2:]) / 2 / 8}
    assert set(zip(*np.nonzero(y[0, ..., -1].numpy()), strict=True)) == centres
    _, flipped = next(iter(pipes.train))  # augmented: still one heatmap peak per taught box
    assert (flipped[..., :10].numpy() == 1).sum() >= flipped[..., -1].numpy().sum() > 0


def test_a_cached_split_keeps_its_boxes_when_images_are_added_before_it(yolo_set, tmp_path):
    root = tmp_path / "digits"
    shutil.copytree(yolo_set, root)
    choice = replace(detector(root).dataset, cache="disk")
    head = {"grid": [8, 8], "score_threshold": 0.3, "nms_iou": 0.5, "max_boxes": 100}

    def validation_targets():
        pipes = make_pipelines(sources.load(choice), choice, 4, 0, output=head)
        return np.concatenate([y.numpy() for _, y in pipes.validation.take(1)])

    before = validation_targets()  # writes the validation images' disk cache
    Image.fromarray(np.full((128, 128), 200, np.uint8)).save(root / "images/train/0.png")
    (root / "labels/train/0.txt").write_text("3 0.5 0.5 0.25 0.25\n")  # sorts first
    np.testing.assert_array_equal(validation_targets(), before)


def outputs_finding(truths: list[ImageBoxes], classes: int, stride: int) -> np.ndarray:
    """Head outputs (an 8 × 8 grid) made from the true boxes' own centres and sizes, sure of
    each box."""
    outputs = np.full((len(truths), 8, 8, classes + 4), -10.0, np.float32)
    for image, truth in zip(outputs, truths, strict=True):
        for (x0, y0, x1, y1), k in zip(truth.boxes / stride, truth.classes, strict=True):
            column, row = int((x0 + x1) / 2), int((y0 + y1) / 2)
            image[row, column, k] = 10.0
            offset = np.array([(x0 + x1) / 2 - column, (y0 + y1) / 2 - row]).clip(0.01, 0.99)
            image[row, column, classes:classes + 2] = np.log(offset / (1 - offset))
            image[row, column, classes + 2:] = np.log([x1 - x0, y1 - y0])
    return outputs


def test_map_of_outputs_that_match_the_truth_is_one():
    """Head outputs made from the true boxes' own centres and sizes decode to those boxes."""
    stride, classes = 8, 3
    truths = [ImageBoxes(np.array([[8, 8, 24, 40], [40, 0, 64, 16]], np.float32), [0, 2]),
              ImageBoxes(np.array([[16, 16, 48, 32]], np.float32), [1])]
    outputs = outputs_finding(truths, classes, stride)
    settings = {"stride": stride, "input_size": [64, 64], "nms_iou": 0.5, "max_boxes": 100}
    assert map_scores(outputs, truths, settings) == pytest.approx({"val_map50": 1.0,
                                                                  "val_map": 1.0})
    shifted = np.roll(outputs, 2, axis=2)  # every centre two cells to the right
    assert map_scores(shifted, truths, settings)["val_map50"] < 0.5
    task = task_for("detection")
    assert task.agreement(outputs, outputs) == 100.0
    assert task.agreement(shifted, outputs) < 100.0


def test_large_validation_sets_are_scored_every_few_epochs():
    assert [scoring_interval(n) for n in (1, 1000, 1001, 4000, 100_000)] == [1, 1, 2, 4, 5]


def test_the_output_check_names_the_class_counts_and_fixes_them(yolo_set):
    info = sources.describe(detector(yolo_set).dataset)
    assert (info.task, info.num_classes, info.sample_shape) == ("detection", 10, (SIDE, SIDE, 3))
    graph = small_detector((SIDE, SIDE, 3), classes=6)
    (problem,) = analyze(graph, info).problems
    assert problem.message == ("The head expects 6 classes; the dataset has 10. Set classes "
                               "to 10.")
    (fix,) = problem.fixes
    fix.apply(graph)
    assert analyze(graph, info).problems == []
    odd = replace(info, sample_shape=(60, 60, 3))  # halved three times: 30, 15, 8 cells
    (problem,) = analyze(small_detector((60, 60, 3)), odd).problems
    assert problem.message.startswith("The DetectionHead's grid of 8 × 8 cells does not divide "
                                      "the 60 × 60 input evenly")


def test_a_classifier_on_boxes_and_a_head_on_classes_are_said_plainly(yolo_set):
    info = sources.describe(detector(yolo_set).dataset)
    classifier = Graph.from_chain([Node("input_1", "Input", {"shape": [SIDE, SIDE, 3]}),
                                   Node("flatten_1", "Flatten", {}),
                                   Node("dense_1", "Dense", {"units": 10,
                                                             "activation": "softmax"})])
    (problem,) = analyze(classifier, info).problems
    assert "digits is a detection dataset" in problem.message
    assert "end the model with a DetectionHead" in problem.message
    mnist = sources.describe(DatasetChoice())
    (problem,) = analyze(small_detector((28, 28, 1)), mnist).problems
    assert "ends in a DetectionHead, which finds boxes" in problem.message
    assert "MNIST-10k is a classification dataset" in problem.message


def test_a_folder_of_the_other_kind_fails_in_one_line(yolo_set, tmp_path, monkeypatch):
    with pytest.raises(DataError) as caught:
        sources.describe(DatasetChoice(source="folder", path=str(yolo_set)))
    assert str(caught.value) == (f"{yolo_set} is a detection dataset (YOLO labels), not a "
                                 "folder of images per class: choose it as a detection "
                                 "dataset.")
    classes = digit_folder(tmp_path / "digits")

    def walk(path):
        raise AssertionError(f"{path} was searched for labels")

    with monkeypatch.context() as patched:  # class folders hint at no labels: none searched
        patched.setattr(formats, "looks_like_detection", walk)
        assert sources.describe(DatasetChoice(source="folder", path=str(classes))).num_classes == 2
    table = tmp_path / "rows.csv"
    table.write_text("a,label\n1,x\n2,y\n")
    with pytest.raises(DataError, match="A CSV's labels are classes or numbers, so it cannot "
                                        "train detection: choose classification"):
        sources.describe(DatasetChoice(source="csv", path=str(table), task="detection"))
    with pytest.raises(DataError, match="is a classification folder") as caught:
        sources.describe(DatasetChoice(source="detection", path=str(classes), task="detection"))
    assert "\n" not in str(caught.value)


def test_a_class_folder_that_hints_at_labels_is_searched_once_until_it_changes(
        tmp_path, monkeypatch):
    classes = digit_folder(tmp_path / "digits")
    (classes / "README.txt").write_text("digits")  # a .txt file hints at YOLO labels
    searches = []
    real = formats.looks_like_detection
    monkeypatch.setattr(formats, "looks_like_detection",
                        lambda path: searches.append(path) or real(path))
    choice = DatasetChoice(source="folder", path=str(classes))
    for _ in range(3):  # as on every edit
        assert sources.describe(choice).num_classes == 2
    assert searches == [classes]
    (classes / "NOTES.txt").write_text("more")
    os.utime(classes, ns=(0, classes.stat().st_mtime_ns + 1))  # a coarse clock may not move
    assert sources.describe(choice).num_classes == 2
    assert searches == [classes, classes]


def test_a_folder_is_described_without_reading_it_again_until_it_changes(yolo_set, tmp_path):
    root = tmp_path / "digits"
    shutil.copytree(yolo_set, root)
    choice = detector(root).dataset
    with pytest.raises(DataPending, match="digits is being read"):
        sources.describe(choice, read=False)  # a window does not wait for the labels
    sources.load(choice)
    assert sources.describe(choice, read=False).num_samples == 12
    (root / "notes.md").write_text("A new file changes the folder.\n")
    with pytest.raises(DataPending):
        sources.describe(choice, read=False)


def test_boxes_split_by_the_layout_or_at_random_and_count_per_class(yolo_set):
    choice = detector(yolo_set).dataset
    loaded = sources.load(choice)
    assert [loaded.size(s) for s in ("train", "validation", "test")] == [8, 4, 0]
    labels = loaded.labels
    assert isinstance(labels, BoxLabels) and len(labels) == 12
    validation = labels[loaded.splits["validation"]]
    assert sum(loaded.class_counts("validation")) == validation.counts.sum() > 0
    assert loaded.report["total_images"] == 12
    assert loaded.fingerprint() == sources.load(choice).fingerprint()
    again = sources.resplit(loaded, replace(choice, validation_split=0.5, seed=3))
    assert again.splits["validation"].tolist() == loaded.splits["validation"].tolist()
    no_layout = [None] * 9 + ["test"]
    first = layout_splits(no_layout, 0.3, 0.2, seed=1)
    assert first["test"].tolist() == [9] and len(first["validation"]) == 3
    assert sorted(np.concatenate(list(first.values()))) == list(range(10))
    assert layout_splits(no_layout, 0.3, 0.2, seed=1)["validation"].tolist() == \
        first["validation"].tolist()


def test_box_labels_index_like_an_array():
    labels = BoxLabels.of([ImageBoxes(np.array([[0, 0, 2, 2], [1, 1, 3, 3]]), [1, 2]), None,
                           ImageBoxes(np.array([[5, 5, 9, 9]]), [0])],
                          [(10, 20), (30, 40), (50, 60)])
    picked = labels[np.array([2, 0])]
    assert picked.counts.tolist() == [1, 2] and picked.classes.tolist() == [0, 1, 2]
    assert picked.sizes.tolist() == [[50, 60], [10, 20]]
    assert picked.image(1) == labels.image(0) and len(labels.image(1)) == 0
    assert labels.class_counts(4) == [1, 1, 1, 0]


def test_the_demo_set_is_a_detection_source(monkeypatch):
    choice = DatasetChoice(source="detection", task="detection")
    info = sources.describe(choice)
    assert (info.sample_shape, info.num_classes, info.task) == ((128, 128, 1), 10, "detection")
    assert analyze(small_detector(), info).ok  # the small detector is made for it
    assert output_settings(small_detector(), info)["grid"] == [16, 16]
    tuned = Project(name="Detector", graph=small_detector(), training=small_detector_training(),
                    dataset=choice)
    jsonschema.validate(tuned.to_dict(), project_schema())
    monkeypatch.setattr(detection_source, "DEMO_IMAGES", {"train": 4, "validation": 2})
    loaded = sources.load(choice)
    assert loaded.samples.x.shape == (6, 128, 128, 1)
    assert loaded.splits["validation"].tolist() == [4, 5]


def test_project_files_keep_the_detection_choice(yolo_set, tmp_path):
    project = detector(yolo_set)
    project.dataset.label_format = "yolo"
    project.training.early_stopping.monitor = "val_map50"
    project.search = SearchSettings(metric="val_map50")
    assert not project.search.minimize
    document = project.to_dict()
    jsonschema.validate(document, project_schema())
    assert Project.from_dict(json.loads(json.dumps(document))).dataset == project.dataset
    older = {**document, "format_version": 7,
             "dataset": {k: v for k, v in document["dataset"].items() if k != "label_format"}}
    upgraded = Project.from_dict(migrate(older))
    assert upgraded.dataset.label_format == "auto"
