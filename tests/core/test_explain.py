"""Explanations: Grad-CAM against models whose evidence is known and a direct gradient
computation, activation maps and filters against Keras, and heat overlays."""

from __future__ import annotations

import numpy as np
import pytest

from studio.core.data import sources as data
from studio.core.inference.explain import (
    NO_CONVOLUTION,
    activation_maps,
    first_conv_filters,
    grad_cam,
    heat_colours,
    heat_overlay,
    last_conv_layer,
    spatial_layers,
)
from studio.core.runs import folders as runs


@pytest.fixture(scope="module")
def cnn(cnn_run):
    """The ``cnn_run`` model and three of its test digits, preprocessed (0..1)."""
    import keras

    from studio.core.project.document import load_project

    model = keras.saving.load_model(cnn_run / runs.MODEL_FILE, safe_mode=True, compile=False)
    loaded = data.load(load_project(cnn_run / runs.PROJECT_FILE).dataset)
    digits = loaded.samples.x[loaded.splits["test"][:3]].astype(np.float32) / 255.0
    return model, digits


def copy_channels(layer) -> None:
    """Make a 1 × 1 convolution of two channels into two copy each channel."""
    layer.set_weights([np.eye(2, dtype=np.float32).reshape(1, 1, 2, 2), np.zeros(2, np.float32)])


def two_blobs() -> np.ndarray:
    """An 8 × 8 image of two channels: a blob in the top-left quadrant of the first and one
    in the bottom-right quadrant of the second."""
    x = np.zeros((1, 8, 8, 2), np.float32)
    x[0, 1:3, 1:4, 0] = [[0.5, 1.0, 0.5], [0.25, 0.75, 0.25]]
    x[0, 5:7, 4:7, 1] = [[1.0, 0.5, 0.5], [0.5, 0.5, 0.25]]
    return x


def blob_model(head: str = "dense-softmax", sequential: bool = False):
    """Class k's score is the mean of channel k: the evidence for a class is its blob.

    A 1 × 1 convolution copies the channels, global average pooling takes their means and
    a Dense layer with an identity kernel makes them the class scores, followed by a softmax
    in the way ``head`` says.
    """
    import keras

    layers = [keras.layers.Conv2D(2, 1, name="features"),
              keras.layers.GlobalAveragePooling2D(name="pool"),
              keras.layers.Dense(2, kernel_initializer="identity",
                                 activation="softmax" if head == "dense-softmax" else None,
                                 name="scores")]
    if head == "softmax-layer":
        layers.append(keras.layers.Softmax(name="softmax"))
    elif head == "activation-layer":
        layers.append(keras.layers.Activation("softmax", name="softmax"))
    if sequential:
        model = keras.Sequential([keras.Input((8, 8, 2)), *layers])
    else:
        x = inputs = keras.Input((8, 8, 2))
        for layer in layers:
            x = layer(x)
        model = keras.Model(inputs, x)
    copy_channels(layers[0])
    return model


@pytest.mark.parametrize("head", ["dense-softmax", "softmax-layer", "activation-layer",
                                  "logits"])
@pytest.mark.parametrize("sequential", [False, True])
def test_grad_cam_lights_up_the_blob_that_decides_the_class(head, sequential):
    x = two_blobs()
    model = blob_model(head, sequential)
    assert last_conv_layer(model) == "features"
    for k in (0, 1):
        heat = grad_cam(model, x, k)
        assert heat.shape == (8, 8) and heat.dtype == np.float32
        np.testing.assert_allclose(heat, x[0, ..., k] / x[0, ..., k].max(), atol=1e-6)
        np.testing.assert_allclose(grad_cam(model, x, k, method="hires-cam"), heat, atol=1e-6)
    np.testing.assert_array_equal(grad_cam(model, x), grad_cam(model, x, 0))


