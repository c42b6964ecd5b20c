"""The Detection layers: DetectionHead, a CenterNet-style ("objects as points") head.

The head turns a feature map whose cells are ``stride`` input pixels apart into, at every
cell, ``classes + 4`` values (the channel layout every detection module shares):

- ``classes`` heatmap logits: the sigmoid of one is the probability that the centre of an
  object of that class falls in the cell;
- 2 centre offsets (x, y): the sigmoid of each is where in the cell the centre lies, from 0
  (its left or top edge) to 1 (its right or bottom edge), in cells;
- 2 sizes (width, height): the natural log of the box's width and height in cells, so a box
  is ``exp(value) * stride`` pixels wide (logs keep a 3-pixel and a 300-pixel box's errors
  alike, and the size positive).

It is one Keras ``Conv2D`` with a 1 × 1 kernel, so a saved ``.keras`` file loads with
``safe_mode=True`` and no custom code. Its heatmap biases start at the logit of
``HEATMAP_PRIOR`` (CenterNet's -2.19), through a serialisable ``Constant`` initializer
holding one value per channel, and its kernel starts small, so each cell starts at that
probability and the first steps of training are not swamped by a loss from every empty cell.
The score threshold, NMS IoU and box limit do not change the layer: they are how its output is
decoded (``studio.core.tasks.detection.decode``).
"""

from __future__ import annotations

import math
from typing import Any

from studio.core.model.layers.base import LayerType, Shape, Weights, ranked
from studio.core.model.params import Param

BOX_CHANNELS = 4
"""The channels after the class heatmaps: x and y centre offsets, then log width and height."""
HEATMAP_PRIOR = 0.1
"""The probability every heatmap cell starts at, as in CenterNet."""
KERNEL_STDDEV = 0.01
"""The spread of the head's starting weights: small, so the biases set its first output."""
SCORE_THRESHOLD = 0.3
NMS_IOU = 0.5
MAX_BOXES = 100
"""The decoding settings a new head starts with."""


def prior_logit(prior: float = HEATMAP_PRIOR) -> float:
    """The logit whose sigmoid is ``prior``: -log((1 - prior) / prior), -2.197 for 0.1."""
    return -math.log((1 - prior) / prior)


def _channels(params: dict[str, Any]) -> int:
    return params["classes"] + BOX_CHANNELS


def _infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    *sizes, c = ranked(inputs, 3, "DetectionHead", "a feature map of height × width × channels")
    channels = _channels(params)
    return (*sizes, channels), (c + 1) * channels


def _weights(params: dict[str, Any], inputs: list[Shape]) -> Weights:
    channels = _channels(params)
    return [("kernel", (1, 1, inputs[0][-1], channels)), ("bias", (channels,))]


def _to_keras(kwargs: dict[str, Any], inputs: list[Shape]) -> dict[str, Any]:
    """The 1 × 1 Conv2D: linear outputs, heatmap biases at the prior's logit, the offset and
    size biases at 0 (a centre mid-cell, a box one cell wide)."""
    classes = kwargs["classes"]
    return {
        "filters": classes + BOX_CHANNELS,
        "kernel_size": (1, 1),
        "activation": "linear",
        "kernel_initializer": {"class_name": "RandomNormal",
                               "config": {"mean": 0.0, "stddev": KERNEL_STDDEV}},
        "bias_initializer": {"class_name": "Constant",
                             "config": {"value": [prior_logit()] * classes
                                        + [0.0] * BOX_CHANNELS}},
    }


TYPES = (
    LayerType(
        "DetectionHead",
        "Detection",
        "Finds objects as points (CenterNet): for every cell of the feature map before it, how "
        "likely an object of each class has its centre there, where in the cell, and the "
        "box's width and height. Put it on a feature map a few halvings down (stride 4 to 16), "
        "after a 3 × 3 Conv2D with ReLU, as CenterNet does.",
        (
            Param("classes", "int", 10, "How many classes of object it finds: the dataset's "
                  "number of classes.", 1, 1000, required=True),
            Param("score_threshold", "float", SCORE_THRESHOLD, "Boxes scoring less than this "
                  "are left out when decoding (0 to 1).", 0.0, 1.0),
            Param("nms_iou", "float", NMS_IOU, "Of two boxes of the same class that overlap by "
                  "more than this (intersection over union), the lower-scoring one is dropped "
                  "when decoding.", 0.0, 1.0),
            Param("max_boxes", "int", MAX_BOXES, "The most boxes decoded from one image.", 1,
                  10000),
        ),
        _infer,
        to_keras=_to_keras,
        weights=_weights,
        keras_class="Conv2D",
        labels={"nms_iou": "NMS IoU"},
    ),
)
