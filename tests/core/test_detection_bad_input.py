"""Issue 23's bad detection input, each through the ``studio`` command: one line naming the
file and the problem, no traceback, nothing written.

Two answers, decided per case:

- **refused** (exit 1, one ``studio: error:`` line on stderr): the input cannot be read as
  it claims to be, or the model and the data are of different tasks. A COCO file whose
  annotations point to image ids it does not list (which image do their boxes belong to?), a
  detector on class folders, and a classifier on a detection folder.
- **counted** (``studio data`` exits 0 and prints one ``Problem:`` line; ``--json`` counts
  it): the issue's health report counts and explains these, dropping only what it names. A
  YOLO line of 4 numbers (its image left out), NaN coordinates and a class id beyond
  ``classes.txt`` (those boxes dropped), a VOC XML without ``<object>`` (a background image, as
  VOC's own negative images are), and 20,000 boxes in one image (the first 1,000 kept).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from studio.cli import main
from studio.core.build.analysis import analyze
from studio.core.data import sources
from studio.core.data.bundled import MNIST_10K
from studio.core.data.types import DatasetInfo
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project, save_project
from studio.core.project.templates import small_detector
from tests.core.test_detection_formats import coco_file
from tests.core.test_detection_health import yolo
from tests.helpers import digit_folder, snapshot, tiny_project

BOX = "0 0.5 0.5 0.2 0.2\n"


def voc_without_object(root: Path) -> Path:
    (root / "Annotations").mkdir(parents=True)
    (root / "JPEGImages").mkdir()
    for name in "ab":
        Image.new("RGB", (100, 50)).save(root / "JPEGImages" / f"{name}.jpg")
    (root / "Annotations" / "a.xml").write_text(
        "<annotation><object><name>dog</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>9</xmax><ymax>9</ymax></bndbox></object></annotation>")
    (root / "Annotations" / "b.xml").write_text(
        "<annotation><filename>b.jpg</filename></annotation>")
    return root


def twenty_thousand_boxes() -> str:
    """20,000 small, distinct boxes (no two overlap enough to be duplicates)."""
    return "".join(f"{i % 2} {0.1 + i % 100 * 0.008:.4f} {0.1 + i // 100 % 100 * 0.008:.4f} "
                   "0.005 0.005\n" for i in range(20_000))


def project_file(folder: Path, project: Project, data: Path | None = None) -> Path:
    """``project`` saved in ``folder``, on the image folder ``data`` if given."""
    if data is not None:
        project.dataset = DatasetChoice(source="folder", path=str(data))
    path = folder / "project.studio.json"
    save_project(project, path)
    return path


def detector_on_class_folders(data: Path, folder: Path) -> list[str]:
    classes = digit_folder(data / "digits", per_class=3)
    # The input does not match the folder's 64 × 64 × 3 either: the task is said first.
    project = Project(name="det", graph=small_detector((20, 20, 1), classes=2))
    return ["train", str(project_file(folder, project, classes))]


def classifier_on_a_detection_folder(data: Path, folder: Path) -> list[str]:
    boxes = yolo(data / "boxes", {"a": BOX, "b": BOX})
    return ["train", str(project_file(folder, tiny_project(), boxes))]


def classifier_given_a_detection_folder_by_data(data: Path, folder: Path) -> list[str]:
    boxes = yolo(data / "boxes", {"a": BOX, "b": BOX})
    return ["train", str(project_file(folder, tiny_project())), "--data", str(boxes)]


def detector_on_images_without_boxes(data: Path, folder: Path) -> list[str]:
    """A detector on a YOLO folder whose label files are all empty: nothing to learn."""
    boxes = yolo(data / "empty", {"a": "", "b": ""})
    project = Project(name="det", graph=small_detector((64, 64, 3), classes=2))
    project.dataset = DatasetChoice(source="detection", path=str(boxes), task="detection",
                                    image_size=[64, 64])
    path = folder / "project.studio.json"
    save_project(project, path)
    return ["train", str(path)]


def coco_pointing_nowhere(root: Path) -> Path:
    """A COCO dataset in ``root`` whose second annotation is of image id 99, which its file
    does not list; that file."""
    (root / "images").mkdir(parents=True)
    Image.new("RGB", (64, 64)).save(root / "images" / "a.png")
    labels = root / "annotations" / "instances.json"
    coco_file(labels, {1: "a.png"}, [(1, 1, [0, 0, 5, 5], {}), (99, 1, [0, 0, 5, 5], {})],
              {1: "car"})
    return labels


def coco_read(data: Path, folder: Path) -> list[str]:
    coco_pointing_nowhere(data)
    return ["data", str(data)]


def class_folders_read_as_yolo(data: Path, folder: Path) -> list[str]:
    return ["data", str(digit_folder(data / "digits", per_class=2)), "--format", "yolo"]


@dataclass(frozen=True)
class Refused:
    """A command that must fail: ``argv`` made from (data folder, project folder), and the
    words its one line must hold."""

    argv: Callable[[Path, Path], list[str]]
    words: tuple[str, ...]


REFUSED = {
    "coco image ids point nowhere": Refused(coco_read, (
        "instances.json: 1 annotation points to an image id the file does not list "
        "(first: 99).",)),
    "detection model on class folders": Refused(detector_on_class_folders, (
        "the model cannot be trained: detection_head_1: The model ends in a DetectionHead, "
        "which finds boxes, but digits is a classification dataset", "(and 1 more problem)")),
    "detector on images without boxes": Refused(detector_on_images_without_boxes, (
        "empty: The dataset's images hold no boxes: a detector needs labelled objects.",)),
    "class folders read as yolo": Refused(class_folders_read_as_yolo, (
        "digits holds no YOLO labels",)),
    "classifier on a detection folder": Refused(classifier_on_a_detection_folder, (
        "boxes is a detection dataset (YOLO labels), not a folder of images per class: "
        "choose it as a detection dataset.",)),
    "classifier given a detection folder by --data": Refused(
        classifier_given_a_detection_folder_by_data, ("boxes is a detection dataset",)),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_input_fails_in_one_line_and_writes_nothing(tmp_path, capsys, case):
    data, folder = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    folder.mkdir()
    argv = REFUSED[case].argv(data, folder)
    before = {"data": snapshot(data), "project": snapshot(folder)}
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("studio: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for words in REFUSED[case].words:
        assert words in err, err
    assert {"data": snapshot(data), "project": snapshot(folder)} == before


@dataclass(frozen=True)
class Counted:
    """A dataset the health report reads with one problem: the check that counts it, the
    file it names and the sentence's words."""

    make: Callable[[Path], Path]
    check: str
    example: str
    words: str