def test_grad_cam_uses_the_score_before_softmax(tmp_path):
    """With the probability as the score, the other blob's channel would weigh negatively;
    before the softmax it weighs nothing, so the map is the same with a softmax or without,
    also for a model saved and loaded again."""
    import keras

    model = blob_model("dense-softmax")
    model.save(tmp_path / "m.keras")
    again = keras.saving.load_model(tmp_path / "m.keras", safe_mode=True, compile=False)
    x = two_blobs()
    x[0, ..., 1] += 0.5  # the second channel now also covers the blob of the first
    expected = grad_cam(blob_model("logits"), x, 0)
    np.testing.assert_allclose(grad_cam(again, x, 0), expected, atol=1e-6)
    assert expected[6, 0] == 0 and expected[1, 2] == 1


@pytest.mark.parametrize("method", ["grad-cam", "hires-cam"])
def test_grad_cam_of_the_trained_cnn_agrees_with_a_direct_computation(cnn, method):
    """The oracle calls the model's layers one by one and differentiates the logit of the
    answer (the Dense layer without its softmax) with respect to the convolution's output.
    Averaged per channel (Grad-CAM), the gradients of this shallow network weigh every
    channel negatively, so the map is empty; kept per position (HiResCAM) they show where
    the digit's strokes raise the score."""
    import keras
    import tensorflow as tf

    model, digits = cnn
    x = digits[:1]
    heat = grad_cam(model, x, method=method)
    conv, pool, flatten, dense = (model.get_layer(name) for name in
                                  ("conv2d_1", "max_pooling2d_1", "flatten_1", "dense_1"))
    with tf.GradientTape() as tape:
        features = conv(x)
        tape.watch(features)
        logits = keras.ops.matmul(flatten(pool(features)), dense.kernel) + dense.bias
        score = logits[0, int(np.argmax(model(x)[0]))]
    grads = tape.gradient(score, features)[0].numpy()
    if method == "grad-cam":
        grads = grads.mean(axis=(0, 1))
    cam = np.maximum((features[0].numpy() * grads).sum(axis=-1), 0)
    cam = tf.image.resize(cam[..., None], (28, 28)).numpy()[..., 0]
    assert heat.shape == (28, 28) and heat.dtype == np.float32
    if method == "grad-cam":
        assert not cam.any() and not heat.any()
    else:
        np.testing.assert_allclose(heat, cam / cam.max(), atol=1e-5)
        hot = heat > 0.3
        assert hot.any() and (digits[0, ..., 0][hot] > 0.3).mean() > 0.5


def test_grad_cam_on_a_chosen_spatial_layer_is_upsampled_to_the_input(cnn):
    model, digits = cnn
    heat = grad_cam(model, digits[1], 3, layer="max_pooling2d_1")
    assert heat.shape == (28, 28) and 0 <= heat.min() and heat.max() <= 1
    with pytest.raises(ValueError, match="flatten_1 has no image-shaped output"):
        grad_cam(model, digits[1], layer="flatten_1")
    with pytest.raises(ValueError, match="no layer named 'nope'"):
        activation_maps(model, digits[1], "nope")
    with pytest.raises(ValueError, match="Unknown heat map method 'cam'"):
        grad_cam(model, digits[1], method="cam")


def test_spatial_and_convolution_layers_of_the_cnn(cnn):
    model, _ = cnn
    assert spatial_layers(model) == ["conv2d_1", "max_pooling2d_1"]
    assert last_conv_layer(model) == "conv2d_1"


def test_activation_maps_are_the_layers_output_scaled_per_channel(cnn):
    import keras

    model, digits = cnn
    for name in ("conv2d_1", "max_pooling2d_1"):
        maps = activation_maps(model, digits[2], name)
        out = keras.Model(model.inputs[0], model.get_layer(name).output)(digits[2:3])[0]
        out = np.moveaxis(np.asarray(out), -1, 0)
        assert maps.shape == out.shape and maps.dtype == np.float32
        for got, raw in zip(maps, out, strict=True):
            spread = raw.max() - raw.min()
            expected = (raw - raw.min()) / spread if spread else np.zeros_like(raw)
            np.testing.assert_allclose(got, expected, atol=1e-6)
    assert activation_maps(model, digits[2], "conv2d_1").shape == (8, 26, 26)


