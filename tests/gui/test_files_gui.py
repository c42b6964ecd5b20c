"""Opening and saving project files from the window; broken files never hurt the open project."""

from __future__ import annotations

import json
import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from studio.core.base import files
from studio.core.model.graph import Graph, Node
from studio.core.project.document import FORMAT_VERSION, Project, load_project, save_project
from studio.core.project.templates import demo_project, from_template
from tests.gui.support import click_row, isolate_settings, row_ids

LEFT = Qt.MouseButton.LeftButton
CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


def _truncated(text: str) -> str:
    return text[: len(text) // 2]


def _newer(text: str) -> str:
    document = json.loads(text)
    document["format_version"] = FORMAT_VERSION + 1
    return json.dumps(document)


def _unknown_layer(text: str) -> str:
    document = json.loads(text)
    document["model"]["nodes"][1]["type"] = "Warp"
    return json.dumps(document)


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (_truncated, r"broken\.studio\.json: not valid JSON at line \d+, column \d+ .*truncated"),
        (_newer, r"broken\.studio\.json: This project was saved by a newer Layer Studio"),
        (_unknown_layer, r"broken\.studio\.json: .*unknown type 'Warp'"),
    ],
    ids=["truncated", "newer-format", "unknown-layer"],
)
def test_opening_a_broken_file_warns_and_keeps_the_project(
    window, qtbot, dialogs, tmp_path, damage, words
):
    path = tmp_path / "broken.studio.json"
    path.write_text(damage(json.dumps(from_template("mlp").to_dict(), indent=2)))
    before_bytes = path.read_bytes()
    before_mtime = path.stat().st_mtime_ns
    before_project = window.doc.project.to_dict()
    before_title = window.windowTitle()

    assert window.open_path(path) is False
    assert len(dialogs) == 1
    kind, title, text = dialogs[0]
    assert (kind, title) == ("warning", "Cannot open project")
    assert re.search(words, text), text
    assert window.doc.project.to_dict() == before_project
    assert window.doc.path is None
    assert window.windowTitle() == before_title
    assert row_ids(window)[1] == "conv2d_1"  # still the demo CNN
    assert path.read_bytes() == before_bytes
    assert path.stat().st_mtime_ns == before_mtime


def test_a_broken_file_does_not_cost_the_unsaved_edits(window, qtbot, dialogs, tmp_path):
    click_row(qtbot, window, "dense_1")
    qtbot.mouseClick(window.model_list.remove_button, LEFT)
    edited = window.doc.project.to_dict()
    path = tmp_path / "broken.studio.json"
    path.write_text('{"format_version": 1, "name": ')

    assert window.open_path(path) is False
    assert [d[0] for d in dialogs] == ["question", "warning"]
    assert dialogs[0][1] == "Unsaved changes"
    assert window.doc.project.to_dict() == edited
    assert window.isWindowModified()
    assert window.undo_action.isEnabled()
    window.undo_action.trigger()
    assert "dense_1" in row_ids(window)


def test_opening_a_valid_file_loads_it(window, qtbot, dialogs, tmp_path):
    project = from_template("lenet5")
    project.training.epochs = 7
    path = tmp_path / "lenet.studio.json"
    save_project(project, path)

    assert window.open_path(path) is True
    assert dialogs == []
    assert window.doc.path == path
    assert window.doc.project.to_dict() == project.to_dict()
    assert row_ids(window) == project.graph.chain()
    assert window.windowTitle() == "lenet[*] — Layer Studio"
    assert not window.isWindowModified()
    assert not window.undo_action.isEnabled()  # a fresh history
    assert window.training.epochs.value() == 7
    assert window.training.start_button.isEnabled()
    assert window.statusBar().currentMessage() == f"Opened {path}"


