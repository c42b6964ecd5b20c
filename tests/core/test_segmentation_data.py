"""Issue 24's segmentation readers: the three layouts paired by stem, every mask kind read
pixel-exactly as class indices (IGNORE 255), the colour tables and class lists that name them,
and the progress and stop of a long read. Bad input and the health report are in
test_segmentation_health.py."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from studio.core.data.segmentation.layouts import looks_like_segmentation
from studio.core.data.segmentation.mask_kinds import read_labelmap
from studio.core.data.segmentation.reading import read_segmentation
from studio.core.data.segmentation.record import describe_dict
from studio.core.data.types import DataError
from studio.core.tasks.segmentation.masks import IGNORE, VOC_CLASSES, voc_palette

INDICES = np.array([[0, 1, 1, 2], [0, 2, 255, 1], [1, 1, 0, 0]], np.uint8)
"""A 4 × 3 mask of three classes and one ignored pixel."""
COLOURS = np.array([[0, 0, 0], [255, 0, 0], [0, 255, 0]], np.uint8)
LABELMAP = ("# label:color_rgb:parts:actions\nbackground:0,0,0::\nroad:255,0,0::\n"
            "car:0,255,0::\n")


def save(path: Path, pixels: np.ndarray, mode: str | None = None,
         palette: np.ndarray | None = None) -> Path:
    """Write ``pixels`` as the image ``path`` names (its folders made), in ``mode``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(pixels, mode) if mode else Image.fromarray(pixels)
    if palette is not None:
        image.putpalette(np.asarray(palette, np.uint8).reshape(-1).tolist())
    image.save(path)
    return path


def photo(path: Path, size: tuple[int, int] = (4, 3)) -> Path:
    """A small RGB image of ``size`` (width, height)."""
    return save(path, np.full((size[1], size[0], 3), 90, np.uint8))


def pair(images: Path, masks: Path, stem: str, mask: np.ndarray = INDICES, **kind) -> None:
    """An image ``stem``.jpg in ``images`` and its mask ``stem``.png in ``masks``."""
    photo(images / f"{stem}.jpg", (mask.shape[1], mask.shape[0]))
    save(masks / f"{stem}.png", mask, **kind)


def index_set(root: Path, masks: dict[str, np.ndarray], names: str | None = "a\nb\nc\n"
              ) -> Path:
    """A dataset of images/ and masks/ with index masks, and a classes.txt of ``names``."""
    for stem, mask in masks.items():
        pair(root / "images", root / "masks", stem, mask)
    if names is not None:
        (root / "classes.txt").write_text(names)
    return root


def masks_of(dataset) -> dict[str, np.ndarray]:
    return {Path(name).stem: dataset.mask(i) for i, name in enumerate(dataset.labels.masks)}


# -- layouts ---------------------------------------------------------------------------------

def test_images_and_masks_folders_pair_by_stem_with_their_splits(tmp_path):
    for split, stems in (("train", "ab"), ("val", "c")):
        for stem in stems:
            pair(tmp_path / "images" / split, tmp_path / "masks" / split, stem)
    (tmp_path / "classes.txt").write_text("a\nb\nc\n")
    dataset = read_segmentation(tmp_path)
    assert dataset.layout == "folders"
    assert [p.relative_to(tmp_path).as_posix() for p in dataset.images] == [
        "images/train/a.jpg", "images/train/b.jpg", "images/val/c.jpg"]
    assert [Path(m).relative_to(tmp_path).as_posix() for m in dataset.labels.masks] == [
        "masks/train/a.png", "masks/train/b.png", "masks/val/c.png"]
    assert dataset.splits == ["train", "train", "validation"]
    assert dataset.labels.sizes.tolist() == [[3, 4]] * 3
    assert describe_dict(dataset)["splits"] == {"train": 2, "validation": 1}


def test_split_folders_each_holding_images_and_masks(tmp_path):
    pair(tmp_path / "train" / "images", tmp_path / "train" / "masks", "a")
    pair(tmp_path / "val" / "images", tmp_path / "val" / "masks", "b")
    dataset = read_segmentation(tmp_path)
    assert dataset.splits == ["train", "validation"]
    assert looks_like_segmentation(tmp_path) == "images and masks folders"


