"""What checkpointing every epoch costs in training throughput, on the demo CNN.

One process trains the demo project (MNIST-10k) through the trainer itself (with its
TensorBoard logs and run record), its checkpoint callback replaced by one that checkpoints
between training steps, so many checkpoints are timed against steps without one on the same
model in the same run. Every second epoch is cut into segments of ``--steps`` steps that take
turns: a checkpoint written by the background writer, none, a checkpoint saved on the
training thread as before (the baseline), none. Each segment after a checkpoint holds all it
costs (copying the state out or the whole save, and the writer competing for the two
processors) and is paired with the next segment, without one; pairing adjacent segments
cancels the slow drifts of a shared machine, and short segments keep each pair's noise small.
An epoch's checkpoint is taken between its steps too, so a segment's checkpoint does the same
work; the writer is waited for before validation, as in a run. The other epochs have no
checkpoint: the median of their times is the epoch a checkpoint is weighed against. The first
epoch (tracing) and the first of each way's checkpoints (the twin's making) are left out.

For each way: what a checkpoint adds, the median of (with - without) over the pairs with a 95%
bootstrap interval, in wall time and in the process's processor time (all its threads, the
writer's included), and as a share of an epoch: the cost of checkpointing every epoch. Below
them, the time training waits for the save call and, for the writer, its thread's processor
time. The target (under 1% of throughput) is shown met when the interval of the wall-time
share lies below it.

    .venv/bin/python bench/checkpoint_cost.py [--epochs 31] [--steps 15]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from studio.core.base.runtime import configure_environment

configure_environment()

from studio.core.project.document import Checkpoints  # noqa: E402
from studio.core.project.templates import demo_project  # noqa: E402
from studio.core.training import trainer  # noqa: E402
from studio.core.training.callbacks import checkpoint_callback  # noqa: E402
from studio.core.training.checkpoint_writer import CheckpointWriter  # noqa: E402

TARGET = 0.01
BACKGROUND, INLINE = "background writer", "on the training thread (before)"
CYCLE = (BACKGROUND, None, INLINE, None)  # what each segment starts with


class Segments:
    """Checkpoints between training steps in every second epoch, and times the segments."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.marks: list[tuple[int, float, float, str | None]] = []  # epoch, wall, cpu, way
        self.waits: dict[str, list[float]] = {BACKGROUND: [], INLINE: []}
        self.writer_cpu: list[float] = []
        self.epochs: dict[int, tuple[float, float]] = {}  # epoch -> its end (wall, cpu)
        self.checkpointed: set[int] = set()

    def callback(self, folder, on_event):
        """The trainer's checkpoint callback (its writer, and its waits for it), checkpointing
        between steps instead of at epochs' ends."""
        never = checkpoint_callback(Checkpoints(every_epochs=0), folder, on_event)
        segments = self
        count = [0]

        class Segmented(type(never)):
            def on_epoch_begin(self, epoch, logs=None):
                self.epoch = epoch

            def on_train_batch_end(self, batch, logs=None):
                if self.epoch % 2 == 0 or (batch + 1) % segments.steps:
                    return
                segments.checkpointed.add(self.epoch + 1)
                way = CYCLE[count[0] % len(CYCLE)]
                count[0] += 1
                segments.marks.append((self.epoch, time.perf_counter(), time.process_time(),
                                       way))
                if way is not None:
                    segments.checkpoint(self.writer, self.model, count[0], way)

        return Segmented()

    def checkpoint(self, writer: CheckpointWriter, model, number: int, way: str) -> None:
        started = time.perf_counter()
        if way == BACKGROUND:
            writer.save(model, number, replace=False)
        else:  # without a twin the writer saves at once, as before it existed
            twin, writer._twin = writer._twin_of(model), None
            writer.save(model, number, replace=False)
            writer._twin = twin
        if number > len(CYCLE):  # the first cycle makes the twin
            self.waits[way].append(time.perf_counter() - started)

    def timing_writes(self) -> None:
        write = CheckpointWriter._write
        segments = self

        def timed(writer, *args):
            started = time.thread_time()
            write(writer, *args)
            segments.writer_cpu.append(time.thread_time() - started)

        CheckpointWriter._write = timed

    def pairs(self, way: str, clock: int) -> list[tuple[float, float]]:
        """(segment after a checkpoint, next segment) durations on ``clock`` (1 wall, 2 cpu),
        within one epoch, the first cycle left out."""
        found = []
        for index in range(len(CYCLE), len(self.marks) - 2):
            first, second, third = self.marks[index:index + 3]
            if first[3] == way and first[0] == third[0]:
                found.append((second[clock] - first[clock], third[clock] - second[clock]))
        return found

    def epoch_time(self, clock: int) -> float:
        """Median time of the epochs without checkpoints (the first left out)."""
        return statistics.median(
            end[clock - 1] - self.epochs[epoch - 1][clock - 1]
            for epoch, end in self.epochs.items()
            if epoch > 2 and epoch not in self.checkpointed)


