"""An editable image dataset: class names, class and image edits, each undone and redone
exactly, the trash and flags."""

from __future__ import annotations

import os

import pytest

from studio.core.data.editable import edits, trash
from studio.core.data.editable.content import content_id, file_digest
from studio.core.data.editable.dataset import EditableDataset
from studio.core.data.editable.names import check_class_name
from studio.core.data.editable.steps import redo_edit, undo_edit
from studio.core.data.image_folder import scan_folder
from studio.core.data.types import DataError
from tests.core.dataset_support import image, listing, read_only


def app_image(dataset: EditableDataset, name: str, color: int) -> str:
    """An image stored as the app stores it (named by its content id); its path."""
    path = image(dataset.root / name / "new.png", color)
    named = path.with_name(content_id(file_digest(path)) + ".png")
    path.rename(named)
    return dataset.relative(named)


@pytest.fixture
def dataset(tmp_path):
    made = EditableDataset.create(tmp_path / "pets", ["cats", "dogs"])
    for color in range(3):
        app_image(made, "cats", color)
    app_image(made, "dogs", 10)
    image(made.root / "dogs" / "own.jpg", 11)  # a file put there by hand keeps its name
    return made


def undoes_exactly(dataset: EditableDataset, edit_call) -> edits.Edit:
    """Run an edit, check that undoing it restores the tree and redoing it remakes it."""
    before = listing(dataset.root)
    edit = edit_call()
    after = listing(dataset.root)
    assert after != before
    undo_edit(dataset, edit)
    assert listing(dataset.root) == before
    redo_edit(dataset, edit)
    assert listing(dataset.root) == after
    return edit


@pytest.mark.parametrize(("name", "says"), [
    ("  ", "cannot be empty"),
    ("a/b", "cannot hold /"),
    ('what?"', 'cannot hold " ?'),
    ("..", "cannot start with a dot"),
    (".hidden", "cannot start with a dot"),
    ("con", "reserved by Windows"),
    ("Lpt3.txt", "reserved by Windows"),
    ("cats.", "cannot end with a dot"),
    ("x" * 101, "too long"),
    ("CATS", "A class named 'Cats' exists already; class names must differ in more than case"),
])
def test_a_bad_class_name_is_refused_in_one_line(name, says):
    with pytest.raises(DataError, match=None) as caught:
        check_class_name(name, ["Cats", "dogs"])
    message = str(caught.value)
    assert says in message and "\n" not in message and len(message) < 250


def test_a_good_class_name_comes_back_stripped():
    assert check_class_name("  Red panda ", ["cats"]) == "Red panda"
    assert check_class_name("console", ["cats"]) == "console"


def test_a_created_dataset_is_an_ordinary_image_folder(dataset):
    assert dataset.classes() == ["cats", "dogs"]
    assert len(dataset.images("cats")) == 3
    scan = scan_folder(dataset.root)
    assert scan.classes == ["cats", "dogs"] and len(scan.images) == 5


def test_creating_refuses_duplicate_names_and_a_used_folder(tmp_path):
    with pytest.raises(DataError, match="differ in more than case"):
        EditableDataset.create(tmp_path / "new", ["cats", "Cats"])
    assert not (tmp_path / "new").exists()
    image(tmp_path / "used" / "a.png")
    with pytest.raises(DataError, match="is not an empty folder"):
        EditableDataset.create(tmp_path / "used", ["cats"])


def test_adding_and_removing_an_empty_class_undo(dataset):
    edit = undoes_exactly(dataset, lambda: edits.add_class(dataset, " birds "))
    assert edit.text == "Add class 'birds'" and "birds" in dataset.classes()
    undoes_exactly(dataset, lambda: edits.remove_class(dataset, "birds"))
    with pytest.raises(DataError, match="holds 3 files: delete it to the trash instead"):
        edits.remove_class(dataset, "cats")


def test_renaming_a_class_undoes_even_a_change_of_case(dataset):
    undoes_exactly(dataset, lambda: edits.rename_class(dataset, "cats", "kittens"))
    assert dataset.classes() == ["dogs", "kittens"]
    edit = undoes_exactly(dataset, lambda: edits.rename_class(dataset, "kittens", "Kittens"))
    assert [step.target for step in edit.steps][-1] == "Kittens"
    assert dataset.classes() == ["Kittens", "dogs"]
    with pytest.raises(DataError, match="A class named 'dogs' exists already"):
        edits.rename_class(dataset, "Kittens", "DOGS")


def test_merging_classes_moves_every_file_and_undoes(dataset):
    (dataset.root / "dogs" / ".DS_Store").write_bytes(b"x")  # hidden files go too
    edit = undoes_exactly(dataset, lambda: edits.merge_classes(dataset, ["dogs"], "cats"))
    assert dataset.classes() == ["cats"]
    assert len(dataset.images("cats")) == 5
    assert edit.text == "Merge 'dogs' into 'cats'"


