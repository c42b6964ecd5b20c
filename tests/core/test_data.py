"""Describing, loading and splitting datasets (no TensorFlow)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from studio.core.data import sources as data
from studio.core.data.sources import choice_for_path, describe, load
from studio.core.data.types import (
    DEFAULT_IMAGE_SIZE,
    SPLITS,
    DataError,
    DatasetInfo,
    FileSamples,
    LoadedData,
    TableSamples,
)
from studio.core.project.document import DatasetChoice, Project, load_project, save_project


def write_folder(root: Path, counts: dict[str, int], size=(12, 10)) -> Path:
    """One subfolder per class holding ``counts[class]`` distinct PNG images."""
    rng = np.random.default_rng(0)
    for name, n in counts.items():
        (root / name).mkdir(parents=True)
        for i in range(n):
            pixels = rng.integers(0, 256, (*size, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / name / f"{i}.png")
    return root


def test_split_is_stratified_seeded_and_disjoint():
    labels = np.repeat([0, 1, 2], [50, 30, 20])
    splits = data.stratified_split(labels, 0.2, 0.1, seed=3)
    again = data.stratified_split(labels, 0.2, 0.1, seed=3)
    assert all(np.array_equal(splits[s], again[s]) for s in SPLITS)
    together = np.concatenate(list(splits.values()))
    assert sorted(together) == list(range(100))
    for name, fraction in (("validation", 0.2), ("test", 0.1)):
        counts = np.bincount(labels[splits[name]], minlength=3)
        assert list(counts) == [round(50 * fraction), round(30 * fraction), round(20 * fraction)]
    other = data.stratified_split(labels, 0.2, 0.1, seed=4)
    assert not np.array_equal(other["validation"], splits["validation"])


def test_split_keeps_a_training_sample_in_tiny_classes():
    labels = np.array([0, 0, 1, 1, 1, 1, 2])
    splits = data.stratified_split(labels, 0.5, 0.4, seed=0)
    assert set(labels[splits["train"]]) == {0, 1, 2}
    assert 2 not in labels[splits["validation"]]  # a class of one sample trains


def test_regression_split_is_not_by_class():
    values = np.linspace(0, 1, 40, dtype=np.float32)
    splits = data.stratified_split(values, 0.25, 0.0, seed=0, stratify=False)
    assert [len(splits[s]) for s in SPLITS] == [30, 10, 0]


def test_bundled_data_loads_split_by_class():
    loaded = load(DatasetChoice(validation_split=0.2, test_split=0.1))
    assert loaded.info.sample_shape == (28, 28, 1)
    assert loaded.size("train") + loaded.size("validation") + loaded.size("test") == 10_000
    counts = {s: np.array(loaded.class_counts(s)) for s in SPLITS}
    total = sum(counts.values())
    assert np.all(np.abs(counts["validation"] / total - 0.2) < 0.001)
    assert np.all(np.abs(counts["test"] / total - 0.1) < 0.001)


def test_image_options_change_what_bundled_data_describes():
    choice = DatasetChoice(image_size=[32, 32], color="rgb")
    assert describe(choice).sample_shape == (32, 32, 3)
    assert describe(DatasetChoice()).sample_shape == (28, 28, 1)


def test_class_weights_balance_the_training_split():
    labels = np.repeat([0, 1], [90, 10]).astype(np.int32)
    info = DatasetInfo("x", "X", (2,), 2, ("a", "b"), 100)
    loaded = LoadedData(info, TableSamples(np.zeros((100, 2), np.float32), ["p", "q"]),
                             labels, data.stratified_split(labels, 0.2, 0.0, 0))
    weights = loaded.class_weights()
    counts = loaded.class_counts("train")
    assert weights[0] * counts[0] == pytest.approx(weights[1] * counts[1])
    assert sum(weights[c] * counts[c] for c in (0, 1)) == pytest.approx(sum(counts))


def test_a_folder_is_described_without_reading_images(tmp_path):
    root = write_folder(tmp_path / "pets", {"cat": 1, "dog": 1})
    info = describe(DatasetChoice(source="folder", path=str(root)))
    assert info.class_names == ("cat", "dog") and info.num_classes == 2
    assert info.sample_shape == (*DEFAULT_IMAGE_SIZE, 3)
    grey = describe(DatasetChoice(source="folder", path=str(root), image_size=[20, 24],
                                  color="grayscale"))
    assert grey.sample_shape == (20, 24, 1) and grey.title == "pets"


@pytest.mark.parametrize(("path", "words"), [
    ("", "No image folder is chosen"),
    ("missing", "does not exist"),
])
def test_unusable_folder_choices_are_explained(tmp_path, path, words):
    choice = DatasetChoice(source="folder", path=str(tmp_path / path) if path else "")
    with pytest.raises(DataError, match=words):
        describe(choice)


def test_a_folder_loads_with_counts_notes_and_report(tmp_path):
    root = write_folder(tmp_path / "shapes", {"a": 10, "b": 10})
    (root / "b" / "notes.txt").write_text("not an image")
    (root / "b" / "empty.png").write_bytes(b"")
    progress = []
    loaded = load(DatasetChoice(source="folder", path=str(root), validation_split=0.2,
                                test_split=0.2), lambda *args: progress.append(args))
    assert loaded.info.num_samples == 20 and isinstance(loaded.samples, FileSamples)
    assert [loaded.size(s) for s in SPLITS] == [12, 4, 4]
    assert loaded.class_counts("validation") == [2, 2]
    assert any("1 file was skipped" in note for note in loaded.notes)
    assert loaded.report["total_skipped"] == 1
    assert progress[-1] == ("Checking training images", 21, 21)


def test_a_separate_validation_folder_is_the_validation_split(tmp_path):
    train = write_folder(tmp_path / "train", {"a": 6, "b": 6})
    val = write_folder(tmp_path / "val", {"a": 2, "b": 3})
    loaded = load(DatasetChoice(source="folder", path=str(train), validation_path=str(val),
                                test_split=0.5))
    assert loaded.size("validation") == 5 and loaded.class_counts("validation") == [2, 3]
    assert loaded.size("test") == 6 and loaded.size("train") == 6
    held = [loaded.samples.paths[i] for i in loaded.splits["validation"]]
    assert all(path.is_relative_to(val) for path in held)


def test_a_validation_folder_with_unknown_classes_is_refused(tmp_path):
    train = write_folder(tmp_path / "train", {"a": 2, "b": 2})
    val = write_folder(tmp_path / "val", {"a": 1, "zebra": 1})
    with pytest.raises(DataError, match="'zebra'"):
        load(DatasetChoice(source="folder", path=str(train), validation_path=str(val)))


@pytest.mark.parametrize(("counts", "words"), [({}, "holds no class folders"),
                                               ({"only": 3}, "one class folder")])
def test_a_folder_that_cannot_train_a_classifier_is_refused(tmp_path, counts, words):
    root = write_folder(tmp_path / "data", counts)
    root.mkdir(exist_ok=True)
    with pytest.raises(DataError, match=words):
        load(DatasetChoice(source="folder", path=str(root)))


def test_cancelling_a_folder_scan_says_so(tmp_path):
    root = write_folder(tmp_path / "data", {"a": 3, "b": 3})
    stop = threading.Event()
    stop.set()
    with pytest.raises(DataError, match="cancelled"):
        load(DatasetChoice(source="folder", path=str(root)), stop=stop)


def test_training_data_can_be_swapped_for_a_folder_at_the_models_size(tmp_path):
    root = write_folder(tmp_path / "digits", {"0": 1, "1": 1})
    current = DatasetChoice(validation_split=0.3, seed=5)
    current.augmentation.rotation = 10.0
    choice = choice_for_path(root, current, (28, 28, 1))
    assert (choice.source, choice.path, choice.image_size, choice.color) == (
        "folder", str(root), [28, 28], "grayscale")
    assert choice.validation_split == 0.3 and choice.seed == 5
    assert choice.augmentation.rotation == 10.0
    assert current.source == "bundled"  # the project's own choice is untouched
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    assert choice_for_path(table, current, (1,)).source == "csv"
    with pytest.raises(DataError, match="neither a folder of images nor a CSV"):
        choice_for_path(tmp_path / "nothing.bin", current, None)


def test_dataset_choices_round_trip_through_the_project_file(tmp_path):
    project = Project()
    project.dataset = DatasetChoice(source="folder", path="/data/pets", image_size=[96, 64],
                                    color="rgb", resize="pad", normalization="standardize",
                                    test_split=0.1, class_weights=True, cache="disk")
    project.dataset.augmentation.flip_horizontal = True
    project.dataset.augmentation.zoom = 0.2
    save_project(project, tmp_path / "p.studio.json")
    assert load_project(tmp_path / "p.studio.json").dataset == project.dataset


def test_copies_that_fall_in_different_splits_are_reported_as_leakage(tmp_path):
    root = write_folder(tmp_path / "data", {"a": 20, "b": 20})
    for i in range(10):
        (root / "a" / f"copy{i}.png").write_bytes((root / "a" / f"{i}.png").read_bytes())
    loaded = load(DatasetChoice(source="folder", path=str(root), validation_split=0.5))
    leaks = loaded.report["duplicates"]["across_splits"]
    assert leaks > 0  # ten pairs split by class fraction 0.5: some pair straddles the split
    assert len(loaded.leaks()) == leaks
    (note,) = loaded.split_notes()
    assert note.startswith(f"{leaks} images have exact copies in another split")
    assert leaks > 1
    together = data.resplit(loaded, DatasetChoice(source="folder", validation_split=0.01))
    assert len(together.leaks()) < leaks and together.size("validation") == 2
    clean = load(DatasetChoice(source="folder", path=str(write_folder(tmp_path / "c", {"a": 4,
                                                                                   "b": 4}))))
    assert clean.report["duplicates"]["across_splits"] == 0 and not clean.split_notes()


def test_resplitting_needs_no_second_read(tmp_path):
    train = write_folder(tmp_path / "train", {"a": 6, "b": 6})
    val = write_folder(tmp_path / "val", {"a": 2, "b": 3})
    choice = DatasetChoice(source="folder", path=str(train), validation_path=str(val))
    loaded = load(choice)
    choice.test_split, choice.seed = 0.5, 9
    again = data.resplit(loaded, choice)
    assert again.samples is loaded.samples and again.size("validation") == 5
    assert (again.size("train"), again.size("test")) == (6, 6)
    fresh = load(choice)
    assert all(np.array_equal(again.splits[s], fresh.splits[s]) for s in SPLITS)
