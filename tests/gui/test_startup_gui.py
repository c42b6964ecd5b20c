"""Start-up builds only what the first paint shows: the tabs and docks behind others, and
pyqtgraph for the plots, wait until they are needed, and work as before once opened."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from studio.gui.inference.try_panel import NO_MODEL
from studio.gui.runs.history_panel import NO_RUNS
from studio.gui.training.curves import PLOTS
from studio.gui.widgets.deferred import Deferred
from tests.gui.support import isolate_settings, show_tab

DEFERRED = ["pyqtgraph", "jsonschema", "studio.gui.data.panel", "studio.gui.inference.try_panel",
            "studio.gui.inference.evaluation_panel", "studio.gui.search.panel",
            "studio.gui.runs.history_panel", "studio.core.search.worker", "tensorflow",
            "PIL", "studio.core.data.image_folder"]
"""Modules the window's first paint does without."""

FIRST_PAINT = f"""
import json
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from studio.gui.shell.app import create_application, open_window

loaded = {{}}


class Painted(QObject):
    def eventFilter(self, watched, event):
        if (event.type() == QEvent.Type.Paint and watched.window() is window
                and "first paint" not in loaded):
            loaded["first paint"] = [name for name in {DEFERRED!r} if name in sys.modules]
        return False


def plots_built():
    if window.training.curves.place.is_built():
        loaded["plots built"] = [name for name in {DEFERRED!r} if name in sys.modules]
        app.quit()


app = create_application()
app.installEventFilter(painted := Painted())
window = open_window()  # as the app opens it: on the demo, the welcome page over it
poll = QTimer()
poll.timeout.connect(plots_built)
poll.start(10)
QTimer.singleShot(120_000, app.quit)
app.exec()
print(json.dumps(loaded))
"""


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")  # the first run's layout: Training before Runs


def test_the_first_paint_imports_no_plots_and_no_hidden_tab(tmp_path):
    # A settings folder of its own: the first run's layout, the Training dock before the Runs.
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "LAYER_STUDIO_HOME": str(tmp_path / "workspace"), "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, "-c", FIRST_PAINT], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert loaded == {"first paint": [], "plots built": ["pyqtgraph"]}, done.stderr


def test_the_training_plots_follow_the_first_paint_with_the_plan_drawn(window, qtbot):
    curves = window.training.curves
    qtbot.waitUntil(curves.place.is_built)
    assert set(curves.plots) == set(PLOTS) - {"parts"}  # a classifier's: no loss parts
    assert all(p.isVisible() for p in curves.plots.values())
    x, rate = curves.series["planned_learning_rate"].item.getData()
    assert len(x) > 1 and rate.max() > 0
    form = window.training.optimizer_form
    qtbot.waitUntil(form.chart.is_built)
    assert form.plot.isVisible() and len(form.curve.getData()[0]) > 1


def _built(page) -> bool:
    return not isinstance(page, Deferred) or page.is_built()


def test_each_tab_and_the_runs_dock_are_built_as_they_first_show_and_work(window, qtbot):
    views = window.views
    waiting = {views.tabText(i): views.widget(i) for i in range(views.count())
               if not _built(views.widget(i))}
    assert set(waiting) == {"Data", "Try", "Evaluate", "Search"}
    assert not _built(window.runs_dock.widget())

    show_tab(qtbot, window, "Data")
    assert views.currentWidget() is window.data_panel and window.data_panel.isVisible()
    assert window.inspector_dock.isHidden()  # the Data tab takes the inspector's room
    assert not any(_built(waiting[title]) for title in ("Try", "Evaluate", "Search"))

    show_tab(qtbot, window, "Try")  # it lists the runs to answer with: there are none yet
    qtbot.waitUntil(lambda: window.runs.count_label.text() == "0 runs")
    assert window.try_panel.isVisible() and window.try_panel.status.text() == NO_MODEL
    assert window.runs_dock.visibleRegion().isEmpty()  # built for Try, still behind Training

    show_tab(qtbot, window, "Search")
    assert views.currentWidget() is window.search and window.search.isVisible()
    show_tab(qtbot, window, "Canvas")
    assert not window.inspector_dock.isHidden()
    assert views.indexOf(window.evaluation) == 4 and views.widget(4) is window.evaluation

    window.runs_dock.raise_()
    qtbot.waitUntil(lambda: window.runs.isVisible() and window.runs.no_runs.isVisible())
    assert window.runs.no_runs.text() == NO_RUNS
