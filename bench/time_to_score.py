"""The shared part of the time-to-accuracy benches of the task templates
(``detection_accuracy.py``, ``segmentation_accuracy.py``): train a gallery template on its
demo set for a wall-clock budget and print the best validation score it logged and when it
first reached the target.

The template is opened as the gallery opens it (``from_template``) and trained with the core
trainer; the trainer's stop event ends the run when the budget is spent. The clock starts when
``train`` is called, so reading the data, building the model and tracing count; importing
TensorFlow does not (the app's warm-up has it loaded before Train is clicked), nor does drawing
the demo set on first use (the caller draws it, or reads it from the workspace's cache, before).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from studio.core.base.runtime import start_tensorflow
from studio.core.project.templates import TEMPLATES, from_template
from studio.core.training.trainer import train


def main(doc: str, template: str, score: str, target: float, draw_demo: Callable[[], object]
         ) -> None:
    """The bench whose docstring is ``doc``: read its command line (``--budget`` seconds,
    ``--target`` (``target`` unless given), ``--keep DIR``), draw the demo set
    (``draw_demo``), then train ``template`` for the budget, printing each epoch's ``score``
    (a key of the epoch's logs, such as ``val_map50``), then the best and when it reached
    the target."""
    parser = argparse.ArgumentParser(description=" ".join(doc.split("\n\n")[0].split()))
    parser.add_argument("--budget", type=float, default=300.0, help="seconds of training")
    parser.add_argument("--target", type=float, default=target, help=f"the {score} to reach")
    parser.add_argument("--keep", type=Path, help="train into this runs folder and keep it")
    args = parser.parse_args()
    draw_demo()  # outside the clock
    start_tensorflow()
    project = from_template(template)  # as the gallery opens it, on its demo set
    seen: list[tuple[float, dict]] = []
    stop = threading.Event()

    def on_event(event: dict) -> None:
        if event["type"] == "epoch":
            seen.append((time.perf_counter() - started, event))
            print(f"epoch {event['epoch']:3d} at {seen[-1][0]:6.1f} s: {score} "
                  f"{event.get(score, float('nan')):.4f}, loss {event['loss']:.4f}",
                  flush=True)

    with tempfile.TemporaryDirectory(prefix=f"layer-studio-{template}-") as temp:
        runs = args.keep or Path(temp)
        timer = threading.Timer(args.budget, stop.set)
        started = time.perf_counter()
        timer.start()
        try:
            result = train(project, runs, on_event, stop)
        finally:
            timer.cancel()
        spent = time.perf_counter() - started
    scores = [row[score] for row in result.epochs if score in row]
    reached = next((at for at, event in seen if event.get(score, 0.0) >= args.target), None)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    settings = project.training
    print(f"{TEMPLATES[template].title}, demo set, {settings.epochs} epochs planned of batch "
          f"{settings.batch_size}, {settings.optimizer} at {settings.learning_rate} "
          f"({settings.schedule.kind}): {result.status} after "
          f"{len(result.epochs)} epochs in {spent:.0f} s (budget {args.budget:.0f} s); "
          f"{os.cpu_count()} cores, load average {load}")
    print(f"best {score} {max(scores, default=0.0):.4f}; "
          + (f"first reached {args.target:.2f} at {reached:.0f} s" if reached is not None
             else f"{args.target:.2f} not reached"))
    if args.keep:
        print(f"run kept in {result.run_dir}")
