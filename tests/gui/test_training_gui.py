"""Training from the window: live progress, Stop, finished and failed runs, closing mid-run."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QToolButton

from studio.core.model.graph import Node
from studio.core.project.document import load_project
from studio.core.runs import folders as runs
from studio.core.runs.folders import RunFolder
from studio.gui.training.panel import usage_text
from tests.gui.support import (
    RUN_TIMEOUT_MS,
    click_row,
    isolate_settings,
    run_folders,
    run_status,
    runs_of,
    type_into,
)
from tests.helpers import tiny_project

LEFT = Qt.MouseButton.LeftButton


def _drawn(series) -> int:
    """How many points a curve's plot item shows."""
    x, _ = series.item.getData()
    return 0 if x is None else len(x)


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


def test_start_shows_live_progress_and_stop_keeps_the_run(window, qtbot, gate):
    gate.after(RunFolder, "add_epoch")  # the run waits once epoch 1 is recorded
    panel = window.training
    assert panel.start_button.isEnabled()
    assert not panel.stop_button.isEnabled()
    assert panel.curves.point_count() == 0
    planned_x, planned_rate = panel.curves.series["planned_learning_rate"].item.getData()
    assert planned_x[0] == 0 and planned_x[-1] == pytest.approx(5)  # the demo's 5 epochs
    # Adam at 2e-3, falling along a cosine towards 0 by the end of the run.
    assert planned_rate[0] == pytest.approx(0.002) and planned_rate[-1] < 1e-5
    assert np.all(np.diff(planned_rate) <= 0)

    with qtbot.waitSignal(panel.run_started, timeout=5_000):
        qtbot.mouseClick(panel.start_button, LEFT)
    assert panel.is_running()
    assert not panel.start_button.isEnabled()
    assert panel.stop_button.isEnabled()

    qtbot.waitUntil(lambda: panel.curves.point_count() >= 3, timeout=RUN_TIMEOUT_MS)
    text = panel.progress.text()
    assert re.search(r"Epoch 1/5 · batch \d+/250 · [\d,]+ samples/s · ETA \d+:\d\d", text), text
    assert panel.progress.value() > 0
    assert "Training 257,162 parameters on 8,000 samples" in panel.status.text()
    qtbot.waitUntil(lambda: re.fullmatch(r"CPU \d+% · memory [\d.,]+ [KMG]B",  # 1,010 MB
                                         panel.usage.text()) is not None)
    # The redraw timer pushes the points into the loss plot.
    qtbot.waitUntil(lambda: _drawn(panel.curves.series["batch_loss"]) > 0)
    # The rate the optimizer used, read from it during training, is drawn beside the plan.
    used = panel.curves.series["actual_learning_rate"]
    qtbot.waitUntil(lambda: _drawn(used) > 0)
    assert used.y == pytest.approx(np.interp(used.x, planned_x, planned_rate), rel=5e-3)

    qtbot.waitUntil(gate.reached.is_set, timeout=RUN_TIMEOUT_MS)
    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(panel.stop_button, LEFT)
        assert not panel.stop_button.isEnabled()
        assert panel.progress.text() == "Stopping…"
        gate.open()  # epoch 2 stops at its first batch and does not count
    assert finished.args == ["stopped"]
    assert not panel.is_running()
    assert panel.start_button.isEnabled()
    assert not panel.stop_button.isEnabled()
    assert panel.progress.text() == "Stopped"

    (run_dir,) = run_folders(runs_of(window))
    assert run_dir == Path(panel.run_dir)
    assert run_dir.name.endswith("small-cnn")
    assert re.fullmatch(r"Stopped in \d+ s · val accuracy \d+\.\d% · val loss [\d.e-]+",
                        panel.status.text()), panel.status.text()
    status = run_status(run_dir)
    assert status["status"] == "stopped"
    assert status["epochs"] == 1
    assert (run_dir / runs.PROJECT_FILE).exists()
    assert window.statusBar().currentMessage() == f"Run stopped: saved in {run_dir}"


def test_the_usage_line_shows_each_gpu_the_sampler_reads():
    event = {"cpu_percent": 57.4, "memory_bytes": 3 * 2**30, "gpu0_percent": 91.0,
             "gpu0_memory_bytes": 5 * 2**30, "gpu1_memory_bytes": 2**30}
    assert usage_text(event) == "CPU 57% · memory 3 GB · GPU 0 91% 5 GB · GPU 1 1 GB"


def test_stop_while_the_run_is_still_starting_ends_it_as_stopped(
    window, qtbot
):
    panel = window.training
    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(panel.start_button, LEFT)
        assert panel.is_running()
        qtbot.mouseClick(panel.stop_button, LEFT)  # before model.fit has begun
        assert panel.progress.text() == "Stopping…"
    assert finished.args == ["stopped"]
    assert panel.progress.text() == "Stopped"
    assert panel.last_error == ""
    assert not panel.is_running()
    assert panel.start_button.isEnabled()
    assert not panel.stop_button.isEnabled()
    assert panel.curves.point_count() == 0

    (run_dir,) = run_folders(runs_of(window))
    assert run_dir == Path(panel.run_dir)
    assert run_status(run_dir)["status"] == "stopped"
    assert run_status(run_dir)["epochs"] == 0
    assert re.fullmatch(r"Stopped in \d+ s", panel.status.text()), panel.status.text()
    assert str(run_dir) in panel.open_button.toolTip()
    assert window.statusBar().currentMessage() == f"Run stopped: saved in {run_dir}"


