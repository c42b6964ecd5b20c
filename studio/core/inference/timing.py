"""How fast a model answers: each input alone (a batch of one, as a deployed model is asked),
timed, the median taken. The export's verification and a search's latency objective measure
the same way, so their figures compare."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from time import perf_counter
from typing import Any

import numpy as np


def answered_one_by_one(answer: Callable[[np.ndarray], Any], x: np.ndarray,
                        after: Callable[[int], None] | None = None
                        ) -> tuple[list[np.ndarray], float]:
    """``answer`` applied to each input of ``x`` alone: its answers (flattened to float64)
    and the latency, the median milliseconds per input, the first left out unless it is the
    only one (it traces the function and warms caches). ``after(done)`` is called after each
    answer (for progress, or to raise if stopped)."""
    got, seconds = [], []
    for i in range(len(x)):
        started = perf_counter()
        got.append(np.asarray(answer(x[i:i + 1]), np.float64).reshape(-1))
        seconds.append(perf_counter() - started)
        if after is not None:
            after(i + 1)
    return got, statistics.median(seconds[1:] or seconds) * 1000
