"""Augmentation of images with their masks: the two move together, pixel for pixel; masks are
sampled at the nearest pixel and never gain a value but IGNORE; colour changes leave them be."""

from __future__ import annotations

import numpy as np
import pytest

from studio.core.data.segmentation.augment import (
    MaskAugmentation,
    mask_augment_preview,
    mask_augmentation,
)
from studio.core.project.document import FILL_MODES, Augmentation
from studio.core.tasks.segmentation.masks import IGNORE

CLASSES = 7


def _position_coded(height: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An RGB image whose red value names its pixel (1 + its index in reading order, so 0 is
    what a move fills), green and blue derived from it; its mask, each pixel's class derived
    from the same position; and the class each red value stands for (IGNORE for 0)."""
    codes = 1 + np.arange(height * width).reshape(height, width)
    assert codes.max() < 256
    image = np.stack([codes, 255 - codes, codes // 2], axis=-1).astype(np.uint8)
    classes = np.full(256, IGNORE, np.uint8)
    classes[1:] = np.arange(255) * 5 % CLASSES
    return image, classes[codes], classes


def _aligned(images: np.ndarray, masks: np.ndarray, classes: np.ndarray) -> bool:
    """Whether every pixel's class is the one its image pixel's red value stands for."""
    return np.array_equal(masks, classes[images[..., 0]])


def test_a_horizontal_flip_moves_each_mask_pixel_with_its_image_pixel():
    image, mask, classes = _position_coded(12, 18)
    images, masks = mask_augment_preview(image[None], mask[None],
                                         Augmentation(flip_horizontal=True), repeats=8, seed=3)
    assert images.shape == (8, 1, 12, 18, 3) and masks.shape == (8, 1, 12, 18)
    assert masks.dtype == np.uint8
    flipped = [np.array_equal(moved[0], image[:, ::-1]) for moved in images]
    for moved, moved_mask, was_flipped in zip(images, masks, flipped, strict=True):
        expected = image[:, ::-1] if was_flipped else image
        assert np.array_equal(moved[0], expected)
        assert np.array_equal(moved_mask[0], mask[:, ::-1] if was_flipped else mask)
        assert _aligned(moved, moved_mask, classes)
    assert any(flipped) and not all(flipped)


@pytest.mark.parametrize("turns", [1, -1])
def test_a_quarter_turn_moves_each_mask_pixel_with_its_image_pixel(turns):
    image, mask, classes = _position_coded(15, 15)
    rotate = MaskAugmentation([("RandomRotation", {
        "factor": (turns / 4, turns / 4), "seed": 1, "fill_mode": "constant", "fill_value": 0.0})])
    out = rotate({"images": image[None].astype(np.float32), "segmentation_masks": mask[None]})
    moved = np.rint(np.asarray(out["images"])).astype(np.uint8)
    moved_mask = np.asarray(out["segmentation_masks"])
    assert np.array_equal(moved[0], np.rot90(image, turns))
    assert np.array_equal(moved_mask[0], np.rot90(mask, turns))
    assert _aligned(moved, moved_mask, classes)


GEOMETRIC = {"flip_horizontal": True, "flip_vertical": True, "rotation": 40.0, "zoom": 0.4,
             "translation": 0.3, "crop": 0.4}


@pytest.mark.parametrize("option", sorted(GEOMETRIC))
def test_masks_gain_no_value_but_ignore_where_a_move_uncovers_pixels(option):
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (2, 16, 20, 1), dtype=np.uint8)
    mask = np.repeat(np.repeat(rng.choice([0, 3, 4, IGNORE], (2, 4, 5)), 4, 1), 4, 2)
    mask = mask.astype(np.uint8)
    _, masks = mask_augment_preview(
        image, mask, Augmentation(**{option: GEOMETRIC[option]}), repeats=4, seed=2)
    assert set(np.unique(masks)) <= {0, 3, 4, IGNORE}
    assert not np.array_equal(masks, np.broadcast_to(mask, masks.shape)), "the masks moved"


@pytest.mark.parametrize("fill_mode", FILL_MODES)
def test_every_move_at_once_keeps_mask_values_and_only_a_constant_fill_adds_ignore(fill_mode):
    image, mask, _ = _position_coded(15, 15)
    aug = Augmentation(**GEOMETRIC, fill_mode=fill_mode)
    _, masks = mask_augment_preview(image[None], mask[None], aug, repeats=6, seed=4)
    gained = set(np.unique(masks)) - set(np.unique(mask))
    assert gained == ({IGNORE} if fill_mode == "constant" else set())


def test_a_constant_fill_marks_uncovered_pixels_ignore_not_background():
    mask = np.full((1, 16, 16), 2, np.uint8)
    images, masks = mask_augment_preview(np.full((1, 16, 16, 1), 200, np.uint8), mask,
                                         Augmentation(translation=0.4), repeats=4, seed=1)
    assert set(np.unique(masks)) == {2, IGNORE}
    # where the mask is IGNORE the image shows its black fill, with the edge blended in
    assert images[..., 0][masks == IGNORE].mean() < 60 < images[..., 0][masks == 2].min()


def test_colour_changes_leave_the_masks_as_they_were():
    image, mask, _ = _position_coded(12, 18)
    aug = Augmentation(contrast=0.5, brightness=0.3, noise=0.1)
    images, masks = mask_augment_preview(image[None], mask[None], aug, repeats=3, seed=5)
    assert np.array_equal(masks, np.broadcast_to(mask, masks.shape))
    assert not np.array_equal(images, np.broadcast_to(image, images.shape))


def test_the_preview_is_seeded_and_without_augmentation_repeats_the_inputs():
    image, mask, _ = _position_coded(12, 18)
    aug = Augmentation(rotation=30.0, flip_vertical=True, brightness=0.2)
    first = mask_augment_preview(image[None], mask[None], aug, repeats=3, seed=8)
    again = mask_augment_preview(image[None], mask[None], aug, repeats=3, seed=8)
    other = mask_augment_preview(image[None], mask[None], aug, repeats=3, seed=9)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not np.array_equal(first[0], other[0])
    assert mask_augmentation(Augmentation(), seed=0) is None
    images, masks = mask_augment_preview(image[None], mask[None], Augmentation(), 2, seed=0)
    assert np.array_equal(images, np.stack([image[None]] * 2))
    assert np.array_equal(masks, np.stack([mask[None]] * 2))


def test_it_runs_in_a_tf_data_pipeline_on_single_images_and_batches():
    import tensorflow as tf

    image, mask, classes = _position_coded(15, 15)
    augment = mask_augmentation(Augmentation(flip_horizontal=True, crop=0.2, rotation=20.0),
                                seed=3)
    data = tf.data.Dataset.from_tensor_slices(
        {"images": np.stack([image] * 4).astype(np.float32), "segmentation_masks":
         np.stack([mask] * 4)})
    single = next(iter(data.map(augment).batch(4)))
    batched = next(iter(data.batch(2).map(augment)))
    for out in (single, batched):
        assert out["segmentation_masks"].dtype == tf.uint8
        assert out["images"].shape[1:] == (15, 15, 3)
        assert out["segmentation_masks"].shape[1:] == (15, 15)
        assert set(np.unique(out["segmentation_masks"])) <= set(np.unique(mask)) | {IGNORE}
