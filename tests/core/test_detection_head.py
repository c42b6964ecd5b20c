"""The DetectionHead layer, its loss and the decoding of its output; a tiny detector learns
squares of two classes and finds them again, also after saving and loading."""

from __future__ import annotations

import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from studio.core.build.keras_model import build_keras_model
from studio.core.model.describe import key_params
from studio.core.model.flops import layer_flops
from studio.core.model.graph import Graph, Node
from studio.core.model.layers.detection import prior_logit
from studio.core.model.registry import REGISTRY
from studio.core.tasks.detection.boxes import Detections, iou_matrix
from studio.core.tasks.detection.decode import decode
from studio.core.tasks.detection.loss import (
    PACKAGE,
    detection_loss,
    heatmap_loss,
    loss_parts,
    offset_loss,
    part_metrics,
    size_loss,
)
from studio.core.tasks.detection.targets import detection_targets

HEAD = REGISTRY["DetectionHead"]


def test_the_head_is_a_1x1_conv_whose_heatmaps_start_at_the_prior():
    params = {"classes": 3, "score_threshold": 0.6, "nms_iou": 0.4, "max_boxes": 20}
    assert HEAD.category == "Detection"
    assert HEAD.output(params, [(16, 12, 8)]) == ((16, 12, 7), 9 * 7)
    assert key_params(Node("head", "DetectionHead", params)) == (
        "3 classes, score ≥ 0.6, NMS IoU 0.4")
    assert layer_flops("DetectionHead", HEAD.resolved(params), [(16, 12, 8)], (16, 12, 7),
                       63) == (2 * 8 + 1) * 16 * 12 * 7
    model = build_keras_model(Graph.from_chain([Node("input_1", "Input", {"shape": [16, 12, 8]}),
                                                Node("head", "DetectionHead", params)]))
    layer = model.get_layer("head")
    assert isinstance(layer, keras.layers.Conv2D) and layer.kernel_size == (1, 1)
    np.testing.assert_allclose(layer.bias.numpy(), [prior_logit()] * 3 + [0.0] * 4, rtol=1e-6)
    assert prior_logit() == pytest.approx(-2.1972, abs=1e-4)
    # a cell of a blank feature map starts at the prior, 0.1, for every class
    blank = model.predict(np.zeros((1, 16, 12, 8), np.float32), verbose=0)
    np.testing.assert_allclose(tf.sigmoid(blank[..., :3]), 0.1, rtol=1e-5)


def _output(rows: int = 8, cols: int = 8, classes: int = 2) -> np.ndarray:
    """A head output with nothing in it: every heatmap far below any threshold, offsets
    mid-cell, boxes one cell wide."""
    output = np.zeros((rows, cols, classes + 4), np.float32)
    output[..., :classes] = -10
    return output


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _peak(output: np.ndarray, row: int, col: int, kind: int, score: float, size: float) -> None:
    """A peak of class ``kind`` at a cell, its box ``size`` cells square and centred mid-cell."""
    output[row, col, kind] = _logit(score)
    output[row, col, -2:] = math.log(size)


def test_decoding_keeps_peaks_above_the_threshold_and_suppresses_overlaps_per_class():
    output = _output()
    _peak(output, 2, 3, 0, 0.9, 4.0)
    output[3, 2, 0] = _logit(0.8)  # beside a better cell: no peak
    _peak(output, 2, 5, 0, 0.7, 4.0)  # same class, overlapping the first box by IoU 1/3
    _peak(output, 3, 3, 1, 0.6, 2.0)  # inside the first box, another class: kept
    _peak(output, 6, 6, 0, 0.4, 2.0)
    found = decode(output, 4, (32, 32), (32, 32), score_threshold=0.5, nms_iou=0.5)
    assert isinstance(found, Detections)
    assert found.classes.tolist() == [0, 0, 1]
    np.testing.assert_allclose(found.scores, [0.9, 0.7, 0.6], rtol=1e-5)
    np.testing.assert_allclose(found.boxes[0], [6, 2, 22, 18], atol=1e-4)  # centre (14, 10)
    strict = decode(output, 4, (32, 32), (32, 32), score_threshold=0.5, nms_iou=0.2)
    assert strict.classes.tolist() == [0, 1]
    assert len(decode(output, 4, (32, 32), (32, 32), score_threshold=0.3, nms_iou=0.5)) == 4
    assert decode(output, 4, (32, 32), (32, 32), max_boxes=1).scores.tolist() == [
        pytest.approx(0.9)]


def test_boxes_come_in_the_images_pixels_clipped_to_it():
    output = _output()
    _peak(output, 0, 0, 1, 0.9, 2.0)  # centre (2, 2) px of the input, 8 px wide
    found = decode(output, 4, (32, 32), (64, 128), "squash")
    np.testing.assert_allclose(found.boxes, [[0, 0, 24, 12]], atol=1e-4)


def test_an_output_that_is_no_heads_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"rows × cols × \(classes \+ 4\), not 8 × 8 × 4\.$"):
        decode(np.zeros((8, 8, 4)), 4, (32, 32), (32, 32))


def _batch() -> np.ndarray:
    """Target maps of an image with three boxes (two of one class) and a background one."""
    boxes = np.array([[[2, 2, 14, 10], [16, 4, 30, 30], [20, 20, 28, 28]], [[0, 0, 0, 0]] * 3],
                     np.float32)
    classes = np.array([[0, 1, 1], [-1, -1, -1]], np.int32)
    return np.stack([detection_targets(b, c, 2, (8, 8), 4).numpy()
                     for b, c in zip(boxes, classes, strict=True)])


