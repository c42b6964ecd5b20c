"""The segmentation loss (pixel cross-entropy, Dice, their sum) against Keras's sparse
cross-entropy with ignore_class and Dice by hand; its parts logged in training; saving."""

from __future__ import annotations

import numpy as np
import pytest

from studio.core.tasks.segmentation.masks import IGNORE

WEIGHTS = [0.5, 2.0, 1.0]


def sample(seed: int = 0):
    """Two 8 × 8 masks of 3 classes with IGNORE pixels, and logits for them."""
    rng = np.random.default_rng(seed)
    masks = rng.integers(0, 3, (2, 8, 8)).astype(np.uint8)
    masks[0, :2] = IGNORE
    masks[1, :, 0] = IGNORE
    return masks, rng.normal(0, 2, (2, 8, 8, 3)).astype(np.float32)


def softmax(logits):
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def numbers(tensor) -> np.ndarray:
    return np.asarray(tensor, np.float64)


def keras_cross_entropy(masks, logits, weights=None) -> np.ndarray:
    """Each image's mean over its counted pixels of Keras's per-pixel cross-entropy (0 at
    IGNORE pixels), each pixel weighed by its class's weight."""
    import keras

    pixels = numbers(keras.losses.sparse_categorical_crossentropy(
        masks, logits, from_logits=True, ignore_class=IGNORE))
    valid = masks != IGNORE
    weight = np.where(valid, np.take(weights or [1.0] * 3, np.where(valid, masks, 0)), 0.0)
    return (pixels * weight).sum(axis=(1, 2)) / valid.sum(axis=(1, 2))


def dice_by_hand(masks, probabilities) -> np.ndarray:
    """Each image's 1 - mean soft Dice over the classes in its truth, written plainly."""
    losses = []
    for mask, p in zip(masks, probabilities, strict=True):
        valid = mask != IGNORE
        scores = []
        for k in range(p.shape[-1]):
            truth = (mask == k) & valid
            if truth.any():
                guess = p[..., k] * valid
                scores.append(2 * (guess * truth).sum() / (guess.sum() + truth.sum()))
        losses.append(1 - np.mean(scores))
    return np.array(losses)


def test_cross_entropy_agrees_with_keras_ignore_class_from_logits_and_probabilities():
    import keras

    from studio.core.tasks.segmentation.loss import segmentation_loss

    masks, logits = sample()
    wanted = keras_cross_entropy(masks, logits)
    from_logits = segmentation_loss("cross_entropy", from_logits=True)
    assert numbers(from_logits.call(masks, logits)) == pytest.approx(wanted, rel=1e-5)
    from_probabilities = segmentation_loss("cross_entropy")
    assert numbers(from_probabilities.call(masks, softmax(logits))) == pytest.approx(
        wanted, rel=1e-5)
    # a batch of one: Keras's own loss averages over the counted pixels as ours does
    oracle = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=IGNORE)
    assert float(from_logits(masks[:1], logits[:1])) == pytest.approx(
        float(oracle(masks[:1], logits[:1])), rel=1e-5)
    # class weights weigh each pixel; a trailing axis of one on the masks changes nothing
    weighted = segmentation_loss("cross_entropy", from_logits=True, class_weights=WEIGHTS)
    assert numbers(weighted.call(masks[..., None], logits)) == pytest.approx(
        keras_cross_entropy(masks, logits, WEIGHTS), rel=1e-5)


