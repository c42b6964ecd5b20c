"""Augmentation for segmentation: the classification settings, applied to images and their masks
together.

Data travels as Keras's preprocessing layers take it: ``{"images": ..., "segmentation_masks":
...}``, images float 0..255 (N × H × W × C, or one H × W × C), masks of class values (N × H × W,
or one H × W; see ``tasks.segmentation.masks``). Flips, rotation, zoom and translation are Keras
layers, which move the masks with the images by the same random transform, sampling them at
the nearest pixel (never blending two classes into a third); the crop is our own
(``_mask_crop``). Brightness, contrast and noise see the images only: masks pass them untouched.

What a move uncovers is filled as ``fill_mode`` says; with ``constant`` the image gets black
and the mask IGNORE, not a class. Keras fills masks with the images' fill value (0, the
background's class), so masks travel shifted up by one: 0 is then what was filled, and
becomes IGNORE when they are shifted back (IGNORE itself travels as 256, exact in float32).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from studio.core.data.augmentation import LayerSpec, augmentation_specs, moving_and_colouring
from studio.core.project.document import Augmentation
from studio.core.tasks.segmentation.masks import IGNORE


class MaskAugmentation:
    """Layers applying augmentation specs (as ``augmentation_specs`` gives them) to images and
    masks; call it on a dict as the module describes, in ``tf.data.Dataset.map`` or eagerly.

    It returns a new dict of the same shapes: float32 images clipped to 0..255, and uint8
    masks, moved as the images were, holding no value they did not hold before but IGNORE.
    """

    def __init__(self, specs: Sequence[LayerSpec]) -> None:
        import tensorflow as tf

        self.moving, self.colouring = moving_and_colouring(specs, _mask_crop)
        # Nothing below branches on a tensor: autograph's rewrite would only cost tracing time.
        self._augment = tf.autograph.experimental.do_not_convert(self._augment)

    def __call__(self, data: dict[str, Any]) -> dict[str, Any]:
        return self._augment(data)

    def _augment(self, data: dict[str, Any]) -> dict[str, Any]:
        import tensorflow as tf

        images = tf.cast(data["images"], tf.float32)
        masks = tf.cast(data["segmentation_masks"], tf.uint8)
        single = images.shape.rank == 3
        if single:
            images, masks = images[None], masks[None]
        if self.moving:
            images, masks = self._move(images, masks)
        for layer in self.colouring:
            images = layer(images, training=True)
        images = tf.clip_by_value(images, 0.0, 255.0)
        if single:
            images, masks = images[0], masks[0]
        return {"images": images, "segmentation_masks": masks}

    def _move(self, images, masks):
        import tensorflow as tf

        shifted = tf.cast(masks, tf.float32)[..., None] + 1.0  # see the module's docstring
        for layer in self.moving:
            # A fresh dict each time: Keras's layers write their results into the one given.
            out = layer({"images": images, "segmentation_masks": shifted}, training=True)
            images, shifted = out["images"], out["segmentation_masks"]
        values = shifted[..., 0] - 1.0  # sampled at the nearest pixel: each value exact
        return images, tf.cast(tf.where(values < 0.0, float(IGNORE), values), tf.uint8)


def _mask_crop(fraction: float, seed: int | None = None) -> Callable[..., dict[str, Any]]:
    """Crop a random window of ``1 - fraction`` of each image's size and resize it back, as
    the classification crop does: the image sampled bilinearly, its mask at the nearest pixel
    of the same points. The window lies inside the image, so nothing is filled.

    Written here because ``keras.layers.RandomCrop`` returns a smaller image (ours keeps the
    size) and takes one window for the whole batch.
    """
    import keras

    generator = keras.random.SeedGenerator(seed)

    def crop(data: dict[str, Any], training: bool = True) -> dict[str, Any]:  # as a layer
        import tensorflow as tf

        images, masks = data["images"], data["segmentation_masks"]
        batch = tf.shape(images)[0]
        corner = keras.random.uniform((batch, 2), 0.0, fraction, seed=generator)
        windows = tf.concat([corner, corner + (1.0 - fraction)], axis=1)
        known = images.shape[1:3]  # the static size, when known, keeps the output's shape known
        size = known.as_list() if known.is_fully_defined() else tf.shape(images)[1:3]
        rows = tf.range(batch)
        return {"images": tf.image.crop_and_resize(images, windows, rows, size),
                "segmentation_masks": tf.image.crop_and_resize(masks, windows, rows, size,
                                                               method="nearest")}

    return crop


def mask_augmentation(aug: Augmentation, seed: int) -> MaskAugmentation | None:
    """The augmentation ``aug`` asks for, on images and masks, seeded from ``seed`` as for
    classification (each kind with its own seed); None if it asks for none."""
    if not aug.active():
        return None
    return MaskAugmentation(augmentation_specs(aug, seed))


def mask_augment_preview(images: np.ndarray, masks: np.ndarray, aug: Augmentation,
                         repeats: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The same uint8 N × H × W × C images and their N × H × W masks augmented ``repeats``
    times, seeded: R × N × H × W × C uint8 images and R × N × H × W uint8 masks."""
    images, masks = np.asarray(images, np.uint8), np.asarray(masks, np.uint8)
    tiled_images = np.broadcast_to(images, (repeats, *images.shape))
    tiled_masks = np.broadcast_to(masks, (repeats, *masks.shape))
    augment = mask_augmentation(aug, seed)
    if augment is None:
        return tiled_images.copy(), tiled_masks.copy()
    out = augment({"images": tiled_images.reshape(-1, *images.shape[1:]).astype(np.float32),
                   "segmentation_masks": tiled_masks.reshape(-1, *masks.shape[1:])})
    pixels = np.rint(np.asarray(out["images"])).clip(0, 255).astype(np.uint8)
    return (pixels.reshape(repeats, *images.shape),
            np.asarray(out["segmentation_masks"]).reshape(repeats, *masks.shape))
