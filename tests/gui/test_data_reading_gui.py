"""A CSV is never parsed on the window's thread: training waits, saying the data is being read."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtWidgets import QFileDialog

from studio.core.data import tables as table_data
from studio.core.model.graph import Graph, Node
from studio.core.project.document import Project
from studio.gui.data.panel import CANCELLED
from tests.gui.support import isolate_settings, show_tab, type_into
from tests.gui.test_data_gui import LEFT, LOAD_MS, choose_source, open_data_view


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


def write_table(path, rows: int) -> None:
    """Two numeric features and a label of two classes."""
    lines = [f"{i % 7},{i * 0.5},{'ab'[i % 2]}" for i in range(rows)]
    path.write_text("petal,sepal,kind\n" + "\n".join(lines) + "\n", encoding="utf-8")


def test_a_csv_is_read_in_the_background_while_start_waits_for_it(window, qtbot, tmp_path,
                                                                   monkeypatch):
    table = tmp_path / "flowers.csv"
    write_table(table, 30)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(table), ""))
    parsed_on: list[threading.Thread] = []
    may_end = threading.Event()  # a gate: every reading held at it ends when the test opens it
    real_read_rows = table_data._read_rows

    def recording_read_rows(path, on_progress, stop):
        parsed_on.append(threading.current_thread())
        if len(parsed_on) == 1:
            stop.wait(LOAD_MS / 1000)  # the first reading lasts until it is cancelled
        else:
            # The others, until the test lets them. An edit may start a reading that the next
            # edit replaces: all those held end together, so the one still wanted is never
            # left waiting behind one that was dropped.
            may_end.wait(LOAD_MS / 1000)
        return real_read_rows(path, on_progress, stop)

    def read_to_the_end() -> None:
        assert start.toolTip() == "Cannot start: flowers.csv is being read…"
        assert not start.isEnabled()
        may_end.set()
        qtbot.waitUntil(start.isEnabled, timeout=LOAD_MS)
        may_end.clear()

    monkeypatch.setattr(table_data, "_read_rows", recording_read_rows)
    window.doc.replace(Project(name="Flowers", graph=Graph.from_chain([
        Node("input_1", "Input", {"shape": [2]}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})])), None)
    panel = open_data_view(qtbot, window)
    start = window.training.start_button
    assert not start.isEnabled()  # the bundled images do not fit a model of two inputs

    choose_source(qtbot, panel, "CSV")
    assert window.doc.project.dataset.path == str(table)
    assert start.toolTip() == "Cannot start: flowers.csv is being read…"
    assert panel.source.facts.text() == "flowers.csv is being read…"
    qtbot.waitUntil(lambda: len(parsed_on) == 1)
    qtbot.mouseClick(panel.cancel, LEFT)
    assert start.toolTip() == f"Cannot start: {CANCELLED}"
    assert panel.source.facts.text() == CANCELLED

    qtbot.mouseClick(panel.retry, LEFT)
    read_to_the_end()
    info = window.doc.dataset()
    assert (info.kind, info.sample_shape, info.class_names, info.num_samples) == (
        "table", (2,), ("a", "b"), 30)
    assert window.doc.analysis().ok
    assert panel.source.facts.text().startswith("30 rows, 2 features in 2 classes")

    show_tab(qtbot, window, "List")  # unseen, the Data view still reads what training needs
    write_table(table, 40)  # the file changes: what it holds is not known any more
    window.undo_action.trigger()
    assert window.doc.project.dataset.source != "csv"
    window.redo_action.trigger()
    read_to_the_end()
    assert window.doc.dataset().num_samples == 40

    write_table(table, 50)  # changed again, and the next edit is not about the data
    type_into(qtbot, window.training.epochs, "3")
    assert window.doc.project.training.epochs == 3
    read_to_the_end()
    assert window.doc.dataset().num_samples == 50
    assert not panel.isVisible()
    assert len(parsed_on) == 4
    assert threading.main_thread() not in parsed_on