def test_deleting_a_class_goes_to_the_trash_and_restores(dataset):
    before = listing(dataset.root)
    edit = undoes_exactly(dataset, lambda: edits.delete_class(dataset, "dogs"))
    assert dataset.classes() == ["cats"]
    [entry] = trash.entries(dataset)
    assert entry.id == edit.trash_entry
    assert sorted(entry.files) == sorted(p for p in before if p.startswith("dogs/")
                                         and not p.endswith("/"))
    assert trash.describe(entry) == "2 images from 'dogs'"
    restored = edits.restore(dataset, entry.id)
    assert listing(dataset.root) == {**before, ".trash/": ""}
    undo_edit(dataset, restored)  # restoring is undoable too
    assert dataset.classes() == ["cats"]


def test_restoring_never_overwrites_nor_makes_a_class_differing_in_case(dataset):
    kept = dataset.images("cats")[0]
    copy = kept.read_bytes()
    deleted = edits.delete_images(dataset, [dataset.relative(kept)])
    kept.write_bytes(copy)  # the same image added again since
    with pytest.raises(DataError, match=r"'cats/.*\.png' exists already in .*: nothing was "
                                        "changed"):
        edits.restore(dataset, deleted.trash_entry)
    class_gone = edits.delete_class(dataset, "dogs")
    edits.add_class(dataset, "Dogs")
    before = listing(dataset.root)
    with pytest.raises(DataError, match="A class named 'Dogs' exists already"):
        edits.restore(dataset, class_gone.trash_entry)
    assert listing(dataset.root) == before


def test_moving_images_keeps_their_flags_and_undoes(dataset):
    moving = [dataset.relative(p) for p in dataset.images("cats")[:2]]
    names = [path.split("/")[1] for path in moving]
    undoes_exactly(dataset, lambda: edits.set_flags(dataset, names[:1], True))
    assert dataset.flagged() == {names[0]}
    edit = undoes_exactly(dataset, lambda: edits.move_images(dataset, moving, "dogs"))
    assert edit.text == "Move 2 images to 'dogs'" and edit.trash_entry is None
    assert {p.name for p in dataset.images("dogs")} >= set(names)
    assert dataset.flagged() == {names[0]}


def test_moving_onto_an_identical_image_leaves_one_copy(dataset):
    copy = dataset.root / "dogs" / dataset.images("cats")[0].name
    copy.write_bytes(dataset.images("cats")[0].read_bytes())
    moving = dataset.relative(dataset.images("cats")[0])
    edit = undoes_exactly(dataset, lambda: edits.move_images(dataset, [moving], "dogs"))
    assert len(dataset.images("cats")) == 2 and edit.trash_entry is not None
    assert [e.files for e in trash.entries(dataset)] == [(moving,)]


def test_moving_onto_a_different_file_of_the_same_name_renames_it(dataset):
    image(dataset.root / "cats" / "own.jpg", 99)
    edits.move_images(dataset, ["cats/own.jpg"], "dogs")
    assert {p.name for p in dataset.images("dogs")} >= {"own.jpg", "own-2.jpg"}


def test_deleting_images_takes_their_originals_and_empty_trash_is_final(dataset):
    kept = dataset.images("cats")[0]
    (dataset.originals / kept.name).parent.mkdir()
    (dataset.originals / kept.name).write_bytes(b"original")
    edits.set_flags(dataset, [kept.name], True)
    edit = undoes_exactly(dataset, lambda: edits.delete_images(
        dataset, [dataset.relative(kept)]))
    assert edit.text == "Delete 1 image"
    assert not (dataset.originals / kept.name).exists()
    assert trash.empty_trash(dataset) == 2
    assert not dataset.trash.exists() and dataset.flagged() == set()
    with pytest.raises(DataError, match="is no longer in"):
        undo_edit(dataset, edit)


def test_an_edit_that_cannot_finish_changes_nothing(dataset):
    moving = [dataset.relative(p) for p in dataset.images("cats")]
    edit = edits.move_images(dataset, moving, "dogs")
    undo_edit(dataset, edit)
    os.rename(dataset.root / moving[2], dataset.root / "other.png")  # moved outside the app
    before = listing(dataset.root)
    with pytest.raises(DataError, match=r"'cats/.*\.png' is no longer in .*: nothing was "
                                        "changed"):
        redo_edit(dataset, edit)
    assert listing(dataset.root) == before  # the first two moves were put back


def test_a_read_only_dataset_says_so_before_any_change(dataset, monkeypatch):
    with read_only(dataset.root / "cats", monkeypatch):
        before = listing(dataset.root)
        with pytest.raises(DataError, match=r"The folder .*cats is read-only .* Nothing was "
                                            "changed"):
            edits.move_images(dataset, ["dogs/own.jpg"], "cats")
        assert listing(dataset.root) == before


def test_unknown_classes_and_images_are_refused(dataset):
    with pytest.raises(DataError, match="The dataset has no class 'birds'"):
        edits.delete_class(dataset, "birds")
    with pytest.raises(DataError, match="'cats/nope.png' is not an image in a class"):
        edits.delete_images(dataset, ["cats/nope.png"])
