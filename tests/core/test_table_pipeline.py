"""tf.data pipelines for CSV datasets: training-only statistics, inference parity, Keras fit."""

import csv
import json

import keras
import numpy as np

from studio.core.data.sources import load
from studio.core.data.table_pipeline import preprocess_rows, preprocess_texts, table_datasets
from studio.core.project.document import DatasetChoice


def table_csv(tmp_path, rows=40):
    rng = np.random.default_rng(1)
    lines = ["height,weight,city,kind"]
    for i in range(rows):
        weight = "NA" if i % 7 == 3 else f"{rng.normal(70, 9):.3f}"
        lines.append(f"{rng.normal(170, 10):.3f},{weight},Paris,{'ab'[i % 2]}")
    path = tmp_path / "table.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def text_csv(tmp_path, rows=30):
    lines = ["review,mood"]
    for i in range(rows):
        mood = "happy" if i % 2 else "sad"
        lines.append(f"\"Word{i} was {'great fun' if i % 2 else 'dull, slow'}!\",{mood}")
    path = tmp_path / "text.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def csv_choice(path, **kw):
    return DatasetChoice(source="csv", path=str(path), validation_split=0.25, **kw)


def gather(dataset):
    xs, ys = zip(*((x.numpy(), y.numpy()) for x, y in dataset), strict=True)
    return np.concatenate(xs), np.concatenate(ys)