def test_dice_by_hand_and_the_sum_of_both():
    from studio.core.tasks.segmentation.loss import segmentation_loss

    # two counted pixels (background, cat) and one IGNORE pixel the answer may say anything of
    mask = np.array([[[0, 1, IGNORE]]], np.uint8)
    p = np.array([[[[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]], np.float32)
    # background: 2 × 0.5 / (0.5 + 1); cat: 2 × 1 / (1.5 + 1); dog is in no truth: left out
    assert float(segmentation_loss("dice").call(mask, p)[0]) == pytest.approx(
        1 - (2 / 3 + 0.8) / 2)
    masks, logits = sample(1)
    dice = numbers(segmentation_loss("dice", from_logits=True).call(masks, logits))
    assert dice == pytest.approx(dice_by_hand(masks, softmax(logits)), rel=1e-5)
    both = segmentation_loss(from_logits=True, class_weights=WEIGHTS)
    assert both.kind == "cross_entropy_dice"
    assert numbers(both.call(masks, logits)) == pytest.approx(
        dice + keras_cross_entropy(masks, logits, WEIGHTS), rel=1e-5)
    nothing = np.full((1, 8, 8), IGNORE, np.uint8)  # no pixel counts: no loss
    assert float(both.call(nothing, logits[:1])[0]) == 0.0
    with pytest.raises(ValueError, match="Unknown segmentation loss 'focal'"):
        segmentation_loss("focal")


def test_training_logs_the_parts_the_loss_adds_up_and_the_model_saves(tmp_path):
    import keras

    from studio.core.tasks.segmentation.task import Segmentation

    masks, _ = sample(2)
    images = np.random.default_rng(3).random((2, 8, 8, 3)).astype(np.float32)
    image = keras.Input((8, 8, 3))
    model = keras.Model(image, keras.layers.Conv2D(3, 1)(image))  # logits
    task = Segmentation()
    model.compile(optimizer="sgd", loss=task.losses([False], class_weights=WEIGHTS)[0],
                  metrics=task.metrics([], [False], WEIGHTS))
    history = model.fit(images, masks, batch_size=2, epochs=1, verbose=0,
                        validation_data=(images, masks)).history
    logged = {name: values[0] for name, values in history.items()}
    assert set(logged) == {f"{split}{name}" for split in ("", "val_") for name in (
        "loss", "cross_entropy_loss", "dice_loss", "mean_iou", "pixel_accuracy")}
    assert logged["loss"] == pytest.approx(logged["cross_entropy_loss"] + logged["dice_loss"],
                                           rel=1e-5)
    path = tmp_path / "model.keras"
    model.save(path)
    task.register_keras_objects()
    again = keras.saving.load_model(path)
    assert again.loss.get_config() | {"name": None} == {
        "name": None, "reduction": "sum_over_batch_size", "kind": "cross_entropy_dice",
        "from_logits": True, "class_weights": WEIGHTS}
    # validation ran after the epoch's step: on the weights saved (scored eagerly here, as
    # training already ran the metrics in a graph)
    again.run_eagerly = True
    scores = again.evaluate(images, masks, verbose=0, return_dict=True)
    assert {f"val_{name}": value for name, value in scores.items()} == pytest.approx(
        {name: value for name, value in logged.items() if name.startswith("val_")}, rel=1e-5)


def test_a_batch_is_scored_as_masks_and_each_images_loss():
    from studio.core.tasks.segmentation.loss import segmentation_loss
    from studio.core.tasks.segmentation.task import Segmentation

    masks, logits = sample(4)
    names = ("background", "cat", "dog")
    task = Segmentation()
    answers, losses = task.score_batch(masks, logits, True, names)
    assert answers.tolist() == logits.argmax(axis=-1).tolist() and answers.dtype == np.uint8
    assert losses == pytest.approx(numbers(segmentation_loss(from_logits=True).call(
        masks, logits)))
    scored = task.evaluation("validation", names, masks, answers, float(losses.mean()),
                             np.arange(2), None, [])
    assert scored.mean_iou == pytest.approx(float(task.metrics([])[1](masks, logits)))
    assert task.evaluation_text(scored).startswith(
        f"2 images, {np.count_nonzero(masks != IGNORE)} pixels scored (")
    with pytest.raises(ValueError, match="one channel for each of the run's 3 classes"):
        task.score_batch(masks, logits[..., :2], True, names)
