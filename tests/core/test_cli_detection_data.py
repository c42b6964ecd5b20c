"""``studio data FOLDER`` on a detection dataset: found by itself or named with --format."""

from __future__ import annotations

import json

import pytest

from studio.cli import main
from studio.core.data.detection import demo
from tests.helpers import digit_folder


@pytest.fixture(scope="module")
def tiny():
    return demo.generate(train=4, validation=2)


def test_a_detection_folder_is_reported_as_json(tmp_path, capsys, tiny):
    demo.write_demo(tmp_path / "digits", "yolo", tiny)
    assert main(["data", str(tmp_path / "digits"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["task"], report["format"], report["total_images"]) == ("detection", "yolo", 6)
    assert report["splits"] == {"train": 4, "validation": 2}
    assert report["total_boxes"] == sum(len(boxes) for boxes in tiny.labels)
    assert sum(c["boxes"] for c in report["classes"]) == report["total_boxes"]
    assert report["boxes_per_image"]["min"] >= 1 and report["background_images"] == 0
    assert not report["blocking"]


def test_a_detection_folder_as_text_names_its_problems(tmp_path, capsys, tiny):
    root = tmp_path / "digits"
    demo.write_demo(root, "yolo", tiny)
    label = next((root / "labels" / "train").glob("*.txt"))
    label.write_text("3 0.5 0.5 0.2\n")  # 4 numbers: the image is left out, and counted
    assert main(["data", str(root)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{root}: yolo detection dataset, 5 images")
    assert any(line.startswith("Problem: ") and label.name in line for line in out), out


def test_a_format_that_does_not_fit_and_a_classification_folder_fail_in_one_line(
        tmp_path, capsys, tiny):
    demo.write_demo(tmp_path / "digits", "yolo", tiny)
    assert main(["data", str(tmp_path / "digits"), "--format", "voc"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Pascal VOC" in err
    digit_folder(tmp_path / "classes")
    assert main(["data", str(tmp_path / "classes"), "--format", "yolo"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "YOLO" in err
