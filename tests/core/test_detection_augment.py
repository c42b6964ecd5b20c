"""Detection augmentation: boxes move with their pixels, are clipped, dropped and padded."""

from __future__ import annotations

import numpy as np
import pytest

from studio.core.data.detection.augment import (
    MIN_BOX_SIDE,
    BoxAugmentation,
    box_augment_preview,
    box_augmentation,
    padded_boxes,
    unpadded_boxes,
)
from studio.core.project.document import Augmentation
from studio.core.tasks.detection.boxes import ImageBoxes

SIZE = 64
BOXES = np.array([[8, 8, 24, 40], [30, 4, 62, 20], [20, 44, 44, 60]], np.float32)


def framed(boxes: np.ndarray, n: int = 1) -> np.ndarray:
    """``n`` float images SIZE × SIZE, one channel per box, 255 inside it and 0 outside: the
    pixels each box frames, kept apart so that interpolation never mixes two boxes."""
    image = np.zeros((SIZE, SIZE, len(boxes)), np.float32)
    for k, (x0, y0, x1, y1) in enumerate(np.asarray(boxes, int)):
        image[y0:y1, x0:x1, k] = 255.0
    return np.repeat(image[None], n, axis=0)


def pixel_box(channel: np.ndarray) -> np.ndarray | None:
    """The box (pixel edges) around a channel's pixels brighter than half, or None."""
    ys, xs = np.nonzero(channel > 127.5)
    if not len(xs):
        return None
    return np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], np.float32)


def augment(augmentation, images: np.ndarray, boxes: np.ndarray, classes: np.ndarray):
    """Images, boxes and classes (NumPy) after ``augmentation`` of a batch."""
    out = augmentation({"images": images, "bounding_boxes": {"boxes": boxes, "labels": classes}})
    return (np.asarray(out["images"]), np.asarray(out["bounding_boxes"]["boxes"]),
            np.asarray(out["bounding_boxes"]["labels"]))


