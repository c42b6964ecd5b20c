"""Starting the desktop app."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from studio import __version__
from studio.core.data.sources import ASSETS_DIR
from studio.core.project.templates import demo_project
from studio.gui.shell.main_window import MainWindow
from studio.gui.widgets.collector import GuiCollector


def create_application(argv: list[str] | None = None) -> QApplication:
    """The QApplication with Layer Studio's names set (reuses an existing one)."""
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