def test_opening_a_file_shows_the_new_layer_behind_a_kept_selection(window, qtbot, dialogs,
                                                                    tmp_path):
    # The selected id survives the open, but names a layer of another type in the new file: the
    # inspector must show that layer's editors, not the old layer's.
    nodes = [
        Node("input_1", "Input", {"shape": [28, 28, 1]}),
        Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dropout", {"rate": 0.3}),
        Node("dense_2", "Dense", {"units": 10, "activation": "softmax"}),
    ]
    path = tmp_path / "renamed.studio.json"
    save_project(Project(name="Renamed", graph=Graph.from_chain(nodes)), path)
    click_row(qtbot, window, "dense_1")
    assert "units" in window.inspector.editors

    assert window.open_path(path) is True
    assert window.model_list.selected_id() == "dense_1"
    assert window.inspector.title.text() == "dense_1  ·  Dropout"
    assert "units" not in window.inspector.editors
    assert window.inspector.editors["rate"].widget.value() == pytest.approx(0.3)
    click_row(qtbot, window, "dense_2")
    assert window.inspector.editors["units"].widget.value() == 10


def test_open_from_the_file_menu_uses_the_chosen_file(window, qtbot, dialogs, tmp_path,
                                                      monkeypatch):
    path = tmp_path / "mlp.studio.json"
    save_project(from_template("mlp"), path)
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda *args, **kwargs: (str(path), "Layer Studio projects"))
    qtbot.keyClick(window, Qt.Key.Key_O, CTRL)  # File > Open…
    assert window.doc.path == path
    assert row_ids(window) == from_template("mlp").graph.chain()


def test_saving_writes_a_valid_file_and_clears_the_modified_marker(window, qtbot, tmp_path):
    path = tmp_path / "cnn.studio.json"
    click_row(qtbot, window, "dense_1")
    qtbot.mouseClick(window.model_list.remove_button, LEFT)
    assert window.isWindowModified()

    assert window._save_to(path) is True
    assert load_project(path).to_dict() == window.doc.project.to_dict()
    assert "dense_1" not in load_project(path).graph.ids()
    assert not window.isWindowModified()
    assert window.windowTitle() == "cnn[*] — Layer Studio"
    assert window.doc.path == path
    assert [p.name for p in tmp_path.iterdir() if p.name != "settings"] == [path.name]

    # A further edit, then File > Save (Ctrl+S) writes to the same file without asking.
    click_row(qtbot, window, "flatten_1")
    qtbot.mouseClick(window.model_list.remove_button, LEFT)
    assert window.isWindowModified()
    qtbot.keyClick(window, Qt.Key.Key_S, CTRL)
    saved = load_project(path)
    assert "flatten_1" not in saved.graph.ids()
    assert saved.to_dict() == window.doc.project.to_dict()
    assert not window.isWindowModified()
    assert [p.name for p in tmp_path.iterdir() if p.name != "settings"] == [path.name]


def test_a_failed_save_warns_and_leaves_the_old_file_whole(window, qtbot, dialogs, tmp_path,
                                                           monkeypatch):
    path = tmp_path / "cnn.studio.json"
    assert window._save_to(path) is True
    before = path.read_text()
    click_row(qtbot, window, "dense_1")
    qtbot.mouseClick(window.model_list.remove_button, LEFT)

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", disk_full)
    qtbot.keyClick(window, Qt.Key.Key_S, CTRL)
    assert dialogs == [("warning", "Cannot save project", f"{path}: No space left on device")]
    assert path.read_text() == before
    assert load_project(path).to_dict() == demo_project().to_dict()
    assert [p.name for p in tmp_path.iterdir() if p.name != "settings"] == [path.name]
    assert window.isWindowModified()  # the edit is still unsaved


def test_a_project_that_would_not_open_again_is_not_saved(window, qtbot, dialogs, tmp_path):
    path = tmp_path / "cnn.studio.json"
    window.doc.project.name = "n" * 201
    assert window._save_to(path) is False
    assert len(dialogs) == 1 and dialogs[0][:2] == ("warning", "Cannot save project")
    assert dialogs[0][2].startswith("cnn.studio.json: not saved, as it would not open again: ")
    assert [p.name for p in tmp_path.iterdir() if p.name != "settings"] == []


def test_save_as_adds_the_project_suffix(window, qtbot, tmp_path, monkeypatch):
    chosen = tmp_path / "digits"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *args, **kwargs: (str(chosen), "Layer Studio projects"))
    qtbot.keyClick(window, Qt.Key.Key_S, CTRL)  # a new project has no file yet: Save asks
    path = tmp_path / "digits.studio.json"
    assert window.doc.path == path
    assert load_project(path).to_dict() == window.doc.project.to_dict()
    assert window.windowTitle() == "digits[*] — Layer Studio"
