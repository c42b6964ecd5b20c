"""When a run stops early and when it keeps checkpoints: every change one undoable edit."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QSpinBox, QVBoxLayout, QWidget

from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.forms import choice_box, hint, show_choice
from studio.gui.widgets.sync import show_value

MONITORS = (
    ("validation loss", "val_loss", "The loss on the validation split: lower is better"),
    ("validation accuracy", "val_accuracy", "Accuracy on the validation split: higher is better"),
    ("training loss", "loss", "The loss on the training batches: lower is better"),
    ("training accuracy", "accuracy", "Accuracy on the training batches: higher is better"),
)


def _spin(low: int, high: int, tip: str, suffix: str, special: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setToolTip(tip)
    spin.setSuffix(suffix)
    if special:
        spin.setSpecialValueText(special)
    return spin


class StoppingForm(QWidget):
    """Early stopping (metric, patience) and checkpoints (every N epochs, best only)."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.early = QCheckBox("Stop early")
        self.early.setToolTip("End the run when the watched metric stops improving; the run "
                              "counts as finished")
        self.early.toggled.connect(lambda on: self._edit("early stopping", "early_stopping",
                                                         enabled=on))
        self.early_monitor = choice_box(MONITORS, "The metric early stopping watches")
        self.early_monitor.currentIndexChanged.connect(
            lambda: self._edit("early stopping metric", "early_stopping",
                               monitor=self.early_monitor.currentData()))
        self.patience = _spin(1, 1000, "Epochs without improvement before the run stops",
                              " epochs")
        self.patience.valueChanged.connect(
            lambda v: self._edit("patience", "early_stopping", patience=v))
        early = QGroupBox("Early stopping")
        early_form = QFormLayout(early)
        early_form.addRow(self.early)
        early_form.addRow("Watch", self.early_monitor)
        early_form.addRow("Patience", self.patience)

        self.every = _spin(0, 1000, "Save the model with its optimizer state every N epochs, so "
                           "a stopped, failed or killed run can resume (0: never)",
                           " epochs", "Off")
        self.every.setPrefix("every ")
        self.every.valueChanged.connect(
            lambda v: self._edit("checkpoint interval", "checkpoints", every_epochs=v))
        self.best_only = QCheckBox("Keep the best only")
        self.best_only.setToolTip("Save only when the watched metric improves, replacing the "
                                  "previous checkpoint (a resume then starts from the best "
                                  "epoch)")
        self.best_only.toggled.connect(
            lambda on: self._edit("keep best checkpoint", "checkpoints", keep_best_only=on))
        self.best_monitor = choice_box(MONITORS, "The metric that decides the best checkpoint")
        self.best_monitor.currentIndexChanged.connect(
            lambda: self._edit("checkpoint metric", "checkpoints",
                               monitor=self.best_monitor.currentData()))
        saved = QGroupBox("Checkpoints")
        saved_form = QFormLayout(saved)
        saved_form.addRow("Save", self.every)
        saved_form.addRow(self.best_only)
        saved_form.addRow("Best by", self.best_monitor)
        self.note = hint()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(early)
        layout.addWidget(saved)
        layout.addWidget(self.note)
        layout.addStretch(1)
        doc.changed.connect(self.refresh)
        self.refresh()

    def _edit(self, label: str, group: str, **changes: Any) -> None:
        def change(project) -> None:
            setattr(project.training, group, replace(getattr(project.training, group),
                                                     **changes))

        self.doc.edit(f"Set {label}", change, merge_key=f"training.{group}.{next(iter(changes))}")

    def refresh(self) -> None:
        """Show the project's settings; greys what the switches turn off."""
        training = self.doc.project.training
        early, saved = training.early_stopping, training.checkpoints
        show_value(self.early, early.enabled)
        show_choice(self.early_monitor, early.monitor)
        show_value(self.patience, early.patience)
        show_value(self.every, saved.every_epochs)
        show_value(self.best_only, saved.keep_best_only)
        show_choice(self.best_monitor, saved.monitor)
        self.early_monitor.setEnabled(early.enabled)
        self.patience.setEnabled(early.enabled)
        self.best_only.setEnabled(saved.every_epochs > 0)
        self.best_monitor.setEnabled(saved.every_epochs > 0 and saved.keep_best_only)
        self.note.setText(
            "Without checkpoints a run that stops cannot be resumed." if not saved.every_epochs
            else "A stopped, failed or interrupted run resumes from its last checkpoint "
                 "(History, or studio train --resume RUN).")
