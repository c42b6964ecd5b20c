"""The Training dock's Start from choice: imported weights or random ones, as undoable edits."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from studio.core.build.imported_weights import keep_weights
from studio.core.build.keras_import import import_model_with_weights
from tests.gui.support import click_row, type_into
from tests.keras_models import branched_model


def imported(tmp_path):
    """``branched_model`` imported with its weights kept in ``tmp_path``."""
    branched_model().save(tmp_path / "branched.keras")
    project, weights = import_model_with_weights(tmp_path / "branched.keras")
    keep_weights(project, weights, tmp_path / "branched.weights.h5")
    return project


def test_start_from_offers_the_imported_weights_and_edits_undoably(window, qtbot, tmp_path):
    combo = window.training.start_from
    assert combo.currentText() == "Random weights"
    assert not combo.model().item(combo.findData("imported")).isEnabled()
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # nothing else to choose without weights
    assert window.doc.project.training.start_from == "random"

    window.doc.replace(imported(tmp_path), None)
    assert combo.currentText() == "Imported weights"
    assert "branched.weights.h5" in combo.toolTip()
    qtbot.keyClick(combo, Qt.Key.Key_Up)
    assert window.doc.project.training.start_from == "random"
    assert window.doc.undo_stack.undoText() == "Set start from"
    window.doc.undo_stack.undo()
    assert window.doc.project.training.start_from == "imported"
    assert combo.currentText() == "Imported weights"


def test_the_imported_model_answers_in_try_and_evaluate_without_training(window, qtbot,
                                                                         tmp_path):
    from PySide6.QtCore import QPoint

    from studio.core.project.document import DatasetChoice
    from tests.helpers import digit_folder

    project = imported_grey(tmp_path)
    project.dataset = DatasetChoice(source="folder", path=str(digit_folder(tmp_path / "digits")),
                                    image_size=[20, 20], color="grayscale")
    window.doc.replace(project, None)
    button = window.training.imported_button
    assert button.isVisible() and button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    qtbot.waitUntil(lambda: not window.training.is_running(), timeout=60_000)
    assert window.training.outcome == "finished", window.training.last_error
    for box in (window.try_panel.run_box, window.evaluation.run_box):
        qtbot.waitUntil(lambda box=box: "imported-model" in box.itemText(0))
    window.views.setCurrentWidget(window.try_panel)
    window.try_panel.add_paths([tmp_path / "digits" / "0" / "1.png"])
    qtbot.waitUntil(lambda: window.try_panel.predictor is not None, timeout=60_000)
    assert "imported-model" in window.try_panel.status.text()


def imported_grey(tmp_path):
    """A small grey-image classifier imported with its weights kept in ``tmp_path``."""
    import keras

    inputs = keras.Input((20, 20, 1), name="image")
    flat = keras.layers.Flatten(name="flat")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(2, activation="softmax", name="out")(flat))
    model.save(tmp_path / "grey.keras")
    project, weights = import_model_with_weights(tmp_path / "grey.keras")
    keep_weights(project, weights, tmp_path / "grey.weights.h5")
    return project


@pytest.mark.parametrize(("layer", "kernel"), [("left", "5 × 5 × 3 × 4"),
                                              ("depthwise", "5 × 5 × 4 × 1")])
def test_the_inspector_says_when_an_edit_drops_a_layers_imported_weights(window, qtbot,
                                                                         tmp_path, layer,
                                                                         kernel):
    """A Conv2D's and a DepthwiseConv2D's kernel grown to 5 × 5 (padding 'same': no other
    layer's shapes change) drops that layer's weights only; undo gives them back."""
    window.doc.replace(imported(tmp_path), None)
    note = window.inspector.weights_note
    click_row(qtbot, window, "hidden")
    assert note.text() == "Imported weights: kept." and note.isVisible()
    click_row(qtbot, window, layer)
    assert note.text() == "Imported weights: kept."
    size = window.inspector.editors["kernel_size"].widget
    type_into(qtbot, size, "5")
    qtbot.keyClick(size, Qt.Key.Key_Return)
    assert window.doc.project.graph.node(layer).params["kernel_size"] == 5
    assert note.text() == (f"Imported weights dropped: the kernel is now {kernel}; this "
                           "layer starts from random weights.")
    for other in {"left", "right", "depthwise", "hidden", "out"} - {layer}:
        click_row(qtbot, window, other)  # its shapes did not change: it keeps its weights
        assert note.text() == "Imported weights: kept."
    click_row(qtbot, window, "add")
    assert not note.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    click_row(qtbot, window, layer)
    assert note.text() == "Imported weights: kept."


def open_with_a_run(window, tmp_path):
    """Open a small table project saved in ``tmp_path`` that has one finished run (two
    epochs, a checkpoint after each); its path and the run's folder."""
    from studio.core.project.document import save_project
    from studio.core.runs.folders import runs_root
    from studio.core.training.trainer import train
    from tests.core.search_support import table_project

    path = tmp_path / "table.studio.json"
    project = table_project(tmp_path)
    save_project(project, path)
    run = train(project, runs_root(path)).run_dir
    assert window.open_path(path)
    return path, run


def test_a_run_can_start_from_another_runs_model_or_checkpoint(window, qtbot, tmp_path):
    import json

    from studio.core.runs.folders import runs_root

    path, earlier = open_with_a_run(window, tmp_path)
    combo, models = window.training.start_from, window.training.start_model
    assert not models.isVisible()
    qtbot.keyClick(combo, Qt.Key.Key_End)  # the last choice: a run's model
    assert window.doc.project.training.start_from == "run"
    assert window.doc.project.training.start_model == f"{earlier.name}/model.keras"
    assert models.isVisible() and models.currentText() == f"{earlier.name} · Final model"
    qtbot.keyClick(models, Qt.Key.Key_Down)  # its newest checkpoint
    chosen = f"{earlier.name}/checkpoints/epoch-0002.keras"
    assert window.doc.project.training.start_model == chosen
    assert window.doc.undo_stack.undoText() == "Set start model"

    qtbot.mouseClick(window.training.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.training.outcome == "finished", timeout=60_000)
    config = json.loads((Path(window.training.run_dir) / "config.json").read_text())
    assert config["started_from"]["file"] == str(runs_root(path) / chosen)
    assert config["started_from"]["run"] == earlier.name


def test_open_model_in_the_runs_dock_opens_it_with_its_weights(window, qtbot, tmp_path):
    import keras
    import numpy as np
    from PySide6.QtWidgets import QToolButton

    from studio.core.project.weights import read_weights
    from studio.core.runs.folders import MODEL_FILE

    _, run = open_with_a_run(window, tmp_path)
    panel = window.runs
    panel.refresh()
    qtbot.waitUntil(lambda: [r.id for r in panel.model.runs] == [run.name])
    rect = panel.table.visualRect(panel.proxy.index(0, 0))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    button = panel.findChild(QToolButton, f"{panel.open_action.objectName()}-button")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.doc.project.weights is not None, timeout=60_000)
    opened = window.doc.project
    assert opened.training.start_from == "imported" and window.doc.path is None
    trained = keras.saving.load_model(run / MODEL_FILE, compile=False)
    kept = read_weights(opened.weights)
    for name in ("dense_1", "dense_2"):
        for ours, theirs in zip(kept[name], trained.get_layer(name).get_weights(), strict=True):
            np.testing.assert_array_equal(ours, theirs)


