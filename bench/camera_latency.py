"""The camera in the window with the demo CNN: from a camera frame to its probability bars
painted in the Try tab's Camera mode, and how late the GUI's timer fires while the camera
view records.

Trains the demo CNN for one epoch in a temporary workspace, opens the real window on it
(offscreen), lets the Try view load the run's model and opens its Camera mode on a fake
camera offering ``--fps`` frames a second (demo digits, enlarged to a webcam's 640 × 480).
For ``--seconds`` it notes, for each answer, the time from the frame's arrival to its bars'
first paint (frames that come while the model works are dropped, so only answered frames
count). Then a camera view on the same fake camera records at 5 frames a second, the button
held, for ``--seconds`` while a 10 ms timer on the GUI thread notes how late it fires.
Targets: frame to bars p50 < 100 ms; timer lateness while recording p99 < 30 ms.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/camera_latency.py [--seconds 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from gui_session import close_discarding, demo_run_workspace, open_try_view  # noqa: E402
from gui_stalls import LatenessProbe, run_event_loop, summary  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from studio.core.data.sources import load_arrays  # noqa: E402
from studio.core.project.document import DatasetChoice  # noqa: E402
from studio.gui.camera.fake import FakeCamera  # noqa: E402
from studio.gui.camera.view import CameraView  # noqa: E402
from studio.gui.tasks import classification  # noqa: E402

FRAME_HW = (480, 640)
KEPT = 64
"""Frames whose arrival is remembered (a frame answered is one of the newest)."""
WARM_UP_S = 1.0
"""Answers in the first second are not counted (the first frames meet a cold pipeline)."""


def webcam_frames(digits: np.ndarray, count: int) -> list[np.ndarray]:
    """``count`` digits (28 × 28 grey), each enlarged 17 times and centred on a black
    640 × 480 frame, as a webcam filming a digit would send."""
    frames = []
    for digit in digits[:count, ..., 0]:
        big = digit.repeat(17, axis=0).repeat(17, axis=1)
        frame = np.zeros(FRAME_HW, np.uint8)
        top, left = (FRAME_HW[0] - big.shape[0]) // 2, (FRAME_HW[1] - big.shape[1]) // 2
        frame[top : top + big.shape[0], left : left + big.shape[1]] = big
        frames.append(frame)
    return frames


class FrameToBars:
    """Notes when each frame arrived and, at the first paint of each new bars widget, how
    long ago the frame it answers arrived."""

    def __init__(self, camera: FakeCamera, mode) -> None:
        self.arrived: dict[int, tuple[np.ndarray, float]] = {}
        self.seconds: list[tuple[float, float]] = []
        """(when painted, frame to bars) for each answer."""
        camera.frame.connect(self._arrived)
        painted: set[int] = set()
        original = classification.ProbabilityBars.paintEvent

        def timed(bars, event) -> None:
            original(bars, event)
            if id(bars) not in painted and bars is mode.answer:
                painted.add(id(bars))
                now = time.perf_counter()
                _, at = self.arrived[id(mode.answered_frame)]
                self.seconds.append((now, now - at))

        classification.ProbabilityBars.paintEvent = timed

    def _arrived(self, frame: np.ndarray) -> None:
        self.arrived[id(frame)] = (frame, time.perf_counter())  # kept: its id stays unique
        while len(self.arrived) > KEPT:
            del self.arrived[next(iter(self.arrived))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="layer-studio-camera-") as temp:
        trained = demo_run_workspace(temp)
        x, _ = load_arrays(DatasetChoice())
        frames = webcam_frames(x, 60)
        window = open_try_view(trained)
        panel = window.try_panel
        camera = FakeCamera(frames, fps=args.fps)
        mode = panel.camera
        mode.view.set_source(camera)
        panel.tabs.setCurrentWidget(mode)
        clock = FrameToBars(camera, mode)
        probe = LatenessProbe()
        started = time.perf_counter()
        probe.start()
        mode.view.start()
        run_event_loop(round(args.seconds * 1000))
        answering = probe.stop()
        offered = camera.sent
        mode.view.stop()
        ms = np.asarray([s * 1000 for at, s in clock.seconds if at - started > WARM_UP_S])

        recording_camera = FakeCamera(frames, fps=args.fps)
        view = CameraView(recording_camera)
        view.resize(640, 560)
        view.show()
        view.start()
        captured = []
        view.captured.connect(captured.extend)
        run_event_loop(500)  # the preview is showing frames before the timing starts
        probe.start()
        QTest.mousePress(view.hold_button, Qt.MouseButton.LeftButton)
        run_event_loop(round(args.seconds * 1000))
        QTest.mouseRelease(view.hold_button, Qt.MouseButton.LeftButton)
        recording = probe.stop()
        view.stop()
        view.close()
        close_discarding(window)
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} cores")
    print(f"camera mode: {offered} frames offered at {args.fps:.0f}/s "
          f"({FRAME_HW[1]} × {FRAME_HW[0]}), {len(clock.seconds)} answered")
    p50 = np.percentile(ms, 50)
    print(f"frame to bars painted, demo CNN, {len(ms)} answers: p50 {p50:.1f} ms, "
          f"p90 {np.percentile(ms, 90):.1f} ms, worst {ms.max():.1f} ms; "
          f"target p50 < 100 ms: {'met' if p50 < 100 else 'NOT met'}")
    print(summary("GUI timer while the camera mode answered", answering))
    p99 = np.percentile(recording, 99)
    print(f"recording at 5/s for {args.seconds:.0f} s: {len(captured)} frames captured")
    print(summary("GUI timer while recording", recording)
          + f"; target p99 < 30 ms: {'met' if p99 < 30 else 'NOT met'}")


if __name__ == "__main__":
    main()
