"""Datasets: what each one holds, loading it, a seeded split and tf.data pipelines."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.project import DatasetChoice

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"


class DataError(ValueError):
    """A dataset cannot be used; the message is meant for a person."""


@dataclass(frozen=True)
class DatasetInfo:
    """What a dataset holds, known without loading TensorFlow."""

    name: str
    title: str
    sample_shape: tuple[int, ...]
    num_classes: int
    class_names: tuple[str, ...]
    num_samples: int
    credit: str


@dataclass(frozen=True)
class Split:
    """Training and validation arrays; images stay uint8 until the pipeline scales them."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray


MNIST_10K = DatasetInfo(
    name="mnist-10k",
    title="MNIST-10k",
    sample_shape=(28, 28, 1),
    num_classes=10,
    class_names=tuple(str(i) for i in range(10)),
    num_samples=10_000,
    credit="MNIST by Y. LeCun, C. Cortes and C. J. C. Burges, CC BY-SA 3.0.",
)

DATASETS: dict[str, DatasetInfo] = {MNIST_10K.name: MNIST_10K}


def dataset_info(choice: DatasetChoice) -> DatasetInfo:
    """Describe the chosen dataset; raise DataError if it is unknown."""
    try:
        return DATASETS[choice.name]
    except KeyError:
        raise DataError(
            f"Unknown dataset {choice.name!r}; available: {', '.join(DATASETS)}."
        ) from None


@cache
def _load_npz(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path, allow_pickle=False) as archive:
        x, y = archive["x"], archive["y"]
    x = np.ascontiguousarray(x[..., np.newaxis])
    x.setflags(write=False)
    y = y.astype(np.int32)
    y.setflags(write=False)
    return x, y


def dataset_path(info: DatasetInfo) -> Path:
    """The bundled ``.npz`` file holding the dataset: arrays ``x`` (N × H × W, uint8) and ``y``."""
    return ASSETS_DIR / f"{info.name}.npz"


def load_arrays(choice: DatasetChoice) -> tuple[np.ndarray, np.ndarray]:
    """All samples (uint8, N × H × W × C) and integer labels of the chosen dataset."""
    path = dataset_path(dataset_info(choice))
    if not path.exists():
        raise DataError(f"The dataset file {path} is missing; reinstall Layer Studio.")
    return _load_npz(path)


def split(choice: DatasetChoice) -> Split:
    """A seeded shuffle of the chosen dataset into training and validation parts."""
    x, y = load_arrays(choice)
    order = np.random.default_rng(choice.seed).permutation(len(x))
    n_val = max(1, round(len(x) * choice.validation_split))
    val, train = order[:n_val], order[n_val:]
    return Split(x[train], y[train], x[val], y[val])


def preprocessing(info: DatasetInfo) -> dict[str, Any]:
    """The preprocessing every pipeline applies, recorded with each run for inference."""
    return {
        "input_dtype": "uint8",
        "scale": 1.0 / 255.0,
        "offset": 0.0,
        "sample_shape": list(info.sample_shape),
        "class_names": list(info.class_names),
    }


PREFETCH_BATCHES = 2


def pipelines(data: Split, batch_size: int, seed: int, prep: dict[str, Any], inputs: int = 1,
              outputs: int = 1):
    """Batched, scaled, prefetched ``tf.data`` datasets for training and validation.

    A model with several inputs gets the samples on each; one with several outputs learns
    the labels on each.

    Autotuning is off: scaling a batch is trivial next to a training step, and freeing an
    autotuned iterator at each epoch's end waits for its tuning thread, which stalled about
    one epoch in three by a second on a 2-core machine (see bench/trainer_throughput.py).
    """
    import tensorflow as tf

    scale, offset = prep["scale"], prep["offset"]
    options = tf.data.Options()
    options.autotune.enabled = False

    def scaled(x, y):
        x = tf.cast(x, tf.float32) * scale + offset
        return ((x,) * inputs if inputs > 1 else x), ((y,) * outputs if outputs > 1 else y)

    train = (
        tf.data.Dataset.from_tensor_slices((data.x_train, data.y_train))
        .shuffle(len(data.x_train), seed=seed, reshuffle_each_iteration=True)
        .batch(batch_size)
        .map(scaled)
        .prefetch(PREFETCH_BATCHES)
        .with_options(options)
    )
    val = (
        tf.data.Dataset.from_tensor_slices((data.x_val, data.y_val))
        .batch(max(batch_size, 256))
        .map(scaled)
        .cache()
        .prefetch(PREFETCH_BATCHES)
        .with_options(options)
    )
    return train, val