def test_a_separate_masks_folder_pairs_by_stem_even_when_flat(tmp_path):
    photo(tmp_path / "pictures" / "train" / "a.jpg")
    photo(tmp_path / "pictures" / "b.png")
    save(tmp_path / "labels" / "a.png", INDICES)
    save(tmp_path / "labels" / "b.png", INDICES)
    dataset = read_segmentation(tmp_path / "pictures", tmp_path / "labels")
    assert dataset.layout == "separate"
    assert [p.name for p in dataset.images] == ["b.png", "a.jpg"]
    assert [Path(m).name for m in dataset.labels.masks] == ["b.png", "a.png"]
    assert dataset.splits == [None, "train"]


def voc(root: Path, sets: dict[str, str] | None = None) -> Path:
    """Pascal VOC's layout: four images, masks for three (a, b, c) in VOC's palette."""
    for stem in "abcd":
        photo(root / "JPEGImages" / f"{stem}.jpg")
    for stem in "abc":
        save(root / "SegmentationClass" / f"{stem}.png", INDICES, "P", voc_palette())
    for name, text in (sets or {}).items():
        (root / "ImageSets" / "Segmentation").mkdir(parents=True, exist_ok=True)
        (root / "ImageSets" / "Segmentation" / name).write_text(text)
    return root


def test_pascal_voc_layout_takes_its_splits_from_image_sets(tmp_path):
    dataset = read_segmentation(voc(tmp_path, {"train.txt": "a\nb\n", "val.txt": "c\n"}))
    assert dataset.layout == "voc"
    assert [p.name for p in dataset.images] == ["a.jpg", "b.jpg", "c.jpg"]
    assert dataset.splits == ["train", "train", "validation"]
    assert dataset.class_names == list(VOC_CLASSES)
    assert dataset.health.notes[0].startswith("1 image of JPEGImages is in no segmentation "
                                              "split")
    assert looks_like_segmentation(tmp_path) == "Pascal VOC segmentation"


def test_pascal_voc_without_image_sets_reads_the_images_that_have_masks(tmp_path):
    dataset = read_segmentation(voc(tmp_path))
    assert [p.name for p in dataset.images] == ["a.jpg", "b.jpg", "c.jpg"]
    assert dataset.splits == [None, None, None]
    assert not dataset.health.checks["missing_masks"].count


# -- mask kinds, pixel-exact -----------------------------------------------------------------

def test_index_masks_with_a_class_list(tmp_path):
    dataset = read_segmentation(index_set(tmp_path, {"a": INDICES}))
    assert dataset.class_names == ["a", "b", "c"]
    np.testing.assert_array_equal(dataset.mask(0), INDICES)
    assert dataset.mask(0).dtype == np.uint8
    assert dataset.labels.pixels.tolist() == [[4, 5, 2]]


def test_index_masks_without_names_are_named_by_their_values(tmp_path):
    mask = np.array([[0, 3, 3], [7, 255, 0]], np.uint8)
    dataset = read_segmentation(index_set(tmp_path, {"a": mask}, names=None))
    assert dataset.class_names == ["0", "3", "7"]
    np.testing.assert_array_equal(dataset.mask(0), [[0, 1, 1], [2, IGNORE, 0]])
    assert "named by their mask values" in dataset.health.notes[0]


def test_masks_of_0_and_255_alone_are_two_classes(tmp_path):
    mask = np.array([[0, 255], [255, 0]], np.uint8)
    dataset = read_segmentation(index_set(tmp_path, {"a": mask, "b": mask}, names=None))
    assert dataset.class_names == ["0", "255"]
    np.testing.assert_array_equal(dataset.mask(1), [[0, 1], [1, 0]])
    assert "255 is the foreground" in dataset.health.notes[0]


def test_one_bit_and_palette_masks_are_read_as_indices(tmp_path):
    pair(tmp_path / "images", tmp_path / "masks", "a", INDICES != 0, mode=None)
    other = np.array([[9, 9, 9], [1, 2, 3], [4, 5, 6]] + [[i, i, i] for i in range(253)],
                     np.uint8)
    pair(tmp_path / "images", tmp_path / "masks", "b", INDICES, mode="P", palette=other)
    (tmp_path / "classes.txt").write_text("a\nb\nc\n")
    masks = masks_of(read_segmentation(tmp_path))
    np.testing.assert_array_equal(masks["a"], (INDICES != 0).astype(np.uint8))
    np.testing.assert_array_equal(masks["b"], INDICES)


def test_voc_palette_masks_are_vocs_classes_with_255_ignored(tmp_path):
    mask = np.array([[0, 15, 15], [12, 255, 0]], np.uint8)
    pair(tmp_path / "images", tmp_path / "masks", "a", mask, mode="P", palette=voc_palette())
    dataset = read_segmentation(tmp_path)
    assert dataset.class_names == list(VOC_CLASSES)
    np.testing.assert_array_equal(dataset.mask(0), mask)
    assert dataset.labels.class_images()[[0, 12, 15]].tolist() == [1, 1, 1]


