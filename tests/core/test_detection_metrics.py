"""Non-maximum suppression and COCO-style average precision, by hand and against pycocotools."""

import itertools

import numpy as np
import pytest

from studio.core.tasks.detection.average_precision import average_precision
from studio.core.tasks.detection.boxes import Detections, ImageBoxes, nms, nms_by_class
from tests.coco_oracle import coco_scores, jittered_fixture

SQUARE = [0, 0, 10, 10]
FAR = [50, 50, 60, 60]


def image(boxes, classes, scores=None):
    """One image's true boxes, or its detections when ``scores`` are given."""
    boxes = np.reshape(np.asarray(boxes, np.float32), (-1, 4))
    if scores is None:
        return ImageBoxes(boxes, classes)
    return Detections(boxes, classes, scores)


# ---- non-maximum suppression ----------------------------------------------------------------

def test_nms_keeps_the_surest_of_overlapping_boxes_by_hand():
    boxes = [SQUARE, [1, 1, 11, 11], FAR, SQUARE]  # the second overlaps the first at 81/119
    scores = [0.9, 0.8, 0.7, 0.95]
    assert nms(boxes, scores, 0.5).tolist() == [3, 2]
    assert nms(boxes, scores, 0.7).tolist() == [3, 1, 2]
    assert nms(boxes, scores, 0.5, max_boxes=1).tolist() == [3]
    assert nms(boxes, scores, 0.5, max_boxes=0).tolist() == []
    classes = [0, 0, 0, 1]  # the last box is another class: it no longer hides the first
    assert nms_by_class(boxes, scores, classes, 0.5).tolist() == [3, 0, 2]
    assert nms_by_class(boxes, scores, classes, 0.5, max_boxes=2).tolist() == [3, 0]
    assert nms(np.zeros((0, 4)), [], 0.5).tolist() == []
    # IoU exactly at the threshold does not suppress (only above it does)
    assert nms([[0, 0, 20, 10], SQUARE], [0.9, 0.8], 0.5).tolist() == [0, 1]


def brute_force_nms(boxes, scores, classes, threshold):
    """Greedy NMS written plainly: pairwise loops, one box at a time."""
    def iou(a, b):
        w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
        return w * h / union if union > 0 else 0.0

    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # sorted() is stable
    kept = []
    for i in order:
        if all(classes[i] != classes[j] or iou(boxes[i], boxes[j]) <= threshold for j in kept):
            kept.append(i)
    return kept


@pytest.mark.parametrize("seed", range(3))
def test_nms_agrees_with_a_brute_force_reference(seed):
    rng = np.random.default_rng(seed)
    corners = rng.uniform(0, 40, (80, 2))
    boxes = np.c_[corners, corners + rng.uniform(4, 30, (80, 2))].astype(np.float32)
    scores = np.round(rng.random(80), 2)  # ties among equal scores keep the input order
    classes = rng.integers(0, 3, 80)
    plain = boxes.astype(np.float64)
    for threshold in (0.3, 0.5, 0.7):
        assert nms(boxes, scores, threshold).tolist() == brute_force_nms(
            plain, scores, np.zeros(80), threshold)
        assert nms_by_class(boxes, scores, classes, threshold).tolist() == brute_force_nms(
            plain, scores, classes, threshold)


# ---- average precision by hand --------------------------------------------------------------

def test_perfect_predictions_score_one_and_make_no_mistakes():
    truths = [image([SQUARE, FAR], [0, 1]), image([FAR], [1]), image([], [])]
    predictions = [image(t.boxes, t.classes, np.linspace(0.9, 0.5, len(t))) for t in truths]
    scores = average_precision(truths, predictions, 2)
    # 1 to within pycocotools' epsilon: it divides by (tp + fp + 2.2e-16)
    assert (scores.map50, scores.map) == pytest.approx((1.0, 1.0))
    assert scores.class_ap + scores.class_ap50 == pytest.approx((1.0,) * 4)
    for mistakes in scores.mistakes:
        assert len(mistakes.false_positive_images) == len(mistakes.missed_images) == 0
    assert scores.curves[1].recall.tolist() == [0.5, 1.0]
    assert scores.curves[1].precision.tolist() == pytest.approx([1.0, 1.0])


