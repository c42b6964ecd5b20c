"""File > Import Keras Model… and File > Export as Python Script…, through the menu."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from tests.keras_models import branched_model, lambda_model

CTRL = Qt.KeyboardModifier.ControlModifier


def choose_file(monkeypatch, path) -> None:
    """Answer the next open or save dialog with ``path``."""
    answer = staticmethod(lambda *args, **kwargs: (str(path), ""))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", answer)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", answer)


def press_ctrl(window, qtbot, key: Qt.Key) -> None:
    """Press Ctrl+key on the window, active again as after a click (a closed modal box can
    leave no window active on the offscreen platform)."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, key, CTRL)


def import_with_ctrl_i(window, qtbot) -> None:
    press_ctrl(window, qtbot, Qt.Key.Key_I)
    qtbot.waitUntil(lambda: not window.keras_files.job.busy(), timeout=60_000)


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


def export_with_ctrl_e(window, qtbot, monkeypatch, path) -> str:
    """Export the window's project to ``path`` with Ctrl+E; the script, checked to compile."""
    choose_file(monkeypatch, path)
    qtbot.keyClick(window, Qt.Key.Key_E, CTRL)
    source = path.read_text()
    compile(source, str(path), "exec")
    assert window.statusBar().currentMessage() == f"Exported {path}"
    return source


def test_export_writes_a_script_that_compiles(window, qtbot, monkeypatch, tmp_path):
    source = export_with_ctrl_e(window, qtbot, monkeypatch, tmp_path / "demo.py")
    assert "keras.layers.Conv2D(" in source and "model.fit(" in source


REAL_QUESTION = QMessageBox.question