def _perfect(targets: np.ndarray, classes: int = 2) -> np.ndarray:
    heat = np.where(targets[..., :classes] >= 1, 30.0, -30.0)
    offsets = np.log(np.clip(targets[..., classes:classes + 2], 1e-9, None)
                     / np.clip(1 - targets[..., classes:classes + 2], 1e-9, None))
    return np.concatenate([heat, offsets, targets[..., classes + 2:classes + 4]], axis=-1)


def test_the_loss_is_nothing_for_the_perfect_output_and_its_parts_add_up_to_it():
    targets = _batch()
    perfect = _perfect(targets)
    assert float(detection_loss()(targets, perfect)) < 1e-6
    wrong = perfect + np.random.default_rng(0).normal(0, 1, perfect.shape)
    weights = {"heatmap_weight": 2.0, "size_weight": 0.5, "offset_weight": 3.0}
    total = float(detection_loss(**weights)(targets, wrong))
    heatmap, size, offset = (float(np.mean(part(targets, wrong)))
                             for part in (heatmap_loss, size_loss, offset_loss))
    assert min(heatmap, size, offset) > 0
    assert total == pytest.approx(2 * heatmap + 0.5 * size + 3 * offset, rel=1e-5)
    # the background image has a heatmap loss only, from its empty cells
    parts = [part.numpy() for part in loss_parts(targets, wrong)]
    assert parts[0][1] > 0 and parts[1][1] == parts[2][1] == 0


def test_the_loss_is_saved_and_loaded_by_its_registered_name():
    loss = detection_loss(size_weight=0.25)
    again = keras.losses.deserialize(keras.losses.serialize(loss))
    assert type(again) is type(loss) and again.size_weight == 0.25
    assert keras.saving.get_registered_name(type(loss)) == f"{PACKAGE}>DetectionLoss"
    assert [keras.saving.get_registered_name(m) for m in part_metrics()] == [
        f"{PACKAGE}>heatmap_loss", f"{PACKAGE}>size_loss", f"{PACKAGE}>offset_loss"]


def _squares(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """64 × 64 grey images with one or two squares, 8 to 16 px, bright (class 0) or dim
    (class 1), apart; their boxes padded to two with class -1."""
    rng = np.random.default_rng(seed)
    images = np.zeros((count, 64, 64, 1), np.float32)
    boxes = np.zeros((count, 2, 4), np.float32)
    classes = np.full((count, 2), -1, np.int32)
    for i in range(count):
        for j in range(rng.integers(1, 3)):
            side = rng.integers(8, 17)
            x, y = rng.integers(0, 64 - side, 2)
            box = [x, y, x + side, y + side]
            if j and iou_matrix(boxes[i, :1], [[x - 2, y - 2, x + side + 2, y + side + 2]]).any():
                continue
            kind = rng.integers(0, 2)
            images[i, y:y + side, x:x + side] = 1.0 if kind == 0 else 0.5
            boxes[i, j], classes[i, j] = box, kind
    return images, boxes, classes


def test_a_tiny_detector_learns_squares_and_finds_them_after_saving_and_loading(tmp_path):
    keras.utils.set_random_seed(0)
    images, boxes, classes = _squares(16)
    batch = tf.data.Dataset.from_tensor_slices((images, boxes, classes)).map(
        lambda image, b, c: (image, detection_targets(b, c, 2, (16, 16), 4))).batch(16).cache()
    targets = next(iter(batch))[1]
    graph = Graph.from_chain([
        Node("input_1", "Input", {"shape": [64, 64, 1]}),
        Node("conv2d_1", "Conv2D", {"filters": 8, "strides": 2, "padding": "same"}),
        Node("conv2d_2", "Conv2D", {"filters": 16, "strides": 2, "padding": "same"}),
        Node("conv2d_3", "Conv2D", {"filters": 16, "padding": "same"}),
        Node("conv2d_4", "Conv2D", {"filters": 16, "padding": "same"}),
        Node("head", "DetectionHead", {"classes": 2}),
    ])
    model = build_keras_model(graph)
    loss = detection_loss()
    model.compile(keras.optimizers.Adam(1e-2), loss, metrics=part_metrics())
    before = float(loss(targets, model(images)))
    history = model.fit(batch.repeat(100), verbose=0, shuffle=False).history
    assert {"heatmap_loss", "size_loss", "offset_loss"} <= set(history)
    assert float(loss(targets, model(images))) < before / 2

    path = tmp_path / "detector.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert all(type(layer).__module__.startswith("keras.src.layers") for layer in loaded.layers)
    assert type(loaded.loss).__name__ == "DetectionLoss"
    outputs = np.asarray(loaded(images))
    np.testing.assert_allclose(outputs, model(images), atol=1e-5)
    for output, wanted, kinds in zip(outputs, boxes, classes, strict=True):
        found = decode(output, 4, (64, 64), (64, 64))
        for box, kind in zip(wanted[kinds >= 0], kinds[kinds >= 0], strict=True):
            same = found.boxes[found.classes == kind]
            assert len(same) and iou_matrix([box], same).max() >= 0.5, (box, kind, found)
