"""Quitting with unsaved changes discarded exits cleanly, without a traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    from PySide6.QtWidgets import QMessageBox
    from studio.core.templates import demo_project
    from studio.gui.app import create_application
    from studio.gui.main_window import MainWindow

    QMessageBox.question = lambda *args, **kwargs: QMessageBox.StandardButton.Discard
    app = create_application()
    window = MainWindow(demo_project())
    window.show()
    window.training.epochs.setValue(3)
    assert window.isWindowModified()
    assert window.close()
    print("closed")
    """
)


def test_quitting_after_discarding_changes_prints_no_traceback(tmp_path):
    # At interpreter exit the undo stack is destroyed before the window and reports "clean"
    # as it goes; the window used to ask the dead stack for its state and raise.
    env = {"QT_QPA_PLATFORM": "offscreen", "LAYER_STUDIO_HOME": str(tmp_path),
           "HOME": str(tmp_path), "PATH": ""}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "closed"
    assert "Traceback" not in done.stderr, done.stderr
