"""Drawing in the Try tab with the demo CNN: from a stroke event (a press or a move with the
button held) to the probability bars of a drawing that includes it painted.

Trains the demo CNN for one epoch in a temporary workspace, opens the real window on it
(offscreen), lets the Try view load the run's model and opens its Draw tab. Then draws
``--strokes`` strokes with the mouse as a person would: each a press and 12 moves 10 ms apart
along a random path, then a pause of 150 ms. For every stroke event it times how long until
the bars first paint an answer to a drawing at least that new (answers are coalesced: events
that come while an answer works are answered together by the next). Prints the median and
95th percentile, with the time of the model's own ``predict`` on one drawing beside them (the
path the pad avoids) and of the predictor's call the pad uses.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/drawing_latency.py [--strokes 100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from gui_session import close_discarding, demo_run_workspace, open_try_view  # noqa: E402
from PySide6.QtCore import QEventLoop, QPoint, Qt, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from studio.gui.tasks import classification  # noqa: E402

MOVES = 12
MOVE_MS = 10
PAUSE_MS = 150
WARM_UP = 3
LEFT = Qt.MouseButton.LeftButton


def idle(ms: int) -> None:
    """Run the event loop for ``ms`` milliseconds without spinning."""
    loop, timer = QEventLoop(), QTimer()
    timer.setSingleShot(True)
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.timeout.connect(loop.quit)
    timer.start(ms)
    loop.exec()


class BarsClock:
    """Notes, for each paint of the bars, when it happened and which drawing it answers."""

    def __init__(self, pad) -> None:
        self.paints: list[tuple[float, int]] = []
        original = classification.ProbabilityBars.paintEvent

        def timed(bars, event) -> None:
            original(bars, event)
            if bars is pad.answer:
                self.paints.append((time.perf_counter(), pad.answered_version))

        classification.ProbabilityBars.paintEvent = timed

    def first_paint_of(self, version: int) -> float | None:
        return next((at for at, shown in self.paints if shown >= version), None)


def draw_strokes(pad, count: int, seed: int = 0) -> list[float]:
    """Seconds from each stroke event to the bars of a drawing that includes it painted."""
    rng = np.random.default_rng(seed)
    canvas, clock = pad.canvas, BarsClock(pad)
    events: list[tuple[float, int]] = []
    for _ in range(count):
        if rng.random() < 0.2:
            pad.clear()
        point = rng.uniform(0.25, 0.75, 2)
        step = rng.normal(0.0, 0.04, 2)
        for index in range(MOVES + 1):
            where = QPoint(round(point[0] * canvas.width()), round(point[1] * canvas.height()))
            started = time.perf_counter()
            if index == 0:
                QTest.mousePress(canvas, LEFT, Qt.KeyboardModifier.NoModifier, where)
            else:
                QTest.mouseMove(canvas, where)
            events.append((started, pad.version))
            idle(MOVE_MS)
            step = 0.7 * step + rng.normal(0.0, 0.03, 2)
            point = np.clip(point + step, 0.1, 0.9)
        QTest.mouseRelease(canvas, LEFT, Qt.KeyboardModifier.NoModifier, where)
        idle(PAUSE_MS)
    while pad.job.busy():
        idle(10)
    idle(100)
    seconds = []
    for started, version in events:
        painted = clock.first_paint_of(version)
        if painted is None:
            raise RuntimeError(f"the drawing of stroke event {version} was never answered "
                               f"(last shown {pad.answered_version}, painted {clock.paints[-3:]})")
        seconds.append(painted - started)
    return seconds


def median_ms(call, rounds: int = 30) -> float:
    call()
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strokes", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="layer-studio-drawing-") as temp:
        trained = demo_run_workspace(temp)
        window = open_try_view(trained)
        panel = window.try_panel
        panel.tabs.setCurrentWidget(panel.pad)
        pad = panel.pad
        draw_strokes(pad, WARM_UP, seed=1)
        ms = sorted(s * 1000 for s in draw_strokes(pad, args.strokes))
        predictor, pixels = panel.predictor, pad.canvas.pixels()
        x = predictor.normalised(pixels[None])
        predict = median_ms(lambda: predictor.model.predict(x, verbose=0))
        direct = median_ms(lambda: predictor.predict_images([pixels], ["drawing"]))
        close_discarding(window)
    print(f"stroke event to bars painted, demo CNN, {len(ms)} events in {args.strokes} strokes: "
          f"median {statistics.median(ms):.1f} ms, 95th percentile "
          f"{ms[int(0.95 * (len(ms) - 1))]:.1f} ms, worst {ms[-1]:.1f} ms")
    print(f"one drawing answered by the pad's call (predict_images, traced forward pass): "
          f"median {direct:.1f} ms; by model.predict: median {predict:.1f} ms "
          f"({predict / direct:.0f}x slower)")


if __name__ == "__main__":
    main()
