"""The Evaluate view: a run's model scored on its validation or test split by clicking
Evaluate; the confusion matrix's cells open their images, the per-class table sorts, the
most confident mistakes are wrong answers; Cancel, runs without a test split or without data."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from studio.core.data.sources import load
from studio.core.data.types import ArraySamples
from studio.core.project.document import load_project, save_project
from studio.core.runs.folders import PROJECT_FILE, read_metrics
from studio.core.runs.history import read_run
from studio.core.tasks.class_scores import Evaluation
from studio.core.tasks.regression import NO_EVALUATION
from studio.gui.inference.evaluation_panel import (
    MISTAKES,
    NO_RUNS,
    POSITION_ROLE,
    EvaluationPanel,
    percent,
)
from studio.gui.shell.app import create_application
from studio.gui.widgets.confusion import COUNT_ROLE
from studio.gui.widgets.jobs import shutdown_jobs
from studio.gui.widgets.score_table import SORT_ROLE
from tests.gui.support import RUN_TIMEOUT_MS, copied_run, names_stretch

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def run_dir(cnn_run, tmp_path) -> Path:
    """A copy of the small CNN's run (the session's run stays untouched)."""
    return copied_run(cnn_run, tmp_path / "runs")


def shown_panel(qtbot, run: Path, width: int, height: int) -> Iterator[EvaluationPanel]:
    """The view offering ``run``, shown at ``width`` × ``height``, until the test ends."""
    create_application()
    view = EvaluationPanel()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.set_runs([read_run(run)])
    view.show()
    qtbot.waitExposed(view)
    yield view
    shutdown_jobs(view)


@pytest.fixture
def panel(qtbot, run_dir):
    """The view offering the copied run, shown."""
    yield from shown_panel(qtbot, run_dir, 1300, 600)


def edited_run(run_dir: Path, name: str, **dataset) -> Path:
    """A copy of ``run_dir`` whose project snapshot has other dataset settings."""
    copy = run_dir.with_name(name)
    shutil.copytree(run_dir, copy)
    project = load_project(copy / PROJECT_FILE)
    for key, value in dataset.items():
        setattr(project.dataset, key, value)
    save_project(project, copy / PROJECT_FILE)
    return copy


def evaluate(qtbot, panel):
    """Click Evaluate and wait for the results and the worker's end."""
    with qtbot.waitSignal(panel.evaluated, timeout=RUN_TIMEOUT_MS) as shown:
        qtbot.mouseClick(panel.evaluate_button, LEFT)
    qtbot.waitUntil(lambda: not panel.busy())
    return shown.args[0]


def split_size(run_dir: Path, split: str) -> int:
    """How many samples the run's data puts in ``split``, as training split them."""
    return len(load(load_project(run_dir / PROJECT_FILE).dataset).splits[split])


def matrix_counts(panel) -> np.ndarray:
    model = panel.confusion.model()
    return np.array([[model.index(r, c).data(COUNT_ROLE) for c in range(model.columnCount())]
                     for r in range(model.rowCount())])


def grid_items(qtbot, grid) -> list:
    qtbot.waitUntil(lambda: grid.pending() == 0)
    return [grid.item(i) for i in range(grid.count())]


def click_cell(qtbot, panel, row: int, column: int) -> None:
    view = panel.confusion
    index = view.model().index(row, column)
    view.scrollTo(index)
    qtbot.mouseClick(view.viewport(), LEFT, pos=view.visualRect(index).center())


