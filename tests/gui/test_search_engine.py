"""The Search tab's engine: a Ray cluster that does not answer is refused in one line before
anything starts, and a new local Ray instance runs the search into the same live table."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import ray
from PySide6.QtCore import Qt

from studio.core.project.document import save_project
from studio.core.search.state import searches_root
from studio.gui.shell.recent_projects import preferences_path
from tests.core.search_support import LEARNING_RATES, searched, table_project
from tests.gui.support import show_tab
from tests.gui.test_search_panel import SEARCH_TIMEOUT_MS, type_over

LEFT = Qt.MouseButton.LeftButton


def open_table_search(window, qtbot, tmp_path, engine: str):
    """The tiny table project, searched on a grid of two learning rates one at a time for one
    epoch, open on the Search tab, which opens on ``engine`` as the preferences remember it
    (a search on Ray: no worker processes start); the tab."""
    window.recent.preferences.search_engine = engine
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES, workers=1)
    project.training.epochs = 1
    path = tmp_path / "table.studio.json"
    save_project(project, path)
    window.doc.open(path)
    show_tab(qtbot, window, "Search")
    panel = window.search
    assert panel.engine.engine() == engine and panel.pool is None
    qtbot.waitUntil(lambda: "being read" not in panel.problems.text())
    return panel


def choose_engine(panel, engine: str) -> None:
    panel.engine.box.setCurrentIndex(panel.engine.box.findData(engine))


def test_a_ray_cluster_where_nothing_answers_is_refused_in_one_line_and_nothing_starts(
        window, qtbot, tmp_path, monkeypatch):
    def init(**options):  # Ray itself would retry for minutes
        raise AssertionError("Ray was asked to connect to an address where nothing answers")

    monkeypatch.setattr(ray, "init", init)
    panel = open_table_search(window, qtbot, tmp_path, "local")
    assert not panel.engine.address.isVisible()
    choose_engine(panel, "cluster")
    assert panel.engine.address.isVisible() and panel.engine.token.isVisible()
    assert not panel.start_button.isEnabled()  # no address yet
    assert "Ray cluster's address" in panel.problems.text()
    type_over(qtbot, panel.engine.address, "127.0.0.1:9")
    qtbot.keyClick(panel.engine.address, Qt.Key.Key_Return)
    type_over(qtbot, panel.engine.token, "s3cret")
    assert panel.start_button.isEnabled(), panel.problems.text()

    qtbot.mouseClick(panel.start_button, LEFT)
    assert panel.is_running() and not panel.start_button.isEnabled()
    qtbot.waitUntil(lambda: not panel.is_running())
    status = panel.status.text()
    assert status.startswith("No Ray cluster answers at 127.0.0.1:9") and "\n" not in status
    assert panel.start_button.isEnabled() and panel.progress.text() == "Ready"
    assert panel.table.row_texts() == []
    assert not searches_root(window.doc.place).exists()  # no search was written
    # The engine and the address are this machine's preferences; the token is never written.
    saved = json.loads(preferences_path().read_text())
    assert (saved["search_engine"], saved["ray_address"]) == ("cluster", "127.0.0.1:9")
    assert "s3cret" not in preferences_path().read_text()
    assert "s3cret" not in (tmp_path / "table.studio.json").read_text()


def test_a_new_local_ray_instance_runs_the_search_into_the_live_table(
        window, qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(ray, "init", functools.partial(ray.init, num_cpus=1))  # a small Ray
    panel = open_table_search(window, qtbot, tmp_path, "cluster")
    assert not panel.start_button.isEnabled()  # no address
    choose_engine(panel, "local")
    assert panel.start_button.isEnabled() and not panel.engine.address.isVisible()
    events = []
    panel.job.event.connect(lambda event: events.append(event["type"]))
    with qtbot.waitSignal(panel.search_finished, timeout=SEARCH_TIMEOUT_MS) as ended:
        qtbot.mouseClick(panel.start_button, LEFT)
        qtbot.waitUntil(lambda: "trial_start" in events, timeout=SEARCH_TIMEOUT_MS)
        assert panel.table.row_texts()  # the table fills while the search runs
    assert ended.args == ["finished"], panel.last_error
    rows = panel.table.row_texts()
    assert sorted((row[1], row[2]) for row in rows) == [("finished", "0.001"),
                                                         ("finished", "0.01")]
    assert "trial_epoch" in events  # the curves are drawn from the same events
    qtbot.waitUntil(lambda: all(panel.curves.drawn(n) == 1 for n in range(2)))
    assert Path(panel.runner.search_dir, "ray").is_dir()  # Tune ran it
    assert panel.pool is None and not ray.is_initialized()  # the Ray started is shut down
