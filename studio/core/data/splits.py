"""Splitting a dataset's samples into training, validation and test, seeded."""

from __future__ import annotations

import numpy as np

from studio.core.data.types import SPLITS, LoadedData


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


def fixed_by_layout(named: list[str | None]) -> tuple[str, ...]:
    """The splits a layout sets itself, whatever the percentages and seed: all three when it
    names a validation split (its unnamed samples train; its test split may be empty), the
    test split when it names only that, else none."""
    if "validation" in named:
        return SPLITS
    return ("test",) if "test" in named else ()


def layout_sizes(loaded: LoadedData) -> dict[str, int]:
    """How many samples each split that ``loaded``'s layout sets itself holds (in SPLITS
    order); empty when the layout sets none."""
    fixed = fixed_by_layout(loaded.named_splits) if loaded.named_splits is not None else ()
    return {split: loaded.size(split) for split in fixed}


def layout_splits(named: list[str | None], validation: float, test: float, seed: int
                  ) -> dict[str, np.ndarray]:
    """Indices of each split of samples whose layout names theirs (``train``, ``validation``,
    ``test`` or None): the layout's own if it names a validation split (its other samples
    train), else a seeded random split by these fractions of the samples it puts in no test
    split (its test samples stay there)."""
    fixed = fixed_by_layout(named)
    words = np.asarray([split or "" for split in named])
    tests = np.flatnonzero(words == "test")
    if "validation" in fixed:
        return {"train": np.flatnonzero((words != "validation") & (words != "test")),
                "validation": np.flatnonzero(words == "validation"), "test": tests}
    free = np.flatnonzero(words != "test")
    inner = stratified_split(np.zeros(len(free)), validation, 0.0 if "test" in fixed else test,
                             seed, stratify=False)
    return {"train": free[inner["train"]], "validation": free[inner["validation"]],
            "test": tests if "test" in fixed else free[inner["test"]]}
