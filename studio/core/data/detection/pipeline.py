"""Detection datasets for Keras: images read, resized, cached and normalised as every image
task reads them (``data.image_reading``), each batch with the target maps of its boxes.

Each image is streamed with its place in its split in place of a label; that then gathers
the image's boxes, already mapped to the network's input (as ``fitting.box_mapping`` maps
them) and padded to the most boxes any image has. Training batches are augmented with their
boxes (``augment.box_augmentation``); every batch's boxes then become
``targets.detection_targets`` at the head's stride (input size / the head's grid).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from studio.core.data.detection.augment import box_augmentation, padded_boxes
from studio.core.data.image_pipeline import ImageForm
from studio.core.data.image_reading import ImageReading
from studio.core.data.types import DataError, LoadedData
from studio.core.project.document import DatasetChoice
from studio.core.tasks.detection.boxes import ImageBoxes
from studio.core.tasks.detection.fitting import boxes_in_input
from studio.core.tasks.detection.labels import BoxLabels
from studio.core.tasks.detection.targets import (
    TARGET_CHANNELS_AFTER_CLASSES,
    detection_targets,
)
from studio.core.tasks.detection.task import head_stride, uneven_grid


def input_boxes(labels: BoxLabels, form: ImageForm) -> list[ImageBoxes]:
    """Each image's boxes in pixels of the network's input (``fitting.boxes_in_input``)."""
    return [boxes_in_input(labels.image(index), tuple(int(v) for v in labels.sizes[index]),
                           form.size, form.resize) for index in range(len(labels))]


def _padded(images: list[ImageBoxes]) -> tuple[np.ndarray, np.ndarray]:
    """``padded_boxes`` with room for one box at least, so that every shape is known."""
    boxes, classes = padded_boxes(images)
    if boxes.shape[1]:
        return boxes, classes
    return np.zeros((len(images), 1, 4), np.float32), np.full((len(images), 1), -1, np.int32)


def decoding(form: ImageForm, output: Mapping[str, Any], class_names: list[str]
             ) -> dict[str, Any]:
    """What turning the head's output into boxes takes: its stride (input pixels per cell of
    its grid), the input size, the resize mode, the class names and the head's decoding
    settings; DataError if the head's grid does not divide the input."""
    if not output.get("grid"):
        raise DataError("Streaming boxes needs the model's DetectionHead: its grid says where "
                        "each box is taught.")
    rows, cols = output["grid"]
    height, width = form.size
    stride = head_stride(form.size, (rows, cols))
    if stride is None:
        raise DataError(uneven_grid(form.size, (rows, cols)))
    return {"stride": stride, "input_size": [height, width], "grid": [rows, cols],
            "resize": form.resize, "class_names": class_names,
            "score_threshold": output["score_threshold"], "nms_iou": output["nms_iou"],
            "max_boxes": output["max_boxes"]}


def detection_datasets(loaded: LoadedData, choice: DatasetChoice, batch_size: int, seed: int,
                       output: Mapping[str, Any]):
    """Training, validation and test (None if empty) batches of (float32 images, target
    maps), the preprocessing record (the image pipeline's, with ``decoding``), and what the
    mAP callback scores: the validation images' batches and their true boxes in input pixels.

    ``output``: the head's ``output_settings`` (its grid and decoding settings)."""
    import tensorflow as tf

    reading = ImageReading.of(loaded, choice, batch_size, seed)
    decode = decoding(reading.form, output, list(loaded.info.class_names))
    rows, cols = decode["grid"]
    classes = loaded.info.num_classes
    truths = input_boxes(loaded.labels, reading.form)
    augment = box_augmentation(choice.augmentation, seed)

    def targets(boxes, labels):
        return tf.map_fn(lambda one: detection_targets(one[0], one[1], classes, (rows, cols),
                                                       decode["stride"]),
                         (boxes, labels),
                         fn_output_signature=tf.TensorSpec(
                             [rows, cols, classes + TARGET_CHANNELS_AFTER_CLASSES], tf.float32))

    def batch(images, index, table, train: bool):
        x = tf.cast(images, tf.float32)
        boxes, labels = tf.gather(table[0], index), tf.gather(table[1], index)
        if train and augment is not None:
            moved = augment({"images": x, "bounding_boxes": {"boxes": boxes,
                                                             "labels": labels}})
            x, boxes = moved["images"], moved["bounding_boxes"]["boxes"]
            labels = moved["bounding_boxes"]["labels"]
        return reading.normalised(x), targets(boxes, labels)

    def split(name: str):
        train = name == "train"
        table = [tf.constant(a) for a in _padded([truths[i] for i in loaded.splits[name]])]
        return reading.finished(reading.placed_images(name),
                                lambda x, i: batch(x, i, table, train))

    test = split("test") if loaded.size("test") else None
    validation = split("validation")
    # The mAP callback reads the validation images alone: no target maps made to be dropped.
    # A known length lets Keras's predict end without warning that the data ran out.
    batches = math.ceil(loaded.size("validation") / batch_size)
    scoring = (reading.finished(reading.placed_images("validation"),
                                lambda x, i: reading.normalised(tf.cast(x, tf.float32)))
               .apply(tf.data.experimental.assert_cardinality(batches)),
               [truths[i] for i in loaded.splits["validation"]])
    prep = {**reading.preprocessing(), "decoding": decode}
    return split("train"), validation, test, prep, scoring