def click_heading(qtbot, table, column: int) -> None:
    header = table.horizontalHeader()
    pos = QPoint(header.sectionViewportPosition(column) + header.sectionSize(column) // 2,
                 header.height() // 2)
    qtbot.mouseClick(header.viewport(), LEFT, pos=pos)


def column_keys(table, column: int) -> list:
    model = table.model()
    return [model.index(row, column).data(SORT_ROLE) for row in range(model.rowCount())]


def test_the_validation_split_is_scored_as_training_scored_it(qtbot, panel, run_dir):
    assert panel.model_box.currentText() == "Final model"
    evaluation = evaluate(qtbot, panel)
    last_epoch = read_metrics(run_dir)[-1]
    assert evaluation.split == "validation"
    assert evaluation.accuracy == pytest.approx(last_epoch["val_accuracy"], abs=1e-4)
    assert evaluation.loss == pytest.approx(last_epoch["val_loss"], rel=1e-3)
    size = split_size(run_dir, "validation")
    headline = panel.headline.text()
    assert percent(evaluation.accuracy) in headline
    assert f"{size:,}</b> validation samples" in headline
    assert f"{evaluation.loss:.4f}" in headline
    counts = matrix_counts(panel)
    assert counts.sum() == size
    assert np.trace(counts) == round(evaluation.accuracy * size)

    items = grid_items(qtbot, panel.mistakes)
    wrong = size - np.trace(counts)
    assert len(items) == min(MISTAKES, wrong) > 0
    names = evaluation.class_names
    confidences = []
    for item in items:
        position = item.data(POSITION_ROLE)
        true, answer = evaluation.true[position], evaluation.predicted[position]
        assert true != answer
        assert item.text().startswith(f"{names[true]} → {names[answer]}, ")
        confidences.append(evaluation.confidence[position])
    assert confidences == sorted(confidences, reverse=True)


def test_clicking_a_cell_shows_its_images_and_the_class_table_sorts(qtbot, panel):
    evaluation = evaluate(qtbot, panel)
    counts = matrix_counts(panel)
    off = counts - np.diag(np.diag(counts))
    confused = np.unravel_index(np.argmax(off), off.shape)
    for row, column in ((3, 3), confused):
        click_cell(qtbot, panel, row, column)
        assert panel.tabs.currentWidget().isAncestorOf(panel.cell_grid)
        items = grid_items(qtbot, panel.cell_grid)
        assert len(items) == counts[row, column] > 0
        for item in items:
            position = item.data(POSITION_ROLE)
            assert (evaluation.true[position], evaluation.predicted[position]) == (row, column)
        assert panel.cell_caption.text().startswith(f"{counts[row, column]:,} images of")

    table = panel.class_table
    assert names_stretch(table)
    assert column_keys(table, 0) == list(range(len(evaluation.class_names)))
    assert column_keys(table, 1) == pytest.approx(list(evaluation.precision))
    click_heading(qtbot, table, 3)  # F1
    ascending = table.horizontalHeader().sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
    f1 = column_keys(table, 3)
    assert f1 == sorted(f1, reverse=not ascending)
    click_heading(qtbot, table, 3)
    assert column_keys(table, 3) == sorted(f1, reverse=ascending)


def test_the_test_split_and_a_checkpoint_are_evaluated_when_chosen(qtbot, panel, run_dir):
    assert panel.test_button.isEnabled()
    qtbot.mouseClick(panel.test_button, LEFT)
    evaluation = evaluate(qtbot, panel)
    assert evaluation.split == "test"
    assert matrix_counts(panel).sum() == split_size(run_dir, "test")
    assert "test samples" in panel.headline.text()

    qtbot.mouseClick(panel.validation_button, LEFT)
    first = panel.model_box.findText("Checkpoint, epoch 1")
    panel.model_box.setCurrentIndex(first)
    panel.activateWindow()
    qtbot.waitActive(panel)
    with qtbot.waitSignal(panel.evaluated, timeout=RUN_TIMEOUT_MS) as shown:
        qtbot.keyClick(panel.confusion, Qt.Key.Key_F6)  # Evaluate's shortcut
    qtbot.waitUntil(lambda: not panel.busy())
    evaluation = shown.args[0]
    assert evaluation.accuracy == pytest.approx(read_metrics(run_dir)[0]["val_accuracy"],
                                                abs=1e-4)
    assert "checkpoint, epoch 1" in panel.headline.text()


def test_cancel_stops_the_evaluation_and_shows_nothing(qtbot, panel):
    qtbot.mouseClick(panel.evaluate_button, LEFT)
    assert panel.busy() and panel.cancel_button.isEnabled()
    qtbot.mouseClick(panel.cancel_button, LEFT)
    qtbot.waitUntil(lambda: not panel.busy(), timeout=RUN_TIMEOUT_MS)
    assert "cancelled" in panel.status.text()
    assert panel.progress.format() == "Cancelled"
    assert panel.evaluation is None and panel.results.isHidden()
    assert not panel.cancel_button.isEnabled()


def test_a_run_without_a_test_split_offers_only_validation(qtbot, panel, run_dir):
    qtbot.mouseClick(panel.test_button, LEFT)
    no_test = edited_run(run_dir, "20991231-000000-no-test", test_split=0.0)
    panel.set_runs([read_run(no_test), read_run(run_dir)])
    assert panel.run_box.currentData() == str(no_test)
    assert not panel.test_button.isEnabled()
    assert "no test split" in panel.test_button.toolTip()
    assert panel.validation_button.isChecked()
    assert panel.split() == "validation"


def test_a_run_whose_data_is_gone_says_so(qtbot, panel, run_dir, tmp_path):
    gone = edited_run(run_dir, "20991231-000000-gone", source="folder",
                      path=str(tmp_path / "photos that were deleted"))
    panel.set_runs([read_run(gone)])
    qtbot.mouseClick(panel.evaluate_button, LEFT)
    qtbot.waitUntil(lambda: not panel.busy(), timeout=RUN_TIMEOUT_MS)
    assert panel.status.text().startswith("The evaluation failed: ")
    assert "photos that were deleted" in panel.status.text()
    assert panel.evaluation is None and panel.results.isHidden()


def test_without_trained_runs_nothing_can_be_evaluated(qtbot):
    create_application()
    view = EvaluationPanel()
    qtbot.addWidget(view)
    view.set_runs([])
    assert not view.evaluate_button.isEnabled()
    assert view.empty.text() == NO_RUNS and view.status.isHidden()
    assert view.run_box.currentText() == "No trained runs yet"
    assert not view.empty.isHidden() and view.results.isHidden()
    assert not view.test_button.isEnabled()


def test_a_regression_run_is_not_offered_for_evaluation(qtbot, panel, run_dir):
    numbers = edited_run(run_dir, "20991231-000000-numbers", task="regression")
    panel.set_runs([read_run(numbers)])
    assert not panel.evaluate_button.isEnabled()
    assert panel.empty.text() == NO_EVALUATION
    panel.set_runs([read_run(run_dir)])
    assert panel.evaluate_button.isEnabled()


def test_a_hundred_classes_fit_in_small_cells_that_scroll(qtbot, panel):
    rng = np.random.default_rng(0)
    classes, count = 100, 3000
    true = rng.integers(0, classes, count)
    probabilities = rng.random((count, classes))
    probabilities[np.arange(count), true] += 30 * rng.random(count)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    images = rng.integers(0, 256, (count, 32, 32, 3), dtype=np.uint8)
    evaluation = Evaluation.of_answers("validation", [f"class {i}" for i in range(classes)],
                                       true, probabilities, 1.5, samples=ArraySamples(images))
    panel.show_evaluation(evaluation, "a made-up model")
    view = panel.confusion
    assert view.horizontalHeader().defaultSectionSize() <= 30
    assert view.verticalHeader().defaultSectionSize() <= 30
    assert view.horizontalScrollBar().maximum() > 0 and view.verticalScrollBar().maximum() > 0
    assert matrix_counts(panel).sum() == count
    click_cell(qtbot, panel, 99, 99)
    items = grid_items(qtbot, panel.cell_grid)
    assert len(items) == evaluation.confusion[99, 99] > 0
    assert items[0].text().startswith("class 99 → class 99, ")


def test_a_new_evaluation_replaces_one_still_running(qtbot, panel):
    qtbot.mouseClick(panel.evaluate_button, LEFT)
    qtbot.mouseClick(panel.test_button, LEFT)
    shown = []
    panel.evaluated.connect(shown.append)
    evaluate(qtbot, panel)
    assert [e.split for e in shown] == ["test"]
    assert "test samples" in panel.headline.text()


def test_closing_stops_a_running_evaluation_and_waits_for_it(qtbot, panel, started_workers):
    qtbot.mouseClick(panel.evaluate_button, LEFT)
    (worker,) = started_workers
    assert panel.busy() and worker.is_running()
    shutdown_jobs(panel)
    assert not panel.busy() and not worker.is_running()