def test_missing_weights_do_not_stop_a_save(window, qtbot, tmp_path, monkeypatch, dialogs):
    from PySide6.QtWidgets import QFileDialog

    from studio.core.project.document import load_project

    window.doc.replace(imported(tmp_path), None)
    window.doc.project.weights.path.unlink()
    saved = tmp_path / "kept.studio.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *args, **kwargs: (str(saved), "")))
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert window.doc.path == saved and not dialogs
    assert load_project(saved).weights.path == tmp_path / "branched.weights.h5"
    assert not (tmp_path / "kept.weights.h5").exists()


def save_while(window, qtbot, monkeypatch, tmp_path, during):
    """Save the imported model (unsaved: Ctrl+S asks where) as ``saved/mine.studio.json``,
    its weights' copy held until ``during(saved, beside)`` has run on the GUI thread while
    the save is under way; the project file, its weights' path and what ``during`` saw."""
    from PySide6.QtCore import QTimer

    from studio.gui.shell import weights_carrying
    from tests.gui.test_keras_files_gui import choose_file, press_ctrl

    window.doc.replace(imported(tmp_path), None)
    saved, beside = tmp_path / "saved" / "mine.studio.json", tmp_path / "saved" / "mine.weights.h5"
    gate = threading.Event()
    real = weights_carrying.carry_weights

    def held(*args, **kwargs):
        assert gate.wait(60)
        return real(*args, **kwargs)

    def while_saving():
        try:
            during(saved, beside)
        finally:
            gate.set()

    monkeypatch.setattr(weights_carrying, "carry_weights", held)
    choose_file(monkeypatch, saved)
    QTimer.singleShot(0, while_saving)  # runs only if events are handled during the save
    press_ctrl(window, qtbot, Qt.Key.Key_S)
    assert gate.is_set()
    return saved, beside


