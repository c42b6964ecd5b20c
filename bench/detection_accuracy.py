"""Time to accuracy of the small detector template on the detection demo set: the best
validation mAP@0.5 reached within a wall-clock budget, and when it first reached the target.

Opens the project as the gallery does (``from_template("small_detector")``: the graph of
``templates.small_detector``, the settings of ``small_detector_training``) on the demo set (a
``detection`` DatasetChoice without a path: 4,000 training and 500 validation images of 128 ×
128 with 1 to 5 digits), and trains it with the core trainer; the trainer's stop event ends the
run when the budget is spent. The clock starts when ``train`` is called, so reading the data,
building the model and tracing count; importing TensorFlow does not (the app's warm-up has it
loaded before Train is clicked), nor does drawing the demo set on first use (it is drawn, or
read from the workspace's cache, before). The scores are the ``val_map50`` the mAP callback
logged in the run's history. Issue 23's target: mAP@0.5 at least 0.90 within 5 minutes on 2
cores.

    .venv/bin/python bench/detection_accuracy.py [--budget 300] [--target 0.9] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.core.base.runtime import configure_environment, start_tensorflow  # noqa: E402

configure_environment()

from studio.core.data.detection.demo import demo_set  # noqa: E402
from studio.core.data.detection.source import DEMO_IMAGES  # noqa: E402
from studio.core.project.templates import from_template  # noqa: E402
from studio.core.training.trainer import train  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=300.0, help="seconds of training")
    parser.add_argument("--target", type=float, default=0.9, help="the mAP@0.5 to reach")
    parser.add_argument("--keep", type=Path, help="train into this runs folder and keep it")
    args = parser.parse_args()
    demo_set(DEMO_IMAGES["train"], DEMO_IMAGES["validation"])  # drawn once, outside the clock
    start_tensorflow()
    project = from_template("small_detector")  # as the gallery opens it, on the demo set
    seen: list[tuple[float, dict]] = []
    stop = threading.Event()

    def on_event(event: dict) -> None:
        if event["type"] == "epoch":
            seen.append((time.perf_counter() - started, event))
            print(f"epoch {event['epoch']:3d} at {seen[-1][0]:6.1f} s: val_map50 "
                  f"{event.get('val_map50', float('nan')):.4f}, loss {event['loss']:.4f}",
                  flush=True)

    with tempfile.TemporaryDirectory(prefix="layer-studio-detection-") as temp:
        runs = args.keep or Path(temp)
        timer = threading.Timer(args.budget, stop.set)
        started = time.perf_counter()
        timer.start()
        try:
            result = train(project, runs, on_event, stop)
        finally:
            timer.cancel()
        spent = time.perf_counter() - started
    scores = [row["val_map50"] for row in result.epochs if "val_map50" in row]
    reached = next((at for at, event in seen if event.get("val_map50", 0.0) >= args.target),
                   None)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    settings = project.training
    print(f"small detector, demo set, {settings.epochs} epochs planned of batch "
          f"{settings.batch_size}, {settings.optimizer} at {settings.learning_rate} "
          f"({settings.schedule.kind}): {result.status} after {len(result.epochs)} epochs in "
          f"{spent:.0f} s (budget {args.budget:.0f} s); load average {load}")
    print(f"best val_map50 {max(scores, default=0.0):.4f}; "
          + (f"first reached {args.target:.2f} at {reached:.0f} s" if reached is not None
             else f"{args.target:.2f} not reached"))
    if args.keep:
        print(f"run kept in {result.run_dir}")


if __name__ == "__main__":
    main()
