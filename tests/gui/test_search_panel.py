"""The Search tab: a 2x2 grid defined where the values are edited, run and watched; refusals
of invalid spaces; settings, removal and Apply best as single undo steps."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt

from studio.core.base.messages import format_duration
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Dimension, Project, save_project
from studio.core.project.templates import from_template
from studio.core.runs.folders import runs_root
from studio.core.search.runner import SearchSession
from studio.core.search.space import estimated_seconds
from studio.gui.search import estimate
from studio.gui.search.panel import SearchPanel
from studio.gui.search.parallel_coordinates import (
    ParallelCoordinates,
    axis_for,
    metric_axis,
    round_marks,
)
from studio.gui.search.space_editor import PRESENT_ENTRY
from studio.gui.shell.app import create_application
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.jobs import shutdown_jobs
from tests.gui.support import (
    RUN_TIMEOUT_MS,
    click_row,
    isolate_settings,
    run_folders,
    runs_of,
    show_tab,
)
from tests.gui.test_dimension_dialog import tick
from tests.run_folders import write_run
from tests.segmentation_runs import demo_folder, segmenter

LEFT = Qt.MouseButton.LeftButton
SEARCH_TIMEOUT_MS = 4 * RUN_TIMEOUT_MS


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


def hidden_layer_project() -> Project:
    """MNIST-10k through Flatten, a small hidden Dense layer and a softmax: one quick epoch."""
    nodes = [
        Node("input_1", "Input", {"shape": [28, 28, 1]}),
        Node("flatten_1", "Flatten", {}),
        Node("hidden", "Dense", {"units": 8, "activation": "relu"}),
        Node("dense_1", "Dense", {"units": 10, "activation": "softmax"}),
    ]
    project = Project(name="Tiny search", graph=Graph.from_chain(nodes))
    project.training.epochs = 1
    project.training.batch_size = 256
    return project


def type_over(qtbot, line, text: str) -> None:
    """Click into a text field, select its text and type ``text`` over it."""
    qtbot.mouseClick(line, LEFT)
    qtbot.keyClick(line, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(line, text)


def search_values(qtbot, button, text: str) -> None:
    """Click a Search… button, type the values and press OK."""
    qtbot.mouseClick(button, LEFT)
    dialog = button.dialog
    qtbot.waitExposed(dialog)
    type_over(qtbot, dialog.values, text)
    assert dialog.ok.isEnabled(), dialog.preview.text()
    qtbot.mouseClick(dialog.ok, LEFT)


def test_a_two_by_two_grid_runs_four_finished_trials_and_applies_the_best(
        window, qtbot):
    window.doc.replace(hidden_layer_project(), None)
    search_values(qtbot, window.training.optimizer_form.search_buttons["learning_rate"],
                  "0.01, 0.001")
    click_row(qtbot, window, "hidden")
    search_values(qtbot, window.inspector.search_buttons["units"], "4, 8")

    show_tab(qtbot, window, "Search")
    panel = window.search
    assert [panel.dimensions.item(i).text() for i in range(panel.dimensions.count())] == [
        "Learning rate: 0.01, 0.001", "hidden · Units: 4, 8"]
    assert panel.estimate.text().startswith("4 trials, ")
    assert not panel.trials.isEnabled()  # a grid runs every combination
    assert panel.start_button.isEnabled(), panel.problems.text()
    warm = panel.pool  # the tab started the workers: TensorFlow loads before Start
    assert warm is not None and len(warm.workers) == panel.workers.value()

    with qtbot.waitSignal(panel.search_finished, timeout=SEARCH_TIMEOUT_MS) as ended:
        qtbot.mouseClick(panel.start_button, LEFT)
        assert panel.is_running()
        assert not panel.start_button.isEnabled()
        assert panel.stop_button.isEnabled()
    assert ended.args == ["finished"], panel.last_error

    rows = panel.table.row_texts()
    assert len(rows) == 4
    assert [row[1] for row in rows] == ["finished"] * 4
    assert sorted((row[2], row[3]) for row in rows) == [
        ("0.001", "4"), ("0.001", "8"), ("0.01", "4"), ("0.01", "8")]
    assert all(re.fullmatch(r"0\.\d{4}", row[4]) for row in rows)  # best validation accuracy
    assert panel.progress.text() == "Done"
    assert len(run_folders(runs_of(window))) == 4  # each trial is a run
    assert panel.pool is warm and {t["pid"] for t in panel.table.trials.trials} == {
        w.process.pid for w in warm.workers}  # the warm workers trained the trials
    # Sorted by the metric (a click on its header), the best trial is highlighted on top.
    header = panel.table.horizontalHeader()
    qtbot.mouseClick(header.viewport(), LEFT, pos=QPoint(
        header.sectionViewportPosition(4) + 5, header.height() // 2))
    qtbot.mouseClick(header.viewport(), LEFT, pos=QPoint(
        header.sectionViewportPosition(4) + 5, header.height() // 2))
    values = [float(row[4]) for row in panel.table.row_texts()]
    assert values == sorted(values, reverse=True)
    best = panel.best_trial()
    assert best is not None and best["value"] == pytest.approx(values[0], abs=1e-4)
    top = panel.table.proxy.index(0, 0)
    assert top.data(Qt.ItemDataRole.BackgroundRole) is not None
    assert panel.table.proxy.index(1, 0).data(Qt.ItemDataRole.BackgroundRole) is None
    # Every trial's curve is drawn, and a line per trial across the parallel coordinates.
    qtbot.waitUntil(lambda: all(panel.curves.drawn(n) == 1 for n in range(4)))
    assert len(panel.parallel.lines) == 4
    # Double-clicking a trial shows its run in the Runs dock.
    qtbot.waitUntil(lambda: window.runs.model.rowCount() == 4)
    rect = panel.table.visualRect(panel.table.proxy.index(0, 1))
    qtbot.mouseClick(panel.table.viewport(), LEFT, pos=rect.center())
    qtbot.mouseDClick(panel.table.viewport(), LEFT, pos=rect.center())
    assert [r.id for r in window.runs.selected_runs()] == [Path(best["run_dir"]).name]
    assert not window.runs_dock.visibleRegion().isEmpty()
    # The newest run now says how long an epoch takes (read off the GUI thread).
    qtbot.waitUntil(lambda: bool(re.fullmatch(r"4 trials, about \d+ (s|min)",
                                              panel.estimate.text())))
    assert panel.status.text().startswith(f"Best: trial {best['number']}, validation accuracy")

    steps = window.doc.undo_stack.count()
    assert panel.apply_button.isEnabled()
    qtbot.mouseClick(panel.apply_button, LEFT)
    assert window.doc.undo_stack.count() == steps + 1
    project = window.doc.project
    assert project.training.learning_rate == best["params"]["training.learning_rate"]
    assert project.graph.node("hidden").params["units"] == best["params"]["layer.hidden.units"]
    window.undo_action.trigger()
    assert window.doc.project.training.learning_rate == 0.001
    assert window.doc.project.graph.node("hidden").params["units"] == 8

    show_tab(qtbot, window, "Canvas")  # idle workers go when the tab is left
    assert panel.pool is None
    qtbot.waitUntil(lambda: not any(w.process.is_alive() for w in warm.workers))


def test_an_invalid_space_says_why_and_start_is_disabled(window, qtbot):
    show_tab(qtbot, window, "Search")
    panel = window.search
    assert not panel.start_button.isEnabled()
    assert panel.problems.text().startswith("The search space is empty")
    assert panel.start_button.toolTip().startswith("Cannot start: The search space is empty")

    # A unit count of zero, as a project file could hold it.
    window.doc.edit("Search units", lambda p: p.search.dimensions.append(
        Dimension("layer.dense_1.units", values=[4, 0])))
    assert panel.problems.text() == "Units must be at least 1, not 0."
    assert not panel.start_button.isEnabled()
    item = panel.dimensions.item(0)
    assert item.text() == "dense_1 · Units: cannot be searched"
    assert item.toolTip() == "Units must be at least 1, not 0."

    # A negative learning rate too: every reason is listed.
    window.doc.edit("Search learning rate", lambda p: p.search.dimensions.append(
        Dimension("training.learning_rate", values=[0.01, -0.1])))
    assert panel.problems.text().splitlines() == [
        "Units must be at least 1, not 0.", "Learning rate must be more than 0, not -0.1."]
    assert not panel.start_button.isEnabled()

    # Removing the bad dimensions (the Remove button, then the Delete key) lets it start.
    panel.dimensions.setCurrentRow(0)
    steps = window.doc.undo_stack.count()
    qtbot.mouseClick(panel.remove_button, LEFT)
    assert window.doc.undo_stack.count() == steps + 1
    assert [d.target for d in window.doc.project.search.dimensions] == [
        "training.learning_rate"]
    panel.dimensions.setCurrentRow(0)
    panel.dimensions.setFocus()
    qtbot.keyClick(panel.dimensions, Qt.Key.Key_Delete)
    assert window.doc.project.search.dimensions == []
    window.undo_action.trigger()
    window.undo_action.trigger()
    assert len(window.doc.project.search.dimensions) == 2


def test_settings_are_undo_steps_and_the_count_follows_the_strategy(window, qtbot):
    show_tab(qtbot, window, "Search")
    panel = window.search
    window.doc.edit("Search", lambda p: p.search.dimensions.extend([
        Dimension("training.learning_rate", low=0.0001, high=0.01, scale="log", count=3),
        Dimension("layer.dense_1.activation", values=["relu", "tanh"])]))
    # No run says how long an epoch takes: it is measured in the background.
    assert panel.estimate.text() == "6 trials, time unknown until measured (measuring…)"
    # The tab, built as it first shows, reads the runs first, then measures.
    qtbot.waitUntil(lambda: "measuring" not in panel.estimate.text(), timeout=RUN_TIMEOUT_MS)
    assert re.fullmatch(r"6 trials, about \d+ (s|min)", panel.estimate.text())
    assert panel.dimensions.item(0).text() == "Learning rate: 0.0001, 0.001, 0.01 (range)"
    assert panel.start_button.isEnabled()

    steps = window.doc.undo_stack.count()
    panel.strategy.setCurrentIndex(panel.strategy.findData("random"))
    assert window.doc.project.search.strategy == "random"
    assert panel.trials.isEnabled()
    panel.trials.setFocus()
    qtbot.keyClick(panel.trials, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(panel.trials, "3")
    assert window.doc.project.search.trials == 3
    assert panel.estimate.text().startswith("3 trials, ")
    panel.metric_box.setCurrentIndex(panel.metric_box.findData("val_loss"))
    assert window.doc.project.search.minimize
    assert window.doc.undo_stack.count() == steps + 3
    assert panel.workers.maximum() == panel.cores

    window.undo_action.trigger()
    window.undo_action.trigger()
    window.undo_action.trigger()
    assert window.doc.project.search.strategy == "grid"
    assert panel.strategy.currentData() == "grid"
    assert not panel.trials.isEnabled()


def test_the_random_start_shows_its_automatic_count_for_tpe_and_an_edit_is_one_undo_step(
        qtbot):
    doc = ProjectDocument(hidden_layer_project())
    panel = SearchPanel(doc)
    qtbot.addWidget(panel)
    startup = panel.editor.startup
    assert not startup.isVisibleTo(panel)  # a grid draws nothing at random
    panel.strategy.setCurrentIndex(panel.strategy.findData("bayes"))
    assert startup.isVisibleTo(panel)
    assert startup.text() == "Auto (2)"  # 10 trials
    panel.trials.setValue(20)
    assert startup.text() == "Auto (4)"
    assert "a fifth of the trials" in startup.toolTip()

    steps = doc.undo_stack.count()
    startup.setFocus()
    qtbot.keyClick(startup, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(startup, "7")
    assert doc.project.search.startup_trials == 7 and startup.text() == "7"
    assert doc.undo_stack.count() == steps + 1
    doc.undo_stack.undo()
    assert doc.project.search.startup_trials is None and startup.text() == "Auto (4)"
    panel.strategy.setCurrentIndex(panel.strategy.findData("hyperband"))
    assert startup.isVisibleTo(panel)  # Hyperband samples with the same TPE
    panel.strategy.setCurrentIndex(panel.strategy.findData("random"))
    assert not startup.isVisibleTo(panel)
    shutdown_jobs(panel)


def test_the_add_menu_offers_every_searchable_value_and_opens_the_dialog(window, qtbot):
    show_tab(qtbot, window, "Search")
    panel = window.search
    panel.add_menu.aboutToShow.emit()
    menus = {a.text(): a.menu() for a in panel.add_menu.actions()}
    assert "Training" in menus and "dense_1" in menus and "conv2d_1" in menus
    assert "flatten_1" not in menus  # nothing to search there
    training = [a.text() for a in menus["Training"].actions()]
    assert training[:3] == ["Learning rate", "Batch size", "Optimizer"]
    assert "Units" in [a.text() for a in menus["dense_1"].actions()]

    steps = window.doc.undo_stack.count()
    next(a for a in menus["Training"].actions() if a.text() == "Batch size").trigger()
    dialog = panel.dialog
    qtbot.waitExposed(dialog)
    assert dialog.values.text() == str(window.doc.project.training.batch_size)  # the current
    type_over(qtbot, dialog.values, "32, 64, 128")
    qtbot.keyClick(dialog.values, Qt.Key.Key_Return)
    assert window.doc.project.search.dimensions == [
        Dimension("training.batch_size", values=[32, 64, 128])]
    assert window.doc.undo_stack.count() == steps + 1
    assert window.training.search_buttons["batch_size"].searched


def test_whether_a_dropout_is_present_is_added_from_the_add_menu_as_one_undo_step(qtbot):
    project = hidden_layer_project()
    project.graph.insert_between("hidden", "dense_1", Node("dropout_1", "Dropout"))
    doc = ProjectDocument(project)
    panel = SearchPanel(doc)
    qtbot.addWidget(panel)
    panel.add_menu.aboutToShow.emit()
    menus = {a.text(): a.menu() for a in panel.add_menu.actions()}
    assert PRESENT_ENTRY not in [a.text() for a in menus["hidden"].actions()]  # it has a shape
    entry = next(a for a in menus["dropout_1"].actions() if a.text() == PRESENT_ENTRY)

    steps = doc.undo_stack.count()
    entry.trigger()
    dialog = panel.dialog
    qtbot.waitExposed(dialog)
    assert dialog.choices[True].isChecked() and not dialog.choices[False].isChecked()
    tick(qtbot, dialog.choices[False])
    qtbot.mouseClick(dialog.ok, LEFT)
    assert doc.project.search.dimensions == [Dimension("layer.dropout_1.present",
                                                       values=[True, False])]
    assert doc.undo_stack.count() == steps + 1
    assert panel.dimensions.item(0).text().startswith("dropout_1 · Present")
    doc.undo_stack.undo()
    assert doc.project.search.dimensions == []
    assert "Present" not in panel.dimensions.item(0).text()
    shutdown_jobs(panel)


def test_a_stopped_search_keeps_its_finished_trials_and_resumes_after_reopening(
        window, qtbot, tmp_path, gate):
    project = hidden_layer_project()
    project.search.dimensions = [Dimension("training.learning_rate",
                                           values=[0.01, 0.003, 0.001])]
    path = tmp_path / "tiny.studio.json"
    save_project(project, path)
    window.doc.open(path)
    show_tab(qtbot, window, "Search")
    panel = window.search
    assert not panel.resume_button.isEnabled()

    gate.after(SearchSession, "conclude")  # the search waits once the first trial ended
    with qtbot.waitSignal(panel.trial_ended, timeout=SEARCH_TIMEOUT_MS):
        qtbot.mouseClick(panel.start_button, LEFT)
    qtbot.waitUntil(gate.reached.is_set)
    with qtbot.waitSignal(panel.search_finished, timeout=SEARCH_TIMEOUT_MS) as ended:
        qtbot.keyClick(panel.table, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
        gate.open()  # no other trial starts
    assert ended.args == ["stopped"], panel.last_error
    assert [row[1] for row in panel.table.row_texts()] == ["finished"]
    assert panel.progress.text() == "Stopped"
    assert panel.resume_button.isEnabled()
    kept = panel.table.row_texts()

    window.doc.replace(hidden_layer_project(), None)  # another project: no search to show
    assert panel.table.row_texts() == [] and not panel.resume_button.isEnabled()
    window.doc.open(path)  # as after a restart: the record on disk is all there is
    assert panel.table.row_texts() == kept
    assert panel.progress.text() == "Stopped" and "Resume goes on" in panel.status.text()
    assert panel.resume_button.isEnabled()

    with qtbot.waitSignal(panel.search_finished, timeout=SEARCH_TIMEOUT_MS) as ended:
        qtbot.mouseClick(panel.resume_button, LEFT)
    assert ended.args == ["finished"], panel.last_error
    rows = panel.table.row_texts()
    assert [row[1] for row in rows] == ["finished"] * 3
    assert sorted(row[2] for row in rows) == ["0.001", "0.003", "0.01"]
    assert not panel.resume_button.isEnabled()


def test_parallel_axes_spread_choices_and_put_log_ranges_on_a_log_axis():
    log = axis_for("Learning rate", Dimension("training.learning_rate", low=0.0001, high=0.01,
                                              scale="log", count=3), [0.0003])
    assert log.log
    assert log.position(0.001) == pytest.approx(0.5)
    assert log.position(0.0001) == 0 and log.position(0.01) == 1
    linear = axis_for("Units", Dimension("layer.d.units", values=[4, 8, 16]), [4, 8])
    assert not linear.log
    assert linear.position(8) == pytest.approx(1 / 3)
    assert [text for _, text in linear.ticks()] == ["4", "8", "16"]
    choices = axis_for("Activation", Dimension("layer.d.activation",
                                               values=["relu", "tanh", "sigmoid"]), ["relu"])
    assert [choices.position(v) for v in ("relu", "tanh", "sigmoid")] == [0, 0.5, 1]
    assert choices.position("elu") is None
    on_off = axis_for("Nesterov", Dimension("training.nesterov", values=[True, False]), [])
    assert [text for _, text in on_off.ticks()] == ["on", "off"]
    metric = metric_axis("Validation accuracy", [0.5, 0.9, float("nan"), 0.7])
    assert (metric.low, metric.high) == (0.5, 0.9)
    assert metric.position(0.7) == pytest.approx(0.5)


def test_the_trial_table_says_why_a_trial_failed_and_highlights_only_a_finished_best(qtbot):
    from studio.gui.search.trial_table import TrialTable

    table = TrialTable()
    qtbot.addWidget(table)
    model = table.trials
    model.start(["training.learning_rate"], "val_loss", minimize=True)
    model.update({"number": 0, "params": {"training.learning_rate": 10.0}})
    model.add_epoch(0, 1, {"val_loss": 2.5})
    assert table.row_texts() == [["0", "running…", "10", "2.5000", ""]]
    model.update({"number": 0, "status": "failed", "value": None, "seconds": 3.0,
                  "reason": "The loss became NaN: lower the learning rate."})
    model.update({"number": 1, "params": {"training.learning_rate": 0.001}, "status": "pruned",
                  "value": 0.2, "seconds": 65.0})
    model.update({"number": 2, "params": {"training.learning_rate": 0.01}, "status": "finished",
                  "value": 0.3, "seconds": 3700.0})
    assert model.best == 2  # the lowest loss of a finished trial; a pruned one does not win
    assert [row[1] for row in table.row_texts()] == ["failed", "stopped early", "finished"]
    assert [row[4] for row in table.row_texts()] == ["3 s", "1 min 05 s", "1 h 01 min"]
    failed = table.proxy.index(0, 1)
    assert "The loss became NaN" in failed.data(Qt.ItemDataRole.ToolTipRole)
    assert failed.data(Qt.ItemDataRole.ForegroundRole).color().name() == "#b3261e"
    assert table.proxy.index(2, 0).data(Qt.ItemDataRole.BackgroundRole) is not None
    assert table.proxy.index(1, 0).data(Qt.ItemDataRole.BackgroundRole) is None

    table.sortByColumn(3, Qt.SortOrder.AscendingOrder)  # by the metric, lowest first
    assert [row[0] for row in table.row_texts()] == ["1", "2", "0"]


def test_the_newest_runs_time_is_read_off_the_gui_thread(qtbot, gate, monkeypatch):
    readers = []
    real = estimate.latest_seconds_per_epoch

    def held(root):
        readers.append(threading.current_thread())
        gate.hold()
        return real(root)

    monkeypatch.setattr(estimate, "latest_seconds_per_epoch", held)
    project = hidden_layer_project()
    project.search.dimensions = [Dimension("training.learning_rate", values=[0.01, 0.001])]
    doc = ProjectDocument(project)
    write_run(runs_root(doc.place), 0, epochs=4)
    panel = SearchPanel(doc)
    qtbot.addWidget(panel)
    assert gate.reached.wait(RUN_TIMEOUT_MS / 1000)
    assert readers and readers[0] is not threading.main_thread()
    assert panel.estimate.text() == "2 trials, time unknown until measured (measuring…)"
    assert not panel.measuring.busy()  # a run may say it: nothing is measured meanwhile
    gate.open()
    seconds = estimated_seconds(project, project.search, 1.5, panel.cores)  # 1.5 s an epoch
    qtbot.waitUntil(lambda: panel.estimate.text() ==
                    f"2 trials, about {format_duration(seconds, 'rough')}")
    assert not panel.measuring.busy()
    shutdown_jobs(panel)


def test_the_metric_axis_is_labelled_in_round_steps():
    metric = metric_axis("Validation accuracy", [0.9023, 0.9751, 0.93])
    assert [text for _, text in metric.ticks()] == ["0.9023", "0.92", "0.94", "0.96", "0.9751"]
    heights = [height for height, _ in metric.ticks()]
    assert heights == sorted(heights) and heights[0] == 0 and heights[-1] == 1
    assert round_marks(0.0, 1.0) == [0.2, 0.4, 0.6, 0.8] and round_marks(2.0, 2.0) == []


@pytest.mark.parametrize("minimize", [False, True])
def test_parallel_coordinates_draw_a_colour_scale_and_labels_over_the_lines(qtbot, minimize):
    create_application()
    view = ParallelCoordinates()
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    qtbot.waitExposed(view)
    dimension = Dimension("layer.d.units", values=[32, 64, 128])
    trials = [{"number": n, "params": {"layer.d.units": units}, "value": value}
              for n, (units, value) in enumerate([(32, 0.91), (64, 0.95), (128, 0.93)])]
    view.show_trials([("Units", dimension)], "Validation accuracy", trials, minimize, 1)
    qtbot.wait(1)

    stops = view.scale.brush().gradient().stops()
    best, worst = (stops[0], stops[-1]) if minimize else (stops[-1], stops[0])
    assert best[1] == view.colors.map(1.0, mode="qcolor")  # yellow at the best metric
    assert worst[1] == view.colors.map(0.0, mode="qcolor")
    for number, height in ((0, 0.0), (2, 0.5)):  # 0.91 at the bottom, 0.93 half-way up
        line = view.lines[number].opts["pen"].color()
        assert line == view.colors.map(1 - height if minimize else height, mode="qcolor")

    texts = [label.toPlainText() for label in view.labels]
    assert {"Units", "Validation accuracy", "0.93", "0.92", "0.94"} <= set(texts)
    area = QRectF(view.plot.rect())
    top_line = max(line.zValue() for line in view.lines.values())
    for label in view.labels:
        assert label.zValue() > top_line and label.fill.color().alpha() >= 230
        assert area.contains(label.sceneBoundingRect()), label.toPlainText()


def test_a_detection_project_searches_its_map50_by_default(window, qtbot):
    window.doc.replace(from_template("small_detector"), None)
    show_tab(qtbot, window, "Search")
    panel = window.search
    box = panel.metric_box
    assert [box.itemData(i) for i in range(box.count())] == [
        "val_map50", "val_map", "val_loss", "loss"]
    assert box.currentText() == "Validation mAP@0.5"
    assert window.doc.project.search.metric == "val_accuracy"  # the task's default shows
    assert panel.curves.metric_box.currentText() == "Validation mAP@0.5"
    box.setCurrentIndex(box.findData("val_map"))
    assert window.doc.project.search.metric == "val_map"
    assert not window.doc.project.search.minimize
    window.doc.edit("Use MNIST-10k", lambda p: setattr(p, "dataset", DatasetChoice()))
    assert [box.itemData(i) for i in range(box.count())] == [
        "val_accuracy", "val_loss", "accuracy", "loss"]
    assert box.currentData() == "val_accuracy"


def test_a_segmentation_project_searches_its_mean_iou_by_default(window, qtbot, tmp_path):
    window.doc.replace(segmenter(demo_folder(tmp_path / "digits")), None)
    show_tab(qtbot, window, "Search")
    box = window.search.metric_box
    assert [box.itemData(i) for i in range(box.count())] == [
        "val_mean_iou", "val_pixel_accuracy", "val_loss", "mean_iou", "pixel_accuracy", "loss"]
    assert box.currentText() == "Validation mean IoU"
    assert window.search.curves.metric_box.currentText() == "Validation mean IoU"
    box.setCurrentIndex(box.findData("val_pixel_accuracy"))
    assert window.doc.project.search.metric == "val_pixel_accuracy"
    assert not window.doc.project.search.minimize
