"""The four detection label formats: the demo set written in each and read back identically,
each format found by itself, the layouts each reads, and the one-line errors of bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from studio.core.data.detection import demo
from studio.core.data.detection.formats import (
    FORMATS,
    detect_format,
    looks_like_detection,
    read_detection,
)
from studio.core.data.detection.record import describe_dict
from studio.core.data.types import DataError
from tests.helpers import digit_folder


@pytest.fixture(scope="module")
def tiny():
    return demo.generate(train=5, validation=3)


def written(tmp_path, tiny, fmt):
    root = tmp_path / fmt
    demo.write_demo(root, fmt, tiny)
    return root


def image(path, size=(100, 50)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", size, 200).save(path)
    return path


def one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_demo_set_is_read_back_identically(tmp_path, tiny, fmt):
    root = written(tmp_path, tiny, fmt)
    assert detect_format(root) == fmt
    dataset = read_detection(root)
    assert dataset.format == fmt and dataset.class_names == list(tiny.class_names)
    assert [int(path.stem) for path in dataset.images] == list(range(len(tiny)))
    for index, labels in enumerate(dataset.labels):
        expected = tiny.labels[index]
        assert np.array_equal(labels.classes, expected.classes)
        np.testing.assert_allclose(labels.boxes, expected.boxes, atol=1e-3)
    assert dataset.splits == tiny.splits
    assert dataset.sizes == [(128, 128)] * len(tiny)
    assert dataset.health.problems() == [] and dataset.health.notes == []


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_format_that_does_not_fit_says_so_in_one_line(tmp_path, tiny, fmt):
    root = written(tmp_path, tiny, "voc" if fmt != "voc" else "coco")
    with pytest.raises(DataError, match=f"holds no {FORMATS[fmt].TITLE} labels|do not hold"):
        read_detection(root, fmt)
    assert str(root) in one_line(pytest.raises(DataError, read_detection, root, fmt))


def test_yolo_written_as_ultralytics_reads_it(tmp_path, tiny):
    import yaml

    root = written(tmp_path, tiny, "yolo")
    data = yaml.safe_load((root / "data.yaml").read_text())
    assert data["train"] == "images/train" and data["val"] == "images/val"
    assert data["names"] == dict(enumerate("0123456789")) and data["nc"] == 10
    line = (root / "labels" / "train" / "000000.txt").read_text().splitlines()[0].split()
    x1, y1, x2, y2 = tiny.labels[0].boxes[0]
    assert line == [str(tiny.labels[0].classes[0]), f"{(x1 + x2) / 256:.6f}",
                    f"{(y1 + y2) / 256:.6f}", f"{(x2 - x1) / 128:.6f}", f"{(y2 - y1) / 128:.6f}"]


def test_voc_corners_are_one_based_and_whole(tmp_path, tiny):
    import xml.etree.ElementTree as ET

    root = written(tmp_path, tiny, "voc")
    tree = ET.parse(root / "Annotations" / "000000.xml")
    box = [int(tree.find(f"object/bndbox/{tag}").text) for tag in ("xmin", "ymin", "xmax",
                                                                 "ymax")]
    x1, y1, x2, y2 = tiny.labels[0].boxes[0]
    assert box == [x1 + 1, y1 + 1, x2, y2]
    assert tree.find("filename").text == "000000.jpg"
    assert (root / "JPEGImages" / "000000.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    assert (root / "ImageSets" / "Main" / "val.txt").read_text().split() == [
        "000005", "000006", "000007"]


def test_coco_boxes_are_x_y_width_height_with_categories_from_one(tmp_path, tiny):
    root = written(tmp_path, tiny, "coco")
    data = json.loads((root / "annotations" / "instances_val.json").read_text())
    assert [c["id"] for c in data["categories"]] == list(range(1, 11))
    first = data["annotations"][0]
    x1, y1, x2, y2 = tiny.labels[5].boxes[0]
    assert first["bbox"] == [x1, y1, x2 - x1, y2 - y1]
    assert first["category_id"] == tiny.labels[5].classes[0] + 1
    assert (root / "val" / data["images"][0]["file_name"]).is_file()


def test_pycocotools_reads_the_written_coco_files_and_scores_them_perfect(tmp_path, tiny):
    coco_api = pytest.importorskip("pycocotools.coco")
    from pycocotools.cocoeval import COCOeval

    truth = coco_api.COCO(str(written(tmp_path, tiny, "coco") / "annotations"
                              / "instances_train.json"))
    assert sorted(truth.getCatIds()) == list(range(1, 11)) and len(truth.getImgIds()) == 5
    first = truth.loadAnns(truth.getAnnIds(imgIds=truth.getImgIds()[:1]))
    x1, y1, x2, y2 = tiny.labels[0].boxes[0]
    assert first[0]["bbox"] == [x1, y1, x2 - x1, y2 - y1]
    answers = truth.loadRes([{**ann, "score": 1.0} for ann in truth.loadAnns(truth.getAnnIds())])
    evaluation = COCOeval(truth, answers, "bbox")
    evaluation.evaluate()
    evaluation.accumulate()
    evaluation.summarize()
    assert evaluation.stats[0] == pytest.approx(1.0)


def test_kitti_lines_have_fifteen_values(tmp_path, tiny):
    root = written(tmp_path, tiny, "kitti")
    line = (root / "train" / "labels" / "000000.txt").read_text().splitlines()[0].split()
    assert len(line) == 15 and line[0] == str(tiny.labels[0].classes[0])
    assert [float(v) for v in line[4:8]] == list(tiny.labels[0].boxes[0])


def test_yolo_layouts_side_by_side_and_split_folders(tmp_path):
    beside = tmp_path / "beside"
    image(beside / "a.png")
    (beside / "a.txt").write_text("0 0.5 0.5 0.2 0.4\n")
    image(beside / "b.png")
    (beside / "classes.txt").write_text("cat\n")
    dataset = read_detection(beside)
    assert dataset.format == "yolo" and dataset.class_names == ["cat"]
    np.testing.assert_allclose(dataset.labels[0].boxes, [[40, 15, 60, 35]])
    assert dataset.labels[1] is None and dataset.health.checks["missing_labels"].count == 1
    roboflow = tmp_path / "roboflow"
    for split in ("train", "valid"):
        image(roboflow / split / "images" / f"{split}.jpg")
        (roboflow / split / "labels").mkdir()
        (roboflow / split / "labels" / f"{split}.txt").write_text("1 0.5 0.5 0.5 0.5\n")
    (roboflow / "data.yaml").write_text("names: [cat, dog]\n")
    dataset = read_detection(roboflow)
    assert dataset.splits == ["train", "validation"] and dataset.class_names == ["cat", "dog"]


def test_yolo_without_class_names_names_classes_by_id(tmp_path):
    image(tmp_path / "images" / "a.png")
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "a.txt").write_text("2 0.5 0.5 0.2 0.2\n")
    dataset = read_detection(tmp_path)
    assert dataset.class_names == ["0", "1", "2"]
    assert describe_dict(dataset)["splits"] == {"unsplit": 1}
    assert "named by their ids" in dataset.health.notes[0]


def test_yolo_polygon_lines_give_the_box_around_their_points(tmp_path):
    image(tmp_path / "images" / "a.png")
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "a.txt").write_text("0 0.1 0.2 0.5 0.1 0.3 0.6\n")
    (tmp_path / "classes.txt").write_text("shape\n")
    np.testing.assert_allclose(read_detection(tmp_path).labels[0].boxes, [[10, 5, 50, 30]])


def voc(root, annotations):
    """A VOC dataset in ``root``: an image for each name of ``annotations``, with that XML."""
    (root / "Annotations").mkdir(parents=True)
    for name, xml in annotations.items():
        image(root / "JPEGImages" / f"{name}.jpg")
        (root / "Annotations" / f"{name}.xml").write_text(xml)
    return root


def dog(corners):
    """A VOC annotation with one dog at ``corners`` (xmin, ymin, xmax, ymax)."""
    box = "".join(f"<{tag}>{v}</{tag}>" for tag, v in zip(("xmin", "ymin", "xmax", "ymax"),
                                                        corners, strict=True))
    return f"<annotation><object><name>dog</name><bndbox>{box}</bndbox></object></annotation>"


def test_voc_reads_one_based_corners_and_a_background_image(tmp_path):
    dataset = read_detection(voc(tmp_path, {
        "a": dog((1, 1, 100, 50)), "b": "<annotation><filename>b.jpg</filename></annotation>"}))
    assert dataset.class_names == ["dog"] and dataset.splits == [None, None]
    np.testing.assert_allclose(dataset.labels[0].boxes, [[0, 0, 100, 50]])
    assert len(dataset.labels[1]) == 0
    empty = dataset.health.checks["empty_labels"]
    assert empty.count == 1 and empty.examples == ["Annotations/b.xml"]
    assert dataset.health.problems() == [
        "1 label file lists no objects (e.g. 'Annotations/b.xml'): its image is used as "
        "background."]


def test_voc_refuses_a_doctype_without_expanding_it(tmp_path):
    dataset = read_detection(voc(tmp_path, {
        "a": '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY lol "lol"><!ENTITY l2 "&lol;&lol;">]>'
             "<annotation><object><name>&l2;</name></object></annotation>",
        "b": dog((1, 1, 9, 9))}))
    unreadable = dataset.health.checks["unreadable_labels"]
    assert unreadable.examples == ["Annotations/a.xml"] and "DOCTYPE" in unreadable.detail
    assert dataset.class_names == ["dog"] and len(dataset) == 1


def coco_file(path, images, annotations, categories):
    """A COCO file at ``path``: ``images`` (id: file name), ``annotations``
    ((image id, category id, bbox, other fields)) and ``categories`` (id: name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "images": [{"id": i, "file_name": name} for i, name in images.items()],
        "annotations": [{"id": n, "image_id": i, "category_id": c, "bbox": bbox, **extra}
                        for n, (i, c, bbox, extra) in enumerate(annotations)],
        "categories": [{"id": i, "name": name} for i, name in categories.items()]}))