def test_rgb_masks_through_a_labelmap(tmp_path):
    pair(tmp_path / "images", tmp_path / "masks", "a", COLOURS[np.minimum(INDICES, 2)])
    (tmp_path / "labelmap.txt").write_text(LABELMAP)
    dataset = read_segmentation(tmp_path)
    assert dataset.class_names == ["background", "road", "car"]
    np.testing.assert_array_equal(dataset.mask(0), np.minimum(INDICES, 2))
    assert not dataset.health.checks["unknown_colours"].count


def test_palette_masks_of_other_colours_through_a_labelmap(tmp_path):
    palette = np.array([[0, 255, 0], [0, 0, 0], [255, 0, 0]] + [[7, 7, 7]] * 253, np.uint8)
    values = np.array([[1, 2], [0, 1]], np.uint8)  # palette entries: black, red, green
    pair(tmp_path / "images", tmp_path / "masks", "a", values, mode="P",
         palette=palette)
    (tmp_path / "masks" / "labelmap.txt").write_text(LABELMAP)
    np.testing.assert_array_equal(read_segmentation(tmp_path).mask(0), [[0, 1], [2, 0]])


def test_voc_outline_colour_in_an_rgb_mask_is_ignored_without_a_count(tmp_path):
    rgb = np.array([[[0, 0, 0], [224, 224, 192]], [[255, 0, 0], [0, 255, 0]]], np.uint8)
    pair(tmp_path / "images", tmp_path / "masks", "a", rgb)
    (tmp_path / "labelmap.txt").write_text(LABELMAP)
    dataset = read_segmentation(tmp_path)
    np.testing.assert_array_equal(dataset.mask(0), [[0, IGNORE], [1, 2]])
    assert not dataset.health.checks["unknown_colours"].count


def test_grey_masks_saved_as_rgb_and_16_bit_masks_that_fit_read_as_indices(tmp_path):
    pair(tmp_path / "images", tmp_path / "masks", "a", np.repeat(INDICES[..., None], 3, 2))
    pair(tmp_path / "images", tmp_path / "masks", "b", INDICES.astype(np.uint16))
    (tmp_path / "classes.txt").write_text("a\nb\nc\n")
    dataset = read_segmentation(tmp_path)
    for mask in masks_of(dataset).values():
        np.testing.assert_array_equal(mask, INDICES)
    assert dataset.health.checks["wide_masks"].examples == ["masks/b.png"]


def test_labelmap_lines_and_names(tmp_path):
    path = tmp_path / "labelmap.txt"
    path.write_text("# label:color_rgb:parts:actions\nbackground:0,0,0::\nsky: 1, 2 ,3 :p:a\n"
                    "\nweird:name:9,9,9::\n")
    table = read_labelmap(path)
    assert table.names == ["background", "sky", "weird:name"]
    assert table.colours.tolist() == [[0, 0, 0], [1, 2, 3], [9, 9, 9]]


# -- progress and stop -----------------------------------------------------------------------

def test_progress_is_reported_and_stop_ends_the_reading_cancelled(tmp_path):
    index_set(tmp_path, {"a": INDICES, "b": INDICES})
    seen = []
    dataset = read_segmentation(tmp_path, on_progress=lambda *args: seen.append(args))
    assert seen == [("Checking images and masks", 0, 2), ("Checking images and masks", 2, 2)]
    assert len(dataset) == 2
    stop = threading.Event()
    stop.set()
    stopped = read_segmentation(tmp_path, stop=stop)
    assert len(stopped) == 0
    assert stopped.health.blocking() == ["Reading the segmentation dataset was cancelled."]


def test_mask_labels_index_and_count_like_an_array(tmp_path):
    dataset = read_segmentation(index_set(tmp_path, {"a": INDICES, "b": np.zeros((3, 4),
                                                                               np.uint8)}))
    labels = dataset.labels
    assert len(labels) == 2
    assert labels[np.array([1])].pixels.tolist() == [[12, 0, 0]]
    assert labels.class_counts(3) == [16, 5, 2]
    assert labels.class_images().tolist() == [2, 1, 1]
    assert labels.tobytes() != labels[np.array([1, 0])].tobytes()


def test_reading_a_plain_file_is_refused_in_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataError, match="^The segmentation dataset .*file does not exist or "
                                        "is not a folder.$"):
        read_segmentation(tmp_path / "file")
