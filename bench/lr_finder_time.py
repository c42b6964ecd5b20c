"""The learning-rate finder's cost against one epoch of training, on the demo project.

Times ``find_learning_rate`` (the range test's default 100 batches, or fewer once the loss
explodes) and a one-epoch ``train`` of the demo CNN on MNIST-10k, each from the call to its
return (data loading, model building and tracing included), and the epoch's own seconds as
the trainer records them. One process, TensorFlow loaded and the data read once before
either is timed, the finder first.

    .venv/bin/python bench/lr_finder_time.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from studio.core.base.runtime import configure_environment

configure_environment()

from studio.core.data import sources as data  # noqa: E402
from studio.core.project.templates import demo_project  # noqa: E402
from studio.core.training.lr_finder import find_learning_rate  # noqa: E402
from studio.core.training.trainer import train  # noqa: E402


def main() -> None:
    project = demo_project()
    data.load(project.dataset)  # the first read (and TensorFlow's start) is neither's cost
    with tempfile.TemporaryDirectory() as root:
        started = time.perf_counter()
        found = find_learning_rate(project, Path(root))
        finder = time.perf_counter() - started
        started = time.perf_counter()
        run = train(project, Path(root), epochs=1)
        epoch_call = time.perf_counter() - started
    epoch = run.epochs[0]["seconds"]
    print(f"finder: {finder:.1f} s for {len(found.rates)} batches ({found.status}), "
          f"suggestion {found.suggestion:.2g} (the project's rate: "
          f"{project.training.learning_rate:g})")
    print(f"one epoch: {epoch_call:.1f} s for the call ({epoch:.1f} s the epoch itself, "
          f"validation included)")
    print(f"finder / one epoch: {finder / epoch_call:.2f} of the call, "
          f"{finder / epoch:.2f} of the epoch")


if __name__ == "__main__":
    main()
