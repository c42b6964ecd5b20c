"""Segmentation datasets for Keras: images read, resized, cached and normalised as every
image task reads them (``data.image_reading``), each batch with its masks fitted to the input.

Each mask is fitted to the network's input by the image's own squash, centre crop or pad,
sampled at the nearest pixel (``fitted_masks``: what ``tasks.segmentation.fitting`` undoes),
the padding IGNORE. A split's fitted masks are made once, with ``tf.data`` (files decoded in
parallel, as ``MaskDecoder`` reads them), and held as one uint8 array: each image is streamed
with its place in its split, which then gathers its mask, as detection gathers boxes.
Training batches are augmented with their masks (``augment.mask_augmentation``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from studio.core.data.image_check import UnusableImage
from studio.core.data.image_pipeline import DECODE_CALLS, READ_BATCH, ImageForm, _centre_crop
from studio.core.data.image_reading import ImageReading
from studio.core.data.segmentation.augment import mask_augmentation
from studio.core.data.segmentation.mask_kinds import MaskError
from studio.core.data.segmentation.source import ArrayMasks
from studio.core.data.types import DataError, LoadedData
from studio.core.project.document import DatasetChoice
from studio.core.tasks.segmentation.masks import IGNORE


def fitted_masks(masks, form: ImageForm):
    """Masks (uint8 H × W, or a batch N × H × W) fitted to ``form.size`` as ``form.resize``
    fits their images, each input pixel taking the class of the mask pixel nearest its centre;
    what a pad adds is IGNORE."""
    import tensorflow as tf

    height, width = form.size
    # Shifted up by one, so that the pad's zeros are told apart from class 0.
    x = tf.cast(masks, tf.float32)[..., None] + 1.0
    if form.resize == "pad":
        x = tf.image.resize_with_pad(x, height, width, method="nearest")
    else:
        source = _centre_crop(x, height, width) if form.resize == "crop" else x
        x = tf.image.resize(source, form.size, method="nearest")
    values = x[..., 0] - 1.0
    return tf.cast(tf.where(values < 0.0, float(IGNORE), values), tf.uint8)


def split_masks(loaded: LoadedData, indices: np.ndarray, form: ImageForm) -> np.ndarray:
    """The masks of the samples at ``indices``, fitted to the input (uint8 N × H × W)."""
    import tensorflow as tf

    labels = loaded.labels[indices]
    height, width = form.size
    if isinstance(labels, ArrayMasks):  # in memory: fitted a batch at a time
        ds = tf.data.Dataset.from_tensor_slices(labels.arrays).batch(READ_BATCH)
        ds = ds.map(lambda m: fitted_masks(m, form))
    else:
        def read(index):
            try:
                return labels.mask(int(index))
            except (UnusableImage, MaskError, OSError) as exc:  # changed since it was read
                failures.append(f"{Path(labels.masks[int(index)]).name} cannot be read any "
                                f"more ({str(exc)[:80]}): read the dataset again.")
                raise

        def one(index):
            mask = tf.numpy_function(read, [index], tf.uint8, stateful=False)
            mask.set_shape([None, None])
            return fitted_masks(mask, form)

        ds = tf.data.Dataset.range(len(labels)).map(one, num_parallel_calls=DECODE_CALLS,
                                                    deterministic=True).batch(READ_BATCH)
    failures: list[str] = []
    try:
        out = [batch for batch in ds.as_numpy_iterator()]
    except tf.errors.OpError:
        if failures:
            raise DataError(failures[0]) from None
        raise
    return np.concatenate(out) if out else np.zeros((0, height, width), np.uint8)


def segmentation_datasets(loaded: LoadedData, choice: DatasetChoice, batch_size: int,
                          seed: int, output: dict[str, Any]):
    """Training, validation and test (None if empty) batches of (float32 images, uint8
    masks at the input's size), the preprocessing record (the image pipeline's), and the
    validation split's fitted masks, which an export's agreement is scored against."""
    import tensorflow as tf

    reading = ImageReading.of(loaded, choice, batch_size, seed)
    augment = mask_augmentation(choice.augmentation, seed)
    names = list(loaded.splits)  # every split's masks made in one pass
    made = split_masks(loaded, np.concatenate([loaded.splits[n] for n in names]), reading.form)
    ends = np.cumsum([loaded.size(n) for n in names])
    masks = dict(zip(names, np.split(made, ends[:-1]), strict=True))

    def batch(images, index, table, train: bool):
        x, y = tf.cast(images, tf.float32), tf.gather(table, index)
        if train and augment is not None:
            moved = augment({"images": x, "segmentation_masks": y})
            x, y = moved["images"], moved["segmentation_masks"]
        return reading.normalised(x), y

    def split(name: str):
        train = name == "train"
        table = tf.constant(masks[name])
        return reading.finished(reading.placed_images(name),
                                lambda x, i: batch(x, i, table, train))

    test = split("test") if loaded.size("test") else None
    # A copy: a view would keep every split's masks alive as long as training holds it,
    # besides the tables' copies of them.
    return (split("train"), split("validation"), test, reading.preprocessing(),
            masks["validation"].copy())
