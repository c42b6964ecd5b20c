"""A DetectionHead's output for one image turned into boxes, in NumPy, so that a new score
threshold or NMS IoU redraws the boxes without running the model again.

The steps are CenterNet's: the sigmoid of each class heatmap; the peaks (cells no neighbour in
their 3 × 3 window outscores); the ``max_boxes`` best peaks scoring at least the threshold;
each one's box from its cell, centre offset and log size (see
``studio.core.model.layers.detection``), taken back to the image's own pixels; and then,
per class, non-maximum suppression at the chosen IoU.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from studio.core.model.layers.detection import BOX_CHANNELS, MAX_BOXES, NMS_IOU, SCORE_THRESHOLD
from studio.core.tasks.detection.boxes import Detections, nms_by_class
from studio.core.tasks.detection.fitting import Size, box_mapping

_LOG_SIZE_LIMIT = 20.0
"""Log sizes are clipped to ±this before ``exp``: an untrained head may say anything."""


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function, without overflow for large logits."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, np.float64)))


def peaks(heatmaps: np.ndarray) -> np.ndarray:
    """Where each heatmap (rows × cols × classes) is the largest in its 3 × 3 window (CenterNet's
    max-pool "NMS"): True at peaks, ties included."""
    rows, cols = heatmaps.shape[:2]
    padded = np.pad(heatmaps, ((1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    window = np.max([padded[dy:dy + rows, dx:dx + cols] for dy in range(3) for dx in range(3)],
                    axis=0)
    return heatmaps >= window


def decode(output: np.ndarray, stride: int, input_size: Size, image_size: Size,
           resize: str = "squash", score_threshold: float = SCORE_THRESHOLD,
           nms_iou: float = NMS_IOU, max_boxes: int = MAX_BOXES) -> Detections:
    """The boxes in one image's head ``output`` (rows × cols × ``classes + 4``), best first.

    ``stride``: input pixels per cell; ``input_size``: the network's input (height, width);
    ``image_size``: the image's own (height, width), and ``resize`` how it was fitted to the
    input ("squash", "crop" or "pad"). Boxes come in the image's pixels, clipped to it.
    """
    output = np.asarray(output, np.float64)
    classes = output.shape[-1] - BOX_CHANNELS
    if output.ndim != 3 or classes < 1:
        raise ValueError(f"A DetectionHead's output for one image is rows × cols × (classes + "
                         f"{BOX_CHANNELS}), not {' × '.join(map(str, output.shape))}.")
    cols = output.shape[1]
    heat = sigmoid(output[..., :classes])
    scores = np.where(peaks(heat), heat, 0.0).reshape(-1)
    count = min(max_boxes, scores.size)
    # the best ``count`` as a stable sort of all takes them (the README snippet does): ties,
    # which int8 scores have, in cell order
    kth = np.partition(scores, scores.size - count)[scores.size - count]
    best = np.flatnonzero(scores >= kth)
    best = best[np.argsort(-scores[best], kind="stable")][:count]
    best = best[scores[best] >= score_threshold]
    cell, kind = np.divmod(best, classes)
    row, column = np.divmod(cell, cols)
    at = output[row, column]
    centre_x = (column + sigmoid(at[:, classes])) * stride
    centre_y = (row + sigmoid(at[:, classes + 1])) * stride
    half = np.exp(np.clip(at[:, classes + 2:classes + 4], -_LOG_SIZE_LIMIT, _LOG_SIZE_LIMIT)
                  ) * stride / 2
    boxes = np.stack([centre_x - half[:, 0], centre_y - half[:, 1],
                      centre_x + half[:, 0], centre_y + half[:, 1]], axis=1)
    boxes = box_mapping(image_size, input_size, resize).to_image(boxes)
    kept = nms_by_class(boxes, scores[best], kind, nms_iou)
    return Detections(boxes[kept], kind[kept], scores[best][kept])


def decode_in_input(output: np.ndarray, settings: Mapping[str, Any],
                    score_threshold: float | None = None) -> Detections:
    """One image's boxes in input pixels, decoded with ``settings`` (a run's ``decoding``
    record; without one, in cells of the head's grid at the head's defaults), down to
    ``score_threshold`` if given, else the record's."""
    size = tuple(settings.get("input_size", output.shape[:2]))
    threshold = settings.get("score_threshold", SCORE_THRESHOLD)
    return decode(output, settings.get("stride", 1), size, size, "squash",
                  threshold if score_threshold is None else score_threshold,
                  settings.get("nms_iou", NMS_IOU), settings.get("max_boxes", MAX_BOXES))
