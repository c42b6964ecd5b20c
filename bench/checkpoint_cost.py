"""What checkpointing every epoch costs in training throughput, on the demo CNN.

Trains the demo project (MNIST-10k) through the trainer itself (``studio.core.training.trainer``,
with its TensorBoard logs and run record) with a checkpoint after every second epoch, so
epochs that write a checkpoint and epochs that do not alternate side by side in one run.
An epoch's time is the wall time between the ``epoch`` events of consecutive epochs, so the
epoch after a checkpoint includes writing it; the first epoch (tracing) is left out. Each
epoch that wrote a checkpoint is paired with the next epoch that did not, and the cost of
checkpointing every epoch is 1 - (time without / time with), the median over all pairs.
Pairing adjacent epochs cancels the slow drifts of a shared machine that comparing whole
runs does not. As a cross-check, the time the save itself took (from the ``epoch`` event to
the ``checkpoint`` event) is also given as a share of an epoch. Target: under 3%.

    .venv/bin/python bench/checkpoint_cost.py [--runs 3] [--epochs 21]
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
from studio.core.training.trainer import train  # noqa: E402


def one_run(epochs: int, root: Path) -> tuple[list[tuple[float, float]], list[float]]:
    """Train once with a checkpoint every second epoch; return (time with a save, time of the
    next epoch without) pairs and the seconds each save took."""
    project = demo_project()
    project.training.checkpoints = Checkpoints(every_epochs=2)
    epoch_ends: dict[int, float] = {}
    saves: dict[int, float] = {}

    def on_event(event: dict) -> None:
        if event["type"] == "epoch":
            epoch_ends[event["epoch"]] = time.perf_counter()
        elif event["type"] == "checkpoint":
            saves[event["epoch"]] = time.perf_counter() - epoch_ends[event["epoch"]]

    result = train(project, root, on_event, epochs=epochs)
    assert result.status == "finished", result.error
    pairs = []
    for saved in sorted(saves):
        after, next_after = saved + 1, saved + 2
        if next_after in epoch_ends:
            with_save = epoch_ends[after] - epoch_ends[saved]
            without = epoch_ends[next_after] - epoch_ends[after]
            pairs.append((with_save, without))
    return pairs, list(saves.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=21)
    args = parser.parse_args()
    pairs: list[tuple[float, float]] = []
    saves: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.runs):
            run_pairs, run_saves = one_run(args.epochs, Path(tmp))
            pairs += run_pairs
            saves += run_saves
            print(f"run {index + 1}: epoch with a save / without, s: "
                  + " ".join(f"{w:.2f}/{o:.2f}" for w, o in run_pairs), flush=True)
    costs = [1 - without / with_save for with_save, without in pairs]
    epoch = statistics.median(without for _, without in pairs)
    save = statistics.median(saves)
    print(f"epoch without a checkpoint: {epoch:.3f} s (median of {len(pairs)})")
    print(f"saving a checkpoint: {save * 1000:.1f} ms (median of {len(saves)}), "
          f"{save / (epoch + save):.1%} of an epoch")
    quartiles = statistics.quantiles(costs, n=4)
    print(f"checkpoint cost: {statistics.median(costs):.1%} of throughput (median of "
          f"{len(costs)} adjacent pairs, quartiles {quartiles[0]:+.1%} / {quartiles[2]:+.1%}; "
          "target < 3%)")


if __name__ == "__main__":
    main()
