"""Adding images to an editable dataset: copies named by content, duplicates and unusable
files reported, shrinking, progress and stop, and a disk that refuses."""

from __future__ import annotations

import errno
import os
import stat
import threading

import pytest
from PIL import Image

from studio.core.data import image_check
from studio.core.data.editable import content
from studio.core.data.editable.adding import add_images
from studio.core.data.editable.dataset import EditableDataset
from studio.core.data.editable.edits import delete_images
from studio.core.data.editable.steps import undo_edit
from studio.core.data.types import DataError
from tests.core.dataset_support import image, listing, read_only


@pytest.fixture
def dataset(tmp_path):
    return EditableDataset.create(tmp_path / "pets", ["cats", "dogs"])


def test_files_and_folders_are_copied_under_content_names(dataset, tmp_path):
    loose = image(tmp_path / "in" / "photo.PNG", 1)
    disguised = image(tmp_path / "in" / "scan.dat", 2, fmt="PNG")  # its bytes say PNG
    folder = tmp_path / "drop"
    image(folder / "a.jpg", 3)
    image(folder / "deeper" / "b.bmp", 4)
    image(folder / ".hidden" / "c.png", 5)
    (folder / "notes.txt").write_text("hello")
    (folder / "broken.png").write_bytes(loose.read_bytes()[:40])
    before = listing(tmp_path / "in") | listing(folder)

    report = add_images(dataset, "cats", [loose, disguised, folder])

    assert listing(tmp_path / "in") | listing(folder) == before  # copied, never moved
    ids = [content.content_id(content.file_digest(p))
           for p in (loose, disguised, folder / "a.jpg", folder / "deeper" / "b.bmp")]
    assert report.added == [f"cats/{ids[0]}.png", f"cats/{ids[1]}.png", f"cats/{ids[2]}.jpg",
                            f"cats/{ids[3]}.bmp"]
    assert sorted((p.name, reason) for p, reason in report.refused) == [
        ("broken.png", image_check.CORRUPT), ("notes.txt", image_check.NOT_IMAGE)]
    assert (dataset.root / report.added[0]).read_bytes() == loose.read_bytes()
    assert report.summary() == "4 images added to 'cats'; 2 files refused (not usable images)."


def test_duplicates_are_caught_in_the_dataset_and_in_the_batch(dataset, tmp_path):
    own = image(dataset.root / "dogs" / "rex.png", 1)  # put there by hand: hashed
    copy = tmp_path / "copy.png"
    copy.write_bytes(own.read_bytes())
    new = image(tmp_path / "new.png", 2)
    again = tmp_path / "again.png"
    again.write_bytes(new.read_bytes())

    report = add_images(dataset, "cats", [copy, new, again])

    assert len(report.added) == 1
    assert report.duplicates == [(copy, "dogs/rex.png"), (again, str(new))]
    assert add_images(dataset, "dogs", [new]).duplicates == [(new, report.added[0])]
    assert "2 copies of images already there skipped" in report.summary()


def test_the_dataset_is_indexed_once_per_add_and_hashed_files_are_remembered(
        dataset, tmp_path, monkeypatch):
    for color in range(5):
        image(dataset.root / "dogs" / f"{color}.png", color)
    sources = [image(tmp_path / f"in{color}.png", 100 + color) for color in range(20)]
    hashed = []
    real = content.file_digest
    monkeypatch.setattr(content, "file_digest", lambda path: hashed.append(path) or real(path))

    add_images(dataset, "cats", sources[:10])
    assert len(hashed) == 5  # the five files without content names, once for ten sources
    add_images(dataset, "cats", sources[10:])
    assert len(hashed) == 5  # unchanged since: remembered


