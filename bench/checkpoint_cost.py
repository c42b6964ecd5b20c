"""What checkpointing every epoch costs in training throughput, on the demo CNN.

Trains the demo project (MNIST-10k) through the trainer itself (``studio.core.training``,
with its TensorBoard logs and run record in both arms) with a checkpoint after every epoch
and with checkpoints off, alternating the arms over several rounds. An epoch's time is the
wall time between the ends of consecutive epochs, so it includes writing the checkpoint of
the epoch before; the first epoch (tracing) is left out. The cost is 1 - the ratio of
throughputs within each round, then its median over rounds. Target: under 3%.

    .venv/bin/python bench/checkpoint_cost.py [--rounds 5] [--epochs 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from studio.core.runtime import configure_environment

configure_environment()

from studio.core.project import Checkpoints  # noqa: E402
from studio.core.templates import demo_project  # noqa: E402
from studio.core.training import train  # noqa: E402


def samples_per_second(every_epochs: int, epochs: int, root: Path) -> float:
    """Training throughput of the demo project with checkpoints every ``every_epochs``."""
    project = demo_project()
    project.training.checkpoints = Checkpoints(every_epochs=every_epochs)
    ends: list[float] = []
    samples = 0

    def on_event(event: dict) -> None:
        nonlocal samples
        if event["type"] == "start":
            samples = event["samples"]
        elif event["type"] == "epoch":
            ends.append(time.perf_counter())

    result = train(project, root, on_event, epochs=epochs)
    assert result.status == "finished"
    intervals = [b - a for a, b in zip(ends, ends[1:], strict=False)]
    return samples / statistics.median(intervals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    arms = {"checkpoint every epoch": 1, "no checkpoints": 0}
    rounds: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.rounds):
            order = list(arms) if index % 2 == 0 else list(reversed(arms))
            rounds.append({})
            for name in order:
                rate = samples_per_second(arms[name], args.epochs, Path(tmp))
                rounds[-1][name] = rate
                print(f"round {index + 1} {name:24s} {rate:,.0f} samples/s", flush=True)
    costs = [1 - r["checkpoint every epoch"] / r["no checkpoints"] for r in rounds]
    for name in arms:
        print(f"{name:24s} {statistics.median(r[name] for r in rounds):,.0f} samples/s "
              f"(median of {args.rounds} rounds)")
    print(f"checkpoint cost: {statistics.median(costs):.1%} of throughput (rounds: "
          + " ".join(f"{c:+.1%}" for c in costs) + "; target < 3%)")


if __name__ == "__main__":
    main()