def test_a_false_positive_above_a_true_one_halves_the_precision():
    truths = [image([SQUARE], [0])]
    predictions = [image([FAR, SQUARE], [0, 0], [0.9, 0.8])]
    scores = average_precision(truths, predictions, 1)
    # ranked: a miss (precision 0, recall 0), then the hit (precision 1/2, recall 1)
    assert scores.map50 == scores.map == pytest.approx(0.5)
    assert scores.curves[0].recall.tolist() == [0.0, 1.0]
    assert scores.curves[0].precision.tolist() == pytest.approx([0.5, 0.5])
    assert scores.curves[0].scores.tolist() == pytest.approx([0.9, 0.8])
    wrong = scores.mistakes[0]
    assert wrong.false_positive_images.tolist() == [0]
    assert wrong.false_positive_boxes.tolist() == [FAR]
    assert wrong.false_positive_scores.tolist() == pytest.approx([0.9])
    assert len(wrong.missed_images) == 0


def test_a_missed_box_caps_recall_at_one_half():
    truths = [image([], []), image([SQUARE, FAR], [0, 0])]
    predictions = [image([], []), image([SQUARE], [0], [0.6])]
    scores = average_precision(truths, predictions, 1)
    # precision 1 at the recalls 0, 0.01, …, 0.50 and 0 beyond: 51 of the 101 points
    assert scores.map50 == scores.map == pytest.approx(51 / 101)
    assert scores.mistakes[0].missed_images.tolist() == [1]
    assert scores.mistakes[0].missed_boxes.tolist() == [FAR]


def test_two_classes_and_one_without_true_boxes():
    truths = [image([SQUARE, FAR], [0, 1])]
    predictions = [image([SQUARE, FAR, SQUARE, FAR], [0, 1, 1, 2], [0.9, 0.5, 0.8, 0.7])]
    scores = average_precision(truths, predictions, 3)
    # class 0 is perfect; class 1 ranks a miss above its hit; class 2 has no true box, so
    # no AP (COCO's -1) and no part in the means, though its detection is a false positive
    assert scores.class_ap50 == pytest.approx((1.0, 0.5, None))
    assert scores.class_ap[2] is None
    assert scores.map50 == scores.map == pytest.approx(0.75)
    assert scores.mistakes[2].false_positive_boxes.tolist() == [FAR]
    assert len(scores.curves[2].recall) == 0
    nothing = average_precision([image([], [])], [image([SQUARE], [0], [0.5])], 1)
    assert (nothing.map50, nothing.map, nothing.class_ap) == (None, None, (None,))


def test_a_duplicate_below_its_hit_is_a_false_positive_that_costs_no_ap():
    truths = [image([SQUARE], [0])]
    predictions = [image([SQUARE, [0, 0, 10, 9]], [0, 0], [0.9, 0.8])]
    scores = average_precision(truths, predictions, 1)
    assert (scores.map50, scores.map) == pytest.approx((1.0, 1.0))  # recall 1 at precision 1
    assert scores.mistakes[0].false_positive_boxes.tolist() == [[0, 0, 10, 9]]


def test_the_map_averages_the_ten_iou_thresholds():
    truths = [image([[0, 0, 100, 100]], [0])]
    predictions = [image([[0, 0, 100, 72]], [0], [0.9])]  # IoU 0.72: a hit up to 0.70
    scores = average_precision(truths, predictions, 1)
    assert (scores.map50, scores.map) == pytest.approx((1.0, 0.5))


def test_equal_scores_rank_the_earlier_image_first():
    hit, miss = (image([SQUARE], [0], [0.5]), image([FAR], [0], [0.5]))
    truths = [image([SQUARE], [0]), image([SQUARE], [0])]
    assert average_precision(truths, [miss, hit], 1).map50 == pytest.approx(0.5 * 51 / 101)
    assert average_precision(truths, [hit, miss], 1).map50 == pytest.approx(51 / 101)


