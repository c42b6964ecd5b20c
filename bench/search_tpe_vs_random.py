"""Does Bayesian search earn its name on real training? On the demo CNN
(``studio.core.project.templates.demo_project``, MNIST-10k, 1 epoch a trial), a ``--trials``
Bayesian (TPE, with its automatic random start-up trials) and a ``--trials`` random search of
the learning rate (1e-4 to 1e-1, log scale) and the first Dense layer's units (16 to 128),
for each of ``--seeds`` seeds: the validation accuracy of each search's best trial, and the
median over seeds. Target: Bayesian at least as good as random.

It trains 2 x trials x seeds epochs (160 for the defaults: a 16-trial search took 86 s on a
busy 2-core machine, so about 15 minutes). Both searches of a seed draw the same first trials
(TPE's random start is random search's first draws), so they differ by what TPE proposes.

    .venv/bin/python bench/search_tpe_vs_random.py [--seeds 5] [--trials 16] [--workers 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.core.base.runtime import configure_environment  # noqa: E402

configure_environment()

STRATEGIES = ("bayes", "random")


def searched(strategy: str, seed: int, trials: int, workers: int):
    """The demo project searching the learning rate and the Dense layer's units."""
    from studio.core.project.document import Dimension
    from studio.core.project.templates import demo_project

    project = demo_project()
    project.training.epochs = 1
    search = project.search
    search.dimensions = [
        Dimension("training.learning_rate", low=1e-4, high=1e-1, scale="log", count=4),
        Dimension("layer.dense_1.units", low=16, high=128, count=4)]
    search.strategy, search.trials, search.seed, search.workers = strategy, trials, seed, workers
    search.metric = "val_accuracy"
    return project


def main() -> None:
    from studio.core.search.runner import WorkerPool, run_search
    from studio.core.search.space import startup_trials

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    startup = startup_trials(searched("bayes", 0, args.trials, args.workers).search)
    print(f"{args.trials} trials of 1 epoch each, {args.workers} at once; Bayesian draws "
          f"{startup} at random first")
    best: dict[str, list[float]] = {strategy: [] for strategy in STRATEGIES}
    with tempfile.TemporaryDirectory(prefix="layer-studio-tpe-") as temp, \
            WorkerPool(args.workers) as pool:
        pool.wait_ready()  # their TensorFlow loads outside the first search's time
        for seed in range(args.seeds):
            for strategy in STRATEGIES:
                began = time.perf_counter()
                result = run_search(searched(strategy, seed, args.trials, args.workers),
                                    Path(temp) / "runs", Path(temp) / f"{strategy}-{seed}",
                                    pool=pool)
                if result.best is None:
                    raise SystemExit(f"seed {seed}: no {strategy} trial finished")
                best[strategy].append(result.best.value)
                print(f"seed {seed} {strategy:6}: best val_accuracy {result.best.value:.4f} "
                      f"({result.best.params}) in {time.perf_counter() - began:.0f} s",
                      flush=True)
    medians = {strategy: statistics.median(values) for strategy, values in best.items()}
    verdict = "met" if medians["bayes"] >= medians["random"] else "NOT met"
    print(f"median of {args.seeds} seeds: Bayesian {medians['bayes']:.4f}, random "
          f"{medians['random']:.4f} (target Bayesian >= random: {verdict})")


if __name__ == "__main__":
    main()
