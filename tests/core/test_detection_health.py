"""The detection health report: every box clipped or dropped and every file left out is
counted, with examples and one sentence; the boxes' statistics."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from PIL import Image

from studio.core.data.detection import health
from studio.core.data.detection.formats import read_detection
from studio.core.data.detection.reading import LABEL_FILE_LIMIT


def yolo(root, labels, classes=("a", "b"), size=(100, 50)):
    """A YOLO dataset in ``root``: an image of ``size`` for each name of ``labels``, with
    that label text (None: no label file)."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    for name, text in labels.items():
        Image.new("L", size, 200).save(root / "images" / f"{name}.png")
        if text is not None:
            (root / "labels" / f"{name}.txt").write_text(text)
    (root / "classes.txt").write_text("".join(f"{c}\n" for c in classes))
    return root


def read(root, labels, **kwargs):
    return read_detection(yolo(root, labels, **kwargs))


def check(dataset, key):
    return dataset.health.checks[key]


def sentence(dataset, key):
    found = [text for text in dataset.health.problems()
             if text == health.CHECKS[key](check(dataset, key))]
    assert len(found) == 1 and "\n" not in found[0]
    return found[0]


def test_boxes_reaching_outside_are_clipped_and_those_wholly_outside_dropped(tmp_path):
    dataset = read(tmp_path, {"a": "0 0.95 0.5 0.2 0.2\n1 1.5 0.5 0.2 0.2\n0 0.5 0.5 0.2 0.2\n"})
    np.testing.assert_allclose(dataset.labels[0].boxes, [[85, 20, 100, 30], [40, 20, 60, 30]])
    assert check(dataset, "clipped").count == 1 and check(dataset, "outside").count == 1
    assert sentence(dataset, "clipped") == ("1 box reaches outside its image (e.g. in "
                                            "'labels/a.txt'): clipped to the image's edges.")
    assert sentence(dataset, "outside").startswith("1 box lies wholly outside its image")


def test_rounding_past_the_edge_is_not_counted_as_clipping(tmp_path):
    dataset = read(tmp_path, {"a": "0 0.9000001 0.5 0.2 1.0000001\n"})
    assert check(dataset, "clipped").count == 0
    np.testing.assert_allclose(dataset.labels[0].boxes, [[80, 0, 100, 50]], atol=1e-4)


def test_boxes_of_zero_or_negative_area_are_dropped(tmp_path):
    dataset = read(tmp_path, {"a": "0 0.5 0.5 0 0.2\n0 0.5 0.5 -0.2 0.2\n0 0.5 0.5 0.2 0.2\n"})
    assert len(dataset.labels[0]) == 1 and check(dataset, "empty_boxes").count == 2
    assert sentence(dataset, "empty_boxes") == (
        "2 boxes have zero or negative width or height (e.g. in 'labels/a.txt'): dropped.")


def test_a_class_id_beyond_classes_txt_is_dropped_and_named(tmp_path):
    dataset = read(tmp_path, {"a": "7 0.5 0.5 0.2 0.2\n1 0.5 0.5 0.2 0.2\n-1 0.5 0.5 0.1 0.1\n"})
    assert list(dataset.labels[0].classes) == [1]
    assert check(dataset, "unknown_class").count == 2
    assert sentence(dataset, "unknown_class") == (
        "2 boxes have a class that is not among the class names (e.g. class id 7 in "
        "'labels/a.txt'): dropped.")


def test_duplicate_boxes_of_one_class_are_dropped_by_their_overlap(tmp_path):
    dataset = read(tmp_path, {"a": "0 0.5 0.5 0.4 0.4\n"      # the original
                                   "0 0.5 0.5 0.4 0.4\n"      # identical: dropped
                                   "0 0.5 0.5 0.4 0.39\n"     # IoU 0.975: dropped
                                   "0 0.5 0.5 0.4 0.36\n"     # IoU 0.9: kept
                                   "1 0.5 0.5 0.4 0.4\n"})    # another class: kept
    assert check(dataset, "duplicates").count == 2
    assert list(dataset.labels[0].classes) == [0, 0, 1]
    assert "IoU above 0.95" in sentence(dataset, "duplicates")


def test_coordinates_that_are_not_finite_are_dropped(tmp_path):
    dataset = read(tmp_path, {"a": "0 nan 0.5 0.2 0.2\n0 0.5 inf 0.2 0.2\n1 0.5 0.5 0.2 0.2\n"})
    assert len(dataset.labels[0]) == 1 and check(dataset, "non_finite").count == 2
    assert sentence(dataset, "non_finite").startswith("2 boxes have coordinates that are not "
                                                      "numbers (NaN) or infinite")


def test_an_image_without_a_label_file_is_background_said_so(tmp_path):
    dataset = read(tmp_path, {"a": "0 0.5 0.5 0.2 0.2\n", "b": None, "c": ""})
    assert dataset.labels[1] is None and len(dataset.labels[2]) == 0
    assert check(dataset, "missing_labels").examples == ["images/b.png"]
    assert sentence(dataset, "missing_labels") == (
        "1 image has no label file (e.g. 'images/b.png'): used as background images, with no "
        "objects.")
    assert check(dataset, "empty_labels").examples == ["labels/c.txt"]
    assert dataset.health.to_dict()["background_images"] == 2


def test_a_line_with_four_numbers_leaves_its_image_out_in_one_sentence(tmp_path):
    dataset = read(tmp_path, {"a": "0 0.5 0.5 0.2 0.2\n", "b": "0 0.5 0.5 0.2\n"})
    assert [p.name for p in dataset.images] == ["a.png"]
    assert sentence(dataset, "unreadable_labels") == (
        "1 label cannot be read, so its image is left out (e.g. 'labels/b.txt': line 1 has 4 "
        "values, not 5 (class cx cy w h)).")