def batch_of(boxes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` framed images with ``boxes``, each box's class its channel index."""
    classes = np.arange(len(boxes), dtype=np.int32)
    return framed(boxes, n), np.repeat(boxes[None], n, 0), np.repeat(classes[None], n, 0)


def assert_boxes_on_their_pixels(images, boxes, classes, atol: float) -> None:
    """Each kept box (its class is its channel) frames its channel's pixels; a dropped box's
    channel keeps at most a sliver."""
    for image, image_boxes, image_classes in zip(images, boxes, classes, strict=True):
        kept = image_classes[image_classes >= 0]
        for box, k in zip(image_boxes, image_classes, strict=True):
            if k >= 0:
                np.testing.assert_allclose(box, pixel_box(image[..., k]), atol=atol)
        for k in set(range(image.shape[-1])) - set(kept.tolist()):
            left = pixel_box(image[..., k])
            assert left is None or min(left[2:] - left[:2]) <= 2


@pytest.mark.parametrize("mode", ["horizontal", "vertical"])
def test_flips_move_boxes_as_computed_by_hand(mode):
    images, boxes, classes = batch_of(BOXES, 8)
    aug = Augmentation(flip_horizontal=mode == "horizontal", flip_vertical=mode == "vertical")
    out, moved, labels = augment(box_augmentation(aug, seed=0), images, boxes, classes)
    x0, y0, x1, y1 = BOXES.T
    by_hand = (np.stack([SIZE - x1, y0, SIZE - x0, y1], 1) if mode == "horizontal"
               else np.stack([x0, SIZE - y1, x1, SIZE - y0], 1))
    axis = 1 if mode == "horizontal" else 0
    flipped = [np.array_equal(image, np.flip(images[0], axis)) for image in out]
    assert any(flipped) and not all(flipped)  # the seed flips some images and not others
    for image, image_boxes, was_flipped in zip(out, moved, flipped, strict=True):
        assert was_flipped or np.array_equal(image, images[0])
        np.testing.assert_array_equal(image_boxes, by_hand if was_flipped else BOXES)
    np.testing.assert_array_equal(labels, classes)


@pytest.mark.parametrize("zoom", [0.75, 1.25])
def test_zoom_moves_boxes_as_computed_by_hand(zoom):
    # zoom < 1 magnifies: the window zoom × SIZE around the centre fills the image.
    boxes = np.array([[16, 24, 40, 48], [4, 28, 20, 36], [0, 0, 6, 6]], np.float32)
    images, batch_boxes, classes = batch_of(boxes, 2)
    factor = zoom - 1.0
    layer = BoxAugmentation([("RandomZoom", {"height_factor": (factor, factor),
                                             "fill_mode": "constant", "seed": 0})])
    out, moved, labels = augment(layer, images, batch_boxes, classes)
    by_hand = np.clip((boxes - SIZE / 2) / zoom + SIZE / 2, 0, SIZE)
    kept = np.all(by_hand[:, 2:] - by_hand[:, :2] >= MIN_BOX_SIDE, axis=1)
    expected_boxes = np.zeros_like(boxes)
    expected_boxes[:kept.sum()] = by_hand[kept]
    expected_classes = np.full(len(boxes), -1)
    expected_classes[:kept.sum()] = np.flatnonzero(kept)
    assert kept.tolist() == ([True, True, False] if zoom < 1 else [True, True, True])
    for image_boxes, image_labels in zip(moved, labels, strict=True):
        # Keras zooms about the centre of pixel centres: boxes differ by (1 - z) / 2z px.
        np.testing.assert_allclose(image_boxes, expected_boxes, atol=0.2)
        np.testing.assert_array_equal(image_labels, expected_classes)
    assert_boxes_on_their_pixels(out, moved, labels, atol=1.0)


def test_translation_clips_boxes_and_drops_those_that_leave_the_image():
    boxes = np.array([[50, 50, 62, 62], [8, 8, 24, 40], [40, 30, 60, 50]], np.float32)
    images, batch_boxes, classes = batch_of(boxes, 2)
    shift = 0.25  # of the size: 16 pixels right and down
    layer = BoxAugmentation([("RandomTranslation", {
        "height_factor": (shift, shift), "width_factor": (shift, shift),
        "fill_mode": "constant", "seed": 0})])
    out, moved, labels = augment(layer, images, batch_boxes, classes)
    for image_boxes, image_labels in zip(moved, labels, strict=True):
        np.testing.assert_allclose(image_boxes, [[24, 24, 40, 56], [56, 46, 64, 64],
                                                 [0, 0, 0, 0]], atol=1e-4)
        np.testing.assert_array_equal(image_labels, [1, 2, -1])
    assert_boxes_on_their_pixels(out, moved, labels, atol=1e-4)


def test_crop_clips_boxes_to_the_window_and_drops_those_outside_it():
    boxes = np.array([[8, 8, 56, 56], [0, 0, 20, 20], [20, 24, 44, 40]], np.float32)
    images, batch_boxes, classes = batch_of(boxes, 16)
    out, moved, labels = augment(box_augmentation(Augmentation(crop=0.5), seed=2),
                                 images, batch_boxes, classes)
    assert out.shape == images.shape
    assert_boxes_on_their_pixels(out, moved, labels, atol=1.0)
    # The window is half the image: the large box is cut by it and scaled to fill the image,
    # and the corner box is left out of it in some images and cut in the others.
    large = moved[labels == 0]
    assert len(large) == 16 and np.all(large[:, 2:] - large[:, :2] > 48)
    assert np.any(large == 0) and np.any(large == SIZE)
    corner = moved[labels == 1]
    assert 0 < len(corner) < 16 and np.all(corner[:, :2] == 0)


# Keras turns a box's corners about the centre of pixel centres, half a pixel from the
# image's, and a rotated box's thin corners fall below half brightness: rotated boxes may miss
# their pixels by a pixel, which a later zoom enlarges.
@pytest.mark.parametrize(("settings", "atol"), [
    ({"flip_horizontal": True, "flip_vertical": True}, 1.0), ({"zoom": 0.3}, 1.0),
    ({"translation": 0.3}, 1.0), ({"crop": 0.4}, 1.0),
    ({"flip_horizontal": True, "zoom": 0.2, "translation": 0.2, "crop": 0.2}, 1.0),
    ({"rotation": 30.0}, 2.0), ({"rotation": 10.0, "zoom": 0.2, "crop": 0.2}, 2.0),
], ids=str)
def test_boxes_follow_their_pixels_under_every_move(settings, atol):
    images, boxes, classes = batch_of(BOXES, 8)
    out, moved, labels = augment(box_augmentation(Augmentation(**settings), seed=1),
                                 images, boxes, classes)
    assert not np.array_equal(moved, boxes)
    assert_boxes_on_their_pixels(out, moved, labels, atol=atol)


def test_colour_changes_leave_boxes_exactly_as_they_were():
    images, boxes, classes = batch_of(BOXES, 4)
    boxes = np.concatenate([boxes, np.zeros((4, 1, 4), np.float32)], axis=1)  # padding
    classes = np.concatenate([classes, np.full((4, 1), -1, np.int32)], axis=1)
    aug = Augmentation(contrast=0.5, brightness=0.3, noise=0.1)
    out, moved, labels = augment(box_augmentation(aug, seed=0), images, boxes, classes)
    assert not np.allclose(out, images, atol=1.0)
    assert out.min() >= 0 and out.max() <= 255
    assert np.array_equal(moved, boxes) and np.array_equal(labels, classes)


def test_padded_batches_of_augmented_boxes_flow_through_tf_data():
    import tensorflow as tf

    counts = [0, 1, 3, 2, 3]
    labels = [ImageBoxes(BOXES[:c], np.arange(c)) for c in counts]

    def samples():
        for image_boxes in labels:
            image = framed(BOXES)[0]
            image[..., len(image_boxes):] = 0  # the boxes of this image only
            yield {"images": image,
                   "bounding_boxes": {"boxes": image_boxes.boxes, "labels": image_boxes.classes}}

    spec = {"images": tf.TensorSpec([SIZE, SIZE, 3], tf.float32),
            "bounding_boxes": {"boxes": tf.TensorSpec([None, 4], tf.float32),
                               "labels": tf.TensorSpec([None], tf.int32)}}
    padding = {"images": 0.0, "bounding_boxes": {"boxes": 0.0, "labels": -1}}
    augmentation = box_augmentation(Augmentation(flip_horizontal=True, zoom=0.2, crop=0.2),
                                    seed=0)
    batches = tf.data.Dataset.from_generator(samples, output_signature=spec).padded_batch(
        2, padding_values=padding).map(augmentation)
    assert batches.element_spec["bounding_boxes"]["labels"].dtype == tf.int32
    assert batches.element_spec["images"].shape.as_list() == [None, SIZE, SIZE, 3]
    seen = 0
    for batch in batches:
        boxes = batch["bounding_boxes"]["boxes"].numpy()
        classes = batch["bounding_boxes"]["labels"].numpy()
        assert boxes.shape == (*classes.shape, 4) and batch["images"].shape[0] == len(boxes)
        padded = classes < 0
        assert np.all(boxes[padded] == 0) and np.all((boxes >= 0) & (boxes <= SIZE))
        assert np.all(np.diff(padded.astype(int), axis=1) >= 0)  # kept boxes come first
        assert_boxes_on_their_pixels(batch["images"].numpy(), boxes, classes, atol=1.0)
        seen += len(boxes)
    assert seen == len(counts)


def test_one_image_is_augmented_as_a_batch_of_one():
    layer = BoxAugmentation([("RandomTranslation", {
        "height_factor": (0.25, 0.25), "width_factor": (0, 0), "fill_mode": "constant"})])
    image, moved, labels = augment(layer, framed(BOXES)[0], BOXES, np.arange(3))
    assert image.shape == (SIZE, SIZE, 3)
    np.testing.assert_allclose(moved, np.clip(BOXES + [0, 16, 0, 16], 0, SIZE), atol=1e-4)
    assert labels.tolist() == [0, 1, 2]


def test_padding_round_trips_the_boxes_of_each_image():
    labels = [ImageBoxes(BOXES[:2], [4, 1]), ImageBoxes(), ImageBoxes(BOXES[2:], [0])]
    boxes, classes = padded_boxes(labels)
    assert boxes.shape == (3, 2, 4) and classes.tolist() == [[4, 1], [-1, -1], [0, -1]]
    assert unpadded_boxes(boxes, classes) == labels


def test_the_preview_moves_boxes_with_the_images_and_is_seeded():
    pixels = framed(BOXES, 2).astype(np.uint8)
    labels = [ImageBoxes(BOXES, [0, 1, 2]), ImageBoxes()]
    aug = Augmentation(flip_horizontal=True, zoom=0.3, translation=0.2)
    images, boxes = box_augment_preview(pixels, labels, aug, repeats=3, seed=5)
    assert images.shape == (3, *pixels.shape) and images.dtype == np.uint8
    assert len(boxes) == 3 and all(len(repeat) == 2 for repeat in boxes)
    assert all(len(repeat[1]) == 0 for repeat in boxes)  # the background image stays empty
    for repeat_images, repeat_boxes in zip(images, boxes, strict=True):
        moved = repeat_boxes[0]
        assert_boxes_on_their_pixels(repeat_images[:1], moved.boxes[None],
                                     moved.classes[None], atol=1.0)
    assert not np.array_equal(images[0], images[1])
    again_images, again_boxes = box_augment_preview(pixels, labels, aug, repeats=3, seed=5)
    assert np.array_equal(images, again_images) and again_boxes == boxes
    still, same = box_augment_preview(pixels, labels, Augmentation(), repeats=2, seed=5)
    assert np.array_equal(still[1], pixels) and same == [labels, labels]
