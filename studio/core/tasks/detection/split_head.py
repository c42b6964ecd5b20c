"""A detector's int8 export answers with its head's output map in three parts: the class
heatmaps, the 2 centre offsets and the 2 log sizes, each its own output.

Full-integer quantisation gives each output tensor one int8 scale. In one output map, the
heatmap logits (tens of units wide) set that scale and the log sizes (a unit or two wide) are
rounded to it; apart, each part gets a scale fitted to its own range (the log sizes' about
seven times finer). The parts are the head's 1 × 1 convolution sliced by output channel, so
they compute what it computes; joined on the last axis, in order, they are its output map.
"""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.detection import BOX_CHANNELS

PARTS = ("heatmaps", "offsets", "sizes")
"""The outputs of the split model, in the output map's channel order."""


def split_head(model: Any) -> Any:
    """``model`` (a Keras model ending in a DetectionHead, its 1 × 1 Conv2D) with the head's
    output in PARTS: three 1 × 1 convolutions holding its weights sliced by channel."""
    import keras

    head = model.layers[-1]
    kernel, bias = head.get_weights()
    classes = kernel.shape[-1] - BOX_CHANNELS
    edges = (0, classes, classes + 2, classes + BOX_CHANNELS)
    outputs = []
    for name, start, end in zip(PARTS, edges[:-1], edges[1:], strict=True):
        part = keras.layers.Conv2D(end - start, 1, name=f"{head.name}_{name}")
        outputs.append(part(head.input))
        part.set_weights([kernel[..., start:end], bias[start:end]])
    return keras.Model(model.inputs, outputs, name=f"{model.name}_split")
