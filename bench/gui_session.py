"""Shared set-up for the GUI benchmarks: the real window on the demo project, offscreen."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from studio.core.base.runtime import configure_environment  # noqa: E402

configure_environment()

from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, QTimer, Slot  # noqa: E402
from PySide6.QtWidgets import QMessageBox, QWidget  # noqa: E402

from studio.core.project.document import Project  # noqa: E402
from studio.core.project.templates import demo_project  # noqa: E402
from studio.core.runs.folders import runs_root  # noqa: E402
from studio.gui.shell.app import create_application  # noqa: E402
from studio.gui.shell.main_window import MainWindow  # noqa: E402
from studio.gui.widgets.collector import GuiCollector  # noqa: E402


def open_demo_window(project: Project | None = None,
                     size: tuple[int, int] | None = None) -> MainWindow:
    """The main window on ``project`` (the demo by default), shown, Qt's event loop ready,
    with garbage collected on the GUI thread as the app does (``run_app``); with ``size``,
    shown at that size the first time, as a screen of that size opens it."""
    create_application()
    window = MainWindow(project or demo_project())
    window.collector = GuiCollector(window)
    if size is not None:
        window.resize(*size)
    window.show()
    return window


class _Catcher(QObject):
    """Receives a signal on the GUI thread (a plain function would run on the emitter's)."""

    def __init__(self, loop: QEventLoop) -> None:
        super().__init__()
        self.loop = loop
        self.received: list[tuple] = []

    @Slot()
    def catch(self, *args) -> None:
        self.received.append(args)
        self.loop.quit()


def wait_for(signal, timeout_s: float = 600.0) -> tuple:
    """Run the event loop until ``signal`` fires; return its arguments."""
    loop = QEventLoop()
    catcher = _Catcher(loop)
    signal.connect(catcher.catch)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()
    signal.disconnect(catcher.catch)
    if not catcher.received:
        raise TimeoutError(f"waited {timeout_s:.0f} s for a signal that never came")
    return catcher.received[0]


def demo_run_workspace(folder: str) -> Path:
    """Make ``folder`` the workspace and train the demo CNN there for one epoch; the folder
    that holds the run, for ``open_try_view``."""
    from studio.core.training.trainer import train

    os.environ["LAYER_STUDIO_HOME"] = folder
    project = demo_project()
    project.training.epochs = 1
    trained = Path(folder) / "trained"
    train(project, trained)
    return trained


def open_try_view(trained: Path, size: tuple[int, int] | None = None,
                  project: Project | None = None) -> MainWindow:
    """The window on ``project`` (the demo by default; at ``size``, see ``open_demo_window``)
    with the runs in ``trained`` as its own (an unsaved project lists only the runs in its
    scratch place) and TensorFlow warmed up, as the app does once the window shows, showing
    the Try view once its model has loaded."""
    window = open_demo_window(project, size=size)
    shutil.copytree(trained, runs_root(window.doc.place), dirs_exist_ok=True)
    warm_up(window)
    window.views.setCurrentWidget(window.try_panel)
    wait_for(window.try_panel.model_ready)
    return window


class PaintClock:
    """Notes when a widget of ``kind`` (a class) first paints after ``reset``."""

    def __init__(self, kind: type) -> None:
        self.painted_at: float | None = None
        original = kind.paintEvent

        def timed(widget, event) -> None:
            original(widget, event)
            if self.painted_at is None:
                self.painted_at = time.perf_counter()

        kind.paintEvent = timed


def time_drops(window: MainWindow, images: list[Path], clock: PaintClock) -> list[float]:
    """Seconds from dropping each of ``images`` on the canvas, as a person would, to its
    answer painted (as ``clock`` notes it)."""
    target = window.canvas.viewport()
    seconds = []
    for path in images:
        clock.painted_at = None
        window.views.setCurrentIndex(0)
        started = time.perf_counter()
        drop(target, [path])
        while clock.painted_at is None:
            QCoreApplication.processEvents()
        seconds.append(clock.painted_at - started)
    return seconds


def close_discarding(window: MainWindow) -> None:
    """Close the window, answering Discard to its question about unsaved changes or runs
    (settings were set and runs made for the benchmark only)."""
    question = QMessageBox.question
    QMessageBox.question = lambda *args, **kwargs: QMessageBox.StandardButton.Discard
    try:
        window.close()
    finally:
        QMessageBox.question = question


def warm_up(window: MainWindow) -> None:
    """Load TensorFlow in the background, as the app does after showing the window."""
    window.training.warm_up()
    warmup = window.training.warmup
    if warmup.busy():
        wait_for(warmup.finished)


def drop(widget: QWidget, paths: list[Path]) -> None:
    """Drag ``paths`` onto the middle of ``widget`` and let go, as the system would."""
    from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent
    from PySide6.QtWidgets import QApplication

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    point = QPoint(widget.width() // 2, widget.height() // 2)
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QApplication.sendEvent(widget, QDragEnterEvent(point, Qt.DropAction.CopyAction, mime,
                                                   buttons, keys))
    QApplication.sendEvent(widget, QDropEvent(QPointF(point), Qt.DropAction.CopyAction, mime,
                                              buttons, keys))