def test_a_short_run_completes_and_saves_everything(window, qtbot, opened_urls):
    panel = window.training
    window.doc.replace(tiny_project(epochs=3), None)
    assert panel.epochs.value() == 3
    type_into(qtbot, panel.epochs, "1")
    assert window.doc.project.training.epochs == 1

    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.keyClick(window, Qt.Key.Key_F5)  # Training > Start
    assert finished.args == ["finished"]
    assert panel.progress.text() == "Done"
    summary = panel.status.text()
    assert re.fullmatch(r"Finished in \d+ s · val accuracy \d+\.\d% · val loss [\d.e-]+",
                        summary), summary
    assert panel.progress.value() == panel.progress.maximum()
    assert panel.start_button.isEnabled()

    (run_dir,) = run_folders(runs_of(window))
    assert run_dir == Path(panel.run_dir)
    for name in (runs.PROJECT_FILE, runs.METRICS_FILE, runs.MODEL_FILE, runs.PREPROCESSING_FILE):
        assert (run_dir / name).is_file(), name
    assert run_status(run_dir)["status"] == "finished"
    snapshot = load_project(run_dir / runs.PROJECT_FILE)
    assert snapshot.name == "Tiny" and snapshot.training.epochs == 1
    rows = list(csv.DictReader((run_dir / runs.METRICS_FILE).open(encoding="utf-8")))
    assert [row["epoch"] for row in rows] == ["1"]
    assert float(rows[0]["val_accuracy"]) > 0.5
    # One end-of-epoch point each for training and validation.
    assert len(panel.curves.series["train_score"].x) == 1
    assert len(panel.curves.series["val_score"].x) == 1
    assert f"val accuracy {float(rows[0]['val_accuracy']) * 100:.1f}%" in summary
    assert f"val loss {float(rows[0]['val_loss']):.3g}" in summary

    window.doc.edit("Set epochs", lambda p: setattr(p.training, "epochs", 2))
    assert panel.status.text() == summary  # the result stays while the project is edited
    qtbot.mouseClick(panel.open_button, LEFT)
    assert opened_urls == [QUrl.fromLocalFile(str(run_dir))]


def test_a_diverging_run_fails_clearly_and_the_app_can_train_again(
    window, qtbot
):
    panel = window.training
    project = tiny_project(epochs=1)
    project.graph.insert(1, Node("rescaling_1", "Rescaling", {"scale": 1e38, "offset": 0.0}))
    window.doc.replace(project, None)
    assert panel.start_button.isEnabled()

    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(panel.start_button, LEFT)
    assert finished.args == ["failed"]
    message = panel.status.text()
    assert re.search(r"loss became (nan|inf) in epoch 1, batch \d+", message), message
    assert "lower learning rate" in message
    assert panel.progress.text() == "Failed"
    assert window.statusBar().currentMessage() == "Training failed"
    assert panel.start_button.isEnabled()
    assert not panel.stop_button.isEnabled()
    (failed_dir,) = run_folders(runs_of(window))
    assert run_status(failed_dir)["status"] == "failed"

    # Fix the model by removing the overflowing layer, then train again.
    click_row(qtbot, window, "rescaling_1")
    qtbot.mouseClick(window.model_list.remove_button, LEFT)
    assert "rescaling_1" not in window.doc.project.graph.ids()
    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(panel.start_button, LEFT)
    assert finished.args == ["finished"]
    assert "loss became" not in panel.status.text()
    assert panel.progress.text() == "Done"
    assert len(run_folders(runs_of(window))) == 2


def test_closing_the_window_mid_run_stops_it_and_joins_the_thread(
    window, qtbot, started_workers
):
    panel = window.training
    with qtbot.waitSignal(panel.run_started, timeout=5_000):
        qtbot.mouseClick(panel.start_button, LEFT)
    assert panel.is_running() and started_workers
    # The first batch event has reached the window.
    qtbot.waitUntil(lambda: panel.curves.point_count() > 0, timeout=RUN_TIMEOUT_MS)

    assert window.close()
    assert not window.isVisible()
    assert not panel.is_running()
    assert not any(worker.is_running() for worker in started_workers)
    assert not panel.curves.timer.isActive()
    (run_dir,) = run_folders(runs_of(window))
    assert run_status(run_dir)["status"] == "stopped"


def test_a_stopped_run_is_listed_in_runs_and_resumes_from_there(window, qtbot, gate):
    panel = window.training
    window.doc.replace(tiny_project(epochs=3), None)
    gate.after(RunFolder, "add_epoch")  # the run waits once epoch 1 is recorded

    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(panel.start_button, LEFT)
        qtbot.waitUntil(gate.reached.is_set, timeout=RUN_TIMEOUT_MS)
        qtbot.mouseClick(panel.stop_button, LEFT)
        gate.open()  # epoch 1 is checkpointed; epoch 2 stops at its first batch
    assert finished.args == ["stopped"]
    (run_dir,) = run_folders(runs_of(window))
    assert [int(r["epoch"]) for r in csv.DictReader((run_dir / runs.METRICS_FILE).open())] == [
        1]
    history = window.runs
    button = history.findChild(QToolButton, "history-resume-button")

    def resumable() -> bool:  # once the refresh after the run's end has listed it as stopped
        history.select_runs([run_dir.name])
        return button.isEnabled()

    qtbot.waitUntil(resumable, timeout=10_000)

    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(button, LEFT)
    assert finished.args == ["finished"]
    assert [int(r["epoch"]) for r in csv.DictReader((run_dir / runs.METRICS_FILE).open())] == [
        1, 2, 3]
    assert panel.curves.series["val_loss"].x == [1, 2, 3]  # the curves went on from epoch 1
    assert run_status(run_dir)["status"] == "finished"
