"""Opening the run history of a project with 1,000 runs: seconds to build the run index with
no index file (cold), to sync it when nothing changed (warm) or one run changed, and for the
history panel (offscreen) from its construction to its rows shown, with and without an index
file. Target: under 1 second.

The runs are synthetic run folders as the trainer writes them (project snapshot, config,
metrics of 20 epochs, run record); with ``--cold-cache`` the files' cached data is dropped
before each cold measurement (``posix_fadvise``), as after a reboot.

    .venv/bin/python bench/history_open.py [--runs 1000] [--repeats 5] [--cold-cache]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from folder_scan import drop_cached_data  # this script's folder is on the path
from gui_session import wait_for

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' run factory

from studio.core.project.document import save_project  # noqa: E402
from studio.core.project.templates import demo_project  # noqa: E402
from studio.core.runs.folders import runs_root  # noqa: E402
from studio.core.runs.index import INDEX_FILE, RunIndex  # noqa: E402
from studio.gui.runs.history_panel import HistoryPanel  # noqa: E402
from studio.gui.shell.app import create_application  # noqa: E402
from studio.gui.widgets.jobs import shutdown_jobs  # noqa: E402
from tests.run_folders import rewrite_record, write_runs  # noqa: E402

TARGET_SECONDS = 1.0


def remove_index(root: Path) -> None:
    """Delete the index file and its journal, as in a project never opened."""
    for suffix in ("", "-wal", "-shm"):
        (root / (INDEX_FILE + suffix)).unlink(missing_ok=True)


def list_runs(root: Path) -> int:
    """What opening the history does in the core: sync the index and list the runs."""
    index = RunIndex(root)
    index.sync()
    return len(index.runs())


def open_panel(root: Path) -> int:
    """Construct the history panel, show it and wait until its rows are in and painted."""
    panel = HistoryPanel(lambda: root)
    panel.resize(1100, 700)
    panel.show()
    wait_for(panel.refreshed, timeout_s=60)
    panel.repaint()
    rows = panel.proxy.rowCount()
    shutdown_jobs(panel)
    panel.close()
    panel.deleteLater()
    return rows


def measure(name: str, prepare: Callable[[], None], task: Callable[[], int], runs: int,
            repeats: int) -> float:
    """The median seconds of ``task`` after ``prepare``, checking it saw every run."""
    seconds = []
    for _ in range(repeats):
        prepare()
        started = time.perf_counter()
        found = task()
        seconds.append(time.perf_counter() - started)
        if found != runs:
            raise SystemExit(f"{name}: listed {found} runs, not {runs}")
    median = statistics.median(seconds)
    print(f"  {name:<52} {median:6.3f} s   (runs: {', '.join(f'{s:.3f}' for s in seconds)})",
          flush=True)
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cold-cache", action="store_true",
                        help="drop the run files' cached data before each cold measurement")
    args = parser.parse_args()
    create_application()
    with tempfile.TemporaryDirectory() as temp:
        project = Path(temp) / "demo.studio.json"
        save_project(demo_project(), project)
        root = runs_root(project)
        started = time.perf_counter()
        folders = write_runs(root, args.runs)
        print(f"wrote {args.runs:,} run folders (20 epochs each) in "
              f"{time.perf_counter() - started:.1f} s", flush=True)

        def cold() -> None:
            remove_index(root)
            if args.cold_cache:
                drop_cached_data(root)

        def one_changed() -> None:
            rewrite_record(folders[0], updated=time.strftime("%Y-%m-%dT%H:%M:%S"))

        def nothing() -> None:
            pass

        list_runs(root)
        print(f"History of {args.runs:,} runs, median of {args.repeats}:")
        results = {
            "cold": measure("index built, no index file (cold)", cold,
                            lambda: list_runs(root), args.runs, args.repeats),
            "warm": measure("index synced, nothing changed (warm)", nothing,
                            lambda: list_runs(root), args.runs, args.repeats),
            "changed": measure("index synced, one run changed", one_changed,
                               lambda: list_runs(root), args.runs, args.repeats),
            "panel_warm": measure("panel: construction to rows shown, warm index", nothing,
                                  lambda: open_panel(root), args.runs, args.repeats),
            "panel_cold": measure("panel: construction to rows shown, no index file", cold,
                                  lambda: open_panel(root), args.runs, args.repeats),
        }
    worst = max(results["panel_warm"], results["panel_cold"])
    verdict = "met" if worst < TARGET_SECONDS else "NOT met"
    print(f"\nOpening the history of {args.runs:,} runs: {results['panel_warm']:.2f} s with "
          f"its index, {results['panel_cold']:.2f} s building it "
          f"({'cold' if args.cold_cache else 'warm'} file cache); target under "
          f"{TARGET_SECONDS:.0f} s: {verdict}.")


if __name__ == "__main__":
    main()