def test_words_and_fractional_class_ids_are_unreadable(tmp_path):
    dataset = read(tmp_path, {"a": "0 0.5 0.5 0.2 0.2\n0 x 0.5 0.2 0.2\n",
                              "b": "1.5 0.5 0.5 0.2 0.2\n"})
    assert check(dataset, "unreadable_labels").count == 2
    assert check(dataset, "unreadable_labels").detail == "line 2: 'x' is not a number"


def test_a_label_file_over_the_size_cap_is_not_read(tmp_path):
    dataset = yolo(tmp_path, {"a": "0 0.5 0.5 0.2 0.2\n", "b": ""})
    with open(tmp_path / "labels" / "b.txt", "wb") as file:
        file.truncate(LABEL_FILE_LIMIT + 1)  # sparse: the cap is checked before reading
    dataset = read_detection(tmp_path)
    assert check(dataset, "unreadable_labels").detail == (
        "larger than the limit of 8 MB for a label file")


def test_an_image_with_twenty_thousand_boxes_keeps_the_first_thousand(tmp_path):
    rng = np.random.default_rng(0)
    lines = "".join(f"{i % 10} {x:.4f} {y:.4f} 0.01 0.01\n"
                    for i, (x, y) in enumerate(rng.uniform(0.1, 0.9, (20_000, 2))))
    dataset = read(tmp_path, {"a": lines}, classes=tuple("abcdefghij"))
    assert len(dataset.labels[0]) <= health.MAX_BOXES
    assert check(dataset, "capped").count == 1
    assert sentence(dataset, "capped") == (
        "1 image has more than 1,000 boxes (e.g. 'labels/a.txt', with 20,000): only the first "
        "1,000 of each are kept.")


def test_a_label_file_without_an_image(tmp_path):
    dataset = yolo(tmp_path, {"a": "0 0.5 0.5 0.2 0.2\n"})
    (tmp_path / "labels" / "gone.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    dataset = read_detection(tmp_path)
    assert sentence(dataset, "no_image") == (
        "1 label has no image file (e.g. 'labels/gone.txt': no image gone.* in images): its "
        "boxes are not used.")


def test_an_unusable_image_is_left_out(tmp_path):
    yolo(tmp_path, {"a": "0 0.5 0.5 0.2 0.2\n", "b": "0 0.5 0.5 0.2 0.2\n"})
    (tmp_path / "images" / "b.png").write_bytes(b"\x89PNG\r\n\x1a\nbroken")
    dataset = read_detection(tmp_path)
    assert len(dataset) == 1
    assert sentence(dataset, "unusable_images") == (
        "1 image file cannot be used and is left out (e.g. 'images/b.png': truncated or "
        "corrupt).")


def test_statistics_per_class_per_image_and_by_relative_size(tmp_path):
    report = read(tmp_path, {"a": "0 0.5 0.5 0.5 0.5\n1 0.5 0.5 0.1 0.1\n1 0.2 0.2 0.1 0.1\n",
                             "b": "1 0.5 0.5 0.02 0.02\n", "c": ""},
                  size=(100, 100)).health.to_dict()
    assert report["classes"] == [{"name": "a", "boxes": 1, "images": 1},
                                 {"name": "b", "boxes": 3, "images": 2}]
    assert report["total_boxes"] == 4 and report["total_images"] == 3
    per_image = {bar["boxes"]: bar["images"] for bar in report["boxes_per_image"]["histogram"]}
    assert per_image["0"] == per_image["1"] == per_image["3–5"] == 1
    assert report["boxes_per_image"]["mean"] == round(4 / 3, 3)
    sizes = {bar["relative_side"]: bar["boxes"] for bar in report["box_sizes"]}
    assert sizes == {"≤1/32": 1, "≤1/16": 0, "≤1/8": 2, "≤1/4": 0, "≤1/2": 1, "≤1": 0}
    assert json.loads(json.dumps(report)) == report


def test_a_dataset_without_boxes_cannot_train(tmp_path):
    dataset = read(tmp_path, {"a": "", "b": None})
    assert dataset.health.blocking() == [
        "The dataset's images hold no boxes: a detector needs labelled objects."]


def test_reading_reports_progress_and_stops_when_asked(tmp_path):
    yolo(tmp_path, {"a": "0 0.5 0.5 0.2 0.2\n"})
    calls = []
    read_detection(tmp_path, on_progress=lambda *args: calls.append(args))
    assert calls[-1] == ("Checking images and labels", 1, 1)
    stop = threading.Event()
    stop.set()
    stopped = read_detection(tmp_path, stop=stop)
    assert len(stopped) == 0 and stopped.health.cancelled
    assert stopped.health.blocking() == ["Reading the detection dataset was cancelled."]


def test_long_file_names_are_cut_in_sentences(tmp_path):
    long = "x" * 200
    dataset = read(tmp_path, {long: "0 0.5 0.5 0.2 0.2\n0 0.5 0.5 0.2 0.2\n"})
    text = sentence(dataset, "duplicates")
    name = text.split("e.g. in ")[1].split("):")[0]
    assert "..." in name and len(name) <= 80
    assert check(dataset, "duplicates").examples == [f"labels/{long}.txt"]


@pytest.mark.parametrize("key", list(health.CHECKS))
def test_every_sentence_reads_for_one_and_for_many(key):
    for n in (1, 3):
        tally = health.Tally()
        tally.add("labels/a.txt", n, "why")
        text = health.CHECKS[key](tally)
        assert text.startswith(f"{n} ") and text.endswith(".") and "\n" not in text
