"""Event-loop stalls while the demo trains with live curves, measured in the real window.

A QTimer ticks every 10 ms on the GUI thread and records how late each tick is, first while
the app's warm-up loads TensorFlow and Keras in the background, from when it starts (200 ms
after the window shows, as in the app) until two seconds after they have loaded (so the
garbage collector's next rounds are included), then while a run of the demo CNN trains on
the worker thread. Targets: while TensorFlow loads, max lateness under 200 ms; while
training, p99 under 50 ms and max under 200 ms.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/gui_stalls.py [--epochs 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from gui_session import close_discarding, open_demo_window, wait_for, warm_up
from PySide6.QtCore import QEventLoop, QTimer

TICK_MS = 10
SETTLE_MS = 2000
WARM_UP_DELAY_MS = 200
"""How long after showing the window the app starts loading TensorFlow (``run_app``)."""


def run_event_loop(ms: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


class LatenessProbe:
    """Records how late each tick of a 10 ms timer fires, in milliseconds."""

    def __init__(self) -> None:
        self.lateness: list[float] = []
        self._last = time.perf_counter()
        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.lateness.clear()
        self._last = time.perf_counter()
        self.timer.start()

    def stop(self) -> np.ndarray:
        self.timer.stop()
        return np.asarray(self.lateness)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lateness.append(max(0.0, (now - self._last) * 1000 - TICK_MS))
        self._last = now


def summary(name: str, lateness: np.ndarray) -> str:
    return (f"{name}: {len(lateness)} ticks, lateness p50 {np.percentile(lateness, 50):.1f} ms, "
            f"p99 {np.percentile(lateness, 99):.1f} ms, max {lateness.max():.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    window = open_demo_window()
    window.training.epochs.setValue(args.epochs)
    probe = LatenessProbe()

    run_event_loop(WARM_UP_DELAY_MS)  # the window shows and paints first, as in run_app
    probe.start()
    warm_up(window)
    run_event_loop(SETTLE_MS)
    loading = probe.stop()
    print(summary("while TensorFlow loads", loading))
    print(f"target max < 200 ms while TensorFlow loads: "
          f"{'met' if loading.max() < 200 else 'NOT met'}")

    probe.start()
    window.training.start_button.click()
    (status,) = wait_for(window.training.run_finished)
    lateness = probe.stop()
    points = window.training.curves.point_count()
    print(f"run {status}, {points} curve points drawn")
    if status != "finished":
        print(f"the run did not complete: {window.training.status.text()}")
    print(summary("while training", lateness))
    p99, worst = np.percentile(lateness, 99), lateness.max()
    verdict = "met" if p99 < 50 and worst < 200 and status == "finished" else "NOT met"
    print(f"target p99 < 50 ms and max < 200 ms: {verdict}")
    close_discarding(window)


if __name__ == "__main__":
    main()