def median_interval(values: list[float], draws: int = 4000) -> tuple[float, float]:
    """95% bootstrap interval of the median of ``values``."""
    rng = random.Random(21)
    medians = sorted(statistics.median(rng.choices(values, k=len(values)))
                     for _ in range(draws))
    return medians[int(draws * 0.025)], medians[int(draws * 0.975) - 1]


def added(name: str, found: list[tuple[float, float]], epoch: float) -> tuple[float, float]:
    """Print what a checkpoint adds on one clock; return the share's 95% interval."""
    extra = [with_save - without for with_save, without in found]
    middle = statistics.median(extra)
    low, high = median_interval(extra)
    print(f"  {name}: {middle * 1000:+.1f} ms a checkpoint (95% interval {low * 1000:+.1f} to "
          f"{high * 1000:+.1f}, {len(extra)} pairs), {middle / epoch:+.2%} of a "
          f"{epoch:.2f} s epoch ({low / epoch:+.2%} to {high / epoch:+.2%})")
    return low / epoch, high / epoch


def verdict(low: float, high: float) -> str:
    if high < TARGET:
        return "met"
    if low >= TARGET:
        return "NOT met"
    return "not resolved (its interval holds 1%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=31,
                        help="epochs of the run; every second one holds checkpoints")
    parser.add_argument("--steps", type=int, default=15, help="training steps a segment")
    args = parser.parse_args()
    segments = Segments(args.steps)
    segments.timing_writes()
    trainer.checkpoint_callback = lambda _rule, folder, on_event: segments.callback(
        folder, on_event)
    project = demo_project()
    project.training.epochs = args.epochs

    def on_event(event: dict) -> None:
        if event["type"] == "epoch":
            segments.epochs[event["epoch"]] = (time.perf_counter(), time.process_time())
            print(f"\repoch {event['epoch']}/{args.epochs}", end="", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        result = trainer.train(project, Path(tmp), on_event)
    print()
    assert result.status == "finished", result.note
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end, {os.cpu_count()} cores")
    shares = {}
    for way in (BACKGROUND, INLINE):
        print(f"{way}:")
        shares[way] = added("wall time", segments.pairs(way, 1), segments.epoch_time(1))
        added("processor time", segments.pairs(way, 2), segments.epoch_time(2))
        waits = segments.waits[way]
        print(f"  training waits {statistics.median(waits) * 1000:.1f} ms a checkpoint "
              f"(median of {len(waits)}, max {max(waits) * 1000:.1f})")
    cpu = segments.writer_cpu[1:]
    print(f"  the writer thread's processor time: {statistics.median(cpu) * 1000:.1f} ms a "
          f"checkpoint (median of {len(cpu)})")
    low, high = shares[BACKGROUND]
    print(f"checkpoint cost (wall time, 95% intervals): background writer {low:+.2%} to "
          f"{high:+.2%} of throughput, on the training thread {shares[INLINE][0]:+.2%} to "
          f"{shares[INLINE][1]:+.2%}; target < {TARGET:.0%}: {verdict(low, high)}", flush=True)


if __name__ == "__main__":
    main()