def test_large_images_are_shrunk_and_originals_kept_on_request(dataset, tmp_path):
    wide = image(tmp_path / "wide.png", 1, size=(40, 10))
    photo = image(tmp_path / "photo.jpg", 2, size=(10, 30))
    small = image(tmp_path / "small.gif", 3, size=(5, 5))

    report = add_images(dataset, "cats", [wide, photo, small], max_side=20,
                        keep_originals=True)

    sizes = {name.rsplit(".", 1)[1]: Image.open(dataset.root / name).size
             for name in report.added}
    assert sizes == {"png": (20, 5), "jpg": (7, 20), "gif": (5, 5)}
    wide_id = report.added[0].split("/")[1]
    assert (dataset.originals / wide_id).read_bytes() == wide.read_bytes()
    assert sorted(p.name for p in dataset.originals.iterdir()) == sorted(
        name.split("/")[1] for name in report.added[:2])
    # undoing the add deletes its images, with their originals, to the trash
    before = listing(dataset.root)
    edit = delete_images(dataset, report.added)
    assert not any(dataset.originals.iterdir())
    undo_edit(dataset, edit)
    assert listing(dataset.root) == before


def test_progress_is_reported_and_a_stop_keeps_what_was_added(dataset, tmp_path):
    sources = [image(tmp_path / "in" / f"{i:03d}.png", i) for i in range(60)]
    stop = threading.Event()
    seen = []

    def on_progress(what, done, total):
        seen.append((what, done, total))
        if done >= 25:
            stop.set()

    report = add_images(dataset, "cats", [tmp_path / "in"], on_progress, stop)

    assert seen == [("Adding images to 'cats'", 0, 60), ("Adding images to 'cats'", 25, 60)]
    assert report.stopped and len(report.added) == 25 == len(dataset.images("cats"))
    assert report.summary() == ("25 images added to 'cats'. Stopped after 25 of 60 files: the "
                                "images added are kept, the rest were not added.")
    finished = add_images(dataset, "cats", sources)
    assert len(finished.added) == 35 and len(finished.duplicates) == 25


def test_a_full_disk_stops_the_add_leaving_no_half_written_file(dataset, tmp_path,
                                                                  monkeypatch):
    sources = [image(tmp_path / f"{i}.png", i) for i in range(4)]
    real_fsync = os.fsync
    files_synced = []

    def fsync(fd):
        if stat.S_ISREG(os.fstat(fd).st_mode):
            files_synced.append(fd)
            if len(files_synced) == 3:  # the third image's bytes are written, not synced
                raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    report = add_images(dataset, "cats", sources)

    assert len(report.added) == 2 and not report.stopped
    assert sorted(os.listdir(dataset.root / "cats")) == sorted(
        path.split("/")[1] for path in report.added)  # no temp file, nothing half-written
    assert report.error == (f"Stopped: the disk holding {dataset.root / 'cats'} is full; the 2 "
                            "images added before it are kept, nothing is half-written. Free "
                            "some space and add the rest.")
    assert "\n" not in report.summary()


def test_an_unknown_class_or_a_bad_size_is_refused_before_anything(dataset, tmp_path):
    source = image(tmp_path / "a.png")
    with pytest.raises(DataError, match="The dataset has no class 'birds'"):
        add_images(dataset, "birds", [source])
    with pytest.raises(DataError, match="at least 1 pixel, not 0"):
        add_images(dataset, "cats", [source], max_side=0)
    assert add_images(dataset, "cats", [tmp_path / "gone.png"]).refused == [
        (tmp_path / "gone.png", image_check.GONE)]


def test_a_read_only_dataset_is_refused_before_any_change(dataset, tmp_path, monkeypatch):
    source = image(tmp_path / "a.png")
    with read_only(dataset.root, monkeypatch):
        before = listing(dataset.root)
        with pytest.raises(DataError, match=r"^The dataset folder .*pets is read-only \(you "
                                            r"may not write to it\)"):
            add_images(dataset, "cats", [source])
        assert listing(dataset.root) == before


def test_the_written_images_are_ones_training_reads(dataset, tmp_path):
    report = add_images(dataset, "cats", [image(tmp_path / "a.tif", 1, fmt="TIFF")],
                        max_side=2)
    assert report.added[0].endswith(".png")
    assert image_check.inspect_image(dataset.root / report.added[0]).size == (2, 2)