def test_coco_sparse_category_ids_become_indices_in_id_order(tmp_path):
    image(tmp_path / "train2017" / "a.png")
    image(tmp_path / "train2017" / "b.png")
    coco_file(tmp_path / "annotations" / "instances_train2017.json", {7: "a.png", 8: "b.png"},
              [(7, 90, [10, 5, 20, 10], {}), (7, 3, [0, 0, 5, 5], {}),
               (8, 3, [0, 0, 50, 50], {"iscrowd": 1}), (8, 4, [0, 0, 5, 5], {})],
              {90: "toothbrush", 3: "car"})
    dataset = read_detection(tmp_path)
    assert dataset.class_names == ["car", "toothbrush"]
    assert dataset.splits == ["train", "train"]
    np.testing.assert_allclose(dataset.labels[0].boxes, [[10, 5, 30, 15], [0, 0, 5, 5]])
    assert list(dataset.labels[0].classes) == [1, 0]
    assert len(dataset.labels[1]) == 0 and dataset.health.checks["crowd"].count == 1
    unknown = dataset.health.checks["unknown_class"]
    assert unknown.detail == "category id 4"
    assert unknown.examples == ["annotations/instances_train2017.json: b.png"]


def test_coco_annotations_whose_image_ids_point_nowhere(tmp_path):
    image(tmp_path / "images" / "a.png")
    coco_file(tmp_path / "annotations" / "instances.json", {1: "a.png"},
              [(1, 1, [0, 0, 5, 5], {}), (99, 1, [0, 0, 5, 5], {})], {1: "car"})
    with pytest.raises(DataError) as caught:
        read_detection(tmp_path)
    assert one_line(caught) == (f"{tmp_path / 'annotations' / 'instances.json'}: 1 annotation "
                                "points to an image id the file does not list (first: 99).")


