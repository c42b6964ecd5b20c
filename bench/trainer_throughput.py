"""Trainer overhead: the core trainer with live metrics against a bare ``model.fit``.

Trains the demo CNN on MNIST-10k in one process, alternating the two arms over several
rounds, and compares training throughput (samples per second, first epoch left out because
it includes tracing). Target: the trainer reaches at least 0.98 of bare ``fit``.

    .venv/bin/python bench/trainer_throughput.py [--rounds 6] [--epochs 4]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from studio.core.base.runtime import configure_environment

configure_environment()

import keras  # noqa: E402

from studio.core.build.keras_model import build_model, compile_model  # noqa: E402
from studio.core.data import sources as data  # noqa: E402
from studio.core.data.pipelines import make_pipelines  # noqa: E402
from studio.core.project.templates import demo_project  # noqa: E402
from studio.core.training.trainer import train  # noqa: E402


class EpochTimer(keras.callbacks.Callback):
    """Times each epoch, training and validation together, as the trainer reports it."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds: list[float] = []

    def on_epoch_begin(self, epoch, logs=None):
        self.started = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.started)


def bare_fit(epochs: int) -> list[float]:
    """Epoch durations of a plain ``fit`` on the same data, pipeline, model and batch size."""
    project = demo_project()
    settings = project.training
    keras.utils.set_random_seed(settings.seed)
    loaded = data.load(project.dataset)
    pipes = make_pipelines(loaded, project.dataset, settings.batch_size, settings.seed)
    model = build_model(project.graph, loaded.info, project.name)
    compile_model(model, project.graph, settings)
    timer = EpochTimer()
    model.fit(epochs=epochs, verbose=0, callbacks=[timer], **pipes.fit_arguments())
    return timer.seconds


def trainer(epochs: int, root: Path) -> list[float]:
    """Epoch durations reported by the core trainer, live-metrics callback included."""
    seconds: list[float] = []

    def on_event(event: dict) -> None:
        if event["type"] == "epoch":
            seconds.append(event["seconds"])

    train(demo_project(), root, on_event, epochs=epochs)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    samples = data.load(demo_project().dataset).size("train")
    results: dict[str, list[float]] = {"bare fit": [], "trainer": []}
    with tempfile.TemporaryDirectory() as root:
        for round_index in range(args.rounds):
            arms = [("bare fit", lambda: bare_fit(args.epochs)),
                    ("trainer", lambda: trainer(args.epochs, Path(root)))]
            if round_index % 2:
                arms.reverse()
            for name, run in arms:
                epoch_seconds = run()[1:]
                results[name].extend(epoch_seconds)
                print(f"round {round_index + 1} {name:8s} epochs "
                      + " ".join(f"{s:.3f}s" for s in epoch_seconds), flush=True)
    rate = {name: samples / statistics.median(s) for name, s in results.items()}
    ratio = rate["trainer"] / rate["bare fit"]
    print(f"bare fit: {rate['bare fit']:,.0f} samples/s (median of {len(results['bare fit'])} "
          f"epochs)")
    print(f"trainer:  {rate['trainer']:,.0f} samples/s (median of {len(results['trainer'])} "
          f"epochs)")
    print(f"ratio trainer / bare fit: {ratio:.3f} (target >= 0.98)")


if __name__ == "__main__":
    main()
