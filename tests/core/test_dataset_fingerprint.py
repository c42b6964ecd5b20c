"""A dataset's fingerprint (image ids per class), the changes between two, and the
fingerprint a training run records for an image-folder dataset."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from studio.core.data import sources
from studio.core.data.editable import content, edits
from studio.core.data.editable.adding import add_images
from studio.core.data.editable.content import ImageIds
from studio.core.data.editable.dataset import EditableDataset
from studio.core.data.editable.fingerprint import (
    ClassChanges,
    dataset_changes,
    fingerprint,
)
from studio.core.project.document import DatasetChoice
from studio.core.runs.folders import FINGERPRINT_FILE, RunFolder, read_fingerprint
from studio.core.training.trainer import record_fingerprint
from tests.core.dataset_support import image
from tests.helpers import tiny_project


@pytest.fixture
def dataset(tmp_path):
    made = EditableDataset.create(tmp_path / "pets", ["cats", "dogs"])
    add_images(made, "cats", [image(tmp_path / "in" / f"{i}.png", i) for i in range(3)])
    image(made.root / "dogs" / "rex.jpg", 50)  # put there by hand
    image(made.root / "dogs" / "rex-again.jpg", 50)
    return made


def test_a_fingerprint_lists_each_classs_image_ids(dataset, monkeypatch):
    rex = content.content_id(content.file_digest(dataset.root / "dogs" / "rex.jpg"))
    added = sorted(p.stem for p in dataset.images("cats"))
    hashed = []
    real = content.file_digest
    monkeypatch.setattr(content, "file_digest", lambda path: hashed.append(path) or real(path))
    ids = ImageIds()

    assert fingerprint(dataset.root, ids) == {"cats": added, "dogs": [rex, rex]}
    assert len(hashed) == 2  # only the files without content names were read
    fingerprint(dataset.root, ids)
    assert len(hashed) == 2  # and they are remembered while unchanged


def test_the_changes_between_two_fingerprints_name_moves_with_their_classes():
    before = {"cats": ["a", "b", "c"], "dogs": ["d", "d"], "birds": ["e"]}
    after = {"cats": ["a", "d", "n"], "dogs": ["b", "d"], "fish": ["e"]}

    changes = dataset_changes(before, after)

    assert changes.moves == [("b", "cats", "dogs"), ("d", "dogs", "cats"),
                             ("e", "birds", "fish")]
    assert changes.classes == {
        "cats": ClassChanges(added=1, removed=1, moved_in=Counter(dogs=1),
                             moved_out=Counter(dogs=1)),
        "dogs": ClassChanges(moved_in=Counter(cats=1), moved_out=Counter(cats=1)),
        "birds": ClassChanges(moved_out=Counter(fish=1)),
        "fish": ClassChanges(moved_in=Counter(birds=1)),
    }
    assert changes.text() == (
        "1 image added, 1 image removed, 3 images moved between classes. 'birds': 1 moved out "
        "to 'fish'. 'cats': 1 added, 1 removed, 1 moved in from 'dogs', 1 moved out to "
        "'dogs'. 'dogs': 1 moved in from 'cats', 1 moved out to 'cats'. 'fish': 1 moved in "
        "from 'birds'.")
    assert dataset_changes(after, after).text() == "The dataset did not change."


def test_edits_show_in_the_changes(dataset, tmp_path):
    before = fingerprint(dataset.root)
    moved = dataset.images("cats")[0]
    edits.move_images(dataset, [dataset.relative(moved)], "dogs")
    edits.delete_images(dataset, ["dogs/rex.jpg"])
    add_images(dataset, "cats", [image(tmp_path / "new.png", 99)])

    changes = dataset_changes(before, fingerprint(dataset.root))

    assert changes.moves == [(moved.stem, "cats", "dogs")]
    assert (changes.added, changes.removed) == (1, 1)


def test_training_records_the_fingerprint_of_an_image_folder(dataset, tmp_path):
    choice = DatasetChoice(source="folder", path=str(dataset.root), image_size=[4, 4])
    loaded = sources.load(choice)
    folder = RunFolder.create(tmp_path / "runs", tiny_project())
    folder.lock.release()
    assert read_fingerprint(folder.path) is None  # as for a run from before fingerprints

    record_fingerprint(folder, choice, loaded)

    assert read_fingerprint(folder.path) == fingerprint(dataset.root)
    record = json.loads((folder.path / FINGERPRINT_FILE).read_text())
    assert record["version"] == 1 and record["root"] == str(dataset.root)


def test_other_datasets_record_no_fingerprint_and_damage_reads_as_none(tmp_path):
    folder = RunFolder.create(tmp_path / "runs", tiny_project())
    folder.lock.release()
    choice = DatasetChoice(source="bundled", name="mnist-10k")
    record_fingerprint(folder, choice, sources.load(choice))
    assert not (folder.path / FINGERPRINT_FILE).exists()
    for damaged in ("{", '{"classes": {"cats": [1]}}', '{"classes": []}', "[]"):
        (folder.path / FINGERPRINT_FILE).write_text(damaged)
        assert read_fingerprint(folder.path) is None
