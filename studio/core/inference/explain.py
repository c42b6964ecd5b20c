"""Why a model answered as it did: Grad-CAM heat maps, the activation maps of a layer and
the learned filters of the first convolution, for Keras models (Sequential or functional).

Every function takes one preprocessed sample ``x`` (1 × H × W × C, or H × W × C) as the
model's input; a model with several inputs is given it on each, as in training.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

NO_CONVOLUTION = "Grad-CAM needs a convolution layer; this model has none."
CAM_METHODS = ("grad-cam", "hires-cam")
JET = (  # position on the 0..1 scale, then red, green, blue
    (0.0, 0.0, 0.0, 0.5),
    (0.125, 0.0, 0.0, 1.0),
    (0.375, 0.0, 1.0, 1.0),
    (0.625, 1.0, 1.0, 0.0),
    (0.875, 1.0, 0.0, 0.0),
    (1.0, 0.5, 0.0, 0.0),
)
"""The colour map of heat maps: dark blue (cold) through cyan and yellow to dark red (hot)."""


def _convolution_types() -> tuple[type, ...]:
    import keras

    return (keras.layers.Conv2D, keras.layers.SeparableConv2D, keras.layers.DepthwiseConv2D,
            keras.layers.Conv2DTranspose)


def _all_layers(model: Any) -> list[Any]:
    """The model's layers in order, those of nested models in their place."""
    import keras

    out = []
    for layer in model.layers:
        out += _all_layers(layer) if isinstance(layer, keras.Model) else [layer]
    return out


def _convolutional(layer: Any) -> bool:
    """A convolution layer, or a nested model holding one."""
    import keras

    if isinstance(layer, keras.Model):
        return any(isinstance(inner, _convolution_types()) for inner in _all_layers(layer))
    return isinstance(layer, _convolution_types())


def _spatial(layer: Any) -> bool:
    """Whether the layer's output is one N × H × W × C tensor."""
    import keras

    if isinstance(layer, keras.layers.InputLayer):
        return False
    return len(getattr(_output_of(layer), "shape", ())) == 4


def _output_of(layer: Any) -> Any:
    """The layer's output tensor in its model, or None (never called, or shared)."""
    try:
        return layer.output
    except (AttributeError, ValueError):
        return None


def spatial_layers(model: Any) -> list[str]:
    """Names of the layers with N × H × W × C outputs, from input to output (the input
    itself left out); a nested model counts as one layer."""
    return [layer.name for layer in model.layers if _spatial(layer)]


def last_conv_layer(model: Any) -> str | None:
    """The last convolution layer with a spatial output (or nested model holding one, such
    as a pretrained base), or None for a model without convolutions."""
    found = [layer.name for layer in model.layers if _spatial(layer) and _convolutional(layer)]
    return found[-1] if found else None


