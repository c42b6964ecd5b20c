"""The command line under faults: a full disk, a read-only folder, an output path that cannot
be a file. Each says one line, exits non-zero and leaves nothing half-written."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from studio.cli import main
from studio.core.project.document import save_project
from studio.core.project.templates import demo_project
from studio.core.runs.folders import runs_root
from tests.helpers import one_line_error, snapshot, tiny_project
from tests.keras_models import branched_model


def refuse_writes(monkeypatch, under: Path, code: int) -> None:
    """Make every file moved into place under ``under`` fail as a full disk or a read-only
    folder would (running as root, chmod cannot make a folder read-only)."""
    replace = os.replace

    def refusing(source, destination):
        if Path(destination).is_relative_to(under):
            raise OSError(code, os.strerror(code), str(destination))
        replace(source, destination)

    monkeypatch.setattr(os, "replace", refusing)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """A folder holding a project and a Keras model to read from."""
    folder = tmp_path_factory.mktemp("inputs")
    save_project(demo_project(), folder / "demo.studio.json")
    branched_model().save(folder / "model.keras")
    return folder


def command(name: str, inputs: Path, output: Path) -> list[str]:
    given = {"new": [], "export-code": [str(inputs / "demo.studio.json")],
             "import": [str(inputs / "model.keras")]}[name]
    return [name, *given, "-o", str(output)]


FAULTS = [
    (errno.ENOSPC, "There is not enough free space in"),
    (errno.EROFS, "is read-only"),
    (errno.EACCES, "is read-only"),
]


@pytest.mark.parametrize("name", ["new", "export-code", "import"])
@pytest.mark.parametrize(("code", "words"), FAULTS, ids=["full", "read-only", "no-permission"])
def test_writing_an_output_the_disk_refuses_says_so_and_leaves_nothing(
        tmp_path, capsys, monkeypatch, inputs, name, code, words):
    out = tmp_path / "out"
    out.mkdir()
    refuse_writes(monkeypatch, out, code)
    assert main(command(name, inputs, out / "new" / "deeper" / "file.json")) == 1
    one_line_error(capsys, words, "Nothing was written.")
    assert snapshot(out) == {}  # no temp file, and the folders made for it are gone


@pytest.mark.parametrize("name", ["new", "export-code", "import"])
@pytest.mark.parametrize(("where", "force", "words"), [
    ("a-file/x.json", False, "a-file is a file, not a folder"),
    ("a-file/deeper/x.json", False, "a-file is a file, not a folder"),
    ("a-folder", True, "a-folder is a folder; give the name of a file"),
    ("a-folder", False, "a-folder is a folder; give the name of a file"),
])
def test_an_output_path_that_cannot_be_a_file_is_refused_in_one_line(
        tmp_path, capsys, inputs, name, where, force, words):
    (tmp_path / "a-file").write_text("keep me")
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-folder" / "kept.txt").write_text("keep me")
    before = snapshot(tmp_path)
    assert main(command(name, inputs, tmp_path / where) + ["--force"] * force) == 1
    one_line_error(capsys, words)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(("code", "words"), FAULTS, ids=["full", "read-only", "no-permission"])
@pytest.mark.parametrize("refused", ["the runs folder", "the run's first file"])
def test_training_where_the_disk_refuses_the_run_says_so_and_leaves_no_run_folder(
        tmp_path, capsys, monkeypatch, code, words, refused):
    project = tmp_path / "tiny.studio.json"
    save_project(tiny_project(), project)
    root = runs_root(project)
    if refused == "the runs folder":
        mkdir = Path.mkdir

        def refusing(self, *args, **kwargs):
            if self.is_relative_to(tmp_path / "runs"):
                raise OSError(code, os.strerror(code), str(self))
            mkdir(self, *args, **kwargs)

        monkeypatch.setattr(Path, "mkdir", refusing)
    else:
        refuse_writes(monkeypatch, root, code)
    assert main(["train", str(project)]) == 1
    one_line_error(capsys, "The run cannot start.", words, str(root))
    assert not root.exists() or snapshot(root) == {}


def test_an_imported_model_that_would_not_open_again_is_not_written(tmp_path, capsys):
    import keras

    inputs = keras.Input((4,))
    unbounded = keras.constraints.MaxNorm(max_value=float("inf"))  # stored as Infinity
    outputs = keras.layers.Dense(2, kernel_constraint=unbounded)(inputs)
    keras.Model(inputs, outputs).save(tmp_path / "unbounded.keras")
    out = tmp_path / "out"
    assert main(["import", str(tmp_path / "unbounded.keras"), "-o", str(out / "x.json")]) == 1
    one_line_error(capsys, "not saved, as it would not open again", "Infinity")
    assert not out.exists()