def test_kitti_reads_label_2_and_ignores_dont_care(tmp_path):
    image(tmp_path / "image_2" / "000000.png")
    (tmp_path / "label_2").mkdir()
    (tmp_path / "label_2" / "000000.txt").write_text(
        "Car 0.00 0 -1.58 10.00 5.00 40.00 25.00 1.5 1.6 3.7 -3.1 1.5 34.0 -1.6\n"
        "DontCare -1 -1 -10 50.00 20.00 60.00 30.00 -1 -1 -1 -1000 -1000 -1000 -10\n"
        "Pedestrian 0.00 0 0.2 1.00 2.00 3.00 4.00 1.7 0.6 0.9 1.0 1.6 10.0 0.1 0.95\n")
    dataset = read_detection(tmp_path)
    assert dataset.format == "kitti" and dataset.class_names == ["Car", "Pedestrian"]
    np.testing.assert_allclose(dataset.labels[0].boxes, [[10, 5, 40, 25], [1, 2, 3, 4]])
    assert dataset.health.checks["dont_care"].count == 1
    assert "DontCare" in dataset.health.problems()[0]


def test_a_classification_folder_given_as_a_detection_dataset(tmp_path):
    folder = digit_folder(tmp_path / "digits", per_class=2)
    with pytest.raises(DataError) as caught:
        read_detection(folder)
    assert "is a classification folder" in one_line(caught)
    assert looks_like_detection(folder) is None


def test_a_detection_folder_given_as_a_classification_folder_is_recognised(tmp_path, tiny):
    assert looks_like_detection(written(tmp_path, tiny, "yolo")) == "YOLO"
    assert looks_like_detection(written(tmp_path, tiny, "kitti")) == "KITTI"


def test_a_folder_without_labels_and_a_missing_folder(tmp_path):
    image(tmp_path / "a.png")
    with pytest.raises(DataError, match="holds no detection labels"):
        read_detection(tmp_path)
    with pytest.raises(DataError, match="does not exist"):
        read_detection(tmp_path / "nowhere")
    with pytest.raises(DataError, match="Unknown label format 'pdf'"):
        read_detection(tmp_path, "pdf")


