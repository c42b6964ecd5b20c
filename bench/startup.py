"""Time from starting Python to the main window's first paint on the demo project, in fresh
processes.

TensorFlow must not be loaded by then (it loads in the background afterwards). The window is
painted offscreen (Qt's ``offscreen`` platform), and with ``--xvfb`` on a real X server too:
an Xvfb the bench starts on a free display, with Qt's ``xcb`` platform as on a desktop, where
fonts, the X connection and the window's mapping add to the time. The first run on each
platform warms the file cache (and writes the bytecode cache) and is left out. Target: the
first paint within a second.

    .venv/bin/python bench/startup.py [--runs 5] [--xvfb]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

TARGET_SECONDS = 1.0

FIRST_PAINT = """
import time
start = time.perf_counter()
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from studio.core.project.templates import demo_project
from studio.gui.shell.app import create_application
from studio.gui.shell.main_window import MainWindow
from studio.gui.widgets.jobs import shutdown_jobs


class FirstPaint(QObject):
    # Quits the event loop once the window's first repaint (all its widgets) is done.
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and watched.window() is window:
            app.removeEventFilter(self)
            QTimer.singleShot(0, app.quit)
        return False


app = create_application()
window = MainWindow(demo_project())
painted = FirstPaint()
app.installEventFilter(painted)
window.show()
app.exec()
print(time.perf_counter() - start, "tensorflow" in sys.modules)
shutdown_jobs(window)
"""


@contextmanager
def xvfb() -> Iterator[str]:
    """An X server of our own on a free display; yields the display's name."""
    if shutil.which("Xvfb") is None:
        raise SystemExit("--xvfb needs Xvfb (Debian: apt-get install xvfb)")
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1600x1000x24",
                               "-nolisten", "tcp"], pass_fds=(write,),
                              stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as pipe:
        display = pipe.readline().strip()
    try:
        yield f":{display}"
    finally:
        server.terminate()
        server.wait()


def first_paints(runs: int, env: dict[str, str]) -> list[float]:
    """Seconds from Python's start to the first paint, over ``runs`` processes after one
    left out."""
    # A warm start has its bytecode cached, as an installed app does: the left-out run writes
    # it even where the environment says not to (compiling the app's modules took 0.3 s).
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, **env}
    seconds = []
    for _ in range(runs + 1):
        out = subprocess.run([sys.executable, "-c", FIRST_PAINT], capture_output=True,
                             text=True, check=True, env=env).stdout.split()
        if out[1] != "False":
            raise SystemExit("TensorFlow was loaded before the window showed")
        seconds.append(float(out[0]))
    return seconds[1:]


def report(platform: str, seconds: list[float]) -> bool:
    median = statistics.median(seconds)
    print(f"{platform}: first paint {median:.2f} s after Python started (median of "
          f"{len(seconds)}, max {max(seconds):.2f} s; runs "
          + " ".join(f"{s:.2f}" for s in seconds) + "); TensorFlow not yet loaded", flush=True)
    return median <= TARGET_SECONDS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--xvfb", action="store_true",
                        help="also measure on an X server (Xvfb) the bench starts")
    args = parser.parse_args()
    met = report("offscreen", first_paints(args.runs, {"QT_QPA_PLATFORM": "offscreen"}))
    if args.xvfb:
        with xvfb() as display:
            met &= report(f"X server (Xvfb {display})", first_paints(
                args.runs, {"QT_QPA_PLATFORM": "xcb", "DISPLAY": display}))
    print(f"target first paint within {TARGET_SECONDS:.0f} s (median): "
          f"{'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
