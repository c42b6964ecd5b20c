"""The app keeps data paths as the command line does: absolute while open, relative to the
project file when the data lies in its folder, and found again from any current directory."""

from __future__ import annotations

import json

from tests.gui.test_data_gui import drop_on, image_folder, open_data_view, wait_read


def test_a_picked_folder_is_saved_relative_to_the_project_and_opens_from_anywhere(
        window, qtbot, tmp_path, monkeypatch):
    project = tmp_path / "p" / "p.studio.json"
    folder = image_folder(tmp_path / "p" / "shapes", {"round": 3, "square": 3})
    panel = open_data_view(qtbot, window)
    assert drop_on(panel, [folder])
    wait_read(qtbot, panel, lambda loaded: loaded.info.class_names == ("round", "square"))
    window.doc.save(project)
    assert json.loads(project.read_text())["dataset"]["path"] == "shapes"
    monkeypatch.chdir(tmp_path)
    window.doc.open(project)
    assert window.doc.project.dataset.path == str(folder)
    wait_read(qtbot, panel, lambda loaded: loaded.info.class_names == ("round", "square"))