def _batch(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return x[np.newaxis] if x.ndim == 3 else x


def _feed(model: Any, x: np.ndarray) -> Any:
    return x if len(model.inputs) == 1 else [x] * len(model.inputs)


def _sub_model(model: Any, outputs: Any) -> Any:
    """A functional model from the model's inputs to ``outputs`` (tensors of its layers)."""
    import keras

    inputs = model.inputs[0] if len(model.inputs) == 1 else model.inputs
    return keras.Model(inputs, outputs)


def _spatial_layer(model: Any, name: str) -> Any:
    try:
        layer = model.get_layer(name)
    except ValueError:
        raise ValueError(f"The model has no layer named {name!r}.") from None
    if not _spatial(layer):
        raise ValueError(f"The layer {name} has no image-shaped output (height × width × "
                         f"channels) to show.")
    return layer


def _unit(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``values`` scaled to 0..1 over ``axes`` (a constant slice becomes 0)."""
    values = np.asarray(values, dtype=np.float32)
    low = values.min(axis=axes, keepdims=True)
    spread = values.max(axis=axes, keepdims=True) - low
    return np.divide(values - low, spread, out=np.zeros_like(values), where=spread > 0)


def _class_scores(model: Any) -> tuple[Any, Any]:
    """The tensor Grad-CAM differentiates, and how it becomes one score per class: the
    scores before the final softmax when the model ends in one (a Softmax or softmax
    Activation layer, or a Dense layer with a softmax activation), else the output itself."""
    import keras

    output = model.outputs[0]
    head = next((layer for layer in model.layers
                 if not isinstance(layer, keras.layers.InputLayer) and _output_of(layer) is output),
                None)
    softmax = keras.activations.softmax
    if isinstance(head, keras.layers.Softmax) or (
            isinstance(head, keras.layers.Activation) and head.activation is softmax):
        return head.input, lambda h: h
    if isinstance(head, keras.layers.Dense) and head.activation is softmax:
        def logits(h):
            z = keras.ops.matmul(keras.ops.cast(h, head.kernel.dtype), head.kernel)
            return z if head.bias is None else z + head.bias
        return head.input, logits
    return output, lambda h: h


def grad_cam(model: Any, x: np.ndarray, class_index: int | None = None,
             layer: str | None = None, method: str = "grad-cam") -> np.ndarray:
    """Grad-CAM (Selvaraju et al., 2017) of one sample: where in the image the evidence for
    ``class_index`` (the model's answer if None) lies, H × W float32 in 0..1 at the input's
    size (0 everywhere when nothing raises the score).

    The gradients of the class score with respect to ``layer``'s output (the last
    convolution's if None) are averaged per channel; the channels, weighted so, are summed,
    kept where positive (ReLU), upsampled bilinearly and divided by their maximum. With
    ``method="hires-cam"`` (HiResCAM, Draelos and Carin, 2020) each position keeps its own
    gradient instead of the channel's average: the same map for a model that pools the
    layer globally, and a faithful one for a model that flattens it (where the averaged
    gradients of a shallow network are often negative in every channel, which leaves
    Grad-CAM empty). The score is taken before the final softmax when the model ends in one
    (see ``_class_scores``), else it is the model's output for the class. Raise ValueError
    for a model without convolutions (NO_CONVOLUTION) or a layer without a spatial output.
    """
    import tensorflow as tf

    if method not in CAM_METHODS:
        raise ValueError(f"Unknown heat map method {method!r}: use {' or '.join(CAM_METHODS)}.")
    name = layer or last_conv_layer(model)
    if name is None:
        raise ValueError(NO_CONVOLUTION)
    target = _spatial_layer(model, name)
    x = _batch(x)
    source, scores_of = _class_scores(model)
    sub = _sub_model(model, [target.output, source])
    with tf.GradientTape() as tape:
        features, before = sub(_feed(model, tf.convert_to_tensor(x)), training=False)
        scores = tf.cast(scores_of(before), tf.float32)
        chosen = int(tf.argmax(scores[0])) if class_index is None else class_index
        score = scores[:, chosen]
    grads = tf.cast(tape.gradient(score, features), tf.float32)
    if method == "grad-cam":
        grads = tf.reduce_mean(grads, axis=(1, 2), keepdims=True)
    cam = tf.nn.relu(tf.reduce_sum(tf.cast(features, tf.float32) * grads, axis=-1))
    cam = tf.image.resize(cam[..., tf.newaxis], x.shape[1:3], method="bilinear")
    cam = np.maximum(cam.numpy()[0, ..., 0], 0.0)
    top = cam.max()
    return (cam / top if top > 0 else np.zeros_like(cam)).astype(np.float32)


def activation_maps(model: Any, x: np.ndarray, layer: str) -> np.ndarray:
    """The output of ``layer`` for one sample, one map per channel (C × h × w float32), each
    scaled to 0..1 on its own (a constant map is 0)."""
    target = _spatial_layer(model, layer)
    out = _sub_model(model, target.output)(_feed(model, _batch(x)), training=False)
    maps = np.moveaxis(np.asarray(out, dtype=np.float32)[0], -1, 0)
    return _unit(maps, (1, 2))


def first_conv_filters(model: Any) -> np.ndarray:
    """The kernels of the model's first convolution layer (nested models searched too), one
    per output channel: N × kh × kw × cin float32, each scaled to 0..1 on its own. For a
    separable or depthwise convolution these are its depthwise kernels. Raise ValueError
    for a model without convolutions."""
    layer = next((layer for layer in _all_layers(model)
                  if isinstance(layer, _convolution_types())), None)
    if layer is None:
        raise ValueError("This model has no convolution layer, so it has no filters to show.")
    kernel = next(np.asarray(w) for w in layer.weights if len(w.shape) == 4)
    return _unit(np.transpose(kernel, (3, 0, 1, 2)), (1, 2, 3))


def heat_colours(heat: np.ndarray) -> np.ndarray:
    """Values in 0..1 (H × W) as uint8 RGB colours of the JET map."""
    stops = np.asarray(JET)
    heat = np.clip(np.asarray(heat, dtype=np.float64), 0.0, 1.0)
    rgb = [np.interp(heat, stops[:, 0], stops[:, channel]) for channel in (1, 2, 3)]
    return np.rint(np.stack(rgb, axis=-1) * 255.0).astype(np.uint8)


def _as_rgb(image: np.ndarray) -> np.ndarray:
    image = np.asarray(image, dtype=np.uint8)
    if image.ndim == 2:
        image = image[..., np.newaxis]
    return np.repeat(image[..., :1], 3, axis=-1) if image.shape[-1] < 3 else image[..., :3]


def heat_overlay(image: np.ndarray, heat: np.ndarray, alpha: float = 0.45) -> np.ndarray:
    """``image`` (uint8 H × W, grey, RGB or RGBA) with ``heat`` (0..1, any size, resized
    bilinearly to the image) laid over it in colour: uint8 H × W × 3, ``alpha`` the weight
    of the colours (0 leaves the image, 1 shows only the heat)."""
    from PIL import Image

    rgb = _as_rgb(image)
    height, width = rgb.shape[:2]
    heat = np.asarray(heat, dtype=np.float32)
    if heat.shape != (height, width):
        heat = np.asarray(Image.fromarray(heat).resize((width, height),
                                                       Image.Resampling.BILINEAR))
    blended = rgb * (1.0 - alpha) + heat_colours(heat) * alpha
    return np.clip(np.rint(blended), 0, 255).astype(np.uint8)


@dataclass
class Explanation:
    """What explains one answered image: the heat map laid over it (None without a
    convolution), how it was made, a layer's activation maps and the first filters."""

    layers: list[str]
    layer: str | None
    overlay: np.ndarray | None
    method: str | None
    maps: np.ndarray | None
    filters: np.ndarray | None
    note: str = ""


def explain_image(model: Any, x: np.ndarray, image: np.ndarray, class_index: int,
                  layer: str | None = None) -> Explanation:
    """Everything the Why view shows for one sample ``x`` (``image`` is it as uint8, for the
    overlay): the heat map for ``class_index``, by Grad-CAM, or by HiResCAM when Grad-CAM
    finds no positive evidence (an empty map says nothing), the activation maps of ``layer``
    (the last convolution's when None or unknown) and the first convolution's filters."""
    layers = spatial_layers(model)
    conv = last_conv_layer(model)
    layer = layer if layer in layers else (conv or (layers[-1] if layers else None))
    maps = activation_maps(model, x, layer) if layer else None
    if conv is None:
        return Explanation(layers, layer, None, None, maps, None, NO_CONVOLUTION)
    method, note = "grad-cam", ""
    heat = grad_cam(model, x, class_index)
    if not heat.any():
        method = "hires-cam"
        heat = grad_cam(model, x, class_index, method=method)
        note = ("Grad-CAM found no evidence that raises this class (its averaged gradients "
                "are negative), so the heat map is HiResCAM's, which keeps each position's "
                "own gradient.")
    return Explanation(layers, layer, heat_overlay(image, heat), method, maps,
                       first_conv_filters(model), note)
