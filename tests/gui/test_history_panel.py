"""The history panel driven by mouse and keyboard: sorting, filtering, comparing, overlaying
curves, opening, resuming and deleting runs."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QMessageBox, QToolButton

from studio.core.runs import folders as runs
from studio.core.runs.lock import RunLock
from studio.gui.runs.history_panel import NO_RUNS, HistoryPanel
from studio.gui.runs.run_table import COLUMNS
from studio.gui.shell.app import create_application
from studio.gui.widgets.jobs import shutdown_jobs
from tests.run_folders import dead_pid, now_iso, rewrite_record, write_run

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def root(tmp_path):
    """Six runs: finished (one with a model), failed, interrupted (with a checkpoint),
    stopped before its first epoch."""
    root = tmp_path / "runs" / "demo"
    write_run(root, 0, optimizer="sgd", model=True)
    write_run(root, 1, learning_rate=0.01, epochs=12)
    write_run(root, 2, status="failed", epochs=5, epochs_planned=20)
    write_run(root, 3, status="running", pid=dead_pid(), epochs=8, epochs_planned=20,
              checkpoint=True)
    write_run(root, 4, status="stopped", epochs=0, epochs_planned=10)
    write_run(root, 5, optimizer="rmsprop", batch_size=128, epochs=15)
    return root


@pytest.fixture
def panel(qtbot, root):
    """The panel, shown, with its first listing in."""
    create_application()
    panel = HistoryPanel(lambda: root)
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.show()
    yield panel
    shutdown_jobs(panel)


def column(name: str) -> int:
    return next(i for i, c in enumerate(COLUMNS) if c.key == name)


def shown(panel, key: str = "id") -> list[str]:
    """The texts of one column, top to bottom."""
    proxy = panel.proxy
    return [proxy.index(row, column(key)).data() for row in range(proxy.rowCount())]


def click_row(qtbot, panel, run_id: str, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    row = shown(panel).index(run_id)
    rect = panel.table.visualRect(panel.proxy.index(row, 0))
    qtbot.mouseClick(panel.table.viewport(), LEFT, modifier, rect.center())


def click_header(qtbot, panel, key: str) -> None:
    header = panel.table.horizontalHeader()
    section = column(key)
    x = header.sectionViewportPosition(section) + header.sectionSize(section) // 2
    qtbot.mouseClick(header.viewport(), LEFT, pos=QPoint(x, header.height() // 2))


def click_action(qtbot, panel, action) -> None:
    qtbot.mouseClick(panel.findChild(QToolButton, f"{action.objectName()}-button"), LEFT)


def test_every_run_is_listed_newest_first_and_interruption_shows(panel, root):
    assert shown(panel) == sorted((p.name for p in root.iterdir() if p.is_dir()),
                                  reverse=True)
    assert panel.count_label.text() == "6 runs · 1 interrupted"
    row = shown(panel, "status").index("⚠ interrupted")
    cell = panel.proxy.index(row, column("status"))
    assert cell.data(Qt.ItemDataRole.FontRole).bold()
    assert "Resume continues it" in cell.data(Qt.ItemDataRole.ToolTipRole)
    assert shown(panel, "epochs")[row] == "8/20"


def test_clicking_a_header_sorts_by_it_with_empty_values_last(qtbot, panel):
    click_header(qtbot, panel, "val_loss")
    values = shown(panel, "val_loss")
    assert values[-1] == "" and values[:-1] == sorted(values[:-1])
    click_header(qtbot, panel, "val_loss")
    values = shown(panel, "val_loss")
    assert values[-1] == "" and values[:-1] == sorted(values[:-1], reverse=True)
    click_header(qtbot, panel, "epochs")
    assert shown(panel, "epochs") == ["0/10", "5/20", "8/20", "12/12", "15/15", "20/20"]


def test_each_run_shows_its_tasks_best_score_and_sorts_by_it(qtbot, tmp_path):
    root = tmp_path / "runs" / "masks"
    write_run(root, 0, task="segmentation", best={"val_mean_iou": 0.7, "val_loss": 0.2})
    write_run(root, 1, task="segmentation", best={"val_mean_iou": 0.55, "val_loss": 0.3})
    write_run(root, 2, task="segmentation", epochs=0, best={})
    create_application()
    panel = HistoryPanel(lambda: root)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.show()
    click_header(qtbot, panel, "score")
    assert shown(panel, "score") == ["val mean IoU 55.0%", "val mean IoU 70.0%", ""]
    shutdown_jobs(panel)


def test_typing_a_filter_and_picking_a_status_keep_matching_runs(qtbot, panel):
    qtbot.keyClicks(panel.filter_edit, "RMS")
    assert shown(panel, "optimizer") == ["rmsprop"]
    assert panel.count_label.text() == "1 of 6 runs · 1 interrupted"
    panel.filter_edit.clear()
    panel.status_combo.setFocus()
    qtbot.keyClicks(panel.status_combo, "Fa")
    assert panel.status_combo.currentData() == "failed"
    assert shown(panel, "status") == ["failed"]


def test_two_selected_runs_compare_their_settings(qtbot, panel, root):
    first, second = shown(panel)[0], shown(panel)[-1]
    assert not panel.compare_action.isEnabled()
    click_row(qtbot, panel, first)
    click_row(qtbot, panel, second, Qt.KeyboardModifier.ControlModifier)
    assert [run.id for run in panel.selected_runs()] == [first, second]
    click_action(qtbot, panel, panel.compare_action)
    table = panel.differences
    rows = {table.item(r, 0).text(): (table.item(r, 1).text(), table.item(r, 2).text())
            for r in range(table.rowCount())}
    assert rows == {"training.optimizer": ("rmsprop", "sgd"),
                    "training.batch_size": ("128", "64"), "training.epochs": ("15", "20")}
    assert table.horizontalHeaderItem(1).text() == first
    assert panel.details.currentIndex() == 1


def test_overlay_draws_one_curve_per_selected_run(qtbot, panel):
    ids = shown(panel)
    click_row(qtbot, panel, ids[0])
    click_row(qtbot, panel, ids[3], Qt.KeyboardModifier.ShiftModifier)
    assert len(panel.selected_runs()) == 4
    click_action(qtbot, panel, panel.overlay_action)
    with_epochs = [run for run in panel.selected_runs() if run.epochs]
    accuracy = panel.accuracy_plot.listDataItems()
    assert [item.name() for item in accuracy] == [run.id for run in with_epochs]
    assert [len(item.xData) for item in accuracy] == [run.epochs for run in with_epochs]
    assert len(panel.loss_plot.listDataItems()) == 2 * len(with_epochs)
    assert "ended before its first epoch" in panel.message.text()


def test_open_model_and_resume_ask_for_the_run(qtbot, panel, root):
    with_model = next(run for run in panel.model.runs if run.has_model())
    interrupted = next(run for run in panel.model.runs if run.status == "interrupted")
    click_row(qtbot, panel, interrupted.id)
    assert panel.resume_action.isEnabled() and not panel.open_action.isEnabled()
    with qtbot.waitSignal(panel.resume_requested) as resumed:
        click_action(qtbot, panel, panel.resume_action)
    assert resumed.args == [interrupted.path]
    click_row(qtbot, panel, with_model.id)
    assert panel.open_action.isEnabled() and not panel.resume_action.isEnabled()
    with qtbot.waitSignal(panel.open_model_requested) as opened:
        click_action(qtbot, panel, panel.open_action)
    assert opened.args == [with_model.path / runs.MODEL_FILE]


def test_delete_asks_first_then_removes_the_run(qtbot, panel, monkeypatch):
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    asked = []

    def question(parent, title, text, *args):
        asked.append(text)
        return answers[len(asked) - 1]

    monkeypatch.setattr(QMessageBox, "question", question)
    victim = next(run for run in panel.model.runs if run.status == "failed")
    click_row(qtbot, panel, victim.id)
    qtbot.keyClick(panel.table, Qt.Key.Key_Delete)
    assert victim.path.exists() and len(shown(panel)) == 6
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        click_action(qtbot, panel, panel.delete_action)
    assert asked == [f"Delete {victim.id} with its model, checkpoints and logs? This "
                     "cannot be undone."] * 2
    assert not victim.path.exists() and victim.id not in shown(panel)
    assert panel.count_label.text() == "5 runs · 1 interrupted"


def test_a_live_run_is_kept_and_the_reason_shown(qtbot, panel, root, monkeypatch, request):
    live = panel.model.runs[0]
    rewrite_record(live.path, status="running", pid=os.getpid(), updated=now_iso())
    lock = RunLock(live.path)  # as this app's training holds it
    assert lock.acquire()
    request.addfinalizer(lock.release)
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.refresh()
    warnings = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *args: QMessageBox.StandardButton.Yes)
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: warnings.append(text))
    click_row(qtbot, panel, live.id)
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        click_action(qtbot, panel, panel.delete_action)
    assert "still running" in warnings[0] and live.path.exists()
    assert shown(panel, "status")[shown(panel).index(live.id)] == "running"


def test_refresh_shows_runs_written_meanwhile_and_keeps_the_selection(qtbot, panel, root):
    chosen = panel.model.runs[1].id
    click_row(qtbot, panel, chosen)
    added = write_run(root, 9)
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.refresh()
    assert shown(panel)[0] == added.name and len(shown(panel)) == 7
    assert [run.id for run in panel.selected_runs()] == [chosen]


def test_a_run_is_exported_from_the_panel_and_its_verification_shown(qtbot, cnn_run,
                                                                    tmp_path):
    create_application()
    panel = HistoryPanel(lambda: cnn_run.parent)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.show()
    click_row(qtbot, panel, cnn_run.name)
    assert panel.export_action.isEnabled()
    click_action(qtbot, panel, panel.export_action)
    dialog = panel.export_dialog
    qtbot.waitExposed(dialog)
    dialog.format.setCurrentIndex(dialog.format.findData("tflite"))
    dialog.folder.setText(str(tmp_path / "out"))
    qtbot.mouseClick(dialog.export_button, LEFT)
    assert dialog.job.busy() and not dialog.export_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.job.busy(), timeout=120_000)
    assert dialog.report is not None, dialog.result.text()
    assert not dialog.report.flagged
    assert (tmp_path / "out" / "model.tflite").is_file()
    assert "top answer on" in dialog.result.text() and str(tmp_path / "out") in (
        dialog.result.text())
    assert dialog.progress.text() == "Verified"
    dialog.close()
    shutdown_jobs(panel)


def test_without_runs_a_sentence_says_how_to_make_one(qtbot, tmp_path):
    create_application()
    root = tmp_path / "runs" / "new"
    panel = HistoryPanel(lambda: root)
    qtbot.addWidget(panel)
    panel.resize(1000, 500)
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.show()
    assert panel.no_runs.isVisible() and not panel.table.isVisible()
    assert panel.no_runs.text() == NO_RUNS and "Start (F5)" in NO_RUNS
    write_run(root, 0)
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.refresh()
    assert panel.table.isVisible() and not panel.no_runs.isVisible()
    qtbot.keyClicks(panel.filter_edit, "no such run")  # a filter matching none keeps the table
    assert panel.proxy.rowCount() == 0 and panel.table.isVisible()
    shutdown_jobs(panel)