def test_standardisation_uses_only_training_rows(tmp_path):
    choice = csv_choice(table_csv(tmp_path), test_split=0.2)
    loaded = load(choice)
    train, validation, test, prep = table_datasets(loaded, choice, 8, 0)
    features = loaded.samples.features.astype(np.float64)
    rows = features[loaded.splits["train"]]
    mean, std = np.nanmean(rows, axis=0), np.nanstd(rows, axis=0)
    np.testing.assert_allclose(prep["mean"], mean)
    np.testing.assert_allclose(prep["std"], std)
    assert not np.allclose(mean, np.nanmean(features, axis=0))
    for split, dataset in (("validation", validation), ("test", test)):
        x, y = gather(dataset)
        raw = features[loaded.splits[split]]
        expected = (np.where(np.isnan(raw), mean, raw) - mean) / std
        assert x.dtype == np.float32 and y.dtype == np.int32
        np.testing.assert_allclose(x, expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(y, loaded.labels[loaded.splits[split]])
    assert prep["kind"] == "table" and prep["columns"] == ["height", "weight"]
    assert prep["class_names"] == ["a", "b"] and prep["sample_shape"] == [2]
    assert prep["input_dtype"] == "float32" and json.loads(json.dumps(prep)) == prep


def test_constant_column_has_std_one(tmp_path):
    path = tmp_path / "flat.csv"
    path.write_text("x,same,y\n" + "".join(f"{i},4,{i % 2}\n" for i in range(10)))
    choice = csv_choice(path)
    _, validation, test, prep = table_datasets(load(choice), choice, 4, 0)
    assert prep["std"][1] == 1.0 and test is None
    assert np.all(gather(validation)[0][:, 1] == 0)


def test_training_rows_are_shuffled_with_the_seed_each_epoch(tmp_path):
    choice = csv_choice(table_csv(tmp_path))
    loaded = load(choice)

    def epochs(seed):
        train = table_datasets(loaded, choice, 64, seed)[0]
        return [gather(train)[0][:, 0].tolist() for _ in range(2)]

    first, second = epochs(3)
    assert first != second and sorted(first) == sorted(second)
    assert epochs(3) == [first, second]
    assert epochs(4)[0] != first


def test_inference_rows_match_the_pipeline(tmp_path):
    path = table_csv(tmp_path)
    choice = csv_choice(path)
    loaded = load(choice)
    _, validation, _, prep = table_datasets(loaded, choice, 8, 0)
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    picked = [rows[i] for i in loaded.splits["validation"]]
    x, _ = gather(validation)
    np.testing.assert_array_equal(preprocess_rows(prep, picked), x)
    raw = loaded.samples.features[loaded.splits["validation"]]
    np.testing.assert_array_equal(preprocess_rows(prep, raw), x)
    filled = preprocess_rows(prep, [{"height": 170.0}, {"height": "?", "weight": None}])
    assert filled.dtype == np.float32 and np.all(filled[:, 1] == 0) and filled[1, 0] == 0


def test_text_vocabulary_comes_from_training_texts_only(tmp_path):
    choice = csv_choice(text_csv(tmp_path), text_column="review", sequence_length=6,
                        max_tokens=100)
    loaded = load(choice)
    train, validation, _, prep = table_datasets(loaded, choice, 4, 0)
    vocabulary = prep["vocabulary"]
    assert vocabulary[:2] == ["", "[UNK]"] and {"great", "dull"} <= set(vocabulary)
    for i in loaded.splits["train"]:
        assert f"word{i}" in vocabulary
    x, y = gather(validation)
    assert x.shape == (loaded.size("validation"), 6) and x.dtype == np.int64
    for row, i in zip(x, loaded.splits["validation"], strict=True):
        assert f"word{i}" not in vocabulary
        assert row[0] == 1
    assert 1 not in gather(train)[0][:, 0]
    assert y.dtype == np.int32
    assert prep["kind"] == "text" and prep["sequence_length"] == 6
    assert prep["max_tokens"] == 100 and prep["sample_shape"] == [6]
    assert json.loads(json.dumps(prep)) == prep


def test_inference_texts_match_the_pipeline(tmp_path):
    choice = csv_choice(text_csv(tmp_path), text_column="review", sequence_length=5)
    loaded = load(choice)
    _, validation, _, prep = table_datasets(loaded, choice, 4, 0)
    texts = [loaded.samples.texts[i] for i in loaded.splits["validation"]]
    np.testing.assert_array_equal(preprocess_texts(prep, texts), gather(validation)[0])
    ids = preprocess_texts(prep, ["GREAT fun, zebra"])
    assert ids.tolist() == [[prep["vocabulary"].index("great"),
                             prep["vocabulary"].index("fun"), 1, 0, 0]]


def fit_one_epoch(model, train, validation, loss):
    model.compile(optimizer="adam", loss=loss)
    history = model.fit(train, validation_data=validation, epochs=1, verbose=0,
                        shuffle=False).history
    assert np.isfinite(history["loss"][0]) and np.isfinite(history["val_loss"][0])


def test_keras_fits_a_classification_table(tmp_path):
    choice = csv_choice(table_csv(tmp_path))
    train, validation, _, prep = table_datasets(load(choice), choice, 8, 0)
    model = keras.Sequential([keras.Input(tuple(prep["sample_shape"])),
                              keras.layers.Dense(len(prep["class_names"]), activation="softmax")])
    fit_one_epoch(model, train, validation, "sparse_categorical_crossentropy")


def test_keras_fits_a_regression_table(tmp_path):
    choice = csv_choice(table_csv(tmp_path), label_column="height", task="regression")
    train, validation, _, prep = table_datasets(load(choice), choice, 8, 0)
    assert prep["task"] == "regression" and prep["class_names"] == []
    assert train.element_spec[1].dtype.name == "float32"
    model = keras.Sequential([keras.Input(tuple(prep["sample_shape"])), keras.layers.Dense(1)])
    fit_one_epoch(model, train, validation, "mse")


def test_keras_fits_texts(tmp_path):
    choice = csv_choice(text_csv(tmp_path), text_column="review", sequence_length=6)
    train, validation, _, prep = table_datasets(load(choice), choice, 8, 0)
    model = keras.Sequential([
        keras.Input(tuple(prep["sample_shape"]), dtype=prep["input_dtype"]),
        keras.layers.Embedding(len(prep["vocabulary"]), 4),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(2, activation="softmax"),
    ])
    fit_one_epoch(model, train, validation, "sparse_categorical_crossentropy")
