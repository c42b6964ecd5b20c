"""Issue 22's pooling, normalization, activation, shape and merge layers in the window: each
comes from the palette with its help, opens in the inspector with an editor per parameter, and
their problems offer their fixes."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout

from studio.core.model.registry import REGISTRY
from tests.core.test_layer_oracle import CASES
from tests.gui.support import click_palette_entry, click_row, type_into

LEFT = Qt.MouseButton.LeftButton
FAMILIES = {
    "Convolution": ["MaxPooling1D", "AveragePooling1D", "GlobalMaxPooling2D",
                    "GlobalAveragePooling1D", "GlobalMaxPooling1D"],
    "Regularization": ["SpatialDropout2D", "GaussianNoise", "LayerNormalization",
                       "GroupNormalization"],
    "Activations": ["ReLU", "LeakyReLU", "PReLU", "ELU", "Softmax"],
    "Core": ["Permute"],
    "Merge": ["Subtract", "Maximum", "Minimum", "Dot"],
}


def palette_entries(window) -> list[str]:
    """The layer types the palette lists, group by group."""
    tree = window.palette.tree
    groups = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    return [group.child(j).text(0) for group in groups for j in range(group.childCount())]


def test_the_palette_lists_at_least_45_layer_types_and_keras_checks_each(window):
    entries = palette_entries(window)
    layer_types = [name for name in entries if name != "Input"]
    assert len(layer_types) == len(set(layer_types)) >= 45
    # Keras is the oracle of every shape and count: test_layer_oracle.py draws cases for
    # each layer type, and test_applications.py checks the pre-trained bases.
    assert set(layer_types) - {"Application"} == set(CASES)


@pytest.mark.parametrize("layer_type", [t for types in FAMILIES.values() for t in types])
def test_each_new_layer_opens_in_the_inspector_from_the_palette(window, qtbot, layer_type):
    layer = REGISTRY[layer_type]
    entry = window.palette.item_for(layer_type)
    assert entry.parent().text(0) in FAMILIES and layer_type in FAMILIES[entry.parent().text(0)]
    assert entry.toolTip(0) == layer.help
    click_row(qtbot, window, "conv2d_3")
    click_palette_entry(qtbot, window, layer_type, double=True)
    node_id = window.model_list.selected_id()
    assert window.doc.project.graph.node(node_id).type == layer_type
    inspector = window.inspector
    assert inspector.title.text() == f"{node_id}  ·  {layer_type}"
    assert inspector.help.text() == layer.help
    assert list(inspector.editors) == [p.name for p in layer.params]
    editors = [inspector.editors[param.name].widget for param in layer.params]
    assert [editor.toolTip() for editor in editors] == [param.help for param in layer.params]
    qtbot.waitUntil(lambda: all(editor.isVisibleTo(inspector) for editor in editors))
    report = window.doc.analysis().nodes.get(node_id)
    if report is None:  # a merge with one input, a sequence layer after an image
        assert inspector.problem.text() == window.doc.analysis().problem_at(node_id)
    else:
        assert "Output shape:" in inspector.facts.text()


def test_groups_that_do_not_divide_the_channels_get_a_one_click_fix(window, qtbot):
    click_row(qtbot, window, "conv2d_3")  # 64 channels
    click_palette_entry(qtbot, window, "GroupNormalization", double=True)
    groups = window.inspector.editors["groups"].widget
    type_into(qtbot, groups, "10")
    qtbot.keyClick(groups, Qt.Key.Key_Return)
    assert window.inspector.problem.text() == (
        "GroupNormalization cannot split 64 channels into 10 equal groups: 10 does not divide "
        "64. Set groups to a divisor of 64, such as 8.")
    (button,) = window.inspector.fix_buttons
    assert button.text() == "Set groups to 8"
    qtbot.mouseClick(button, LEFT)
    qtbot.waitUntil(lambda: window.inspector.problem.text() == "")
    assert window.doc.project.graph.node("group_normalization_1").params["groups"] == 8
    assert window.inspector.editors["groups"].widget.value() == 8
    assert window.doc.analysis().ok


def test_a_sequence_layer_after_an_image_gets_a_reshape_in_one_click(window, qtbot):
    click_row(qtbot, window, "conv2d_3")  # 7 × 7 × 64
    click_palette_entry(qtbot, window, "GlobalMaxPooling1D", double=True)
    (button,) = window.inspector.fix_buttons
    assert button.text() == "Insert Reshape to 49 × 64 before global_max_pooling1d_1"
    qtbot.mouseClick(button, LEFT)
    graph = window.doc.project.graph
    qtbot.waitUntil(lambda: "reshape_1" in graph.ids())
    assert graph.inputs_of("global_max_pooling1d_1") == ["reshape_1"]
    assert window.doc.analysis().nodes["global_max_pooling1d_1"].output_shape == (64,)


def test_a_cap_and_shared_axes_can_be_set_and_left_empty(window, qtbot):
    click_row(qtbot, window, "conv2d_3")
    click_palette_entry(qtbot, window, "ReLU", double=True)
    relu_id = window.model_list.selected_id()
    cap = window.inspector.editors["max_value"].widget
    assert cap.text() == "no cap"
    type_into(qtbot, cap, "6")
    qtbot.keyClick(cap, Qt.Key.Key_Return)
    assert _params(window, relu_id)["max_value"] == 6.0
    assert window.model_list.summary.text().endswith("ready to train")
    cap.setValue(cap.minimum())  # the lowest value stands for no cap
    assert _params(window, relu_id)["max_value"] is None
    assert cap.text() == "no cap"

    click_palette_entry(qtbot, window, "PReLU", double=True)
    node_id = window.model_list.selected_id()
    shared = window.inspector.editors["shared_axes"].widget
    assert shared.text() == "" and shared.placeholderText() == "none"
    assert window.doc.analysis().nodes[node_id].params == 7 * 7 * 64
    type_into(qtbot, shared, "1, 2")
    qtbot.keyClick(shared, Qt.Key.Key_Return)
    assert _params(window, node_id)["shared_axes"] == [1, 2]
    assert window.doc.analysis().nodes[node_id].params == 64
    type_into(qtbot, shared, "")
    qtbot.keyClick(shared, Qt.Key.Key_Delete)
    qtbot.keyClick(shared, Qt.Key.Key_Return)
    assert _params(window, node_id)["shared_axes"] is None


def test_a_detection_head_s_parameters_read_as_a_person_writes_them(window, qtbot):
    click_row(qtbot, window, "conv2d_3")
    click_palette_entry(qtbot, window, "DetectionHead", double=True)
    form = window.inspector.form
    labels = [form.itemAt(row, QFormLayout.ItemRole.LabelRole).widget().text()
              for row in range(form.rowCount())]
    assert labels == ["Classes", "Score threshold", "NMS IoU", "Max boxes"]
    iou = REGISTRY["DetectionHead"].param("nms_iou")  # its problems name it as the form does
    assert iou.check(2.0) == "NMS IoU must be at most 1, not 2."
    head = window.model_list.selected_id()
    editor = window.inspector.editors["nms_iou"].widget
    type_into(qtbot, editor, "0.6")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert _params(window, head)["nms_iou"] == 0.6
    assert window.doc.undo_stack.undoText() == f"Set NMS IoU of {head}"  # so in the Edit menu


def test_a_label_map_names_only_parameters_its_layer_type_has():
    head = REGISTRY["DetectionHead"]
    with pytest.raises(ValueError, match="DetectionHead labels parameters it does not have"):
        dataclasses.replace(head, labels={"iou": "IoU"})


def _params(window, node_id: str) -> dict:
    return window.doc.project.graph.node(node_id).params