def test_first_filters_are_the_first_convolutions_kernels_scaled_per_filter():
    import keras

    model = keras.Sequential([keras.Input((6, 6, 2)), keras.layers.Conv2D(3, (2, 3)),
                              keras.layers.Conv2D(4, 1)])
    kernel = np.arange(2 * 3 * 2 * 3, dtype=np.float32).reshape(2, 3, 2, 3) - 10
    kernel[..., 2] = 7.0  # a constant filter
    first = model.layers[0]
    first.set_weights([kernel, np.zeros(3, np.float32)])
    filters = first_conv_filters(model)
    assert filters.shape == (3, 2, 3, 2) and filters.dtype == np.float32
    for n in range(2):
        raw = kernel[..., n]
        np.testing.assert_allclose(filters[n], (raw - raw.min()) / (raw.max() - raw.min()),
                                   atol=1e-6)
    assert not filters[2].any()


def test_a_nested_convolution_block_is_found_and_explained():
    import keras

    block = keras.Sequential([keras.Input((8, 8, 2)),
                              keras.layers.Conv2D(2, 1)], name="block")
    copy_channels(block.layers[0])
    inputs = keras.Input((8, 8, 2))
    x = keras.layers.GlobalAveragePooling2D()(block(inputs))
    model = keras.Model(inputs, keras.layers.Dense(2, kernel_initializer="identity",
                                                   activation="softmax")(x))
    assert last_conv_layer(model) == "block" and spatial_layers(model) == ["block"]
    x = two_blobs()
    np.testing.assert_allclose(grad_cam(model, x, 1), x[0, ..., 1] / x[0, ..., 1].max(),
                               atol=1e-6)
    assert first_conv_filters(model).shape == (2, 1, 1, 2)


def test_a_dense_only_model_has_no_convolution_to_explain():
    from studio.core.build.keras_model import build_model
    from tests.helpers import tiny_project

    project = tiny_project()
    model = build_model(project.graph, data.describe(project.dataset))
    assert last_conv_layer(model) is None and spatial_layers(model) == []
    x = np.zeros((1, 28, 28, 1), np.float32)
    with pytest.raises(ValueError, match=NO_CONVOLUTION):
        grad_cam(model, x)
    with pytest.raises(ValueError, match="no convolution layer"):
        first_conv_filters(model)


def test_heat_colours_run_from_blue_to_red():
    colours = heat_colours(np.array([[0.0, 0.125, 0.5, 0.875, 1.0]]))
    assert colours.dtype == np.uint8
    assert colours[0].tolist() == [[0, 0, 128], [0, 0, 255], [128, 255, 128], [255, 0, 0],
                                   [128, 0, 0]]


@pytest.mark.parametrize("shape", [(6, 4), (6, 4, 1), (6, 4, 3), (6, 4, 4)])
def test_heat_overlay_blends_the_colours_over_any_image(shape):
    image = np.full(shape, 100, np.uint8)
    heat = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]], np.float32)  # resized to 6 × 4
    plain = heat_overlay(image, heat, alpha=0.0)
    assert plain.shape == (6, 4, 3) and plain.dtype == np.uint8 and np.all(plain == 100)
    only_heat = heat_overlay(image, np.ones((6, 4)), alpha=1.0)
    assert np.all(only_heat == [128, 0, 0])
    half = heat_overlay(image, np.zeros((6, 4)), alpha=0.5)
    assert half[0, 0].tolist() == [50, 50, 114]
    resized = heat_overlay(image, heat, alpha=1.0)
    assert resized[0, 0, 2] > resized[0, 0, 0] and resized[0, 3, 0] > resized[0, 3, 2]