def answer_next_question(qtbot, button: QMessageBox.StandardButton) -> list[str]:
    """Click ``button`` in the next real modal question box; returns its text once shown."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    seen: list[str] = []

    def click() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            seen.append(box.text())
            box.button(button).click()
        else:
            QTimer.singleShot(20, click)

    QTimer.singleShot(20, click)
    return seen


def test_trust_is_asked_for_each_file_and_never_carried_over(window, qtbot, monkeypatch,
                                                             tmp_path):
    from studio.gui.shell import keras_files

    monkeypatch.setattr(QMessageBox, "question", REAL_QUESTION)
    loads = []
    real_import = keras_files.import_model_with_weights
    monkeypatch.setattr(keras_files, "import_model_with_weights",
                        lambda path, trust=False: loads.append((path.name, trust)) or
                        real_import(path, trust=trust))
    first, second, plain = tmp_path / "first.keras", tmp_path / "second.keras", tmp_path / "p.keras"
    lambda_model().save(first)
    lambda_model().save(second)
    branched_model().save(plain)

    choose_file(monkeypatch, first)
    seen = answer_next_question(qtbot, QMessageBox.StandardButton.Yes)
    press_ctrl(window, qtbot, Qt.Key.Key_I)
    qtbot.waitUntil(lambda: "Keras" in [n.type for n in window.doc.project.graph.nodes],
                    timeout=60_000)
    assert "first.keras contains a Lambda layer" in seen[0]
    assert loads == [("first.keras", False), ("first.keras", True)]

    before = window.doc.project
    choose_file(monkeypatch, second)
    seen = answer_next_question(qtbot, QMessageBox.StandardButton.No)
    press_ctrl(window, qtbot, Qt.Key.Key_I)
    qtbot.waitUntil(lambda: bool(seen) and not window.keras_files.job.busy(), timeout=60_000)
    assert window.doc.project is before

    window.doc.undo_stack.setClean()
    choose_file(monkeypatch, plain)
    import_with_ctrl_i(window, qtbot)
    assert loads == [("first.keras", False), ("first.keras", True), ("second.keras", False),
                     ("p.keras", False)]


def test_closing_during_an_import_shows_nothing_afterwards(window, qtbot, monkeypatch,
                                                           tmp_path, dialogs):
    path = tmp_path / "late.keras"
    branched_model().save(path)
    choose_file(monkeypatch, path)
    before = window.doc.project
    press_ctrl(window, qtbot, Qt.Key.Key_I)
    assert window.keras_files.job.busy() and window.close()
    arrived = []
    window.keras_files.imported.connect(lambda *result: arrived.append(result))
    with qtbot.assertNotEmitted(window.keras_files.imported, wait=300):
        pass
    assert not arrived and not dialogs and window.doc.project is before


def test_exporting_a_project_for_an_unknown_dataset_says_so(window, qtbot, monkeypatch,
                                                             tmp_path, dialogs):
    project = window.doc.project.copy()
    project.dataset.name = "cifar-100"
    window.doc.replace(project, None)
    choose_file(monkeypatch, tmp_path / "x.py")
    qtbot.keyClick(window, Qt.Key.Key_E, CTRL)
    kind, title, text = dialogs[-1]
    assert (kind, title) == ("warning", "Cannot export") and "cifar-100" in text
    assert not (tmp_path / "x.py").exists()


def test_an_imported_model_keeps_its_weights_and_its_first_save_carries_them(
        window, qtbot, monkeypatch, tmp_path):
    from studio.core.project.document import load_project
    from studio.core.project.weights import file_sha256

    model_path = tmp_path / "branched.keras"
    branched_model().save(model_path)
    choose_file(monkeypatch, model_path)
    import_with_ctrl_i(window, qtbot)
    weights = window.doc.project.weights
    scratch = weights.path
    assert scratch.parent == window.doc.place.parent and scratch.name == "untitled.weights.h5"
    assert weights.sha256 == file_sha256(scratch)
    window.doc.edit("Rename", lambda p: setattr(p, "name", "Renamed"))

    saved = tmp_path / "mine.studio.json"
    choose_file(monkeypatch, saved)
    press_ctrl(window, qtbot, Qt.Key.Key_S)  # unsaved: Save asks where
    qtbot.waitUntil(lambda: window.doc.path == saved)
    beside = tmp_path / "mine.weights.h5"
    assert window.doc.project.weights.path == beside and not scratch.exists()
    assert load_project(saved).weights.sha256 == file_sha256(beside) == weights.sha256
    window.doc.undo_stack.undo()  # before the save, the weights are the ones beside it too
    assert window.doc.project.name != "Renamed"
    assert window.doc.project.weights.path == beside


def test_exporting_an_image_folder_project_writes_a_script_reading_it(window, qtbot,
                                                                      monkeypatch, tmp_path):
    from studio.core.model.graph import Graph, Node
    from studio.core.project.document import DatasetChoice
    from tests.helpers import digit_folder

    project = window.doc.project.copy()
    project.graph = Graph.from_chain([
        Node("input_1", "Input", {"shape": [20, 20, 1]}), Node("flatten_1", "Flatten"),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})])
    project.dataset = DatasetChoice(source="folder", path=str(digit_folder(tmp_path / "digits")),
                                    image_size=[20, 20], color="grayscale")
    window.doc.replace(project, None)
    source = export_with_ctrl_e(window, qtbot, monkeypatch, tmp_path / "folder.py")
    assert "DATA = HERE / 'digits'" in source and "def image_files(" in source


def test_exporting_to_a_path_that_cannot_be_written_says_so_in_one_line(window, qtbot,
                                                                       monkeypatch, tmp_path,
                                                                       dialogs):
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    choose_file(monkeypatch, tmp_path / "notes.txt" / "x.py")
    qtbot.keyClick(window, Qt.Key.Key_E, CTRL)
    kind, title, text = dialogs[-1]
    assert (kind, title) == ("warning", "Cannot export")
    assert "\n" not in text and "notes.txt cannot be written to" in text
    assert (tmp_path / "notes.txt").read_text() == "a file, not a folder"
    assert [p.name for p in tmp_path.iterdir() if p.name != "workspace"] == ["notes.txt"]
