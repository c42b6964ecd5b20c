"""Splitting a dataset's samples into training, validation and test, seeded."""

from __future__ import annotations

import numpy as np

from studio.core.data.types import SPLITS


def stratified_split(labels: np.ndarray, validation: float, test: float, seed: int,
                     stratify: bool = True) -> dict[str, np.ndarray]:
    """Seeded indices for training, validation and test.

    With ``stratify``, each class is split by the same fractions (at least one validation
    sample per class that has two or more); otherwise the samples are split as one group.
    Each split's indices are sorted.
    """
    rng = np.random.default_rng(seed)
    groups = ([np.flatnonzero(labels == c) for c in np.unique(labels)] if stratify
              else [np.arange(len(labels))])
    parts: dict[str, list[np.ndarray]] = {name: [] for name in SPLITS}
    for group in groups:
        order = rng.permutation(group)
        n = len(order)
        n_val = min(max(1, round(n * validation)), n - 1) if n > 1 and validation > 0 else 0
        n_test = min(round(n * test), n - n_val - 1) if test > 0 else 0
        parts["validation"].append(order[:n_val])
        parts["test"].append(order[n_val:n_val + n_test])
        parts["train"].append(order[n_val + n_test:])
    return {name: np.sort(np.concatenate(chunks)).astype(np.int64)
            for name, chunks in parts.items()}
