"""Augmentation for detection: the classification settings, applied to images and their boxes.

Data travels as Keras's preprocessing layers take it: ``{"images": ..., "bounding_boxes":
{"boxes": ..., "labels": ...}}``, images float 0..255 (N × H × W × C, or one H × W × C),
boxes N × M × 4 as x_min, y_min, x_max, y_max in pixels, labels N × M class indices, -1 (with
a zero box) for the padding that keeps M fixed for batching. Flips, rotation, zoom and
translation are Keras layers given ``bounding_box_format="xyxy"``; the crop is our own (see
``_BoxCrop``). Brightness, contrast and noise see the images only, so boxes pass them
untouched. After the moves, boxes are clipped to the image, those left thinner than
MIN_BOX_SIDE are dropped with their labels, and the rest come first, padding after.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from studio.core.data.augmentation import (
    LayerSpec,
    augmentation_specs,
    moving_and_colouring,
)
from studio.core.project.document import Augmentation
from studio.core.tasks.detection.boxes import ImageBoxes

BOX_FORMAT = "xyxy"
"""Keras's name for x_min, y_min, x_max, y_max in pixels: the boxes of ``ImageBoxes``."""
MIN_BOX_SIDE = 1.0
"""A moved box narrower or shorter than this many pixels has left the image: it is dropped."""


