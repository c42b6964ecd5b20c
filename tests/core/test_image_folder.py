"""Scanning an image folder (one subfolder per class) and its health report."""

from __future__ import annotations

import io
import json
import os
import struct
import threading
import warnings
import zlib
from pathlib import Path

import pytest
from PIL import Image

from studio.cli import main
from studio.core.data import image_check, image_folder
from studio.core.data.image_folder import health_report, scan_folder


def save(path: Path, mode: str = "RGB", size=(8, 8), color=0, fmt: str | None = None) -> Path:
    """Write a small image, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new(mode, size, color).save(path, fmt)
    return path


def png_claiming(width: int, height: int) -> bytes:
    """A small valid PNG whose IHDR is patched to claim ``width`` × ``height``."""
    buffer = io.BytesIO()
    Image.new("L", (8, 8)).save(buffer, "PNG")
    data = bytearray(buffer.getvalue())
    ihdr = bytes(data[12:16]) + struct.pack(">II", width, height) + bytes(data[24:29])
    data[12:29] = ihdr
    data[29:33] = struct.pack(">I", zlib.crc32(ihdr))
    return bytes(data)


def two_classes(root: Path) -> Path:
    save(root / "cats" / "a.png", color=(255, 0, 0))
    save(root / "cats" / "nested" / "deeper" / "b.JPG", color=(0, 255, 0), fmt="JPEG")
    save(root / "dogs" / "c.jpeg", color=(0, 0, 255), fmt="JPEG")
    save(root / "dogs" / "d.png", size=(16, 4), color=(9, 9, 9))
    return root


def test_two_classes_counted_with_nested_folders(tmp_path):
    scan = scan_folder(two_classes(tmp_path))
    assert scan.classes == ["cats", "dogs"]
    assert scan.class_counts == [2, 2]
    labels = {p.name: c for p, c in scan.images}
    assert labels == {"a.png": 0, "b.JPG": 0, "c.jpeg": 1, "d.png": 1}
    assert scan.sizes == {(8, 8): 3, (16, 4): 1}
    assert scan.modes == {"RGB": 4}
    assert not scan.skipped and not scan.duplicates and not scan.cancelled
    assert scan.problems() == []


def test_names_with_spaces_and_non_ascii_kept_exactly(tmp_path):
    for name in ("chat noir", "Ölçü 猫", "zebra"):
        save(tmp_path / name / f"{name} été.png", color=len(name))
    scan = scan_folder(tmp_path)
    assert scan.classes == ["chat noir", "zebra", "Ölçü 猫"]
    assert [p.name for p, _ in scan.images] == ["chat noir été.png", "zebra été.png",
                                                "Ölçü 猫 été.png"]


def test_empty_folder(tmp_path):
    scan = scan_folder(tmp_path)
    assert scan.classes == [] and scan.images == []
    (problem,) = scan.problems()
    assert "holds no class folders" in problem and "own subfolder" in problem


def test_one_class_and_loose_images(tmp_path):
    save(tmp_path / "only" / "a.png")
    save(tmp_path / "stray.png")
    problems = scan_folder(tmp_path).problems()
    assert any("at least two classes" in p and "'only'" in p for p in problems)
    assert any("1 image sits directly" in p for p in problems)


def test_class_without_images_and_non_image_files(tmp_path):
    two_classes(tmp_path)
    (tmp_path / "birds").mkdir()
    (tmp_path / "birds" / "notes.txt").write_text("todo")
    (tmp_path / "cats" / "labels.csv").write_text("a,b")
    (tmp_path / "cats" / ".DS_Store").write_bytes(b"\0")
    scan = scan_folder(tmp_path)
    assert scan.classes == ["birds", "cats", "dogs"]
    assert scan.class_counts == [0, 2, 2]
    assert sorted(p.name for p in scan.non_image_files) == ["labels.csv", "notes.txt"]
    assert scan.non_images == 2 and not scan.skipped
    assert "The class folder 'birds' holds no images." in scan.problems()


def test_imbalance_names_both_classes(tmp_path):
    for i in range(5):
        save(tmp_path / "many" / f"{i}.png", color=i)
    save(tmp_path / "few" / "0.png", color=99)
    problems = scan_folder(tmp_path).problems()
    assert problems == ["The classes are strongly imbalanced: 'many' has 5 images, "
                        "'few' only 1."]


def test_broken_files_are_skipped_with_reasons(tmp_path):
    two_classes(tmp_path)
    (tmp_path / "cats" / "zero.png").write_bytes(b"")
    (tmp_path / "cats" / "text.jpg").write_text("this is not a picture")
    noise = Image.frombytes("RGB", (128, 128), os.urandom(128 * 128 * 3))
    buffer = io.BytesIO()
    noise.save(buffer, "JPEG")
    data = buffer.getvalue()
    (tmp_path / "dogs" / "half.jpg").write_bytes(data[: len(data) // 2])
    (tmp_path / "dogs" / "bomb.png").write_bytes(png_claiming(30000, 30000))
    scan = scan_folder(tmp_path)
    reasons = {p.name: r for p, r in scan.skipped}
    assert reasons == {"zero.png": image_check.EMPTY, "text.jpg": image_check.NOT_IMAGE,
                       "half.jpg": image_check.CORRUPT, "bomb.png": image_check.BOMB}
    assert scan.class_counts == [2, 2]
    assert any(p.startswith("4 files were skipped: 1 ") for p in scan.problems())


def test_truncated_png_fails_verification(tmp_path):
    data = (save(tmp_path / "a" / "ok.png", color=(1, 2, 3))).read_bytes()
    (tmp_path / "a" / "cut.png").write_bytes(data[:-20])
    assert [(p.name, r) for p, r in scan_folder(tmp_path).skipped] == [
        ("cut.png", image_check.CORRUPT)]


@pytest.mark.parametrize("size", [(16385, 16384), (30000, 30000)])  # just over 256 MB, and far
def test_decompression_bomb_is_skipped_without_warning(tmp_path, size):
    bomb = tmp_path / "a" / "bomb.png"
    bomb.parent.mkdir()
    bomb.write_bytes(png_claiming(*size))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scan = scan_folder(tmp_path)
    assert scan.skipped == [(bomb, image_check.BOMB)]
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]


def test_palette_rgba_and_16_bit_images_are_valid(tmp_path):
    save(tmp_path / "a" / "p.png", mode="P", color=3)
    save(tmp_path / "a" / "rgba.png", mode="RGBA", color=(1, 2, 3, 4))
    save(tmp_path / "b" / "deep.png", mode="I;16", color=1000)
    save(tmp_path / "b" / "deep.tif", mode="I;16", color=2000)
    save(tmp_path / "b" / "web.webp", color=(7, 8, 9))
    scan = scan_folder(tmp_path)
    assert not scan.skipped
    assert scan.modes == {"P": 1, "RGBA": 1, "I;16": 2, "RGB": 1}
    assert health_report(scan)["modes"] == {"I;16": 2, "P": 1, "RGBA": 1, "RGB": 1}


def test_links_pipes_and_unreadable_files_are_skipped_and_counted(tmp_path):
    save(tmp_path / "a" / "x.png")
    save(tmp_path / "b" / "y.png", color=1)
    os.symlink(tmp_path / "gone.png", tmp_path / "a" / "broken link.png")
    os.mkfifo(tmp_path / "b" / "pipe.png")
    scan = scan_folder(tmp_path)
    assert scan.class_counts == [1, 1]
    skipped = health_report(scan)["skipped"]
    assert skipped == {image_check.BROKEN_LINK: {"count": 1, "examples": ["a/broken link.png"]},
                       image_check.NOT_FILE: {"count": 1, "examples": ["b/pipe.png"]}}


@pytest.mark.skipif(os.geteuid() == 0, reason="root may list every folder")
def test_folder_that_cannot_be_listed_is_reported(tmp_path):
    two_classes(tmp_path)
    save(tmp_path / "dogs" / "locked" / "e.png")
    (tmp_path / "dogs" / "locked").chmod(0)
    try:
        scan = scan_folder(tmp_path)
    finally:
        (tmp_path / "dogs" / "locked").chmod(0o755)
    assert scan.class_counts == [2, 2]
    assert health_report(scan)["unreadable_folders"] == ["dogs/locked"]
    assert ("1 folders could not be read (permissions or a disk error); any images in them "
            "are left out.") in scan.problems()


def test_animated_images_are_noted(tmp_path):
    frames = [Image.new("L", (8, 8), 50 * i) for i in range(3)]
    (tmp_path / "a").mkdir()
    frames[0].save(tmp_path / "a" / "moving.gif", save_all=True, append_images=frames[1:])
    save(tmp_path / "b" / "still.gif", mode="P", color=7)
    scan = scan_folder(tmp_path)
    assert scan.class_counts == [1, 1] and scan.animated == 1
    assert ("1 image is animated or have several pages; only the first frame of each is "
            "used.") in scan.problems()
    assert health_report(scan)["animated"] == 1


def test_symlink_loop_finishes(tmp_path):
    save(tmp_path / "a" / "x.png")
    save(tmp_path / "b" / "sub" / "y.png", color=1)
    os.symlink(tmp_path / "b", tmp_path / "b" / "sub" / "loop")
    os.symlink(tmp_path, tmp_path / "a" / "to_root")
    scan = scan_folder(tmp_path)
    assert scan.class_counts == [1, 1]


def test_duplicates_within_and_across_classes(tmp_path):
    one = save(tmp_path / "a" / "one.png", color=5).read_bytes()
    (tmp_path / "a" / "one_copy.png").write_bytes(one)
    two = save(tmp_path / "a" / "two.png", color=6).read_bytes()
    save(tmp_path / "b" / "three.png", color=7)
    (tmp_path / "b" / "two_again.png").write_bytes(two)
    scan = scan_folder(tmp_path)
    groups = sorted(sorted(p.name for p in g) for g in scan.duplicates)
    assert groups == [["one.png", "one_copy.png"], ["two.png", "two_again.png"]]
    assert scan.cross_class_duplicates() == 1
    assert any(p.startswith("2 images have exact copies (2 extra files); 1 of them appear")
               for p in scan.problems())
    dup = health_report(scan)["duplicates"]
    assert dup["groups"] == 2 and dup["extra_copies"] == 2 and dup["across_classes"] == 1


def test_duplicates_across_classes_are_listed(tmp_path):
    data = save(tmp_path / "a" / "one.png", color=5).read_bytes()
    (tmp_path / "a" / "one again.png").write_bytes(data)
    two = save(tmp_path / "a" / "two.png", color=6).read_bytes()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.png").write_bytes(two)
    dup = health_report(scan_folder(tmp_path))["duplicates"]
    assert dup["examples"] == [["a/one again.png", "a/one.png"], ["a/two.png", "b/two.png"]]
    assert dup["across_classes_examples"] == [["a/two.png", "b/two.png"]]


def test_size_histogram_and_imbalance(tmp_path):
    for i, size in enumerate([(8, 8), (32, 5), (40, 10), (10, 2000), (1024, 3)]):
        save(tmp_path / "big" / f"{i}.png", size=size, color=i)
    save(tmp_path / "small" / "s.png", size=(300, 200))
    report = health_report(scan_folder(tmp_path))
    assert report["size_histogram"] == [
        {"larger_side": label, "count": n} for label, n in [
            ("≤32", 2), ("≤64", 1), ("≤128", 0), ("≤256", 0), ("≤512", 1), ("≤1024", 1),
            (">1024", 1)]]
    assert report["imbalance"] == {"largest": {"name": "big", "images": 5},
                                   "smallest": {"name": "small", "images": 1},
                                   "ratio": 5.0, "strong": True}


def test_results_keep_their_order_whatever_the_threads(tmp_path, monkeypatch):
    for i in range(30):
        path = tmp_path / "ab"[i % 2] / f"{i:02}.png"
        if i % 7 == 3:
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(b"broken")
        else:
            save(path, color=i % 11)
    scans = []
    for workers in (1, 3):
        monkeypatch.setattr(image_folder, "WORKERS", workers)
        scans.append(scan_folder(tmp_path))
    assert scans[0].images == scans[1].images and scans[0].skipped == scans[1].skipped
    assert scans[0].duplicates == scans[1].duplicates and len(scans[0].duplicates) == 10
    assert scans[0].images == sorted(scans[0].images, key=lambda item: (item[1], item[0]))


def many_files(root: Path, count: int) -> None:
    data = save(root / "a" / "0000.png").read_bytes()
    for i in range(1, count):
        (root / ("a" if i % 2 else "b") / f"{i:04}.png").write_bytes(data)


def test_progress_every_200_files(tmp_path):
    (tmp_path / "b").mkdir()
    many_files(tmp_path, 450)
    calls: list[tuple[int, int]] = []
    scan = scan_folder(tmp_path, lambda done, total: calls.append((done, total)))
    assert calls == [(0, 450), (200, 450), (400, 450), (450, 450)]
    assert len(scan.images) == 450 and len(scan.duplicates) == 1


def test_stop_after_first_progress_call_cancels(tmp_path):
    (tmp_path / "b").mkdir()
    many_files(tmp_path, 450)
    stop = threading.Event()
    calls: list[int] = []

    def on_progress(done: int, total: int) -> None:
        calls.append(done)
        if done == 200:
            stop.set()

    scan = scan_folder(tmp_path, on_progress, stop)
    assert scan.cancelled and calls == [0, 200] and len(scan.images) == 200
    assert scan.problems()[0].startswith("The scan was cancelled")


def test_health_report_is_json(tmp_path):
    two_classes(tmp_path)
    for i in range(12):
        (tmp_path / "cats" / f"empty{i}.png").write_bytes(b"")
    report = json.loads(json.dumps(health_report(scan_folder(tmp_path))))
    assert report["classes"] == [{"name": "cats", "images": 2}, {"name": "dogs", "images": 2}]
    assert report["total_images"] == 4 and report["total_skipped"] == 12
    empty = report["skipped"][image_check.EMPTY]
    assert empty["count"] == 12 and len(empty["examples"]) == 10
    assert empty["examples"][0] == "cats/empty0.png"
    assert report["sizes"][0] == {"width": 8, "height": 8, "count": 3}


def test_cli_data_json_and_text(tmp_path, capsys):
    two_classes(tmp_path / "set")
    assert main(["data", str(tmp_path / "set"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["total_images"] == 4 and report["problems"] == []
    assert main(["data", str(tmp_path / "set")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(": 4 images in 2 classes") and "  cats: 2" in out
    assert out[-1] == "No problems found."


@pytest.mark.parametrize(("target", "words", "code"), [("missing", "does not exist.", 2),
                                                       ("data.csv", "holds only a header", 1)])
def test_cli_data_errors_in_one_line(tmp_path, capsys, target, words, code):
    (tmp_path / "data.csv").write_text("a,b\n")
    assert main(["data", str(tmp_path / target)]) == code
    err = capsys.readouterr().err
    assert err.startswith("studio: error: ") and words in err and err.count("\n") == 1
