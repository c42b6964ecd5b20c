"""The real process: the window shows before TensorFlow loads, and quitting is always clean."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

OPEN_WINDOW = """
import sys
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QMessageBox
from studio.core.project.templates import demo_project
from studio.gui.shell.app import create_application
from studio.gui.shell.main_window import MainWindow

QMessageBox.question = lambda *args, **kwargs: QMessageBox.StandardButton.Discard
app = create_application()
window = MainWindow(demo_project())
window.show()
print("tensorflow loaded:", "tensorflow" in sys.modules)
"""

DISCARD_AND_QUIT = """
window.training.epochs.setValue(3)
assert window.isWindowModified()
assert window.close()
"""

COPY_AND_QUIT = """
window.scene.select_ids(["conv2d_1", "max_pooling2d_1"])
assert window.canvas.copy()
assert len(window.canvas.paste()) == 2
window.doc.undo_stack.setClean()
assert window.close()
"""

CLOSE_MID_RUN = """
window.training.start_button.click()
loop = QEventLoop()
poll = QTimer()
poll.timeout.connect(lambda: window.training.curves.point_count() and loop.quit())
poll.start(20)
QTimer.singleShot(120_000, loop.quit)
loop.exec()
print("points before closing:", window.training.curves.point_count())
assert window.close()
print("run:", window.training.run_dir)
"""


def run_script(body: str, home: Path) -> subprocess.CompletedProcess:
    env = {"QT_QPA_PLATFORM": "offscreen", "LAYER_STUDIO_HOME": str(home),
           "HOME": str(home), "PATH": "", "TF_CPP_MIN_LOG_LEVEL": "3"}
    script = textwrap.dedent(OPEN_WINDOW) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)


def test_window_shows_before_tensorflow_and_quitting_after_discard_is_clean(tmp_path):
    # At interpreter exit the undo stack is destroyed before the window and reports "clean"
    # as it goes; the window used to ask the dead stack for its state and raise.
    done = run_script(DISCARD_AND_QUIT, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["tensorflow loaded: False"]
    assert "Traceback" not in done.stderr, done.stderr


def test_closing_mid_run_stops_it_and_exits_without_a_running_thread(tmp_path):
    done = run_script(CLOSE_MID_RUN, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines())
    assert int(lines["points before closing"]) > 0
    assert "QThread" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    status = json.loads((Path(lines["run"]) / "run.json").read_text())
    assert status["status"] == "stopped"


def test_quitting_after_copying_layers_exits_cleanly(tmp_path):
    # A QMimeData made in Python and put on the clipboard was freed twice at exit (rc -11).
    done = run_script(COPY_AND_QUIT, tmp_path)
    assert done.returncode == 0, done.stderr
