"""Time from starting Python to the main window shown on the demo project, in fresh processes.

TensorFlow must not be loaded by then (it loads in the background afterwards).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

SHOW_WINDOW = """
import time
start = time.perf_counter()
import sys
from studio.core.project.templates import demo_project
from studio.gui.shell.app import create_application
from studio.gui.shell.main_window import MainWindow
from studio.gui.widgets.jobs import shutdown_jobs
app = create_application()
window = MainWindow(demo_project())
window.show()
app.processEvents()
print(time.perf_counter() - start, "tensorflow" in sys.modules)
shutdown_jobs(window)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    seconds = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", SHOW_WINDOW], capture_output=True,
                             text=True, check=True).stdout.split()
        seconds.append(float(out[0]))
        if out[1] != "False":
            raise SystemExit("TensorFlow was loaded before the window showed")
    print(f"window shown {statistics.median(seconds):.2f} s after Python started (median of "
          f"{args.runs}, max {max(seconds):.2f} s); TensorFlow not yet loaded")


if __name__ == "__main__":
    main()
