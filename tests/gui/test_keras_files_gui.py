"""File > Import Keras Model… and File > Export as Python Script…, through the menu."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from tests.keras_models import branched_model, lambda_model

keras = pytest.importorskip("keras")
CTRL = Qt.KeyboardModifier.ControlModifier


def choose_file(monkeypatch, path) -> None:
    """Answer the next open or save dialog with ``path``."""
    answer = staticmethod(lambda *args, **kwargs: (str(path), ""))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", answer)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", answer)


def import_with_ctrl_i(window, qtbot) -> None:
    qtbot.keyClick(window, Qt.Key.Key_I, CTRL)
    qtbot.waitUntil(lambda: window.keras_files.worker is None, timeout=60_000)


def test_importing_a_branched_keras_model_shows_it_on_the_canvas(window, qtbot, monkeypatch,
                                                                  tmp_path):
    path = tmp_path / "branched.keras"
    model = branched_model()
    model.save(path)
    choose_file(monkeypatch, path)
    import_with_ctrl_i(window, qtbot)
    graph = window.doc.project.graph
    assert len(graph.nodes) == len(model.layers)
    assert set(window.scene.nodes) == set(graph.ids())
    assert set(window.scene.edges) == set(graph.edges)
    assert window.doc.analysis().total_params == model.count_params()
    assert window.statusBar().currentMessage() == "Imported branched.keras"


def test_a_model_with_code_asks_for_trust_first(window, qtbot, monkeypatch, tmp_path, dialogs):
    path = tmp_path / "code.keras"
    lambda_model().save(path)
    choose_file(monkeypatch, path)
    before = window.doc.project
    import_with_ctrl_i(window, qtbot)
    assert window.doc.project is before
    assert dialogs[-1][0] == "question" and "Lambda" in dialogs[-1][2]

    monkeypatch.setattr(QMessageBox, "question",
                        lambda *a, **k: QMessageBox.StandardButton.Yes)
    import_with_ctrl_i(window, qtbot)
    types = [n.type for n in window.doc.project.graph.nodes]
    assert "Keras" in types
    assert "Python code" in (window.doc.analysis().reason or "")


def test_an_unreadable_file_is_explained_and_the_project_kept(window, qtbot, monkeypatch,
                                                              tmp_path, dialogs):
    path = tmp_path / "notes.keras"
    path.write_text("not a model")
    choose_file(monkeypatch, path)
    before = window.doc.project
    import_with_ctrl_i(window, qtbot)
    assert window.doc.project is before
    kind, title, text = dialogs[-1]
    assert (kind, title) == ("warning", "Cannot import model") and "notes.keras" in text


def test_export_writes_a_script_that_compiles(window, qtbot, monkeypatch, tmp_path):
    path = tmp_path / "demo.py"
    choose_file(monkeypatch, path)
    qtbot.keyClick(window, Qt.Key.Key_E, CTRL)
    source = path.read_text()
    compile(source, str(path), "exec")
    assert "keras.layers.Conv2D(" in source and "model.fit(" in source
    assert window.statusBar().currentMessage() == f"Exported {path}"
