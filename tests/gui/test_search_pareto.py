"""A search of several objectives in the Search tab: the objectives chosen by their boxes (one
undo step each), and a finished search (its record on disk, as after a restart) drawn as a
Pareto front whose points pick their trial, which "Apply" then copies into the design."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from studio.core.project.document import Dimension, save_project
from studio.core.search.runner import search_folder
from studio.core.search.state import SearchState, TrialRecord, write_state
from studio.gui.search.panel import SearchPanel
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.jobs import shutdown_jobs
from tests.core.search_support import UNITS, searched, table_project
from tests.gui.support import isolate_settings

LEFT = Qt.MouseButton.LeftButton
RATES = Dimension("training.learning_rate", values=[0.1, 0.01])


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


@pytest.fixture
def panel(qtbot, tmp_path):
    """The tab on a saved table project with nothing to search yet (so it starts no worker
    and measures nothing when shown)."""
    path = tmp_path / "table.studio.json"
    save_project(table_project(tmp_path), path)
    shown = SearchPanel(ProjectDocument(table_project(tmp_path), path))
    qtbot.addWidget(shown)
    shown.show()
    qtbot.waitExposed(shown)
    yield shown
    shutdown_jobs(shown)


def test_each_objective_box_is_one_undo_step_and_parameters_and_size_exclude_each_other(
        qtbot, panel):
    doc, boxes = panel.doc, panel.editor.objective_boxes
    steps = doc.undo_stack.count()
    qtbot.mouseClick(boxes["latency"], LEFT)
    qtbot.mouseClick(boxes["size"], LEFT)
    assert doc.project.search.objectives == ["latency", "size"]
    qtbot.mouseClick(boxes["params"], LEFT)
    assert doc.project.search.objectives == ["latency", "params"]
    assert not boxes["size"].isChecked()
    assert doc.undo_stack.count() == steps + 3
    doc.undo_stack.undo()
    assert doc.project.search.objectives == ["latency", "size"]
    assert boxes["size"].isChecked() and not boxes["params"].isChecked()
    panel.strategy.setCurrentIndex(panel.strategy.findData("hyperband"))
    assert "Optuna prunes no search of several objectives" in panel.problems.text()


def trial(number: int, units: int, rate: float, accuracy: float | None, latency: float,
          status: str = "finished") -> TrialRecord:
    return TrialRecord(number, {UNITS.target: units, RATES.target: rate}, status, accuracy,
                       seconds=2.0, epochs=[{"epoch": 1, "val_accuracy": accuracy or 0.5}],
                       measures={"latency": latency, "params": 5.0 * units + 2 * units + 2})


def test_a_finished_search_draws_its_front_and_a_clicked_point_is_the_trial_applied(
        qtbot, panel, tmp_path):
    project = searched(table_project(tmp_path), "random", UNITS, RATES)
    project.search.objectives = ["latency", "params"]
    write_state(search_folder(panel.doc.place), SearchState(project, 1, 4, [
        trial(0, 8, 0.1, 0.9, 1.0),
        trial(1, 4, 0.01, 0.8, 0.5),
        trial(2, 8, 0.01, 0.7, 2.0),  # beaten by trial 0 in every objective
        trial(3, 4, 0.1, None, 0.1, status="failed"),
    ]))
    panel.show_last_search()

    pareto = panel.pareto
    assert pareto.isVisible()
    assert sorted(pareto.points) == [0, 1, 2] and pareto.front == [0, 1]
    assert pareto.plot.getPlotItem().getAxis("bottom").labelText == "Latency (ms per sample)"
    assert "size is its parameters" in pareto.note.text()
    model = panel.table.trials
    assert model.headers()[-3:] == ["Latency (ms per sample)", "Parameters", "Duration"]
    highlighted = {int(panel.table.proxy.index(r, 0).data()) for r in range(4)
                   if panel.table.proxy.index(r, 0).data(Qt.ItemDataRole.BackgroundRole)}
    assert highlighted == {0, 1}
    assert "Pareto front" in panel.status.text()
    assert panel.apply_button.text() == "Apply best to project"

    view = pareto.plot.getPlotItem().vb
    qtbot.waitUntil(lambda: view.viewRect().contains(QPointF(*pareto.points[1])))
    at = pareto.plot.mapFromScene(view.mapViewToScene(QPointF(*pareto.points[1])))
    qtbot.mouseClick(pareto.plot.viewport(), LEFT, pos=QPoint(round(at.x()), round(at.y())))
    rows = panel.table.selectionModel().selectedRows()
    assert [panel.table.trial_at(r)["number"] for r in rows] == [1]
    assert panel.apply_button.text() == "Apply trial 1 to project"
    ringed = pareto.ring.points()
    assert pareto.picked == 1 and [tuple(p.pos()) for p in ringed] == [pareto.points[1]]
    row_of_2 = panel.table.proxy.mapFromSource(model.index(model.row_of(2), 0)).row()
    qtbot.mouseClick(panel.table.viewport(), LEFT,  # a row picked in the table: its point ringed
                     pos=panel.table.visualRect(panel.table.proxy.index(row_of_2, 0)).center())
    assert pareto.picked == 2 and [tuple(p.pos()) for p in pareto.ring.points()] == [
        pareto.points[2]]
    qtbot.mouseClick(pareto.plot.viewport(), LEFT, pos=QPoint(round(at.x()), round(at.y())))
    assert pareto.picked == 1  # and on the plot again

    steps = panel.doc.undo_stack.count()
    qtbot.mouseClick(panel.apply_button, LEFT)
    assert panel.doc.undo_stack.count() == steps + 1
    assert panel.doc.project.graph.node("dense_1").params["units"] == 4
    assert panel.doc.project.training.learning_rate == 0.01
