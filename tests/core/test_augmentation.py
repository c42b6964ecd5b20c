"""Augmentation layers and the live preview of what they do to a few images."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from studio.core.data.augmentation import augment_preview, augmentation_layers
from studio.core.project.document import Augmentation

ONE_AT_A_TIME = {
    "flip_horizontal": True,
    "flip_vertical": True,
    "rotation": 30.0,
    "zoom": 0.3,
    "translation": 0.3,
    "contrast": 0.5,
    "brightness": 0.3,
    "noise": 0.1,
    "crop": 0.4,
}


def images(n: int = 8, size: int = 12, channels: int = 3) -> np.ndarray:
    """Seeded random uint8 images: no flip, shift or crop leaves them as they were."""
    return np.random.default_rng(0).integers(0, 256, (n, size, size, channels), dtype=np.uint8)


def test_every_field_of_augmentation_is_covered():
    assert set(ONE_AT_A_TIME) | {"fill_mode"} == {f.name for f in fields(Augmentation)}


def test_no_augmentation_gives_no_layers_and_an_unchanged_preview():
    assert augmentation_layers(Augmentation(), seed=0) is None
    x = images()
    preview = augment_preview(x, Augmentation(), repeats=3, seed=0)
    assert preview.shape == (3, *x.shape) and preview.dtype == np.uint8
    assert all(np.array_equal(repeat, x) for repeat in preview)


@pytest.mark.parametrize("name", ONE_AT_A_TIME)
def test_each_augmentation_changes_images_and_keeps_their_shape_and_range(name):
    aug = Augmentation(**{name: ONE_AT_A_TIME[name]})
    x = images().astype(np.float32)
    out = np.asarray(augmentation_layers(aug, seed=1)(x, training=True))
    assert out.shape == x.shape
    assert out.min() >= 0 and out.max() <= 255
    assert not np.allclose(out, x, atol=1.0)


def test_the_preview_repeats_the_same_samples_differently_and_is_seeded():
    x = images(n=4, channels=1)
    aug = Augmentation(rotation=40.0, zoom=0.2)
    preview = augment_preview(x, aug, repeats=5, seed=3)
    assert preview.shape == (5, 4, 12, 12, 1) and preview.dtype == np.uint8
    assert not np.array_equal(preview[0], preview[1])
    assert np.array_equal(preview, augment_preview(x, aug, repeats=5, seed=3))


def test_moving_a_slider_changes_the_preview():
    x = images(n=4)
    small = augment_preview(x, Augmentation(rotation=5.0), repeats=2, seed=0)
    large = augment_preview(x, Augmentation(rotation=60.0), repeats=2, seed=0)
    assert not np.array_equal(small, large)


def test_noise_is_a_fraction_of_the_full_range():
    grey = np.full((4, 16, 16, 1), 128, np.uint8)
    noisy = augment_preview(grey, Augmentation(noise=0.05), repeats=2, seed=0).astype(float)
    assert np.std(noisy - 128) == pytest.approx(0.05 * 255, rel=0.15)


def test_crop_resizes_a_smaller_window_back_to_the_full_size():
    ramp = np.tile(np.linspace(0, 255, 32).astype(np.uint8), (4, 32, 1))[..., np.newaxis]
    cropped = augment_preview(ramp, Augmentation(crop=0.5), repeats=2, seed=0)
    assert cropped.shape == (2, *ramp.shape)
    spans = cropped.max(axis=3) - cropped.min(axis=3)  # across each row
    assert np.all(np.abs(spans - 127.5) < 12)


def test_brightness_moves_values_within_the_0_255_range():
    grey = np.full((8, 4, 4, 3), 128, np.uint8)
    out = augment_preview(grey, Augmentation(brightness=0.4), repeats=1, seed=0)[0]
    shifts = out[:, 0, 0, 0].astype(int) - 128
    assert np.all(np.abs(shifts) <= 0.4 * 255 + 1) and np.abs(shifts).max() > 10


@pytest.mark.parametrize("amount", [{"rotation": 45.0}, {"zoom": 0.5}, {"translation": 0.5}])
def test_uncovered_corners_are_black_by_default_and_mirrored_when_asked(amount):
    white = np.full((8, 16, 16, 1), 255, np.uint8)
    filled = augment_preview(white, Augmentation(**amount), repeats=1, seed=0)[0]
    assert (filled == 0).mean() > 0.02  # black where the image moved away
    mirrored = Augmentation(**amount, fill_mode="reflect")
    assert augment_preview(white, mirrored, repeats=1, seed=0).min() == 255
    assert not Augmentation(fill_mode="reflect").active()  # a fill alone changes nothing
