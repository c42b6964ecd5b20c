"""GUI fixtures: fail any test that leaves a QThread running, answer dialogs, build windows."""

from __future__ import annotations

import gc
import sys

import pytest
from PySide6.QtCore import QThread, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox

from studio.core.project.templates import demo_project
from studio.gui.shell.app import create_application
from studio.gui.shell.main_window import MainWindow
from tests.gui.support import isolate_settings


@pytest.fixture(autouse=True, scope="session")
def garbage_collected_on_the_main_thread():
    """As in the app, Python's collector never runs by itself: freeing Qt objects on a worker
    thread (say, a window of an earlier test, while training runs) deadlocks against Qt."""
    gc.disable()
    yield
    gc.enable()


@pytest.fixture(autouse=True)
def private_settings(tmp_path):
    """Each test's windows read and save their geometry, dock layout and preferences in its
    own folder: never a developer's saved layout (a test sees the first run's), nor into it."""
    isolate_settings(tmp_path / "settings")


@pytest.fixture(autouse=True)
def collect_after_each_test(garbage_collected_on_the_main_thread):
    """Free each test's garbage on the main thread once its windows are closed; then, the
    first time Keras is loaded, freeze what is left out of later collections, as the app's
    ``GuiCollector`` does (each collection walked Keras's and TensorFlow's hundreds of
    thousands of objects: about half a second per test)."""
    yield
    gc.collect()
    if "keras" in sys.modules and not gc.get_freeze_count():
        gc.freeze()


@pytest.fixture(autouse=True)
def no_thread_left_running(monkeypatch):
    """Record every QThread started during the test and fail if one outlives it."""
    started: list[QThread] = []
    original = QThread.start

    def recording_start(self, *args):
        started.append(self)
        return original(self, *args)

    monkeypatch.setattr(QThread, "start", recording_start)
    yield
    running = [t for t in started if t.isRunning()]
    for thread in running:
        thread.quit()
        thread.wait(10_000)
    assert not running, f"{len(running)} QThread(s) still running after the test"


@pytest.fixture
def started_workers(monkeypatch):
    """The list every :class:`Worker` started during the test is added to, in order."""
    from studio.gui.widgets.worker import Worker

    started: list[Worker] = []
    original = Worker.start

    def recording_start(worker):
        started.append(worker)
        original(worker)

    monkeypatch.setattr(Worker, "start", recording_start)
    return started


@pytest.fixture
def dialogs(monkeypatch):
    """Replace modal message boxes with a recorder; returns the list of (kind, title, text)."""
    shown: list[tuple[str, str, str]] = []

    def warning(parent, title, text, *args, **kwargs):
        shown.append(("warning", title, text))
        return QMessageBox.StandardButton.Ok

    def question(parent, title, text, *args, **kwargs):
        shown.append(("question", title, text))
        return QMessageBox.StandardButton.Discard

    monkeypatch.setattr(QMessageBox, "warning", warning)
    monkeypatch.setattr(QMessageBox, "question", question)
    return shown


@pytest.fixture
def opened_urls(monkeypatch):
    """The URLs handed to the desktop (a folder to show, say), recorded instead of opened."""
    opened: list[QUrl] = []

    def record(url: QUrl) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", record)
    return opened


@pytest.fixture
def window(qtbot, dialogs):
    """The main window on the demo project, shown."""
    create_application()
    win = MainWindow(demo_project())
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win
