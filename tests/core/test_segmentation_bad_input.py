"""Issue 24's bad segmentation input, each through the ``studio`` command: one line naming the
file and the problem, no traceback, nothing written.

Three answers, decided per case:

- **refused** (exit 1, one ``studio: error:`` line on stderr, from ``studio data`` and
  ``studio train`` alike): the dataset cannot be read as it claims to be, or the model and the
  data are of different tasks. RGB masks without a colour table (which colour is which
  class?), a classification folder read as masks, a segmentation model (U-Net) on class
  folders and a classifier on a segmentation folder.
- **blocked** (``studio data`` prints its report and exits 1, its first ``Problem:`` line
  saying why; ``studio train`` refuses in that line before a run starts): every mask 16-bit
  with values past 8 bits, or of 300 distinct values, leaves no image to train on.
- **counted** (``studio data`` exits 0 and prints one ``Problem:`` line; the Data tab and
  ``studio train`` list it as a note): JPEG masks are read with the warning that their values
  are wrong along edges (and, when their values name the classes, that the values JPEG made
  up became classes); 16-bit masks whose values fit 8 bits are read as the indices they
  are; a 16-bit mask of 300 values among good ones is left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from studio.cli import main
from studio.core.build.analysis import analyze
from studio.core.data import sources
from studio.core.data.bundled import MNIST_10K
from studio.core.data.segmentation.reading import read_segmentation
from studio.core.data.types import DatasetInfo
from studio.core.project.document import DatasetChoice, Project
from studio.core.project.templates import small_unet_segmenter
from tests.core.test_detection_bad_input import project_file
from tests.helpers import digit_folder, snapshot, tiny_project

SIDE = 8
BANDS = np.repeat(np.array([[0, 0, 0, 1, 1, 1, 2, 2]], np.uint8), SIDE, axis=0)
"""An 8 × 8 mask of three classes in vertical bands."""
NAMES = "background\nroad\ncar\n"
THREE_HUNDRED = np.arange(300, dtype=np.uint16).reshape(15, 20)
"""A 16-bit mask of 300 distinct values (an instance map, say)."""


def mask_set(root: Path, masks: dict[str, np.ndarray], suffix: str = ".png",
             names: str | None = NAMES) -> Path:
    """images/ and masks/ in ``root``: a grey image for each mask (``masks``: stem to
    pixels, saved with ``suffix``), and a classes.txt of ``names``."""
    (root / "images").mkdir(parents=True)
    (root / "masks").mkdir()
    for stem, pixels in masks.items():
        Image.new("RGB", pixels.shape[1::-1], (90, 90, 90)).save(root / "images" / f"{stem}.png")
        Image.fromarray(pixels).save(root / "masks" / f"{stem}{suffix}")
    if names is not None:
        (root / "classes.txt").write_text(names)
    return root


def every_mask(pixels: np.ndarray, **kind) -> Callable[[Path], Path]:
    """A dataset of three images, every mask ``pixels``."""
    return lambda root: mask_set(root, {stem: pixels for stem in "abc"}, **kind)


def coloured(classes: np.ndarray) -> np.ndarray:
    """A colour mask of ``classes``: black background, red road, green car."""
    return np.array([[0, 0, 0], [255, 0, 0], [0, 255, 0]], np.uint8)[classes]


def segmenter(classes: int = 3) -> Project:
    """The small U-Net segmenter for SIDE × SIDE colour images."""
    project = Project(name="unet", graph=small_unet_segmenter((SIDE, SIDE, 3), classes))
    project.training.epochs = 1
    return project


def on_segmentation(make: Callable[[Path], Path]) -> Callable[[Path, Path], list[str]]:
    """``studio train`` of the U-Net segmenter on the dataset ``make`` writes."""
    def argv(data: Path, folder: Path) -> list[str]:
        project = segmenter()
        project.dataset = DatasetChoice(source="segmentation", path=str(make(data / "set")),
                                        task="segmentation")
        return ["train", str(project_file(folder, project))]
    return argv


def read(make: Callable[[Path], Path], *options: str) -> Callable[[Path, Path], list[str]]:
    """``studio data`` of the dataset ``make`` writes."""
    return lambda data, folder: ["data", str(make(data / "set")), *options]


def classes_of(root: Path) -> Path:
    return digit_folder(root, per_class=2)


def unet_on_class_folders(data: Path, folder: Path) -> list[str]:
    project = segmenter(classes=11)
    return ["train", str(project_file(folder, project, classes_of(data / "digits")))]


def unet_given_class_folders_as_masks(data: Path, folder: Path) -> list[str]:
    project = segmenter()
    project.dataset = DatasetChoice(source="segmentation", path=str(classes_of(data / "digits")),
                                    task="segmentation")
    return ["train", str(project_file(folder, project))]


def classifier_on_a_segmentation_folder(data: Path, folder: Path) -> list[str]:
    masks = mask_set(data / "set", {"a": BANDS, "b": BANDS})
    return ["train", str(project_file(folder, tiny_project(), masks))]


def classifier_given_a_segmentation_folder_by_data(data: Path, folder: Path) -> list[str]:
    masks = mask_set(data / "set", {"a": BANDS, "b": BANDS})
    return ["train", str(project_file(folder, tiny_project())), "--data", str(masks)]


def classifier_on_masks(data: Path, folder: Path) -> list[str]:
    project = tiny_project()
    project.dataset = DatasetChoice(source="segmentation", task="segmentation",
                                    path=str(mask_set(data / "set", {"a": BANDS, "b": BANDS})))
    return ["train", str(project_file(folder, project))]


RGB_WITHOUT_TABLE = (
    "masks/a.png is a colour (RGB) mask, but no labelmap.txt gives the class of each colour: "
    "put a labelmap.txt in the dataset's folder, one line per class with its colour (like "
    "background:0,0,0:: and road:128,64,128::), or save masks of class indices.")
NOT_MASKS = ("digits is a classification folder (a subfolder of images per class, no masks), "
             "not a segmentation dataset: choose it as an image folder, or add masks")
PIXELS_ON_CLASSES = (
    "the model cannot be trained: conv2d_7: The model ends in Conv2D with output 8 × 8 × 11, "
    "a class for each pixel (a segmentation model), but digits is a classification dataset "
    "(one class per image): choose a segmentation dataset (images with masks), or end the "
    "model with GlobalAveragePooling2D and Dense(2, softmax).")
NOT_CLASSES = ("set is a segmentation dataset (images and masks folders), not a folder of "
               "images per class: choose it as a segmentation dataset.")
REFUSED: dict[str, tuple[Callable[[Path, Path], list[str]], str]] = {
    "rgb masks without a colour table: data": (
        read(every_mask(coloured(BANDS), names=None)), RGB_WITHOUT_TABLE),
    "rgb masks without a colour table: train": (
        on_segmentation(every_mask(coloured(BANDS), names=None)), RGB_WITHOUT_TABLE),
    "class folders read as masks: data": (
        lambda data, folder: ["data", str(classes_of(data / "digits")), "--segmentation"],
        NOT_MASKS),
    "class folders given to a segmenter as masks": (
        unet_given_class_folders_as_masks, NOT_MASKS),
    "a segmenter on class folders": (unet_on_class_folders, PIXELS_ON_CLASSES),
    "a classifier on a segmentation folder": (
        classifier_on_a_segmentation_folder, NOT_CLASSES),
    "a classifier given a segmentation folder by --data": (
        classifier_given_a_segmentation_folder_by_data, NOT_CLASSES),
    "a classifier on masks": (classifier_on_masks, (
        "the model cannot be trained: dense_1: The model ends in Dense with output 10, which "
        "answers one thing per image, but set is a segmentation dataset (a class for each "
        "pixel)")),
}


def no_image_left(why: str) -> str:
    return ("The dataset holds no usable image with a mask. 3 masks cannot be read as class "
            f"indices, so their images are left out (e.g. 'masks/a.png': {why}).")


SIXTEEN_BITS = no_image_left("is a 16-bit mask with values up to 2,000, but masks must be "
                             "8-bit, a class index (0 to 254) per pixel: save it as an 8-bit "
                             "PNG of class indices")
MANY_VALUES = no_image_left("holds 300 distinct values, more than a mask's 255 classes: not "
                            "class indices (an instance or depth map?)")
BLOCKED: dict[str, tuple[Callable[[Path], Path], str]] = {
    "16-bit masks past 8 bits": (every_mask(BANDS.astype(np.uint16) * 1000), SIXTEEN_BITS),
    "masks of 300 distinct values": (every_mask(THREE_HUNDRED), MANY_VALUES),
}


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def refuses(capsys, argv: list[str], words: str) -> None:
    code, out, err = run(capsys, argv)
    assert code == 1 and out == "", out
    assert err.startswith("studio: error: ") and err.count("\n") == 1, err
    assert words in err, err


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_input_fails_in_one_line_and_writes_nothing(tmp_path, capsys, case):
    data, folder = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    folder.mkdir()
    argv, words = REFUSED[case]
    argv = argv(data, folder)
    before = {"data": snapshot(data), "project": snapshot(folder)}
    refuses(capsys, argv, words)
    assert {"data": snapshot(data), "project": snapshot(folder)} == before


@pytest.mark.parametrize("case", list(BLOCKED))
def test_blocked_data_says_why_first_and_train_refuses_in_that_line(tmp_path, capsys, case):
    make, words = BLOCKED[case]
    root = make(tmp_path / "data" / "set")
    code, out, err = run(capsys, ["data", str(root)])
    assert code == 1 and err == ""
    assert out.splitlines()[0].endswith(": segmentation dataset (images and masks folders), "
                                        "0 images, 0 pixels in 3 classes")
    problems = [line for line in out.splitlines() if line.startswith("Problem: ")]
    assert problems[0] == f"Problem: {words}"
    assert sum(words.split(". ", 1)[1] in line for line in problems) == 1, "said once"

    project = segmenter()
    project.dataset = DatasetChoice(source="segmentation", path=str(root), task="segmentation")
    folder = tmp_path / "project"
    folder.mkdir()
    argv = ["train", str(project_file(folder, project))]
    before = snapshot(tmp_path)
    refuses(capsys, argv, f"studio: error: set: {words}\n")
    assert snapshot(tmp_path) == before  # no run folder started


def jpeg_masks(root: Path) -> Path:
    return mask_set(root, {"a": BANDS, "b": BANDS}, suffix=".jpg")


@dataclass(frozen=True)
class Counted:
    """A dataset read with one problem: the check that counts it and the sentence."""

    make: Callable[[Path], Path]
    check: str
    sentence: str


COUNTED = {
    "jpeg masks": Counted(jpeg_masks, "lossy_masks", (
        "2 masks are JPEGs (e.g. 'masks/a.jpg'): JPEG's lossy compression changes values along "
        "every edge, so some pixels have the wrong class; save masks as PNG.")),
    "jpeg masks whose values name the classes": Counted(
        lambda root: mask_set(root, {"a": BANDS * 100, "b": BANDS * 100}, suffix=".jpg",
                              names=None), "lossy_masks", (
            "2 masks are JPEGs (e.g. 'masks/a.jpg'): JPEG's lossy compression changes values "
            "along every edge, so some pixels have the wrong class, and as the masks' values "
            "name the classes, the values it made up became classes too (list the real ones "
            "in a classes.txt); save masks as PNG.")),
    "16-bit masks whose values fit 8 bits": Counted(
        every_mask(BANDS.astype(np.uint16)), "wide_masks", (
            "3 masks are 16-bit (e.g. 'masks/a.png'): their values fit 8 bits and are read as "
            "class indices.")),
    "a mask of 300 distinct values among good ones": Counted(
        lambda root: mask_set(root, {"a": BANDS, "b": BANDS, "c": THREE_HUNDRED}),
        "unusable_masks", (
            "1 mask cannot be read as class indices, so its image is left out (e.g. "
            "'masks/c.png': holds 300 distinct values, more than a mask's 255 classes: not "
            "class indices (an instance or depth map?)).")),
}


@pytest.mark.parametrize("case", list(COUNTED))
def test_counted_input_is_one_problem_line_of_the_report(tmp_path, capsys, case):
    counted = COUNTED[case]
    root = counted.make(tmp_path / "set")
    before = snapshot(root)
    code, out, err = run(capsys, ["data", str(root)])
    assert code == 0 and err == ""
    problems = [line for line in out.splitlines() if line.startswith("Problem: ")]
    assert problems == [f"Problem: {counted.sentence}"]
    assert max(len(word) for word in problems[0].split()) <= 80

    code, out, _ = run(capsys, ["data", str(root), "--json"])
    report = json.loads(out)
    assert report["checks"][counted.check]["sentence"] == counted.sentence
    assert not report["blocking"]
    choice = DatasetChoice(source="segmentation", path=str(root), task="segmentation")
    assert counted.sentence in sources.load(choice).notes  # the Data tab's and training's
    assert snapshot(root) == before


def test_a_long_file_name_is_cut_in_the_one_line(tmp_path, capsys):
    root = mask_set(tmp_path / "set", {"m" * 200: coloured(BANDS)}, names=None)
    refuses(capsys, ["data", str(root)], f"masks/{'m' * 73}… is a colour (RGB) mask")


def test_16_bit_masks_whose_values_fit_8_bits_are_read_as_they_are(tmp_path):
    dataset = read_segmentation(every_mask(BANDS.astype(np.uint16))(tmp_path))
    np.testing.assert_array_equal(dataset.mask(0), BANDS)


def test_the_colour_table_the_message_asks_for_reads_the_rgb_masks(tmp_path):
    """Doing as the refusal says (a labelmap.txt in the dataset's folder) reads the masks."""
    root = every_mask(coloured(BANDS), names=None)(tmp_path)
    (root / "labelmap.txt").write_text("background:0,0,0::\nroad:255,0,0::\ncar:0,255,0::\n")
    dataset = read_segmentation(root)
    assert dataset.class_names == ["background", "road", "car"]
    np.testing.assert_array_equal(dataset.mask(0), BANDS)


SEGMENTS = DatasetInfo("set", "set", (28, 28, 1), 3, ("background", "road", "car"), 20,
                       task="segmentation")


@pytest.mark.parametrize(("graph", "dataset", "words"), [
    (small_unet_segmenter((28, 28, 1), classes=10), MNIST_10K, (
        "The model ends in Conv2D with output 28 × 28 × 10, a class for each pixel (a "
        "segmentation model), but MNIST-10k is a classification dataset")),
    (tiny_project().graph, SEGMENTS, (
        "The model ends in Dense with output 10, which answers one thing per image, but set "
        "is a segmentation dataset")),
])
def test_a_model_for_another_task_is_said_first_as_the_cause(graph, dataset, words):
    """The analysis the canvas shows (and ``studio train``'s line) says it at the head first."""
    report = analyze(graph, dataset)
    head = report.problems[0]
    assert head.cause and head.node_id == graph.sinks()[0]
    assert report.reason.startswith(f"{head.node_id}: {words}") and "\n" not in report.reason