def test_a_detection_between_two_equal_overlaps_takes_the_later_box():
    truths = [image([[0, 0, 10, 10], [10, 0, 20, 10]], [0, 0])]
    predictions = [image([[0, 0, 20, 10]], [0], [0.9])]  # IoU exactly 0.5 with each
    scores = average_precision(truths, predictions, 1)
    assert scores.mistakes[0].missed_boxes.tolist() == [[0, 0, 10, 10]]
    assert scores.class_ap == pytest.approx((0.1 * 51 / 101,))  # a hit at IoU 0.5 only


def test_only_the_hundred_surest_detections_of_an_image_and_class_count():
    truths = [image([SQUARE], [0])]
    boxes = [FAR] * 100 + [SQUARE]
    predictions = [image(boxes, [0] * 101, [0.9] * 100 + [0.1])]
    scores = average_precision(truths, predictions, 1)
    assert scores.map50 == 0.0
    assert scores.mistakes[0].missed_boxes.tolist() == [SQUARE]
    assert len(scores.mistakes[0].false_positive_images) == 100


def test_no_detections_score_zero_and_no_images_score_nothing():
    truths = [image([SQUARE, FAR], [0, 1]), image([], [])]
    silent = average_precision(truths, [image([], [], [])] * 2, 2)
    assert (silent.map50, silent.map, silent.class_ap) == (0.0, 0.0, (0.0, 0.0))
    assert [m.missed_boxes.tolist() for m in silent.mistakes] == [[SQUARE], [FAR]]
    empty = average_precision([], [], 2)
    assert (empty.map50, empty.map, empty.class_ap50) == (None, None, (None, None))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="2 labelled images but predictions for 1"):
        average_precision([image([], [])] * 2, [image([], [], [])], 1)
    with pytest.raises(ValueError, match="class 3 is beyond the 2 classes"):
        average_precision([image([SQUARE], [3])], [image([], [], [])], 2)
    with pytest.raises(ValueError, match="2 boxes but 1 scores"):
        Detections(np.zeros((2, 4)), [0, 0], [0.5])


# ---- against pycocotools -------------------------------------------------------------------

def assert_like_coco(truths, predictions, classes):
    ours = average_precision(truths, predictions, classes)
    whole, at_50, per_class, per_class_50, wrong, missed = coco_scores(truths, predictions, classes)
    assert ours.map == pytest.approx(whole, abs=1e-9)
    assert ours.map50 == pytest.approx(at_50, abs=1e-9)
    for mine, theirs in itertools.chain(zip(ours.class_ap, per_class, strict=True),
                                        zip(ours.class_ap50, per_class_50, strict=True)):
        assert (mine is None) == (theirs is None)
        assert mine is None or mine == pytest.approx(theirs, abs=1e-9)
    assert [len(m.false_positive_images) for m in ours.mistakes] == wrong
    assert [len(m.missed_images) for m in ours.mistakes] == missed
    return ours


@pytest.mark.parametrize("seed", range(6))
def test_average_precision_agrees_with_pycocotools(seed):
    truths, predictions = jittered_fixture(seed)
    ours = assert_like_coco(truths, predictions, 3)
    assert 0.05 < ours.map < ours.map50 < 1  # the fixture is neither trivial nor hopeless


def test_agrees_with_pycocotools_beyond_a_hundred_detections_and_without_a_class():
    truths, predictions = jittered_fixture(7, images=3)
    rng = np.random.default_rng(7)
    crowded = np.repeat(truths[0].boxes[:1], 150, axis=0) + rng.normal(0, 3, (150, 4))
    predictions[0] = image(np.r_[predictions[0].boxes, crowded],
                           np.r_[predictions[0].classes, [truths[0].classes[0]] * 150],
                           np.r_[predictions[0].scores, rng.random(150)])
    ours = assert_like_coco(truths, predictions, 4)  # class 3 has no true box
    assert ours.class_ap[3] is None
