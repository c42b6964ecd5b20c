"""The run pickers of the Try and Evaluate views: each run with its own task's most telling
best score (a segmentation run's mean IoU, a regression run's mean absolute error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from studio.core.runs.history import read_run
from studio.gui.inference.evaluation_panel import EvaluationPanel
from studio.gui.inference.model_chooser import ModelChooser
from studio.gui.shell.app import create_application
from studio.gui.widgets.jobs import shutdown_jobs
from tests.run_folders import write_run


@pytest.fixture
def runs(tmp_path) -> list:
    """A segmentation run, a regression run and one of a task this version does not know,
    newest first, each with a model."""
    written = [write_run(tmp_path, 2, task="captioning", model=True),
               write_run(tmp_path, 1, task="regression", model=True,
                         best={"val_mae": 0.234, "val_loss": 0.1}),
               write_run(tmp_path, 0, task="segmentation", model=True,
                         best={"val_mean_iou": 0.712, "val_pixel_accuracy": 0.93})]
    return [read_run(path) for path in written]


def listed(box) -> list[str]:
    return [box.itemText(i) for i in range(box.count())]


def expected(runs) -> list[str]:
    unknown, numbers, masks = runs
    return [unknown.id, f"{numbers.id}  ·  val mae 0.234",
            f"{masks.id}  ·  val mean IoU 71.2%"]


def test_the_try_views_runs_show_their_tasks_scores(qtbot, runs):
    create_application()
    chooser = ModelChooser()
    qtbot.addWidget(chooser)
    chooser.set_runs(runs, None)
    assert listed(chooser.run_box) == expected(runs)
    assert chooser.run_box.itemData(2, Qt.ItemDataRole.ToolTipRole) == (
        "Demo CNN: finished, 20 epochs")


def test_the_evaluate_views_runs_show_their_tasks_scores(qtbot, runs):
    create_application()
    panel = EvaluationPanel()
    qtbot.addWidget(panel)
    panel.set_runs(runs)
    assert listed(panel.run_box) == expected(runs)
    assert Path(panel.run_box.currentData()) == runs[0].path
    shutdown_jobs(panel)
