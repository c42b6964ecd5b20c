"""A Keras 2 file (Teachable Machine's nested shape, see tests/keras2_files.py) opens in the Try
tab's "Open model file…" and answers as its model does, and File > Import shows its
nested models flattened into one graph of their layers."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from studio.gui.data.preprocessing_dialog import PreprocessingDialog
from tests.core.test_keras2_files import TEACHABLE_NODES, image_file
from tests.gui.support import RUN_TIMEOUT_MS
from tests.gui.test_keras_files_gui import choose_file, import_with_ctrl_i
from tests.keras2_files import teachable_machine_h5


def test_the_try_tab_opens_a_keras_2_file_and_answers_as_its_model(window, qtbot, tmp_path,
                                                                  monkeypatch):
    keras2 = teachable_machine_h5(tmp_path)
    asked = []

    def answer(dialog):
        asked.append((dialog.height_box.value(), dialog.width_box.value(),
                      dialog.color.currentData()))
        dialog.normalization.setCurrentIndex(dialog.normalization.findData("unit"))
        return True

    monkeypatch.setattr(PreprocessingDialog, "exec", answer)
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda *a, **k: (str(keras2.path), ""))
    panel = window.try_panel
    window.views.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.predictor is not None
                    and panel.predictor.path == keras2.path, timeout=RUN_TIMEOUT_MS)
    assert asked == [(16, 16, "rgb")]  # read from the model's input
    image = image_file(tmp_path, keras2.input_shape)
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        panel.add_paths([image])
    (prediction,) = answered.args[0]
    expected = np.asarray(keras2.reference(panel.predictor.model_inputs([image])))[0]
    assert prediction.error is None
    assert prediction.labels[0] == str(expected.argmax())
    assert prediction.probabilities[0] == pytest.approx(expected.max(), abs=1e-5)


def test_file_import_shows_a_keras_2_file_on_the_canvas(window, qtbot, monkeypatch, tmp_path):
    keras2 = teachable_machine_h5(tmp_path)
    choose_file(monkeypatch, keras2.path)
    import_with_ctrl_i(window, qtbot)
    graph = window.doc.project.graph
    assert [(node.id, node.type) for node in graph.nodes] == TEACHABLE_NODES  # flattened
    assert set(window.scene.nodes) == set(graph.ids())
    assert window.doc.analysis().total_params == keras2.reference.count_params()
    assert window.statusBar().currentMessage() == "Imported keras_model.h5"
