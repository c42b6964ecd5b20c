"""The optimizer form: only the parameters that apply, a live schedule curve, undoable edits."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from studio.gui.training.optimizer_form import OptimizerForm, RateSpinBox, rate_step
from studio.gui.widgets.document import ProjectDocument
from tests.gui.support import type_into
from tests.helpers import tiny_project


@pytest.fixture
def form(qtbot):
    project = tiny_project(epochs=10)
    doc = ProjectDocument(project)
    widget = OptimizerForm(doc)
    undo = doc.undo_stack.createUndoAction(widget)
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    undo.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    widget.addAction(undo)
    qtbot.addWidget(widget)
    widget.resize(640, 360)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def shown(form: OptimizerForm, name: str) -> bool:
    widget = form.fields.get(name) or form.schedule_fields[name]
    return widget.isVisibleTo(form)


def undo(qtbot, form: OptimizerForm) -> None:
    qtbot.keyClick(form.optimizer, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)


def test_picking_sgd_shows_its_parameters_only(qtbot, form):
    doc = form.doc
    assert doc.project.training.optimizer == "adam"
    assert shown(form, "beta_1") and shown(form, "beta_2") and not shown(form, "momentum")
    form.optimizer.setFocus()
    qtbot.keyClick(form.optimizer, Qt.Key.Key_S)  # the one optimizer starting with S
    assert doc.project.training.optimizer == "sgd"
    assert form.optimizer.currentText() == "SGD"
    assert shown(form, "momentum") and shown(form, "nesterov") and shown(form, "weight_decay")
    assert not shown(form, "beta_1") and not shown(form, "beta_2") and not shown(form, "rho")
    nesterov = form.fields["nesterov"]
    qtbot.mouseClick(nesterov, Qt.MouseButton.LeftButton, pos=nesterov.rect().center())
    assert doc.project.training.nesterov is True
    assert doc.undo_stack.count() == 2
    undo(qtbot, form)
    assert doc.project.training.nesterov is False and not nesterov.isChecked()
    undo(qtbot, form)
    assert doc.project.training.optimizer == "adam" and form.optimizer.currentText() == "Adam"
    assert shown(form, "beta_1") and not shown(form, "momentum")


def test_adamw_gets_a_weight_decay_when_it_had_none(qtbot, form):
    form.optimizer.setFocus()
    qtbot.keyClicks(form.optimizer, "AdamW")
    training = form.doc.project.training
    assert (training.optimizer, training.weight_decay) == ("adamw", 0.004)
    assert form.fields["weight_decay"].text() == "0.004"
    assert not form.problems.isVisibleTo(form)


def test_cosine_with_warm_up_redraws_the_curve(qtbot, form):
    doc = form.doc
    x, rate = form.curve.getData()
    assert x[0] == 0 and x[-1] == 10 and np.all(rate == 0.001)
    assert not shown(form, "warmup_epochs")
    form.schedule.setFocus()
    qtbot.keyClicks(form.schedule, "Cos")  # "C" alone would pick Constant again
    assert doc.project.training.schedule.kind == "cosine"
    assert shown(form, "warmup_epochs") and shown(form, "min_learning_rate")
    assert not shown(form, "factor") and not shown(form, "patience")
    x, rate = form.curve.getData()
    assert rate[0] == pytest.approx(0.001) and rate[-1] == pytest.approx(0.0, abs=1e-7)
    type_into(qtbot, form.schedule_fields["warmup_epochs"], "3")
    assert doc.project.training.schedule.warmup_epochs == 3
    x, rate = form.curve.getData()
    assert rate[0] == 0 and x[np.argmax(rate)] == 3 and rate.max() == pytest.approx(0.001)
    assert doc.undo_stack.count() == 2
    type_into(qtbot, form.schedule_fields["warmup_epochs"], "12")
    assert "warm-up (12 epochs) is as long as the run" in form.problems.text()
    assert form.problems.isVisibleTo(form)
    assert doc.undo_stack.count() == 2  # typing into one box is one step
    undo(qtbot, form)
    assert doc.project.training.schedule.warmup_epochs == 0
    assert not form.problems.isVisibleTo(form)
    undo(qtbot, form)
    assert doc.project.training.schedule.kind == "constant"
    assert np.all(form.curve.getData()[1] == 0.001)


def test_plateau_says_how_the_rate_will_drop(qtbot, form):
    form.schedule.setFocus()
    qtbot.keyClicks(form.schedule, "Reduce")
    assert form.doc.project.training.schedule.kind == "plateau"
    assert shown(form, "patience") and shown(form, "factor") and not shown(form, "step_epochs")
    assert form.note.text().startswith("Starts at 0.001 and is multiplied by 0.5 after 3 epochs")


def test_the_learning_rate_takes_scientific_notation(qtbot, form):
    box = form.learning_rate
    type_into(qtbot, box, "3e-4")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert form.doc.project.training.learning_rate == pytest.approx(3e-4)
    assert box.text() == "0.0003"
    type_into(qtbot, box, "0.00005")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert form.doc.project.training.learning_rate == pytest.approx(5e-5)
    assert box.text() == "5e-5"
    assert form.doc.undo_stack.count() == 1
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert form.doc.project.training.learning_rate == pytest.approx(1e-4)
    assert np.all(form.curve.getData()[1] == pytest.approx(1e-4))
    undo(qtbot, form)
    assert form.doc.project.training.learning_rate == 0.001 and box.text() == "0.001"


def test_a_rate_box_refuses_what_is_not_a_number(qtbot):
    box = RateSpinBox(0.0, 1.0, "")
    qtbot.addWidget(box)
    assert box.validate("1e-3", 0)[0] == box.validate("0.5", 0)[0]
    assert box.validate("abc", 0)[0].name == "Invalid"
    assert box.validate("1e-", 0)[0].name == "Intermediate"
    assert box.validate("2", 0)[0].name == "Intermediate"  # above the maximum


@pytest.mark.parametrize(("value", "steps", "expected"), [
    (0.001, 1, 0.002), (0.002, 1, 0.005), (0.005, 1, 0.01), (0.001, -1, 0.0005),
    (0.0003, 1, 0.0005), (0.0003, -1, 0.0002), (0.0, 1, 1e-5), (1e-5, -1, 5e-6),
    (5.0, 1, 10.0), (10.0, 1, 10.0),
])
def test_rate_arrows_step_along_one_two_five(value, steps, expected):
    assert rate_step(value, steps, 0.0, 10.0) == pytest.approx(expected)


def test_the_curve_uses_the_datas_steps_per_epoch(form):
    # MNIST-10k: 8,000 training images in batches of 128.
    assert form.steps_per_epoch() == 63
    assert form.note.text() == ""


def test_a_segmentation_project_chooses_its_loss_as_one_undoable_edit(qtbot, form):
    doc = form.doc
    assert not form.loss.isVisibleTo(form)  # a classifier has one loss
    doc.edit("Segment", lambda p: setattr(p.dataset, "task", "segmentation"))
    assert form.loss.isVisibleTo(form)
    assert form.loss.currentText() == "Pixel cross-entropy + Dice"  # what the project learns
    assert [form.loss.itemData(i) for i in range(form.loss.count())] == [
        "cross_entropy_dice", "cross_entropy", "dice"]
    form.loss.setFocus()
    qtbot.keyClick(form.loss, Qt.Key.Key_D)
    assert doc.project.training.loss == "dice" and "overlap" in form.loss.toolTip()
    undo(qtbot, form)
    assert doc.project.training.loss == "sparse_categorical_crossentropy"
    assert form.loss.currentText() == "Pixel cross-entropy + Dice"
    undo(qtbot, form)
    assert not form.loss.isVisibleTo(form)