COUNTED = {
    "a yolo line of 4 numbers": Counted(
        lambda root: yolo(root, {"a": BOX, "b": "0 0.5 0.5 0.2\n"}), "unreadable_labels",
        "labels/b.txt", "line 1 has 4 values, not 5 (class cx cy w h)"),
    "a long word for a number": Counted(
        lambda root: yolo(root, {"a": BOX, "b": f"0 {'x' * 500} 0.5 0.2 0.2\n"}),
        "unreadable_labels", "labels/b.txt", "line 1: 'xxxxxxxxxx"),
    "nan coordinates": Counted(
        lambda root: yolo(root, {"a": BOX, "b": "0 nan 0.5 0.2 0.2\n"}), "non_finite",
        "labels/b.txt", "coordinates that are not numbers (NaN) or infinite"),
    "a voc xml without <object>": Counted(
        voc_without_object, "empty_labels", "Annotations/b.xml",
        "lists no objects (e.g. 'Annotations/b.xml'): its image is used as background"),
    "a class id beyond classes.txt": Counted(
        lambda root: yolo(root, {"a": BOX, "b": "7 0.5 0.5 0.2 0.2\n"}), "unknown_class",
        "labels/b.txt", "class id 7 in 'labels/b.txt'"),
    "20,000 boxes in one image": Counted(
        lambda root: yolo(root, {"a": BOX, "b": twenty_thousand_boxes()}), "capped",
        "labels/b.txt", "more than 1,000 boxes (e.g. 'labels/b.txt', with 20,000): only the "
                        "first 1,000"),
}


@pytest.mark.parametrize("case", list(COUNTED))
def test_counted_input_is_one_problem_line_of_the_report(tmp_path, capsys, case):
    counted = COUNTED[case]
    root = counted.make(tmp_path / "data")
    before = snapshot(root)
    assert main(["data", str(root)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "Traceback" not in out
    (problem,) = [line for line in out.splitlines() if line.startswith("Problem: ")]
    assert counted.words in problem and counted.example in problem, problem
    assert max(len(word) for word in problem.split()) <= 80, "quoted values are cut"

    assert main(["data", str(root), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    check = report["checks"][counted.check]
    assert (check["count"], check["examples"]) == (1, [counted.example])
    assert report["problems"] == [problem.removeprefix("Problem: ")]
    assert not report["blocking"] and report["total_boxes"] >= 1
    choice = DatasetChoice(source="detection", path=str(root), task="detection")
    assert problem.removeprefix("Problem: ") in sources.load(choice).notes  # the Data tab's
    assert snapshot(root) == before


IMAGE = Node("input_1", "Input", {"shape": [20, 20, 1]})
DETECTOR = Graph.from_chain([IMAGE, Node("conv", "Conv2D", {"filters": 4, "strides": 2}),
                             Node("head", "DetectionHead", {"classes": 10})])
CLASSIFIER = Graph.from_chain([IMAGE, Node("flat", "Flatten", {}),
                               Node("head", "Dense", {"units": 10, "activation": "softmax"})])
BOXES = DatasetInfo("boxes", "boxes", (64, 64, 3), 10, tuple("0123456789"), 20,
                    task="detection")


@pytest.mark.parametrize(("graph", "dataset", "words"), [
    (DETECTOR, MNIST_10K, "The model ends in a DetectionHead, which finds boxes, but MNIST-10k "
                          "is a classification dataset"),
    (CLASSIFIER, BOXES, "The model ends in Dense with output 10, which answers one thing per "
                        "image, but boxes is a detection dataset"),
])
def test_a_model_for_another_task_is_said_before_its_input_size(graph, dataset, words):
    """The analysis the window shows (and the command's line) says it at the head first."""
    report = analyze(graph, dataset)
    assert [problem.node_id for problem in report.problems] == ["head", "input_1"]
    assert report.reason.startswith(f"head: {words}") and "\n" not in report.reason