def test_writing_never_overwrites_and_leaves_nothing_half_written(tmp_path, tiny, monkeypatch):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep")
    with pytest.raises(DataError, match="already exists"):
        demo.write_demo(tmp_path / "taken", "yolo", tiny)
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["mine.txt"]
    from studio.core.data.detection import yolo

    monkeypatch.setattr(yolo, "label_text", lambda *args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        demo.write_demo(tmp_path / "new", "yolo", tiny)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_describe_dict_is_json_with_the_health_report(tmp_path, tiny):
    report = describe_dict(read_detection(written(tmp_path, tiny, "coco")))
    again = json.loads(json.dumps(report))
    assert again["task"] == "detection" and again["format"] == "coco"
    assert again["splits"] == {"train": 5, "validation": 3}
    assert again["total_images"] == 8
    assert again["total_boxes"] == sum(len(boxes) for boxes in tiny.labels)
    assert again["problems"] == [] and again["blocking"] == []


def test_coco_images_beside_their_file_and_images_listed_but_missing(tmp_path):
    image(tmp_path / "valid" / "a.png")
    image(tmp_path / "valid" / "unlisted.png")
    coco_file(tmp_path / "valid" / "_annotations.coco.json", {0: "a.png", 1: "gone.png"},
              [(0, 0, [1, 2, 3, 4], {}), (1, 0, [1, 2, 3, 4], {})], {0: "cell"})
    dataset = read_detection(tmp_path)
    assert dataset.splits == ["validation"] and dataset.class_names == ["cell"]
    np.testing.assert_allclose(dataset.labels[0].boxes, [[1, 2, 4, 6]])
    missing = dataset.health.checks["no_image"]
    assert missing.examples == ["valid/_annotations.coco.json: gone.png"]
    assert missing.detail == "not found in valid"
    assert dataset.health.notes == ["1 image file in the images' folders is listed in no COCO "
                                    "file (e.g. 'valid/unlisted.png'): not used."]


def test_a_coco_annotation_that_is_not_a_box_leaves_its_image_out(tmp_path):
    image(tmp_path / "images" / "a.png")
    image(tmp_path / "images" / "b.png")
    coco_file(tmp_path / "annotations" / "instances.json", {1: "a.png", 2: "b.png"},
              [(1, 1, [1, 2, 3], {}), (2, 1, [1, 2, 3, 4], {})], {1: "car"})
    dataset = read_detection(tmp_path)
    assert [p.name for p in dataset.images] == ["b.png"]
    assert dataset.health.checks["unreadable_labels"].detail == (
        "annotation 0: bbox [1, 2, 3] is not 4 numbers (x, y, width, height)")


def test_a_kitti_line_of_fourteen_values_leaves_its_image_out(tmp_path):
    image(tmp_path / "image_2" / "0.png")
    (tmp_path / "label_2").mkdir()
    (tmp_path / "label_2" / "0.txt").write_text("Car 0 0 0 1 2 3 4 0 0 0 0 0 0\n")
    dataset = read_detection(tmp_path)
    assert len(dataset) == 0 and dataset.health.blocking() == [
        "The dataset holds no usable image."]
    assert dataset.health.checks["unreadable_labels"].detail.startswith(
        "line 1 has 14 values, not 15 (type truncated occluded alpha x1 y1 x2 y2")


@pytest.mark.parametrize(("name", "text", "message"), [
    ("data.yaml", "names: {0: cat, 2: dog}\n",
     "the keys of 'names' must be the class ids 0 to 1, not [0, 2]."),
    ("data.yaml", "names: [[cat]]\n", "'names' must be a list of class names"),
    ("data.yaml", "names: [cat\n", "is not valid YAML"),
    ("classes.txt", "cat\ndog\ncat\n", "lists the class 'cat' more than once."),
])
def test_class_names_that_cannot_be_used_say_why_in_one_line(tmp_path, name, text, message):
    image(tmp_path / "images" / "a.png")
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    (tmp_path / name).write_text(text)
    with pytest.raises(DataError) as caught:
        read_detection(tmp_path)
    assert one_line(caught).startswith(str(tmp_path / name)) and message in str(caught.value)


def test_kitti_cannot_write_a_class_name_with_a_space(tmp_path, tiny):
    from studio.core.data.detection.formats import write_detection
    from studio.core.data.detection.record import LabelledImage

    item = LabelledImage("a", tiny.images[0], tiny.labels[0])
    with pytest.raises(DataError, match="KITTI cannot hold the class name 'traffic light'"):
        write_detection(tmp_path / "out", "kitti", [item], ["traffic light", *"123456789"])
    assert not (tmp_path / "out").exists()
