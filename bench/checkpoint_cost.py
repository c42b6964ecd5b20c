"""What checkpointing every epoch costs in training throughput, on the demo CNN.

Trains the demo project (MNIST-10k) through the trainer itself (``studio.core.training.trainer``,
with its TensorBoard logs and run record) with a checkpoint after every second epoch, so
epochs that write a checkpoint and epochs that do not alternate side by side in one run.
An epoch's time is the wall time between the ``epoch`` events of consecutive epochs, so the
epoch after a checkpoint includes writing it; the first epoch (tracing) is left out. Each
epoch that wrote a checkpoint is paired with the next epoch that did not, and the cost of
checkpointing every epoch is 1 - (time without / time with), the median over all pairs.
Pairing adjacent epochs cancels the slow drifts of a shared machine that comparing whole
runs does not. Checkpoints are written in the background; as a cross-check, the time training
waits for each (``CheckpointWriter.save``: copying the state out, and the first time making the
model's twin) is also given as a share of an epoch. With ``--inline``, runs alternate with
runs that save on the training thread as before (no twin), as the baseline. Target: under 1%.

    .venv/bin/python bench/checkpoint_cost.py [--runs 3] [--epochs 21] [--inline]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from studio.core.base.runtime import configure_environment

configure_environment()

from studio.core.project.document import Checkpoints  # noqa: E402
from studio.core.project.templates import demo_project  # noqa: E402
from studio.core.training import checkpoint_writer  # noqa: E402
from studio.core.training.checkpoint_writer import CheckpointWriter  # noqa: E402
from studio.core.training.trainer import train  # noqa: E402

TARGET = 0.01


def timing_saves(saves: list[float]) -> None:
    """Record how long each ``CheckpointWriter.save`` holds the training thread."""
    save = CheckpointWriter.save

    def timed(self, *args, **kwargs):
        started = time.perf_counter()
        save(self, *args, **kwargs)
        saves.append(time.perf_counter() - started)

    CheckpointWriter.save = timed


def one_run(epochs: int, root: Path) -> list[tuple[float, float]]:
    """Train once with a checkpoint every second epoch; return (time with a save, time of the
    next epoch without) pairs."""
    project = demo_project()
    project.training.epochs = epochs
    project.training.checkpoints = Checkpoints(every_epochs=2)
    epoch_ends: dict[int, float] = {}
    saved_epochs: list[int] = []

    def on_event(event: dict) -> None:
        if event["type"] == "epoch":
            epoch_ends[event["epoch"]] = time.perf_counter()
        elif event["type"] == "checkpoint":
            saved_epochs.append(event["epoch"])

    result = train(project, root, on_event)
    assert result.status == "finished", result.note
    pairs = []
    for saved in saved_epochs:
        after, next_after = saved + 1, saved + 2
        if next_after in epoch_ends:
            with_save = epoch_ends[after] - epoch_ends[saved]
            without = epoch_ends[next_after] - epoch_ends[after]
            pairs.append((with_save, without))
    return pairs


def measure(name: str, runs: int, epochs: int, saves: list[float]) -> None:
    """Train ``runs`` times and print the figures of this arm."""
    pairs: list[tuple[float, float]] = []
    saves.clear()
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(runs):
            run_pairs = one_run(epochs, Path(tmp))
            pairs += run_pairs
            print(f"{name}, run {index + 1}: epoch with a save / without, s: "
                  + " ".join(f"{w:.2f}/{o:.2f}" for w, o in run_pairs), flush=True)
    costs = [1 - without / with_save for with_save, without in pairs]
    epoch = statistics.median(without for _, without in pairs)
    save = statistics.median(saves)
    print(f"{name}: epoch without a checkpoint: {epoch:.3f} s (median of {len(pairs)})")
    print(f"{name}: training waits for a checkpoint: {save * 1000:.1f} ms (median of "
          f"{len(saves)}, max {max(saves) * 1000:.1f} ms), {save / (epoch + save):.1%} of an epoch")
    quartiles = statistics.quantiles(costs, n=4)
    print(f"{name}: checkpoint cost: {statistics.median(costs):.1%} of throughput (median of "
          f"{len(costs)} adjacent pairs, quartiles {quartiles[0]:+.1%} / {quartiles[2]:+.1%}; "
          f"target < {TARGET:.0%}: {'met' if statistics.median(costs) < TARGET else 'NOT met'})",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=21)
    parser.add_argument("--inline", action="store_true",
                        help="alternate with runs saving on the training thread (baseline)")
    args = parser.parse_args()
    saves: list[float] = []
    timing_saves(saves)
    if not args.inline:
        measure("background", args.runs, args.epochs, saves)
        return
    make_twin = checkpoint_writer._twin
    for _ in range(args.runs):
        checkpoint_writer._twin = make_twin
        measure("background", 1, args.epochs, saves)
        checkpoint_writer._twin = lambda model: None  # no twin: saved on the training thread
        measure("inline (before)", 1, args.epochs, saves)


if __name__ == "__main__":
    main()
