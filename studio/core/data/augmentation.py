"""Random changes to training images, as Keras preprocessing layers, and their preview.

Images are float, 0..255, N × H × W × C; the layers keep their shape and range.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from studio.core.project.document import Augmentation

LayerSpec = tuple[str, dict[str, Any]]
"""A layer as its class name (in ``keras.layers``, or ``RandomCropResize``) and arguments."""
CROP_CLASS = "RandomCropResize"
"""The one augmentation layer Keras lacks (``studio.core.data.random_crop``)."""
MOVING_LAYERS = frozenset({"RandomFlip", "RandomRotation", "RandomZoom", "RandomTranslation",
                           CROP_CLASS})
"""The augmentations that move pixels (and so boxes or masks); the others change colours only."""


def augmentation_specs(aug: Augmentation, seed: int) -> list[LayerSpec]:
    """The layers that apply ``aug``, in order, each seeded from ``seed`` (empty if off).

    One description for training and for exported scripts; ``augmentation_layers`` adds the
    final clip to 0..255.
    """
    fill = {"fill_mode": aug.fill_mode, "fill_value": 0.0}
    modes = {(True, False): "horizontal", (False, True): "vertical",
             (True, True): "horizontal_and_vertical"}
    # Each kind keeps its own seed (seed + its index) whichever others are on.
    makers: list[tuple[Any, Any]] = [
        (aug.flip_horizontal or aug.flip_vertical,
         lambda s: [("RandomFlip", {"mode": modes[aug.flip_horizontal, aug.flip_vertical],
                                    "seed": s})]),
        (aug.crop, lambda s: [(CROP_CLASS, {"fraction": aug.crop, "seed": s})]),
        (aug.rotation,
         lambda s: [("RandomRotation", {"factor": aug.rotation / 360.0, "seed": s, **fill})]),
        (aug.zoom, lambda s: [("RandomZoom", {"height_factor": aug.zoom, "seed": s, **fill})]),
        (aug.translation,
         lambda s: [("RandomTranslation", {"height_factor": aug.translation,
                                           "width_factor": aug.translation, "seed": s,
                                           **fill})]),
        (aug.contrast,
         lambda s: [("RandomContrast", {"factor": aug.contrast, "value_range": (0, 255),
                                        "seed": s})]),
        (aug.brightness,
         lambda s: [("RandomBrightness", {"factor": aug.brightness, "value_range": (0, 255),
                                          "seed": s})]),
        # GaussianNoise takes a standard deviation of at most 1, so it adds it on 0..1.
        (aug.noise, lambda s: [("Rescaling", {"scale": 1 / 255.0}),
                               ("GaussianNoise", {"stddev": aug.noise, "seed": s}),
                               ("Rescaling", {"scale": 255.0})]),
    ]
    return [spec for i, (on, make) in enumerate(makers) if on for spec in make(seed + i)]


def augmentation_layers(aug: Augmentation, seed: int):
    """A ``keras.Sequential`` applying ``aug`` (call it with ``training=True``), or None if off.

    Every layer is seeded from ``seed``; the output has the input's shape, clipped to 0..255.
    """
    if not aug.active():
        return None
    import keras

    def layer(name: str, kwargs: dict[str, Any]) -> Any:
        if name == CROP_CLASS:
            from studio.core.data.random_crop import random_crop_resize

            return random_crop_resize(**kwargs)
        return getattr(keras.layers, name)(**kwargs)

    chosen = [layer(name, kwargs) for name, kwargs in augmentation_specs(aug, seed)]
    clip = keras.layers.Lambda(lambda x: keras.ops.clip(x, 0.0, 255.0), name="clip_0_255")
    return keras.Sequential([*chosen, clip], name="augmentation")


def moving_and_colouring(specs: Sequence[LayerSpec], crop: Callable[..., Any],
                         **moving: Any) -> tuple[list[Any], list[Any]]:
    """The layers of ``specs`` that move pixels and those that change colours only, in order,
    for augmenting images with their labels: the crop made by ``crop(**kwargs)``, the other
    moving Keras layers given ``moving`` too (e.g. ``bounding_box_format``)."""
    import keras

    def layer(name: str, kwargs: dict[str, Any]) -> Any:
        if name == CROP_CLASS:
            return crop(**kwargs)
        if name in MOVING_LAYERS:
            return getattr(keras.layers, name)(**moving, **kwargs)
        return getattr(keras.layers, name)(**kwargs)

    return ([layer(n, kw) for n, kw in specs if n in MOVING_LAYERS],
            [layer(n, kw) for n, kw in specs if n not in MOVING_LAYERS])


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
