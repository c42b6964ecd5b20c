"""The Training dock's Start from choice: imported weights or random ones, as undoable edits."""

from __future__ import annotations

from PySide6.QtCore import Qt

from studio.core.build.imported_weights import keep_weights
from studio.core.build.keras_import import import_model_with_weights
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
