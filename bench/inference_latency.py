"""Inference in the window with the demo CNN: from dropping one image to its probability
bars drawn, and a dropped folder answered in the background while the GUI keeps ticking.

Trains the demo CNN for one epoch in a temporary workspace, opens the real window on it
(offscreen), lets the Try view load the run's model, then drops one MNIST digit PNG at a time
onto the canvas as a file URL and times each drop until the new card's bars have painted
(median and 90th percentile, after two warm-up drops). Then drops a folder of ``--folder``
digit PNGs and reports the images answered per second and how late a 10 ms timer on the GUI
thread fired meanwhile (the GUI never blocks if that stays small).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/inference_latency.py [--drops 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gui_session import (  # noqa: E402
    PaintClock,
    close_discarding,
    demo_run_workspace,
    drop,
    open_try_view,
    time_drops,
    wait_for,
)
from gui_stalls import LatenessProbe, summary  # noqa: E402
from PIL import Image  # noqa: E402

from studio.core.data.sources import load_arrays  # noqa: E402
from studio.core.project.document import DatasetChoice  # noqa: E402
from studio.gui.tasks import classification  # noqa: E402

WARM_UP = 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drops", type=int, default=50)
    parser.add_argument("--folder", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="layer-studio-latency-") as temp:
        trained = demo_run_workspace(temp)
        x, _ = load_arrays(DatasetChoice())
        images = []
        folder = Path(temp) / "folder"
        folder.mkdir()
        for index in range(max(args.drops + WARM_UP, args.folder)):
            path = folder / f"digit-{index:05d}.png"
            Image.fromarray(x[index % len(x), ..., 0]).save(path)
            images.append(path)
        window = open_try_view(trained)
        clock = PaintClock(classification.ProbabilityBars)  # a new card's bars
        seconds = time_drops(window, images[: args.drops + WARM_UP], clock)[WARM_UP:]
        probe = LatenessProbe()
        probe.start()
        drop(window.canvas.viewport(), [folder])
        (result,) = wait_for(window.try_panel.folder_done)
        lateness = probe.stop()
        close_discarding(window)
    count = len(result.predictions)
    print(f"folder of {count:,} PNGs answered in the background: "
          f"{count / result.seconds:,.0f} images per second")
    print(summary("GUI timer while the folder was answered", lateness))
    ms = sorted(s * 1000 for s in seconds)
    print(f"drop to bars drawn, demo CNN, {len(ms)} drops: median {statistics.median(ms):.1f} ms,"
          f" 90th percentile {ms[int(0.9 * (len(ms) - 1))]:.1f} ms, worst {ms[-1]:.1f} ms")


if __name__ == "__main__":
    main()
