"""The datasets bundled with Layer Studio as ``.npz`` files in ``assets``: what each holds and
its arrays (free of TensorFlow)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from studio.core.base.messages import look_up
from studio.core.data.types import DataError, DatasetInfo
from studio.core.project.document import DatasetChoice

ASSETS_DIR = Path(__file__).resolve().parents[3] / "assets"

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
"""The bundled datasets, by name."""


def bundled_info(choice: DatasetChoice) -> DatasetInfo:
    """What the bundled dataset ``choice.name`` holds; DataError if there is none so named."""
    return look_up(DATASETS, choice.name, "dataset", DataError)


@cache
def _load_npz(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path, allow_pickle=False) as archive:
        x, y = archive["x"], archive["y"]
    if x.ndim == 3:
        x = x[..., np.newaxis]
    x = np.ascontiguousarray(x)
    x.setflags(write=False)
    y = y.astype(np.int32)
    y.setflags(write=False)
    return x, y


def dataset_path(info: DatasetInfo) -> Path:
    """The bundled ``.npz`` file holding the dataset: arrays ``x`` (N × H × W, uint8) and ``y``."""
    return ASSETS_DIR / f"{info.name}.npz"


def load_arrays(choice: DatasetChoice) -> tuple[np.ndarray, np.ndarray]:
    """All samples (uint8, N × H × W × C) and integer labels of a bundled dataset."""
    path = dataset_path(bundled_info(choice))
    if not path.exists():
        raise DataError(f"The dataset file {path} is missing; reinstall Layer Studio.")
    return _load_npz(path)