def test_saving_copies_the_weights_in_the_background_and_the_window_stays_responsive(
        window, qtbot, monkeypatch, tmp_path):
    from studio.core.project.document import load_project
    from studio.core.project.weights import file_sha256

    seen = []

    def during(saved, beside):
        carrier = window.carrier
        seen.append((carrier.busy(), carrier.panel.isVisible(), saved.exists(), beside.exists()))
        click_row(qtbot, window, "hidden")  # the window answers a click meanwhile
        seen.append(window.inspector.weights_note.text())
        seen.append(window.close())  # closing waits for the save: the window stays
        seen.append(window.save())  # as does saving again

    imported_file = tmp_path / "branched.weights.h5"
    saved, beside = save_while(window, qtbot, monkeypatch, tmp_path, during)
    assert seen == [(True, True, False, False), "Imported weights: kept.", False, False]
    assert window.doc.path == saved and window.doc.undo_stack.isClean()
    assert not window.carrier.panel.isVisible() and not window.carrier.busy()
    record = load_project(saved).weights
    assert record.path == beside == window.doc.project.weights.path
    assert record.sha256 == file_sha256(beside) == file_sha256(imported_file)
    assert "Saved" in window.statusBar().currentMessage()


def test_a_cancelled_save_writes_nothing(window, qtbot, monkeypatch, tmp_path):
    def during(saved, beside):
        qtbot.mouseClick(window.carrier.cancel_button, Qt.MouseButton.LeftButton)

    scratch = tmp_path / "branched.weights.h5"
    saved, beside = save_while(window, qtbot, monkeypatch, tmp_path, during)
    qtbot.waitUntil(lambda: not window.carrier.busy())
    assert list((tmp_path / "saved").iterdir()) == []  # no weights, temp or project file
    assert window.doc.path is None and window.doc.project.weights.path == scratch
    assert scratch.is_file()
    assert window.statusBar().currentMessage() == "Saving was cancelled; nothing was written."


