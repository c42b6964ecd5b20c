"""``tf.data`` pipelines for CSV datasets: standardised numeric tables and vectorised texts.

Every statistic (column means and spreads, the text vocabulary) comes from the training
split only. Inference applies the same steps through ``preprocess_rows`` and
``preprocess_texts``, from the ``prep`` dict saved with the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from studio.core.data.tables import parse_number
from studio.core.data.types import SPLITS, DataError, LoadedData, TableSamples
from studio.core.project.document import DatasetChoice
from studio.core.tasks.registry import task_for

PARALLEL_CALLS = 2
ADAPT_BATCH = 256
STANDARDIZE = "lower_and_strip_punctuation"
SPLIT = "whitespace"


def _common_prep(loaded: LoadedData, kind: str, shape: tuple[int, ...], dtype: str
                 ) -> dict[str, Any]:
    info = loaded.info
    return {"kind": kind, "task": info.task, "class_names": list(info.class_names),
            "sample_shape": list(shape), "input_dtype": dtype}


def table_prep(loaded: LoadedData) -> dict[str, Any]:
    """Column means and standard deviations of the training rows (NaN ignored; 0 → 1)."""
    samples = loaded.samples
    assert isinstance(samples, TableSamples)
    train = samples.features[loaded.splits["train"]].astype(np.float64)
    present = ~np.isnan(train)
    counts = np.maximum(present.sum(axis=0), 1)
    mean = np.where(present, train, 0.0).sum(axis=0) / counts
    var = np.where(present, (train - mean) ** 2, 0.0).sum(axis=0) / counts
    std = np.sqrt(var)
    std = np.where(std > 1e-8 * np.maximum(1.0, np.abs(mean)), std, 1.0)
    return {**_common_prep(loaded, "table", (len(samples.columns),), "float32"),
            "columns": list(samples.columns), "mean": mean.tolist(), "std": std.tolist()}


def standardize(features: np.ndarray, prep: dict[str, Any]) -> np.ndarray:
    """Fill NaN with the training mean, then subtract it and divide by the training std.

    Values are first rounded to float32, as the CSV reader stores them.
    """
    mean, std = np.asarray(prep["mean"]), np.asarray(prep["std"])
    x = np.asarray(features, dtype=np.float32).astype(np.float64)
    x = np.where(np.isnan(x), mean, x)
    return ((x - mean) / std).astype(np.float32)


def _cell(value: Any) -> float:
    if value is None:
        return np.nan
    if isinstance(value, str):
        number = parse_number(value.strip())
        return np.nan if number is None else number
    return float(value)


def preprocess_rows(prep: dict[str, Any], rows: Sequence[Mapping[str, Any]] | np.ndarray
                    ) -> np.ndarray:
    """Standardised float32 features for new rows, exactly as in training.

    ``rows`` is a 2-D array in the order of ``prep["columns"]`` or a list of dicts by column
    name; a missing, empty or non-number value (NA, NaN, ?, …) is filled with the mean.
    """
    columns = prep["columns"]
    if len(rows) and isinstance(rows[0], Mapping):
        matrix = np.array([[_cell(row.get(c)) for c in columns] for row in rows])
    else:
        matrix = np.asarray(rows, dtype=np.float64).reshape(-1, len(columns))
    return standardize(matrix, prep)


def text_prep(loaded: LoadedData, choice: DatasetChoice) -> dict[str, Any]:
    """The vocabulary of the training texts, as Keras ``TextVectorization`` learns it."""
    import keras
    import tensorflow as tf

    layer = keras.layers.TextVectorization(max_tokens=choice.max_tokens,
                                           standardize=STANDARDIZE, split=SPLIT)
    texts = _texts(loaded, "train")
    layer.adapt(tf.data.Dataset.from_tensor_slices(texts).batch(ADAPT_BATCH))
    vocabulary = [str(token) for token in layer.get_vocabulary()]
    if len(vocabulary) <= 2:
        raise DataError("The training texts hold no words to learn from.")
    return {**_common_prep(loaded, "text", (choice.sequence_length,), "int64"),
            "vocabulary": vocabulary, "sequence_length": choice.sequence_length,
            "max_tokens": choice.max_tokens, "standardize": STANDARDIZE, "split": SPLIT}


def _vectorizer(prep: dict[str, Any]) -> Any:
    import keras

    return keras.layers.TextVectorization(
        max_tokens=prep["max_tokens"], standardize=prep["standardize"], split=prep["split"],
        output_sequence_length=prep["sequence_length"], vocabulary=prep["vocabulary"])


def preprocess_texts(prep: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
    """Token ids (N × sequence_length) for new texts with the saved vocabulary."""
    import tensorflow as tf

    return np.asarray(_vectorizer(prep)(tf.constant(list(texts), dtype=tf.string)))


def _texts(loaded: LoadedData, split: str) -> Any:
    import tensorflow as tf

    texts = loaded.samples.texts  # type: ignore[union-attr]
    return tf.constant([texts[i] for i in loaded.splits[split]], dtype=tf.string)


def table_datasets(loaded: LoadedData, choice: DatasetChoice, batch_size: int, seed: int
                   ) -> tuple[Any, Any, Any | None, dict[str, Any]]:
    """Batched ``(x, y)`` datasets for training, validation and test (None if none is held out).

    Tables give standardised float32 features; texts give int64 token ids, vectorised in
    the pipeline. Labels are int32 classes (float32 for regression). The training dataset
    is shuffled with ``seed``, anew each epoch.
    """
    import tensorflow as tf

    vectorize = None
    if isinstance(loaded.samples, TableSamples):
        prep = table_prep(loaded)
        x_all = standardize(loaded.samples.features, prep)
        xs = {split: x_all[loaded.splits[split]] for split in SPLITS}
    else:
        prep = text_prep(loaded, choice)
        xs = {split: _texts(loaded, split) for split in SPLITS}
        vectorize = _vectorizer(prep)
    y_dtype = task_for(loaded.info.task).label_dtype
    options = tf.data.Options()
    options.autotune.enabled = False

    def dataset(split: str) -> Any:
        y = np.asarray(loaded.labels[loaded.splits[split]], dtype=y_dtype)
        ds = tf.data.Dataset.from_tensor_slices((xs[split], y)).with_options(options)
        if split == "train":
            ds = ds.shuffle(len(y), seed=seed, reshuffle_each_iteration=True)
        ds = ds.batch(batch_size)
        if vectorize is not None:
            ds = ds.map(lambda x, y: (vectorize(x), y), num_parallel_calls=PARALLEL_CALLS)
        return ds

    test = dataset("test") if loaded.size("test") else None
    return dataset("train"), dataset("validation"), test, prep
