"""Starting the desktop app."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from studio import __version__
from studio.core.data.bundled import ASSETS_DIR
from studio.core.project.templates import demo_project
from studio.gui.shell.main_window import MainWindow
from studio.gui.widgets.collector import GuiCollector


def paint_on_gui_thread() -> None:
    """Keep all of Qt's painting on the GUI thread; call before anything is painted.

    Qt's raster engine splits every fill taller than 95 rows (a scroll bar's groove, a tall
    line) into pieces for its GUI thread pool and waits for them all. On a few cores shared
    with training or another program, the window then waits for threads that get no core:
    a canvas frame that cost 5 ms of processor time took 20-280 ms, while doing each fill on
    the GUI thread costs less than handing it out. Qt reads the variable once, at its first
    such fill.
    """
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def create_application(argv: list[str] | None = None) -> QApplication:
    """The QApplication with Layer Studio's names set (reuses an existing one), painting on
    the GUI thread only (see :func:`paint_on_gui_thread`)."""
    paint_on_gui_thread()
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("Layer Studio")
    app.setOrganizationName("Layer Studio")
    app.setApplicationVersion(__version__)
    app.setWindowIcon(QIcon(str(ASSETS_DIR / "icons" / "layer-studio-256.png")))
    return app


def open_window(project_path: Path | None = None) -> MainWindow:
    """The window, shown, opening ``project_path`` once the event loop runs; without one, on
    the demo project, with the welcome page over it the first time."""
    window = MainWindow(demo_project())
    window.fit_screen()
    window.show()
    window.fit_screen()  # again with the frame, known once shown
    if project_path is not None:
        QTimer.singleShot(0, lambda: window.open_path(project_path))
    elif window.recent.first_run():
        QTimer.singleShot(0, window.show_welcome)
    return window


def run_app(project_path: Path | None = None) -> int:
    """Open the window (see :func:`open_window`) and run the event loop."""
    app = create_application()
    collector = GuiCollector()  # noqa: F841 - lives as long as the event loop
    window = open_window(project_path)
    QTimer.singleShot(200, window.training.warm_up)
    return app.exec()