class BoxAugmentation:
    """Layers applying augmentation specs (as ``augmentation_specs`` gives them) to images and
    boxes; call it on a dict as the module describes, in ``tf.data.Dataset.map`` or eagerly.

    It returns a new dict of the same shapes: float32 images clipped to 0..255, boxes moved,
    clipped and compacted, int32 labels.
    """

    def __init__(self, specs: Sequence[LayerSpec]) -> None:
        import tensorflow as tf

        self.moving, self.colouring = moving_and_colouring(specs, _BoxCrop,
                                                           bounding_box_format=BOX_FORMAT)
        # No step branches on a tensor, so autograph's rewrite of them (when tf.data traces
        # this) would only cost time: most of the trace's seconds.
        self._augment = tf.autograph.experimental.do_not_convert(self._augment)

    def __call__(self, data: dict[str, Any]) -> dict[str, Any]:
        return self._augment(data)

    def _augment(self, data: dict[str, Any]) -> dict[str, Any]:
        import tensorflow as tf

        images = tf.convert_to_tensor(data["images"])
        single = images.shape.rank == 3
        boxes = tf.convert_to_tensor(data["bounding_boxes"]["boxes"], tf.float32)
        labels = tf.cast(data["bounding_boxes"]["labels"], tf.int32)
        if single:
            images, boxes, labels = images[None], boxes[None], labels[None]
        images = tf.cast(images, tf.float32)
        if self.moving:
            images, boxes, labels = self._move(images, boxes, labels)
        for layer in self.colouring:
            images = layer(images, training=True)
        images = tf.clip_by_value(images, 0.0, 255.0)
        if single:
            images, boxes, labels = images[0], boxes[0], labels[0]
        return {"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}}

    def _move(self, images, boxes, labels):
        import tensorflow as tf

        for layer in self.moving:
            # A fresh dict each time: Keras's layers write their results into the one given.
            out = layer({"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}},
                        training=True)
            images, boxes = out["images"], out["bounding_boxes"]["boxes"]
            labels = out["bounding_boxes"]["labels"]
        # Inside tf.data the layers hand labels back as float32 (they convert every input).
        labels = tf.cast(labels, tf.int32)
        sides = boxes[..., 2:] - boxes[..., :2]
        kept = (labels >= 0) & tf.reduce_all(sides >= MIN_BOX_SIDE, axis=-1)
        order = tf.argsort(tf.cast(~kept, tf.int32), axis=-1, stable=True)
        kept = tf.gather(kept, order, batch_dims=1)
        boxes = tf.where(kept[..., None], tf.gather(boxes, order, batch_dims=1), 0.0)
        labels = tf.where(kept, tf.gather(labels, order, batch_dims=1), -1)
        return images, boxes, labels


class _BoxCrop:
    """Crop a random window of ``1 - fraction`` of each image's size and resize it back, as
    the classification crop does, moving the boxes with it.

    Written here because ``keras.layers.RandomCrop`` does not serve: it returns a smaller image
    (ours keeps the size), takes one window for the whole batch, and in Keras 3.15 shifts x
    by the vertical offset and y by the horizontal one without clipping the far edges
    (keras-team/keras#23518). The box shift and clip is Keras's ``bounding_boxes.crop``.
    """

    def __init__(self, fraction: float, seed: int | None = None) -> None:
        import keras

        self.fraction = fraction
        self.generator = keras.random.SeedGenerator(seed)

    def __call__(self, data: dict[str, Any], training: bool = True) -> dict[str, Any]:
        import keras
        import tensorflow as tf

        if not training:
            return data
        images = data["images"]
        boxes, labels = data["bounding_boxes"]["boxes"], data["bounding_boxes"]["labels"]
        batch = tf.shape(images)[0]
        size = tf.cast(tf.shape(images)[1:3], tf.float32)  # height, width
        keep = 1.0 - self.fraction
        corner = keras.random.uniform((batch, 2), 0.0, self.fraction,
                                      seed=self.generator) * size  # top, left in pixels
        # crop_and_resize puts output pixel centre i at y1 * (H - 1) + i * (y2 - y1): this
        # start makes the window exactly corner .. corner + keep * size in pixel edges, so
        # the boxes below land on the very pixels they framed.
        start = (corner + keep / 2 - 0.5) / tf.maximum(size - 1.0, 1.0)
        windows = tf.concat([start, start + keep], axis=1)
        known = images.shape[1:3]  # the static size, when known, keeps the output's shape known
        out_size = known.as_list() if known.is_fully_defined() else tf.shape(images)[1:3]
        images = tf.image.crop_and_resize(images, windows, tf.range(batch), out_size)
        moved = keras.utils.bounding_boxes.crop(
            boxes, top=corner[:, None, :1], left=corner[:, None, 1:],
            height=keep * size[0], width=keep * size[1]) / keep
        return {"images": images, "bounding_boxes": {"boxes": moved, "labels": labels}}


def box_augmentation(aug: Augmentation, seed: int) -> BoxAugmentation | None:
    """The augmentation ``aug`` asks for, on images and boxes, seeded from ``seed`` as for
    classification (each kind with its own seed); None if it asks for none."""
    if not aug.active():
        return None
    return BoxAugmentation(augmentation_specs(aug, seed))


def padded_boxes(labels: Sequence[ImageBoxes]) -> tuple[np.ndarray, np.ndarray]:
    """Each image's boxes padded to the most any image has (M): boxes float32 N × M × 4, zero
    where padded, and classes int32 N × M, -1 where padded."""
    count = max((len(b) for b in labels), default=0)
    boxes = np.zeros((len(labels), count, 4), np.float32)
    classes = np.full((len(labels), count), -1, np.int32)
    for i, image_boxes in enumerate(labels):
        boxes[i, :len(image_boxes)] = image_boxes.boxes
        classes[i, :len(image_boxes)] = image_boxes.classes
    return boxes, classes


def unpadded_boxes(boxes: np.ndarray, classes: np.ndarray) -> list[ImageBoxes]:
    """Padded boxes (N × M × 4, N × M) back as each image's ``ImageBoxes``, padding left out."""
    boxes, classes = np.asarray(boxes, np.float32), np.asarray(classes, np.int32)
    return [ImageBoxes(b[c >= 0], c[c >= 0]) for b, c in zip(boxes, classes, strict=True)]


def box_augment_preview(images: np.ndarray, labels: Sequence[ImageBoxes], aug: Augmentation,
                        repeats: int, seed: int) -> tuple[np.ndarray, list[list[ImageBoxes]]]:
    """The same uint8 N × H × W × C images, with their boxes (in pixels of these images),
    augmented ``repeats`` times: R × N × H × W × C uint8 images, and R lists of each image's
    moved ``ImageBoxes``."""
    images = np.asarray(images, dtype=np.uint8)
    tiled = np.broadcast_to(images, (repeats, *images.shape)).reshape(-1, *images.shape[1:])
    augment = box_augmentation(aug, seed)
    if augment is None:
        return (tiled.reshape(repeats, *images.shape).copy(),
                [list(labels) for _ in range(repeats)])
    boxes, classes = padded_boxes(list(labels) * repeats)
    out = augment({"images": tiled.astype(np.float32),
                   "bounding_boxes": {"boxes": boxes, "labels": classes}})
    pixels = np.rint(np.asarray(out["images"])).clip(0, 255).astype(np.uint8)
    moved = unpadded_boxes(out["bounding_boxes"]["boxes"], out["bounding_boxes"]["labels"])
    n = len(images)
    return (pixels.reshape(repeats, *images.shape),
            [moved[r * n:(r + 1) * n] for r in range(repeats)])
