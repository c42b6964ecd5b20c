"""A DetectionHead's training targets, and decoding them back into the boxes they came from."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from studio.core.data.image_pipeline import ImageForm, standard_images
from studio.core.tasks.detection.boxes import iou_matrix
from studio.core.tasks.detection.decode import decode
from studio.core.tasks.detection.fitting import BoxMapping, box_mapping
from studio.core.tasks.detection.targets import detection_targets, gaussian_radius

CLASSES = 3


def targets(boxes, classes, grid=(8, 8), stride=4, num_classes=CLASSES) -> np.ndarray:
    return detection_targets(np.asarray(boxes, np.float32), np.asarray(classes, np.int32),
                             num_classes, grid, stride).numpy()


def perfect_output(target: np.ndarray, classes: int) -> np.ndarray:
    """The head output that the target map asks for: heatmap and offset logits whose sigmoid
    is the target, the log sizes themselves."""
    def logit(p):
        p = np.clip(p, 1e-6, 1 - 1e-6)
        return np.log(p / (1 - p))

    return np.concatenate([logit(target[..., :classes]),
                           logit(target[..., classes:classes + 2]),
                           target[..., classes + 2:classes + 4]], axis=-1)


def random_boxes(rng: np.random.Generator, count: int, mapping: BoxMapping,
                 stride: int) -> np.ndarray:
    """``count`` boxes inside the image whose centres fall in different cells of the input
    (one cell teaches one box)."""
    height, width = mapping.image_size
    boxes, cells = [], set()
    while len(boxes) < count:
        w, h = rng.uniform(4, width / 2), rng.uniform(4, height / 2)
        x, y = rng.uniform(0, width - w), rng.uniform(0, height - h)
        x0, y0, x1, y1 = mapping.to_input([x, y, x + w, y + h])[0]
        cell = (int((x0 + x1) / 2 // stride), int((y0 + y1) / 2 // stride))
        if cell not in cells:
            cells.add(cell)
            boxes.append([x, y, x + w, y + h])
    return np.asarray(boxes, np.float32)


def test_the_radius_is_centernets():
    # CenterNet's gaussian_radius((10, 10), 0.7) is 2.733 (its third case, as its code has it)
    assert float(gaussian_radius(tf.constant(10.0), tf.constant(10.0))) == pytest.approx(2.733,
                                                                                         abs=1e-3)


def test_the_target_map_holds_a_peak_offset_and_size_at_each_centre():
    # a 12 x 20 px box at stride 4: centre (10, 14) px is cell (2, 3) + (0.5, 0.5)
    target = targets([[4, 4, 16, 24], [0, 0, 0, 0]], [1, -1])
    assert target.shape == (8, 8, CLASSES + 5)
    heat, offset, size, mask = (target[..., :3], target[..., 3:5], target[..., 5:7],
                                target[..., 7])
    assert heat[3, 2, 1] == 1.0 and np.count_nonzero(heat == 1.0) == 1
    assert heat[..., [0, 2]].max() == 0  # the padding (class -1) draws nothing
    assert 0 < heat[3, 3, 1] < 1 and heat[3, 3, 1] == heat[3, 1, 1]  # the Gaussian around it
    assert np.argwhere(mask).tolist() == [[3, 2]]
    np.testing.assert_allclose(offset[3, 2], [0.5, 0.5])
    np.testing.assert_allclose(size[3, 2], np.log([3.0, 5.0]), rtol=1e-6)  # 12 x 20 px in cells
    assert not offset[mask == 0].any() and not size[mask == 0].any()


def test_a_small_box_is_one_peak_and_overlapping_ones_keep_the_larger_value():
    target = targets([[0, 0, 3, 3], [1, 1, 30, 30], [2, 2, 20, 20]], [0, 2, 2])
    assert np.count_nonzero(target[..., 0]) == 1  # radius 0: the centre cell alone
    both = targets([[1, 1, 30, 30]], [2])[..., 2]
    other = targets([[2, 2, 20, 20]], [2])[..., 2]
    np.testing.assert_array_equal(target[..., 2], np.maximum(both, other))


def test_of_two_boxes_centred_in_one_cell_the_smaller_is_taught_there():
    big, small = [0, 0, 30, 30], [13, 13, 17, 17]  # both centred at (15, 15) px: cell (3, 3)
    for order in ([big, small], [small, big]):
        target = targets(order, [0, 1])
        assert target[..., 7].sum() == 1
        np.testing.assert_allclose(target[3, 3, 5:7], np.log([1.0, 1.0]), atol=1e-6)
        assert target[3, 3, 0] == target[3, 3, 1] == 1.0  # both classes keep their peak


def test_boxes_are_clipped_to_the_input_and_empty_or_unknown_ones_left_out():
    target = targets([[-8, -8, 8, 8], [10, 10, 10, 20], [4, 4, 12, 12]], [0, 1, 7])
    assert np.argwhere(target[..., 7]).tolist() == [[1, 1]]  # the clipped 0..8 box's centre
    np.testing.assert_allclose(target[1, 1, 5:7], np.log([2.0, 2.0]), atol=1e-6)
    assert target[..., 1:3].max() == 0


def test_targets_are_built_in_a_tf_data_map_of_padded_boxes():
    boxes = np.zeros((2, 5, 4), np.float32)
    classes = np.full((2, 5), -1, np.int32)
    boxes[0, :2] = [[0, 0, 16, 16], [16, 16, 32, 32]]
    classes[0, :2] = [0, 2]  # the second image is a background image
    data = tf.data.Dataset.from_tensor_slices((boxes, classes)).map(
        lambda b, c: detection_targets(b, c, CLASSES, (8, 8), 4))
    first, second = (t.numpy() for t in data)
    assert first[..., 7].sum() == 2 and first[2, 2, 0] == first[6, 6, 2] == 1.0
    assert not second.any()


@pytest.mark.parametrize("stride", [4, 8, 16])
@pytest.mark.parametrize("resize", ["squash", "pad"])
def test_targets_decode_back_to_the_boxes_they_were_made_of(stride, resize):
    """Boxes of a 96 x 160 image fitted to a 128 x 128 input, made into targets and decoded
    from the output that reproduces them, come back in the image's pixels."""
    rng = np.random.default_rng(stride)
    image, size = (96, 160), (128, 128)
    mapping = box_mapping(image, size, resize)
    boxes = random_boxes(rng, 6, mapping, stride)
    classes = rng.integers(0, CLASSES, len(boxes)).astype(np.int32)
    grid = (size[0] // stride, size[1] // stride)
    target = targets(mapping.to_input(boxes), classes, grid, stride)
    found = decode(perfect_output(target, CLASSES), stride, size, image, resize,
                   score_threshold=0.5, nms_iou=1.0)
    assert len(found) == len(boxes)
    overlap = iou_matrix(boxes, found.boxes)
    match = overlap.argmax(axis=1)
    assert overlap.max(axis=1).min() > 0.95
    np.testing.assert_array_equal(found.classes[match], classes)
    assert (found.scores > 0.99).all()


@pytest.mark.parametrize("resize", ["squash", "crop", "pad"])
@pytest.mark.parametrize("image", [(60, 100), (100, 60), (64, 64)])
def test_box_mapping_follows_the_pipelines_resize(resize, image):
    """A white rectangle in an image, fitted by the image pipeline, lands where the mapping
    puts its box (to a pixel, as resizing blurs its edges), and maps back."""
    box = np.array([[30, 20, 50, 40]], np.float32)  # inside the centre crop in each case
    pixels = np.zeros((*image, 1), np.uint8)
    x0, y0, x1, y1 = box[0].astype(int)
    pixels[y0:y1, x0:x1] = 255
    fitted = standard_images(pixels, ImageForm((64, 64), 1, resize)).numpy()[..., 0]
    ys, xs = np.nonzero(fitted >= 128)
    seen = [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]
    mapping = box_mapping(image, (64, 64), resize)
    np.testing.assert_allclose(mapping.to_input(box)[0], seen, atol=1.0)
    np.testing.assert_allclose(mapping.to_image(mapping.to_input(box)), box, atol=1e-4)


def test_an_unknown_resize_mode_is_refused():
    with pytest.raises(ValueError, match="Unknown resize mode 'stretch'"):
        box_mapping((10, 20), (32, 32), "stretch")
