"""Time from starting Python to the main window's first paint on the demo project, in fresh
processes.

TensorFlow must not be loaded by then (it loads in the background afterwards). The window is
painted offscreen (Qt's ``offscreen`` platform), and with ``--xvfb`` on a real X server too:
an Xvfb the bench starts on a free display, with Qt's ``xcb`` platform as on a desktop, where
fonts, the X connection and the window's mapping add to the time. The first run on each
platform warms the file cache (and writes the bytecode cache and the window's settings, in a
settings folder of the bench's own) and is left out. Target: the first paint within a second.

Also reported, for information: the CPU time the process used by its first paint (steadier
than the wall clock on a busy machine), and when the window's plots (pyqtgraph, built just
after the first paint) have painted too. ``--against DIR`` alternates each run with one of the
source tree in ``DIR`` (say, an export of the code before a change), to compare the two under
the same load.

    .venv/bin/python bench/startup.py [--runs 5] [--xvfb] [--against DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

TARGET_SECONDS = 1.0
SOURCE = Path(__file__).resolve().parents[1]
"""The source tree this bench belongs to, measured unless ``--against`` names another too."""

FIRST_PAINT = """
import time
start = time.perf_counter()
import resource
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from studio.core.project.templates import demo_project
from studio.gui.shell.app import create_application
from studio.gui.shell.main_window import MainWindow
from studio.gui.widgets.jobs import shutdown_jobs

seconds = {}


def plot_view(widget):
    # A pyqtgraph view or a subclass of one (its viewport gets the paint events).
    return any(kind.__module__.startswith("pyqtgraph")
               for w in (widget, widget.parent()) for kind in type(w).__mro__)


class Painted(QObject):
    # Notes when the window's first whole repaint (from the window down, all its widgets) is
    # done, then when one of its plots has painted, and quits. A repaint of a part alone
    # (a label changed during start-up) is not the window's first paint.
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and watched.window() is window:
            if "first" not in seconds and watched is window:
                seconds["first"] = None
                QTimer.singleShot(0, lambda: finish("first"))
            if "plots" not in seconds and plot_view(watched):
                seconds["plots"] = None
                QTimer.singleShot(0, lambda: finish("plots"))
        return False


def finish(what):
    seconds[what] = time.perf_counter() - start
    if what == "first":
        used = resource.getrusage(resource.RUSAGE_SELF)
        seconds["cpu"] = used.ru_utime + used.ru_stime
    if seconds.get("first") is not None and seconds.get("plots") is not None:
        app.quit()


app = create_application()
window = MainWindow(demo_project())
painted = Painted()
app.installEventFilter(painted)
window.show()
QTimer.singleShot(60_000, app.quit)
app.exec()
print(seconds["first"], seconds.get("plots"), seconds["cpu"], "tensorflow" in sys.modules)
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


def first_paints(runs: int, env: dict[str, str], trees: list[Path]
                 ) -> dict[Path, list[tuple[float, float, float]]]:
    """Seconds from Python's start to the first paint and to the plots' paint, and the CPU
    seconds used by the first paint, over ``runs`` processes after one left out, for each
    source tree, alternating."""
    # A warm start has its bytecode cached, as an installed app has it: the left-out run writes
    # it even where the environment says not to (compiling the app's modules took 0.3 s).
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, **env}
    seconds: dict[Path, list[tuple[float, float, float]]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory() as settings:
        env["XDG_CONFIG_HOME"] = settings  # the window's saved size and docks: the bench's own
        for run in range(runs + 1):
            for tree in trees:
                # Run elsewhere than in a source tree: Python imports from the current folder
                # before PYTHONPATH.
                out = subprocess.run([sys.executable, "-c", FIRST_PAINT], capture_output=True,
                                     text=True, check=True, cwd=settings,
                                     env={**env, "PYTHONPATH": str(tree)}).stdout.split()
                if out[3] != "False":
                    raise SystemExit("TensorFlow was loaded before the window showed")
                if run:  # the plots' paint is nan if none painted within a minute
                    seconds[tree].append((float(out[0]), float(out[1].replace("None", "nan")),
                                          float(out[2])))
    return seconds


def report(platform: str, tree: Path, seconds: list[tuple[float, float, float]]) -> bool:
    firsts = [first for first, _, _ in seconds]
    median = statistics.median(firsts)
    plots = statistics.median(plot for _, plot, _ in seconds)
    cpu = statistics.median(used for _, _, used in seconds)
    source = "" if tree == SOURCE else f" [{tree}]"
    print(f"{platform}{source}: first paint {median:.2f} s after Python started (median of "
          f"{len(firsts)}, max {max(firsts):.2f} s; runs " + " ".join(f"{s:.2f}" for s in firsts)
          + f"); {cpu:.2f} s of CPU by then; plots painted {plots:.2f} s; TensorFlow not yet "
          "loaded", flush=True)
    return median <= TARGET_SECONDS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--xvfb", action="store_true",
                        help="also measure on an X server (Xvfb) the bench starts")
    parser.add_argument("--against", metavar="DIR",
                        help="alternate with runs of the source tree in DIR (the baseline)")
    args = parser.parse_args()
    if args.against and not (Path(args.against) / "studio").is_dir():
        raise SystemExit(f"--against: no studio package in {args.against}")
    trees = [SOURCE] + ([Path(args.against).resolve()] if args.against else [])
    platforms = [("offscreen", {"QT_QPA_PLATFORM": "offscreen"})]
    met = True
    with xvfb() if args.xvfb else nullcontext() as display:
        if display:
            platforms.append((f"X server (Xvfb {display})",
                              {"QT_QPA_PLATFORM": "xcb", "DISPLAY": display}))
        for platform, env in platforms:
            seconds = first_paints(args.runs, env, trees)
            for tree in trees:
                within = report(platform, tree, seconds[tree])
                met &= within or tree != SOURCE  # the baseline is only compared
    print(f"target first paint within {TARGET_SECONDS:.0f} s (median): "
          f"{'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
