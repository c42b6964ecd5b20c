"""Issue 24's segmentation datasets as a project's data: the DatasetChoice source
``segmentation`` (project format 9, older files upgraded), and sources.describe / load reading
each layout and the demo set into masks that index, count and split as labels do."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from studio.core.data import sources
from studio.core.data.segmentation import demo
from studio.core.data.segmentation import source as segmentation_source
from studio.core.data.segmentation.source import ArrayMasks, FileMasks
from studio.core.data.types import ArraySamples, DataError, DataPending, FileSamples
from studio.core.project.document import (
    FORMAT_VERSION,
    DatasetChoice,
    load_project,
    project_schema,
    save_project,
)
from studio.core.project.migrations import migrate
from studio.core.tasks.segmentation.masks import VOC_CLASSES
from tests.core.test_segmentation_data import INDICES, pair, voc
from tests.segmentation_runs import demo_folder, segmenter


@pytest.fixture(scope="module")
def digits(tmp_path_factory) -> Path:
    return demo_folder(tmp_path_factory.mktemp("segmentation") / "digits")


@pytest.fixture(scope="module")
def drawn() -> demo.DemoSet:
    return demo.generate(train=8, validation=4)


def choice(path: Path | str = "", **fields) -> DatasetChoice:
    return DatasetChoice(source="segmentation", path=str(path), task="segmentation", **fields)


def test_a_folder_loads_with_its_splits_classes_masks_and_health(digits, drawn):
    described = sources.describe(choice(digits))
    loaded = sources.load(choice(digits))
    assert loaded.info == described
    assert described.task == "segmentation" and described.kind == "image"
    assert described.sample_shape == (64, 64, 3)  # the images' size; folders read as RGB
    assert described.class_names == demo.CLASS_NAMES and described.num_classes == 11
    assert isinstance(loaded.samples, FileSamples) and isinstance(loaded.labels, FileMasks)
    assert loaded.size("train") == 8 and loaded.size("validation") == 4
    assert loaded.named_splits == ["train"] * 8 + ["validation"] * 4
    for index in (0, 9):  # each image's mask, read as class indices, pixel-exact
        np.testing.assert_array_equal(loaded.labels.mask(index), drawn.masks[index])
    part = loaded.labels[loaded.splits["validation"]]
    assert isinstance(part, FileMasks) and part.mask(0).shape == (64, 64)
    assert loaded.class_counts("train") == [
        int(n) for n in np.bincount(drawn.masks[:8].ravel(), minlength=11)]
    assert loaded.report["task"] == "segmentation" and loaded.report["total_images"] == 12
    assert loaded.report["splits"] == {"train": 8, "validation": 4}
    assert len(loaded.fingerprint()) == 32
    sized = sources.describe(choice(digits, image_size=[16, 24], color="grayscale"))
    assert sized.sample_shape == (16, 24, 1)


def test_a_folder_not_read_yet_is_pending_without_reading(tmp_path, digits):
    fresh = tmp_path / "fresh"
    pair(fresh / "images", fresh / "masks", "a")
    pair(fresh / "images", fresh / "masks", "b", INDICES[::-1].copy())
    with pytest.raises(DataPending, match="fresh is being read"):
        sources.describe(choice(fresh), read=False)
    loaded = sources.load(choice(fresh))
    assert sources.describe(choice(fresh), read=False) == loaded.info
    assert loaded.named_splits == [None, None]  # no split named: a seeded random one
    assert loaded.size("train") + loaded.size("validation") == 2


def test_a_separate_masks_folder_and_pascal_voc_layouts_load(tmp_path):
    pair(tmp_path / "pictures" / "train", tmp_path / "labels" / "train", "a")
    pair(tmp_path / "pictures" / "val", tmp_path / "labels" / "val", "b")
    separate = sources.load(choice(tmp_path / "pictures", mask_path=str(tmp_path / "labels")))
    assert separate.report["layout"] == "separate"
    assert [p.name for p in separate.samples.paths] == ["a.jpg", "b.jpg"]
    assert {k: v.tolist() for k, v in separate.splits.items()} == {
        "train": [0], "validation": [1], "test": []}
    np.testing.assert_array_equal(separate.labels.mask(1), INDICES)
    assert separate.info.sample_shape == (3, 4, 3)

    root = voc(tmp_path / "VOC", {"train.txt": "a\nb\n", "val.txt": "c\n"})
    loaded = sources.load(choice(root))
    assert loaded.info.class_names == VOC_CLASSES and loaded.report["layout"] == "voc"
    assert loaded.splits["validation"].tolist() == [2]
    np.testing.assert_array_equal(loaded.labels.mask(2), INDICES)


def test_an_unusable_folder_is_refused_in_one_line(tmp_path):
    pair(tmp_path / "images", tmp_path / "masks", "a", np.zeros((3, 4), np.uint8))
    with pytest.raises(DataError) as refused:
        sources.load(choice(tmp_path))
    assert "two classes or more" in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(DataError, match="nothing does not exist"):
        sources.load(choice(tmp_path / "nothing"))


def test_the_demo_set_loads_in_memory_with_its_splits(monkeypatch):
    monkeypatch.setattr(segmentation_source, "DEMO_IMAGES", {"train": 8, "validation": 4})
    calls = []
    loaded = sources.load(choice(), lambda what, done, total: calls.append(done))
    assert loaded.info == sources.describe(choice())
    assert loaded.info.sample_shape == (64, 64, 1) and loaded.info.num_samples == 12
    assert isinstance(loaded.samples, ArraySamples) and isinstance(loaded.labels, ArrayMasks)
    made = demo.demo_set(8, 4)
    np.testing.assert_array_equal(loaded.labels.mask(11), made.masks[11])
    assert loaded.labels[np.array([11, 0])].pixels.tolist() == [
        np.bincount(made.masks[i].ravel(), minlength=11).tolist() for i in (11, 0)]
    assert loaded.labels.sizes.tolist() == [[64, 64]] * 12
    assert loaded.labels.class_images()[0] == 12  # every image has background
    assert loaded.splits["validation"].tolist() == list(range(8, 12))
    assert loaded.report["total_images"] == 12 and loaded.report["classes"][0]["pixels"] > 0


def test_a_stopped_reading_is_refused(digits):
    stop = threading.Event()
    stop.set()
    with pytest.raises(DataError, match="cancelled"):
        segmentation_source.load(choice(digits), lambda *_: None, stop)


def test_format_9_round_trips_a_segmentation_choice_and_format_8_files_upgrade(tmp_path):
    project = segmenter(tmp_path / "data" / "images")
    project.dataset.mask_path = str(tmp_path / "data" / "masks")
    project.dataset.class_weights = True
    project.training.loss = "dice"
    project.training.early_stopping.monitor = "val_mean_iou"
    path = tmp_path / "p.studio.json"
    save_project(project, path)
    stored = json.loads(path.read_text())
    assert stored["format_version"] == FORMAT_VERSION == 11
    assert stored["dataset"]["mask_path"] == "data/masks"  # relative to the project file
    again = load_project(path)
    assert again.dataset == project.dataset and again.training.loss == "dice"

    old = {**stored, "format_version": 8}
    old["dataset"] = {k: v for k, v in stored["dataset"].items() if k != "mask_path"}
    old["dataset"].update(source="bundled", task="classification", path="")
    old["training"] = {**stored["training"], "loss": "sparse_categorical_crossentropy"}
    old["training"]["early_stopping"] = {"enabled": False, "monitor": "val_loss",
                                         "patience": 5}
    upgraded = migrate(old)
    assert upgraded["format_version"] == FORMAT_VERSION
    jsonschema.validate(upgraded, project_schema())
    path.write_text(json.dumps(old))
    assert load_project(path).dataset.mask_path == ""
