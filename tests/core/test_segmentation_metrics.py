"""Pixel accuracy and mean IoU as streaming Keras metrics, against keras.metrics.MeanIoU (with
ignore_class 255) and the NumPy scores."""

from __future__ import annotations

import numpy as np
import pytest

from studio.core.tasks.segmentation.masks import IGNORE
from studio.core.tasks.segmentation.scores import (
    confusion_matrix,
    mean_iou,
    pixel_accuracy,
    predicted_masks,
)


def batches(seed: int, count: int = 3):
    """``count`` batches of two 8 × 8 masks of 3 classes (some pixels IGNORE) and outputs."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        masks = rng.integers(0, 3, (2, 8, 8)).astype(np.uint8)
        masks[rng.random(masks.shape) < 0.1] = IGNORE
        yield masks, rng.random((2, 8, 8, 3)).astype(np.float32)


@pytest.mark.parametrize("seed", range(2))
def test_streaming_scores_agree_with_keras_mean_iou_and_numpy(seed):
    import keras

    from studio.core.tasks.segmentation.metrics import segmentation_metrics

    ours = segmentation_metrics(3)
    wide = segmentation_metrics()  # MAX_CLASSES: the classes a model lacks are left out
    oracle = keras.metrics.MeanIoU(3, ignore_class=IGNORE, sparse_y_pred=False)
    confusion = np.zeros((3, 3), np.int64)
    for masks, outputs in batches(seed):
        for metric in (*ours, *wide, oracle):
            metric.update_state(masks[..., None] if metric is wide[0] else masks, outputs)
        confusion += confusion_matrix(masks, predicted_masks(outputs), 3)
    (accuracy, iou), (wide_accuracy, wide_iou) = ours, wide
    assert float(iou.result()) == pytest.approx(float(oracle.result()), abs=1e-6)
    assert float(iou.result()) == pytest.approx(mean_iou(confusion), abs=1e-6)
    assert float(wide_iou.result()) == pytest.approx(mean_iou(confusion), abs=1e-6)
    assert float(accuracy.result()) == pytest.approx(pixel_accuracy(confusion), abs=1e-6)
    assert float(wide_accuracy.result()) == pytest.approx(pixel_accuracy(confusion), abs=1e-6)
    assert (iou.name, accuracy.name) == ("mean_iou", "pixel_accuracy")


def test_a_class_in_neither_truth_nor_answer_is_left_out_and_weights_count():
    import keras

    from studio.core.tasks.segmentation.metrics import segmentation_metrics

    masks = np.zeros((2, 4, 4), np.uint8)
    masks[0, :2] = 1
    masks[1, 0] = IGNORE
    answers = masks.copy()
    answers[0, 0] = 0  # 4 cat pixels answered background; dog only where IGNORE is
    outputs = keras.ops.convert_to_numpy(keras.ops.one_hot(np.where(answers == IGNORE, 2,
                                                                    answers), 3))
    accuracy, iou = segmentation_metrics(3)
    iou.update_state(masks, outputs)
    accuracy.update_state(masks, outputs)
    assert float(iou.result()) == pytest.approx((20 / 24 + 4 / 8) / 2)  # background, cat
    assert float(accuracy.result()) == pytest.approx(24 / 28)
    oracle = keras.metrics.MeanIoU(3, ignore_class=IGNORE, sparse_y_pred=False)
    oracle.update_state(masks, outputs)
    assert float(iou.result()) == pytest.approx(float(oracle.result()))
    # a weight per image: the second one's pixels count twice, the first's not at all
    weights = np.array([0.0, 2.0], np.float32)
    iou.reset_state()
    iou.update_state(masks, outputs, sample_weight=weights)
    assert float(iou.result()) == 1.0
    oracle.reset_state()
    pixel_weights = np.broadcast_to(weights[:, None, None], masks.shape).astype(np.int32)
    oracle.update_state(masks, outputs, sample_weight=pixel_weights)
    assert float(oracle.result()) == pytest.approx(1.0)
    iou.reset_state()
    assert float(iou.result()) == 0.0  # nothing seen, as Keras's MeanIoU says


def test_the_metrics_are_saved_with_their_settings_and_maximised():
    import keras

    from studio.core.tasks.segmentation.metrics import segmentation_metrics

    for metric in segmentation_metrics(7):
        config = keras.metrics.serialize(metric)
        assert config["registered_name"] == f"LayerStudio>{type(metric).__name__}"
        again = keras.metrics.deserialize(config)
        assert (type(again), again.name, again.num_classes) == (type(metric), metric.name, 7)
        assert again._direction == "up"