def test_a_project_file_that_cannot_be_written_leaves_no_copied_weights(
        window, qtbot, monkeypatch, tmp_path, dialogs):
    from studio.gui.widgets import document

    def refused(project, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(document, "save_project", refused)
    saved, beside = save_while(window, qtbot, monkeypatch, tmp_path, lambda *paths: None)
    assert dialogs[-1] == ("warning", "Cannot save project",
                           f"{saved}: No space left on device")
    assert list((tmp_path / "saved").iterdir()) == []
    assert window.doc.path is None
    assert window.doc.project.weights.path == tmp_path / "branched.weights.h5"


def test_weights_that_cannot_be_written_beside_the_project_are_said_in_one_line(
        window, qtbot, monkeypatch, tmp_path, dialogs):
    from studio.core.project import weights

    def full(path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(weights, "atomic_file", full)
    saved, beside = save_while(window, qtbot, monkeypatch, tmp_path, lambda *paths: None)
    assert dialogs[-1] == ("warning", "Cannot save project",
                           "The imported weights cannot be copied: mine.weights.h5 cannot be "
                           f"written in {str(beside.parent)[:80]} (No space left on device).")
    assert not saved.exists() and window.doc.path is None


def pick_imported_model(qtbot, window, tab: str, box, while_making=lambda: None) -> None:
    """Open the ``tab`` view of a project with imported weights and no run, and choose
    "Imported model" in its ``box`` of runs with the keyboard: the Training dock makes the
    run in the background (``while_making`` checks the view meanwhile); wait until that run
    is chosen in ``box``."""
    from tests.gui.support import show_tab

    assert not window.training.is_running()
    show_tab(qtbot, window, tab)
    qtbot.waitUntil(lambda: box.itemText(box.count() - 1) == "Imported model")
    assert "imported-model" not in box.itemText(0)  # no run yet
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_End)
    assert window.training.is_running() and box.currentText() == "Imported model"
    assert window.training.stop_button.isEnabled()  # it can be cancelled
    while_making()
    qtbot.waitUntil(lambda: "imported-model" in box.currentText(), timeout=60_000)
    assert window.training.outcome == "finished", window.training.last_error
    assert box.findText("Imported model") < 0  # its run is listed now: no entry to make it


def grey_digits(window, tmp_path):
    """Open ``imported_grey`` set to read a folder of digits; Keras's own model."""
    import keras

    from studio.core.project.document import DatasetChoice
    from tests.helpers import digit_folder

    project = imported_grey(tmp_path)
    project.dataset = DatasetChoice(source="folder", path=str(digit_folder(tmp_path / "digits")),
                                    image_size=[20, 20], color="grayscale")
    window.doc.replace(project, None)
    return keras.saving.load_model(tmp_path / "grey.keras", compile=False)


def test_try_offers_the_imported_model_and_answers_as_keras_does(window, qtbot, tmp_path,
                                                                 monkeypatch):
    import numpy as np
    from PIL import Image

    from studio.core.training import imported_model
    from tests.gui.support import drop_on

    looked_on = []  # the threads that looked for the imported model's run in the run folders
    find = imported_model.find_imported_run
    monkeypatch.setattr(imported_model, "find_imported_run", lambda *args: (
        looked_on.append(threading.current_thread()), find(*args))[1])
    model = grey_digits(window, tmp_path)
    panel = window.try_panel
    pick_imported_model(qtbot, window, "Try", panel.run_box)
    assert looked_on and threading.main_thread() not in looked_on
    image = tmp_path / "digits" / "1" / "3.png"
    with qtbot.waitSignal(panel.answered, timeout=60_000) as answered:
        assert drop_on(panel, [image])
    (prediction,) = answered.args[0]
    assert "imported-model" in panel.status.text()
    pixels = np.asarray(Image.open(image), np.float32)[None, :, :, None] / 255.0
    expected = model.predict(pixels, verbose=0)[0]
    tried = dict(zip(prediction.labels, prediction.probabilities, strict=True))
    assert np.abs(np.array([tried["0"], tried["1"]]) - expected).max() < 1e-5


def test_evaluate_offers_the_imported_model_and_scores_as_keras_does(window, qtbot, tmp_path):
    import numpy as np
    from PIL import Image

    from tests.gui.test_evaluation_panel import evaluate

    model = grey_digits(window, tmp_path)
    panel = window.evaluation

    def nothing_to_evaluate_yet():
        assert not panel.evaluate_button.isEnabled()

    pick_imported_model(qtbot, window, "Evaluate", panel.run_box, nothing_to_evaluate_yet)
    evaluation = evaluate(qtbot, panel)
    paths = [evaluation.samples.paths[i] for i in evaluation.indices]
    pixels = np.stack([np.asarray(Image.open(p), np.float32) for p in paths])[..., None] / 255
    expected = model.predict(pixels, verbose=0)
    assert len(paths) > 0
    np.testing.assert_array_equal(evaluation.predicted, expected.argmax(axis=1))
    assert np.abs(evaluation.confidence - expected.max(axis=1)).max() < 1e-5
