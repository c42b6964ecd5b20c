"""Cost of a hyperparameter search beyond its training: per-trial overhead, memory across many
trials, and the speed-up of parallel workers.

(a) Overhead per trial on the demo CNN (``studio.core.project.templates.demo_project``, 1 epoch of
MNIST-10k, a grid of ``--cnn-trials`` learning rates, one warm worker): a trial's wall time in
the parent (the worker picking it up to its end) minus the time of its epochs (the training
steps, as the worker's epoch timings measure them). Target: under 1 s.
(b) Resident memory of this process (psutil) across ``--memory-trials`` trials of a small
Dense model, with ``run_search`` called from a thread as the app does, and of the worker
process. Target: this process grows less than 100 MB.
(c) ``--trials`` trials of a small Dense model (MNIST-10k, 2 epochs) with 2 workers and with 1,
side by side: from workers the search starts (their TensorFlow start included, as
``studio search`` waits for it), and from workers already up (the Search tab starts them when
it shows). Target: 2 workers at least 1.5 times faster on 2 cores.

    .venv/bin/python bench/search_overhead.py [--cnn-trials 4] [--memory-trials 20] [--trials 8]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.core.base.runtime import configure_environment  # noqa: E402

configure_environment()

MB = 1024 * 1024


def dense_project(epochs: int):
    """Flatten and two Dense layers on MNIST-10k: a small model whose trials are short."""
    from studio.core.model.graph import Graph, Node
    from studio.core.project.document import Project

    project = Project(name="Dense", graph=Graph.from_chain([
        Node("input_1", "Input", {"shape": [28, 28, 1]}),
        Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dense", {"units": 32, "activation": "relu"}),
        Node("dense_2", "Dense", {"units": 10, "activation": "softmax"}),
    ]))
    project.training.epochs = epochs
    project.training.batch_size = 128
    return project


def with_rates(project, count: int, workers: int):
    """``project`` searching a grid of ``count`` learning rates."""
    from studio.core.project.document import Dimension

    project.search.dimensions = [Dimension("training.learning_rate", low=1e-4, high=1e-2,
                                           scale="log", count=count)]
    project.search.strategy = "grid"
    project.search.workers = workers
    return project


def overhead(temp: Path, trials: int) -> None:
    from studio.core.project.templates import demo_project
    from studio.core.search.runner import WorkerPool, run_search

    project = demo_project()
    project.training.epochs = 1
    with WorkerPool(1) as pool:
        result = run_search(with_rates(project, trials, 1), temp / "runs", temp / "cnn",
                            pool=pool)
    costs = [t.seconds - sum(row["seconds"] for row in t.epochs) for t in result.trials]
    walls = [t.seconds for t in result.trials]
    print(f"(a) demo CNN, {trials} trials of 1 epoch: trial {statistics.median(walls):.2f} s "
          f"(median), overhead per trial median {statistics.median(costs):.2f} s, "
          f"first {costs[0]:.2f} s, max {max(costs):.2f} s (target < 1 s)")


def memory(temp: Path, trials: int) -> None:
    import psutil

    from studio.core.project.document import Dimension
    from studio.core.search.runner import WorkerPool, run_search

    me = psutil.Process()
    parent: list[float] = []
    workers: dict[int, list[float]] = {}

    def on_event(event: dict) -> None:
        if event["type"] == "trial_start":
            workers.setdefault(event["pid"], [])
        elif event["type"] == "trial_end":
            parent.append(me.memory_info().rss / MB)
            for pid, sizes in workers.items():
                if psutil.pid_exists(pid):
                    sizes.append(psutil.Process(pid).memory_info().rss / MB)

    project = dense_project(1)
    project.search.dimensions = [Dimension("layer.dense_1.units", low=8, high=64, step=8),
                                 Dimension("training.learning_rate", low=1e-4, high=1e-2,
                                           scale="log", count=2)]
    project.search.strategy, project.search.trials = "random", trials
    before = me.memory_info().rss / MB
    with WorkerPool(1) as pool:
        thread = threading.Thread(target=run_search, args=(
            project, temp / "runs", temp / "memory", on_event, threading.Event()),
            kwargs={"pool": pool})
        thread.start()
        thread.join()
    print(f"(b) {trials} trials from a thread: this process {before:.0f} MB before, "
          f"{parent[0]:.0f} MB after trial 1, {parent[-1]:.0f} MB after trial {len(parent)}: "
          f"growth {parent[-1] - parent[0]:+.1f} MB since trial 1, {parent[-1] - before:+.1f} MB "
          f"in all (target < 100 MB)")
    for pid, sizes in workers.items():
        print(f"    worker {pid}: {sizes[0]:.0f} MB after trial 1, {sizes[-1]:.0f} MB after "
              f"trial {len(sizes)}: growth {sizes[-1] - sizes[0]:+.1f} MB")


def parallel(temp: Path, trials: int) -> None:
    from studio.core.search.runner import WorkerPool, run_search

    seconds: dict[tuple[int, str], float] = {}
    for workers in (2, 1):
        for start in ("fresh", "warm"):
            pool = None
            if start == "warm":
                pool = WorkerPool(workers)
                pool.wait_ready()
            began = time.perf_counter()
            result = run_search(with_rates(dense_project(2), trials, workers), temp / "runs",
                                temp / f"parallel-{workers}-{start}", pool=pool)
            seconds[workers, start] = time.perf_counter() - began
            if pool is not None:
                pool.close()
            assert all(t.status == "finished" for t in result.trials), result.trials
            print(f"(c) {trials} trials, {workers} worker(s), {start} workers: "
                  f"{seconds[workers, start]:.1f} s")
    for start, words in (("fresh", "workers started by the search (TensorFlow loads first)"),
                         ("warm", "workers already up, as the Search tab starts them")):
        print(f"    2 workers vs 1, {words}: "
              f"{seconds[1, start] / seconds[2, start]:.2f}x (target >= 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cnn-trials", type=int, default=4)
    parser.add_argument("--memory-trials", type=int, default=20)
    parser.add_argument("--trials", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="layer-studio-search-") as temp:
        overhead(Path(temp), args.cnn_trials)
        memory(Path(temp), args.memory_trials)
        parallel(Path(temp), args.trials)


if __name__ == "__main__":
    main()
