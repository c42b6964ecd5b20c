"""The window paints on the GUI thread alone: Qt's raster engine would hand every tall fill (a
scroll bar's groove) to a pool of threads and wait for them, and on a busy machine a canvas
frame then waited for threads that got no core. Run in a fresh process each, since Qt decides
once per process, at its first such fill."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PAINT_WINDOW = """
import sys
from pathlib import Path
from PySide6.QtWidgets import QMessageBox
from studio.core.project.templates import demo_project
from studio.gui.shell import app as shell
from studio.gui.shell.main_window import MainWindow

if sys.argv[1] == "qt-default":
    shell.paint_on_gui_thread = lambda: None
shell.create_application()
window = MainWindow(demo_project())
window.resize(1280, 720)
window.show()
window.grab()
tasks = Path("/proc/self/task").iterdir()
print(sum((task / "comm").read_text().strip() == "Thread (pooled)" for task in tasks))
QMessageBox.question = lambda *args, **kwargs: QMessageBox.StandardButton.Discard
window.close()
"""

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(),
                                reason="counts the process's threads in /proc (Linux)")


def pool_threads_after_painting(arm: str, home: Path) -> int:
    """How many of Qt's pool threads the process has after painting the whole demo window."""
    env = {key: value for key, value in os.environ.items() if key != "QT_NO_GUI_THREADPOOL"}
    env.update(QT_QPA_PLATFORM="offscreen", LAYER_STUDIO_HOME=str(home), HOME=str(home))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(PAINT_WINDOW), arm],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.splitlines()[-1])


def test_the_app_paints_without_qt_pool_threads_which_qt_would_start(tmp_path):
    # Qt's default, as a control: painting the same window starts its pool threads.
    assert pool_threads_after_painting("qt-default", tmp_path) > 0
    assert pool_threads_after_painting("app", tmp_path) == 0
