"""Random changes to training images, as Keras preprocessing layers, and their preview.

Images are float, 0..255, N × H × W × C; the layers keep their shape and range.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from studio.core.project.document import Augmentation


@cache
def _random_crop_class() -> type:
    """The layer class behind ``crop``, made on first use so that Keras loads lazily."""
    import keras
    import tensorflow as tf

    class RandomCropResize(keras.layers.Layer):
        """Crop a random window of ``1 - fraction`` of each image's size and resize it back."""

        def __init__(self, fraction: float, seed: int | None = None, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.fraction = fraction
            self.seed = seed
            self.generator = keras.random.SeedGenerator(seed)

        def call(self, images, training=True):
            if not training:
                return images
            images = tf.convert_to_tensor(images)
            batch = tf.shape(images)[0]
            size = images.shape[1:3] if None not in images.shape[1:3] else tf.shape(images)[1:3]
            corner = keras.random.uniform((batch, 2), 0.0, self.fraction, seed=self.generator)
            boxes = tf.concat([corner, corner + (1.0 - self.fraction)], axis=1)
            return tf.image.crop_and_resize(images, boxes, tf.range(batch), size)

        def compute_output_shape(self, input_shape):
            return input_shape

    return RandomCropResize


def augmentation_layers(aug: Augmentation, seed: int):
    """A ``keras.Sequential`` applying ``aug`` (call it with ``training=True``), or None if off.

    Every layer is seeded from ``seed``; the output has the input's shape, clipped to 0..255.
    """
    if not aug.active():
        return None
    import keras

    layers = keras.layers
    fill = {"fill_mode": aug.fill_mode, "fill_value": 0.0}
    modes = {(True, False): "horizontal", (False, True): "vertical",
             (True, True): "horizontal_and_vertical"}
    # Each kind keeps its own seed (seed + its index) whichever others are on.
    makers = [
        (aug.flip_horizontal or aug.flip_vertical,
         lambda s: [layers.RandomFlip(modes[aug.flip_horizontal, aug.flip_vertical], seed=s)]),
        (aug.crop, lambda s: [_random_crop_class()(aug.crop, seed=s)]),
        (aug.rotation, lambda s: [layers.RandomRotation(aug.rotation / 360.0, seed=s, **fill)]),
        (aug.zoom, lambda s: [layers.RandomZoom(aug.zoom, seed=s, **fill)]),
        (aug.translation,
         lambda s: [layers.RandomTranslation(aug.translation, aug.translation, seed=s, **fill)]),
        (aug.contrast,
         lambda s: [layers.RandomContrast(aug.contrast, value_range=(0, 255), seed=s)]),
        (aug.brightness,
         lambda s: [layers.RandomBrightness(aug.brightness, value_range=(0, 255), seed=s)]),
        # GaussianNoise takes a standard deviation of at most 1, so it adds it on 0..1.
        (aug.noise, lambda s: [layers.Rescaling(1 / 255.0), layers.GaussianNoise(aug.noise, seed=s),
                               layers.Rescaling(255.0)]),
    ]
    chosen = [layer for i, (on, make) in enumerate(makers) if on for layer in make(seed + i)]
    clip = layers.Lambda(lambda x: keras.ops.clip(x, 0.0, 255.0), name="clip_0_255")
    return keras.Sequential([*chosen, clip], name="augmentation")


def augment_preview(images: np.ndarray, aug: Augmentation, repeats: int, seed: int
                    ) -> np.ndarray:
    """The same uint8 N × H × W × C images augmented ``repeats`` times: R × N × H × W × C."""
    images = np.asarray(images, dtype=np.uint8)
    tiled = np.broadcast_to(images, (repeats, *images.shape))
    model = augmentation_layers(aug, seed)
    if model is None:
        return tiled.copy()
    out = model(tiled.reshape(-1, *images.shape[1:]).astype(np.float32), training=True)
    out = np.rint(np.asarray(out)).clip(0, 255).astype(np.uint8)
    return out.reshape(repeats, *images.shape)
