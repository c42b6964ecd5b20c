"""The detection demo set drawn from MNIST-10k: deterministic, tight boxes, cached."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from studio.core.data.detection import demo
from studio.core.data.types import DataError
from studio.core.tasks.detection.boxes import iou_matrix


@pytest.fixture(scope="module")
def small():
    return demo.generate(train=12, validation=4)


def test_the_same_seed_draws_the_same_arrays(small):
    again = demo.generate(train=12, validation=4)
    other = demo.generate(train=12, validation=4, seed=demo.SEED + 1)
    assert np.array_equal(small.images, again.images)
    assert small.labels == again.labels and small.splits == again.splits
    assert not np.array_equal(small.images, other.images)


def test_a_smaller_set_is_the_start_of_a_larger_one(small):
    part = demo.generate(train=3, validation=2)
    assert np.array_equal(part.images[:3], small.images[:3])
    assert np.array_equal(part.images[3:], small.images[12:14])
    assert part.labels == small.labels[:3] + small.labels[12:14]


def test_images_hold_one_to_five_digits_split_into_train_and_validation(small):
    assert small.images.shape == (16, 128, 128) and small.images.dtype == np.uint8
    assert small.splits == ["train"] * 12 + ["validation"] * 4
    counts = [len(boxes) for boxes in small.labels]
    assert 1 <= min(counts) and max(counts) <= 5 and len(set(counts)) > 1
    classes = np.concatenate([boxes.classes for boxes in small.labels])
    assert 0 <= classes.min() and classes.max() <= 9 and len(set(classes)) > 5
    assert small.class_names == tuple("0123456789")


def test_boxes_are_tight_around_the_ink_and_overlap_little(small):
    for image, boxes in zip(small.images, small.labels, strict=True):
        ink = image < demo.BACKGROUND[0]  # the noise is never darker; drawn ink always is
        covered = np.zeros_like(ink)
        for x1, y1, x2, y2 in boxes.boxes.astype(int):
            covered[y1:y2, x1:x2] = True
            inside = ink[y1:y2, x1:x2]
            assert inside[0].any() and inside[-1].any(), "the top and bottom rows hold ink"
            assert inside[:, 0].any() and inside[:, -1].any(), "the side columns hold ink"
            assert 12 <= max(x2 - x1, y2 - y1) <= demo.DIGIT_SIDE[1]
        assert not (ink & ~covered).any(), "no ink outside the boxes"
        overlaps = np.triu(iou_matrix(boxes.boxes, boxes.boxes), k=1)
        assert overlaps.max(initial=0) <= demo.MAX_IOU


def test_no_digit_image_is_in_both_splits(monkeypatch):
    crops, labels = demo._mnist()
    source = np.where(np.arange(len(labels)) < demo.TRAIN_DIGITS, 0, 1)  # class: which part
    monkeypatch.setattr(demo, "_mnist", lambda: (crops, source))
    drawn = demo.generate(train=6, validation=6)
    classes = [set(boxes.classes.tolist()) for boxes in drawn.labels]
    assert set().union(*classes[:6]) == {0} and set().union(*classes[6:]) == {1}


def test_the_set_is_cached_in_the_workspace_under_its_version(private_workspace, monkeypatch):
    first = demo.demo_set(train=3, validation=1)
    path = demo.cache_path(3, 1)
    assert path.is_file() and path.is_relative_to(private_workspace)
    assert f"v{demo.VERSION}" in path.name
    monkeypatch.setattr(demo, "generate", lambda *args: pytest.fail("drawn again"))
    cached = demo.demo_set(train=3, validation=1)
    assert np.array_equal(cached.images, first.images)
    assert cached.labels == first.labels and cached.splits == first.splits


def test_a_damaged_cache_is_drawn_again(private_workspace):
    path = demo.cache_path(2, 1)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an npz")
    assert demo.demo_set(train=2, validation=1).labels == demo.generate(2, 1).labels
    assert path.stat().st_size > 100


def test_drawing_reports_progress_and_can_be_cancelled(private_workspace):
    calls = []
    demo.demo_set(train=2, validation=1, on_progress=lambda *args: calls.append(args))
    assert calls[0] == ("Drawing the detection demo set", 0, 3) and calls[-1][1:] == (3, 3)
    stop = threading.Event()
    stop.set()
    with pytest.raises(DataError, match="cancelled"):
        demo.demo_set(train=1, validation=1, stop=stop)
    assert not demo.cache_path(1, 1).exists()
