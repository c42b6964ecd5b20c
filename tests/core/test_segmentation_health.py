"""Issue 24's bad segmentation input and health report: each problem one line naming the file,
refused (a DataError, nothing read) where the dataset cannot be read as it is, else counted in
the health report with a sentence, and the classes' pixels and images counted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from studio.core.data import image_check, sources
from studio.core.data.segmentation.reading import read_segmentation
from studio.core.data.segmentation.record import describe_dict
from studio.core.data.types import DataError
from studio.core.project.document import DatasetChoice
from tests.core.test_image_folder import png_claiming
from tests.core.test_segmentation_data import (
    COLOURS,
    INDICES,
    LABELMAP,
    index_set,
    pair,
    photo,
    save,
)
from tests.helpers import digit_folder


def refused(root: Path, *words: str, masks: Path | None = None) -> str:
    """The one-line DataError reading ``root`` raises, checked to hold ``words``."""
    with pytest.raises(DataError) as caught:
        read_segmentation(root, masks)
    message = str(caught.value)
    assert "\n" not in message and message.endswith("."), message
    for word in words:
        assert word in message, message
    return message


def problem(dataset, check: str) -> str:
    """The one sentence the health report gives for ``check``, checked to be among its
    problems."""
    sentence = dataset.health.to_dict()["checks"][check]["sentence"]
    assert sentence in dataset.health.problems() and "\n" not in sentence, sentence
    return sentence


# -- refused ---------------------------------------------------------------------------------

def test_an_rgb_mask_without_a_colour_table_is_refused_naming_it(tmp_path):
    pair(tmp_path / "images", tmp_path / "masks", "a", COLOURS[np.minimum(INDICES, 2)])
    assert refused(tmp_path) == (
        "masks/a.png is a colour (RGB) mask, but no labelmap.txt gives the class of each "
        "colour: put a labelmap.txt in the dataset's folder, one line per class with its "
        "colour (like background:0,0,0:: and road:128,64,128::), or save masks of class "
        "indices.")


def test_a_photo_given_as_an_rgb_mask_is_refused_for_its_colours(tmp_path):
    colours = np.arange(300 * 3, dtype=np.uint32).reshape(15, 20, 3).astype(np.uint8)
    colours[..., 2] = np.arange(300).reshape(15, 20) // 256  # 300 distinct colours
    pair(tmp_path / "images", tmp_path / "masks", "a", colours)
    refused(tmp_path, "masks/a.png is an RGB image of 300 colours", "a photo rather than a "
                                                                    "mask?")


def test_a_classification_folder_is_refused_as_one(tmp_path):
    refused(digit_folder(tmp_path / "digits", per_class=2), "digits is a classification folder",
            "choose it as an image folder, or add masks")


def test_a_folder_without_masks_is_refused(tmp_path):
    photo(tmp_path / "a.jpg")
    refused(tmp_path, "holds no segmentation masks: no images/ and masks/ folders")


def test_a_missing_masks_folder_is_refused(tmp_path):
    refused(tmp_path, "The mask folder", "does not exist", masks=tmp_path / "nowhere")


@pytest.mark.parametrize(("name", "text", "words"), [
    ("labelmap.txt", "background:0,0,0::\nroad:red::\n",
     ("labelmap.txt line 2: 'road:red::' is not a class and its colour",)),
    ("labelmap.txt", "background:0,0,0::\nroad:0,0,0::\n",
     ("labelmap.txt gives the colour (0, 0, 0) to both 'background' and 'road'",)),
    ("labelmap.txt", "road:1,2,300::\n", ("line 1",)),
    ("labelmap.txt", "# label:color_rgb:parts:actions\n", ("labelmap.txt names no class",)),
    ("classes.txt", "a\nb\na\n", ("classes.txt lists the class 'a' more than once",)),
    ("classes.txt", "".join(f"c{i}\n" for i in range(300)),
     ("classes.txt names 300 classes, more than the 255 a mask can hold",)),
])
def test_unusable_class_names_are_refused_naming_the_file(tmp_path, name, text, words):
    index_set(tmp_path, {"a": INDICES}, names=None)
    (tmp_path / name).write_text(text)
    refused(tmp_path, *words)


def test_a_classification_reader_given_a_segmentation_folder_says_what_it_is(tmp_path):
    for root in (index_set(tmp_path / "set", {"a": INDICES, "b": INDICES}),
                 tmp_path / "voc"):
        if root.name == "voc":
            pair(root / "JPEGImages", root / "SegmentationClass", "a")
        with pytest.raises(DataError) as caught:
            sources.describe(DatasetChoice(source="folder", path=str(root)))
        title = "images and masks folders" if root.name == "set" else "Pascal VOC segmentation"
        assert str(caught.value) == (f"{root} is a segmentation dataset ({title}), not a "
                                     "folder of images per class: choose it as a "
                                     "segmentation dataset.")


def test_a_classification_folder_is_still_read_as_one(tmp_path):
    info = sources.describe(DatasetChoice(source="folder",
                                          path=str(digit_folder(tmp_path, per_class=2))))
    assert info.class_names == ("0", "1")


# -- counted ---------------------------------------------------------------------------------

def test_a_jpeg_mask_is_read_with_a_warning(tmp_path):
    index_set(tmp_path, {"a": INDICES})
    photo(tmp_path / "images" / "b.png")
    save(tmp_path / "masks" / "b.jpg", INDICES)
    dataset = read_segmentation(tmp_path)
    assert len(dataset) == 2
    assert problem(dataset, "lossy_masks") == (
        "1 mask is a JPEG (e.g. 'masks/b.jpg'): JPEG's lossy compression changes values along "
        "every edge, so some pixels have the wrong class; save masks as PNG.")


def test_a_16_bit_mask_of_300_values_or_past_8_bits_is_left_out(tmp_path):
    index_set(tmp_path, {"a": INDICES, "b": INDICES})
    pair(tmp_path / "images", tmp_path / "masks", "c",
         np.arange(300, dtype=np.uint16).reshape(15, 20))
    pair(tmp_path / "images", tmp_path / "masks", "d",
         np.minimum(INDICES, 2).astype(np.uint16) * 500)
    dataset = read_segmentation(tmp_path)
    assert [p.name for p in dataset.images] == ["a.jpg", "b.jpg"]
    tally = dataset.health.checks["unusable_masks"]
    assert (tally.count, tally.examples) == (2, ["masks/c.png", "masks/d.png"])
    assert problem(dataset, "unusable_masks") == (
        "2 masks cannot be read as class indices, so their images are left out (e.g. "
        "'masks/c.png': holds 300 distinct values, more than a mask's 255 classes: not class "
        "indices (an instance or depth map?)).")
    single = read_segmentation(tmp_path / "images", tmp_path / "masks")
    assert single.health.checks["unusable_masks"].count == 2
    (tmp_path / "masks" / "c.png").unlink()
    assert read_segmentation(tmp_path).health.checks["unusable_masks"].detail == (
        "is a 16-bit mask with values up to 1,000, but masks must be 8-bit, a class index (0 to "
        "254) per pixel: save it as an 8-bit PNG of class indices")


def test_masks_past_the_caps_on_images_are_left_out_before_decoding(tmp_path, monkeypatch):
    index_set(tmp_path, {"a": INDICES, "b": INDICES, "c": INDICES})
    (tmp_path / "masks" / "b.png").write_bytes(png_claiming(20_000, 20_000))
    dataset = read_segmentation(tmp_path)
    assert "decompression bomb" in problem(dataset, "unusable_masks")
    assert "'masks/b.png': 20,000 × 20,000 pixels" in problem(dataset, "unusable_masks")
    padding = PngInfo()
    padding.add_text("padding", "x" * 5_000)
    Image.fromarray(INDICES).save(tmp_path / "masks" / "c.png", pnginfo=padding)
    monkeypatch.setattr(image_check, "READ_LIMIT", 4_000)
    capped = read_segmentation(tmp_path).health.checks["unusable_masks"]
    assert capped.examples == ["masks/b.png", "masks/c.png"]


def test_every_pairing_problem_is_counted(tmp_path):
    index_set(tmp_path, {"a": INDICES, "b": INDICES})
    photo(tmp_path / "images" / "lonely.jpg")
    photo(tmp_path / "images" / "small.jpg", (2, 2))
    pair(tmp_path / "spare", tmp_path / "masks", "small")
    pair(tmp_path / "spare", tmp_path / "masks", "orphan")
    (tmp_path / "images" / "broken.jpg").write_bytes(b"not an image")
    dataset = read_segmentation(tmp_path)
    assert [p.name for p in dataset.images] == ["a.jpg", "b.jpg"]
    assert problem(dataset, "missing_masks") == (
        "1 image has no mask (e.g. 'images/lonely.jpg'): left out.")
    assert problem(dataset, "no_image") == (
        "1 mask has no image file (e.g. 'masks/orphan.png': no image of its name in images): "
        "not used.")
    assert problem(dataset, "size_mismatch") == (
        "1 mask differs in size from its image, so it is left out (e.g. 'masks/small.png': "
        "4×3 pixels, its image 2×2).")
    assert problem(dataset, "unusable_images").startswith(
        "1 image file cannot be used and is left out (e.g. 'images/broken.jpg': not a JPEG")


def test_values_that_are_no_class_and_colours_the_table_lacks_are_ignored(tmp_path):
    index_set(tmp_path, {"a": INDICES, "b": np.array([[0, 1], [7, 7]], np.uint8)})
    dataset = read_segmentation(tmp_path)
    np.testing.assert_array_equal(dataset.mask(1), [[0, 1], [255, 255]])
    assert problem(dataset, "unknown_values") == (
        "1 mask holds values that are no class (e.g. 'masks/b.png': value 7, 2 pixels): those "
        "pixels are ignored.")
    colours = tmp_path / "colours"
    rgb = np.array([[[0, 0, 0], [9, 9, 9]], [[255, 0, 0], [0, 255, 0]]], np.uint8)
    pair(colours / "images", colours / "masks", "a", rgb)
    (colours / "labelmap.txt").write_text(LABELMAP)
    coloured = read_segmentation(colours)
    np.testing.assert_array_equal(coloured.mask(0), [[0, 255], [1, 2]])
    assert problem(coloured, "unknown_colours") == (
        "1 mask holds colours the colour table lacks (e.g. 'masks/a.png': colour (9, 9, 9), "
        "1 pixel): those pixels are ignored.")


def test_class_pixels_images_empty_masks_and_absent_classes(tmp_path):
    background = np.zeros((3, 4), np.uint8)
    ignored = np.full((3, 4), 255, np.uint8)
    dataset = read_segmentation(index_set(tmp_path, {"a": INDICES, "b": background,
                                                     "c": ignored}, names="a\nb\nc\nd\n"))
    report = dataset.health.to_dict()
    assert report["classes"] == [{"name": "a", "pixels": 16, "images": 2},
                                 {"name": "b", "pixels": 5, "images": 1},
                                 {"name": "c", "pixels": 2, "images": 1},
                                 {"name": "d", "pixels": 0, "images": 0}]
    assert report["total_pixels"] == 23
    assert problem(dataset, "empty_masks") == (
        "2 masks hold nothing but background or ignored pixels (e.g. 'masks/b.png').")
    assert problem(dataset, "absent_classes") == (
        "1 class has no pixel in any mask (e.g. 'd'): a model cannot learn it.")
    assert report["imbalance"]["images"] == {
        "largest": {"name": "a", "count": 2}, "smallest": {"name": "b", "count": 1},
        "ratio": 2.0, "strong": False}
    assert not dataset.health.imbalance_sentences()
    assert json.loads(json.dumps(describe_dict(dataset)))["splits"] == {"unsplit": 3}


def test_strong_imbalance_in_pixels_and_images_is_explained(tmp_path):
    big = np.zeros((20, 20), np.uint8)
    rare = big.copy()
    rare[0, 0] = 1
    masks = {f"m{i}": big for i in range(5)} | {"rare": rare}
    dataset = read_segmentation(index_set(tmp_path, masks, names="ground\nrare\n"))
    assert dataset.health.imbalance_sentences() == [
        "The classes are strongly imbalanced in pixels: 'ground' has 2,399 pixels, 'rare' only "
        "1 (2,399 times fewer): weight the loss by class, or add images of the rare class.",
        "The classes are strongly imbalanced in images: 'ground' has 6 images, 'rare' only 1 "
        "(6 times fewer): weight the loss by class, or add images of the rare class."]
    assert dataset.health.imbalance_sentences()[0] in dataset.health.problems()


def test_what_blocks_training(tmp_path):
    one_class = read_segmentation(index_set(tmp_path / "one", {"a": np.zeros((3, 4),
                                                                              np.uint8)}))
    assert one_class.health.blocking() == [
        "The masks hold one class only: segmentation needs pixels of two classes or more."]
    photo(tmp_path / "none" / "images" / "a.jpg")
    (tmp_path / "none" / "masks").mkdir()
    nothing = read_segmentation(tmp_path / "none")
    assert nothing.health.blocking() == [  # why, said once
        "The dataset holds no usable image with a mask. 1 image has no mask (e.g. "
        "'images/a.jpg'): left out."]
    assert nothing.health.problems() == nothing.health.blocking()
    assert not read_segmentation(index_set(tmp_path / "fine", {"a": INDICES})).health.blocking()
