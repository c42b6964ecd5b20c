"""The training callback that scores a detector as it learns: at an epoch's end it predicts
the validation images, decodes their boxes and logs ``val_map50`` and ``val_map`` (COCO-style
mean average precision at IoU 0.5, and over IoU 0.5 to 0.95) into the epoch's logs, where the
run's history, live curves, early stopping, checkpoints and search read them (Keras is
imported when called)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from studio.core.model.layers.detection import BOX_CHANNELS
from studio.core.tasks.detection.average_precision import average_precision
from studio.core.tasks.detection.boxes import Detections, ImageBoxes
from studio.core.tasks.detection.decode import decode_in_input

SCORE_THRESHOLD = 0.05
"""The lowest score a box counts with in mAP: as in COCO's evaluations, far below the
threshold boxes are shown at, so that the precision-recall curve reaches low-scoring boxes."""
IMAGES_PER_EPOCH = 1000
"""Validation images scored every epoch; a larger set is scored every ceil(n / this) epochs
(every 2nd epoch for 2,000 images), up to every MAX_EVERY, and always after the last one."""
MAX_EVERY = 5


def scoring_interval(images: int) -> int:
    """Every how many epochs ``images`` validation images are scored."""
    return min(MAX_EVERY, max(1, math.ceil(images / IMAGES_PER_EPOCH)))


def map_detections(outputs: np.ndarray, settings: Mapping[str, Any]) -> list[Detections]:
    """Each image's boxes in input pixels as mAP counts them: head ``outputs`` (N × rows ×
    cols × channels) decoded with the run's ``decoding`` record (stride, input size, NMS IoU,
    max boxes) down to SCORE_THRESHOLD."""
    return [decode_in_input(output, settings, SCORE_THRESHOLD) for output in outputs]


def map_scores(outputs: np.ndarray, truths: Sequence[ImageBoxes], settings: Mapping[str, Any]
               ) -> dict[str, float]:
    """``val_map50`` and ``val_map`` of head ``outputs`` (one per image, N × rows × cols ×
    channels) against the images' true boxes in input pixels; ``settings``: the run's
    ``decoding`` record (see ``map_detections``)."""
    scores = average_precision(truths, map_detections(outputs, settings),
                               outputs.shape[-1] - BOX_CHANNELS)
    return {"val_map50": scores.map50 if scores.map50 is not None else 0.0,
            "val_map": scores.map if scores.map is not None else 0.0}


def map_callback(images: Any, truths: Sequence[ImageBoxes], settings: Mapping[str, Any]
                 ) -> Any:
    """A Keras callback scoring the batches of validation ``images`` (a finite dataset of
    model inputs) against ``truths`` every ``scoring_interval`` epochs and after the last."""
    import keras

    every = scoring_interval(len(truths))

    class MapScores(keras.callbacks.Callback):
        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            last = epoch + 1 == self.params.get("epochs")
            if logs is None or ((epoch + 1) % every and not last):
                return
            outputs = self.model.predict(images, verbose=0)
            logs.update(map_scores(np.asarray(outputs, np.float32), truths, settings))

    return MapScores()
