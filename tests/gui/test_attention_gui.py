"""Attention in the editor: the inspector says which wire is the query, and heads that do not
divide the features offer one-click fixes."""

from __future__ import annotations

from PySide6.QtCore import Qt

from studio.core.project.templates import from_template
from tests.gui.test_canvas import click_node

ATTENTION = "multi_head_attention_1"


def test_heads_that_do_not_divide_the_features_are_fixed_in_one_click(window, qtbot):
    window.doc.replace(from_template("transformer_text"), None)
    click_node(window, qtbot, ATTENTION)
    inspector = window.inspector
    qtbot.waitUntil(lambda: inspector.node_id == ATTENTION)
    assert inspector.facts.text().endswith(
        "Inputs, in the order connected: query and value: embedding_1")
    assert inspector.editors["key_dim"].widget.text() == "auto"

    heads = inspector.editors["num_heads"].widget
    heads.setFocus()
    qtbot.keyClick(heads, Qt.Key.Key_Down)  # 4 heads become 3, which do not divide 64
    qtbot.waitUntil(lambda: bool(inspector.problem.text()))
    assert inspector.problem.text().startswith("64 features do not split into 3 heads.")
    assert [b.text() for b in inspector.fix_buttons] == [
        "Set num heads to 2", "Set num heads to 4", "Set key dim to 21"]

    qtbot.mouseClick(inspector.fix_buttons[2], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not inspector.problem.text())
    params = window.doc.project.graph.node(ATTENTION).params
    assert (params["num_heads"], params["key_dim"]) == (3, 21)
    # query, key and value projections (64 → 3 × 21, with biases), then back to 64
    assert 3 * 21 * (3 * 64 + 3) + 3 * 21 * 64 + 64 == 16_381
    assert inspector.facts.text().startswith("Output shape: 100 × 64\nParameters: 16,381")
    window.doc.undo_stack.undo()
    assert "key_dim" not in window.doc.project.graph.node(ATTENTION).params
