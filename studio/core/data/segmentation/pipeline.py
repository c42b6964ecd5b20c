"""Segmentation datasets for Keras: images read, resized, cached and normalised as every
image task reads them (``data.image_reading``), each batch with its masks fitted to the input.

Each mask is fitted to the network's input by the image's own squash, centre crop or pad,
sampled at the nearest pixel (``fitted_masks``: what ``tasks.segmentation.fitting`` undoes),
the padding IGNORE. Masks stream with their images: a batch's masks are read (as
``MaskDecoder`` reads them, within the caps every image is read within) and fitted in the
same ``tf.data`` map as its images, before the cache (``mask_reading``), so that no split's
masks are held whole and a cached epoch decodes none again. Training batches are augmented
with their masks (``augment.mask_augmentation``).
"""

from __future__ import annotations

import hashlib
import json
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.data.image_check import UnusableImage
from studio.core.data.image_pipeline import (
    READ_BATCH,
    ImageForm,
    LabelReading,
    _centre_crop,
    file_stats,
)
from studio.core.data.image_reading import ImageReading
from studio.core.data.segmentation.augment import mask_augmentation
from studio.core.data.segmentation.mask_kinds import MaskError
from studio.core.data.segmentation.source import ArrayMasks, FileMasks
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


def _file_masks_key(labels: FileMasks, indices: np.ndarray) -> str:
    """What masks are read from, for a disk cache: their files (``file_stats``) and how they
    are decoded (each index value's class, the colour table)."""
    decoder = labels.decoder
    assert decoder is not None
    table = decoder.table
    return json.dumps([file_stats([Path(labels.masks[i]) for i in indices]),
                       decoder.values.tolist(),
                       None if table is None else [table.names, table.colours.tolist()]])


def mask_reading(loaded: LoadedData, name: str, form: ImageForm) -> LabelReading:
    """How the image pipeline reads a batch of the split ``name``'s masks, by their places in
    the split, fitted to the input (uint8 B × H × W). A mask file that cannot be read any
    more stops the pipeline with a DataError in one line (TensorFlow wraps it in an OpError,
    whose ``first_line`` is that line)."""
    import tensorflow as tf

    labels, indices = loaded.labels, loaded.splits[name]
    height, width = form.size
    if isinstance(labels, ArrayMasks):  # in memory: gathered and fitted a batch at a time
        def gather(places: np.ndarray) -> np.ndarray:
            return labels.arrays[indices[places]]

        def batch(places):
            masks = tf.numpy_function(gather, [places], tf.uint8, stateful=False)
            masks.set_shape([None, *labels.arrays.shape[1:]])
            return fitted_masks(masks, form)

        return LabelReading(batch, height * width,
                            lambda: hashlib.blake2b(labels.arrays[indices].tobytes()).hexdigest())

    def read(place: np.int32) -> np.ndarray:
        index = int(indices[place])
        try:
            return labels.mask(index)
        except (UnusableImage, MaskError, OSError) as exc:  # changed since it was read
            raise DataError(f"{Path(labels.masks[index]).name} cannot be read any more "
                            f"({str(exc)[:80]}): read the dataset again.") from None

    def one(place):
        mask = tf.numpy_function(read, [place], tf.uint8, stateful=False)
        mask.set_shape([None, None])
        return fitted_masks(mask, form)

    def each(places):
        return tf.map_fn(one, places, fn_output_signature=tf.TensorSpec(form.size, tf.uint8))

    return LabelReading(each, height * width, lambda: _file_masks_key(labels, indices))


def first_masks(loaded: LoadedData, name: str, form: ImageForm, count: int) -> np.ndarray:
    """The first ``count`` masks of the split ``name`` (fewer if it holds fewer), fitted to
    the input (uint8 N × H × W): read on demand, as ``mask_reading`` reads them."""
    import tensorflow as tf

    places = tf.data.Dataset.from_tensor_slices(
        np.arange(min(count, loaded.size(name)), dtype=np.int32)).batch(READ_BATCH)
    read = mask_reading(loaded, name, form).read
    out = [batch for batch in places.map(read).as_numpy_iterator()]
    return np.concatenate(out) if out else np.zeros((0, *form.size), np.uint8)


def segmentation_datasets(loaded: LoadedData, choice: DatasetChoice, batch_size: int,
                          seed: int, output: dict[str, Any]):
    """Training, validation and test (None if empty) batches of (float32 images, uint8
    masks at the input's size), the preprocessing record (the image pipeline's), and what an
    export's agreement is scored against: ``first_masks`` of the validation split, a function
    of how many (an export checks its first ``export_samples``), read only when called."""
    import tensorflow as tf

    reading = ImageReading.of(loaded, choice, batch_size, seed)
    augment = mask_augmentation(choice.augmentation, seed)

    def batch(images, masks, train: bool):
        x = tf.cast(images, tf.float32)
        if train and augment is not None:
            moved = augment({"images": x, "segmentation_masks": masks})
            x, masks = moved["images"], moved["segmentation_masks"]
        return reading.normalised(x), masks

    def split(name: str):
        train = name == "train"
        placed = reading.placed_images(name, mask_reading(loaded, name, reading.form))
        return reading.finished(placed, lambda x, y: batch(x, y, train))

    test = split("test") if loaded.size("test") else None
    return (split("train"), split("validation"), test, reading.preprocessing(),
            partial(first_masks, loaded, "validation", reading.form))
