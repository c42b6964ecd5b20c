"""The predictor: a run's model, a checkpoint or a model file answers image files, in-memory
images, table rows and texts with the preprocessing it was trained with (Keras as oracle),
and every bad input is answered in words while the others still get their answers."""

from __future__ import annotations

import json
import shutil
import struct
import zlib
from pathlib import Path

import keras
import numpy as np
import pytest
from PIL import Image

from studio.core.data import sources as data
from studio.core.data.image_pipeline import preprocess_image_files, preprocess_images
from studio.core.data.image_reading import image_datasets
from studio.core.data.sources import load_arrays
from studio.core.data.table_pipeline import preprocess_rows, preprocess_texts
from studio.core.inference.predictor import (
    ModelFileError,
    Predictor,
    PreprocessingMissing,
    image_preprocessing,
    thumbnail_of,
)
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project
from studio.core.runs import folders as runs
from studio.core.runs.folders import answer_choices
from studio.core.training.trainer import train
from tests.keras_models import lambda_model


def write_digits(folder: Path, count: int, start: int = 0) -> list[Path]:
    """``count`` MNIST-10k digits as 28 × 28 grey PNG files in ``folder``."""
    x, _ = load_arrays(DatasetChoice())
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(start, start + count):
        path = folder / f"digit-{index:05d}.png"
        Image.fromarray(x[index % len(x), ..., 0]).save(path)
        paths.append(path)
    return paths


def keras_answers(model_path: Path, x: np.ndarray) -> np.ndarray:
    """The oracle: the saved model, loaded by Keras itself, on a preprocessed batch."""
    return np.asarray(keras.saving.load_model(model_path, compile=False)(x))


def run_prep(run_dir: Path) -> dict:
    return json.loads((run_dir / runs.PREPROCESSING_FILE).read_text(encoding="utf-8"))


def saved_model(folder: Path, model, prep: dict | None) -> Path:
    """``model`` saved as ``folder/model.keras``, with ``prep`` beside it if given."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save(folder / "model.keras")
    if prep is not None:
        (folder / runs.PREPROCESSING_FILE).write_text(json.dumps(prep), encoding="utf-8")
    return folder / "model.keras"


def bomb_png(path: Path) -> Path:
    """A PNG whose header claims 100,000 × 100,000 pixels (a decompression bomb)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body)))

    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                     + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
    return path


@pytest.fixture(scope="module")
def cnn(cnn_run) -> Predictor:
    """The small CNN's final model, loaded once for the module."""
    return Predictor.load(cnn_run)


def assert_answers_match(predictions, expected: np.ndarray, class_names: list[str]) -> None:
    """Each prediction holds the oracle's classes, best first, with its probabilities."""
    for prediction, row in zip(predictions, expected, strict=True):
        assert prediction.error is None
        order = np.argsort(-row, kind="stable")[:len(prediction.labels)]
        assert prediction.labels == [class_names[i] for i in order]
        assert prediction.probabilities == pytest.approx(row[order], abs=1e-5)


def test_a_run_answers_files_as_its_validation_split_read_them(cnn, cnn_run, tmp_path):
    choice = DatasetChoice(test_split=0.1)  # small_cnn_project's data
    loaded = data.load(choice)
    _, validation, _, prep = image_datasets(loaded, choice, 8, 0)
    x = next(iter(validation))[0].numpy()
    stored = loaded.samples.x[loaded.splits["validation"][:8]]
    paths = []
    for i, image in enumerate(stored):
        paths.append(tmp_path / f"{i}.png")
        Image.fromarray(image[..., 0]).save(paths[-1])
    assert prep["scale"] == cnn.prep["scale"] and prep["offset"] == cnn.prep["offset"]
    assert np.array_equal(cnn.model_inputs(paths), x)
    predictions = cnn.predict_files(paths, top_k=3)
    assert [p.source for p in predictions] == [str(p) for p in paths]
    assert_answers_match(predictions, keras_answers(cnn_run / runs.MODEL_FILE, x),
                         cnn.class_names)
    assert all(p.thumbnail.dtype == np.uint8 and p.thumbnail.shape == (28, 28, 1)
               for p in predictions)
    assert np.array_equal(predictions[0].thumbnail, stored[0])


@pytest.mark.parametrize("color", ["rgb", "grayscale"])
def test_grey_rgb_rgba_and_16_bit_files_are_converted_as_in_training(tmp_path, color):
    rng = np.random.default_rng(4)
    for label in ("a", "b"):
        for i in range(5):
            pixels = rng.integers(0, 256, (int(rng.integers(8, 30)), 17, 3), dtype=np.uint8)
            picture = [Image.fromarray(pixels), Image.fromarray(pixels[..., 0]),
                       Image.fromarray(np.dstack([pixels, pixels[..., :1]])),
                       Image.fromarray(pixels[..., 1].astype(np.uint16) * 257),
                       Image.fromarray(pixels)][i]
            path = tmp_path / "data" / label / f"{i}.{'jpg' if i == 4 else 'png'}"
            path.parent.mkdir(parents=True, exist_ok=True)
            picture.save(path)
    choice = DatasetChoice(source="folder", path=str(tmp_path / "data"), image_size=[12, 12],
                           color=color, resize="crop", normalization="standardize",
                           validation_split=0.5)
    loaded = data.load(choice)
    _, validation, _, prep = image_datasets(loaded, choice, 16, 0)
    x = next(iter(validation))[0].numpy()
    paths = [loaded.samples.paths[i] for i in loaded.splits["validation"]]
    channels = 3 if color == "rgb" else 1
    model = keras.Sequential([keras.Input((12, 12, channels)), keras.layers.Conv2D(2, 3),
                              keras.layers.Flatten(),
                              keras.layers.Dense(2, activation="softmax")])
    model_path = saved_model(tmp_path / "model", model, prep)
    predictor = Predictor.load(model_path)
    assert np.array_equal(predictor.model_inputs(paths), x)
    predictions = predictor.predict_files(paths, top_k=2)
    assert_answers_match(predictions, keras_answers(model_path, x), ["a", "b"])


def test_top_k_is_ordered_and_the_probabilities_sum_to_one(cnn, cnn_run, tmp_path):
    paths = write_digits(tmp_path, 6)
    expected = keras_answers(cnn_run / runs.MODEL_FILE, preprocess_image_files(cnn.prep, paths))
    for top_k in (1, 3, 10, 50):
        predictions = cnn.predict_files(paths, top_k=top_k)
        assert all(len(p.labels) == min(top_k, 10) for p in predictions)
        assert_answers_match(predictions, expected, cnn.class_names)
    for prediction in cnn.predict_files(paths, top_k=10):
        assert prediction.probabilities == sorted(prediction.probabilities, reverse=True)
        assert sum(prediction.probabilities) == pytest.approx(1.0, abs=1e-4)
        assert sorted(prediction.labels) == sorted(cnn.class_names)


def test_a_run_a_checkpoint_and_a_bare_model_file_answer_with_their_own_weights(
    cnn_run, tmp_path
):
    choices = answer_choices(cnn_run)
    assert [name for name, _ in choices] == ["Final model", "Checkpoint, epoch 2",
                                             "Checkpoint, epoch 1"]
    paths = write_digits(tmp_path / "digits", 4)
    x = preprocess_image_files(run_prep(cnn_run), paths)
    first = choices[-1][1]
    checkpoint = Predictor.load(first)
    assert checkpoint.path == first and checkpoint.prep == run_prep(cnn_run)
    assert_answers_match(checkpoint.predict_files(paths, 10), keras_answers(first, x),
                         checkpoint.class_names)
    final = Predictor.load(cnn_run)
    assert final.path == cnn_run / runs.MODEL_FILE and final.kind == "image"
    assert final.class_names == [str(i) for i in range(10)]
    assert not np.allclose(final.outputs(x), checkpoint.outputs(x))

    bare = tmp_path / "bare" / "digits.keras"
    bare.parent.mkdir()
    shutil.copy(cnn_run / runs.MODEL_FILE, bare)
    with pytest.raises(PreprocessingMissing) as missing:
        Predictor.load(bare)
    assert missing.value.input_shape == (28, 28, 1)
    assert "digits.keras" in str(missing.value) and "28 × 28 × 1" in str(missing.value)
    told = image_preprocessing(missing.value.input_shape, "grayscale", "unit",
                               class_names=[f"digit {i}" for i in range(10)])
    assert np.array_equal(preprocess_images(told, np.zeros((1, 28, 28, 1), np.uint8)),
                          np.zeros((1, 28, 28, 1), np.float32))
    described = Predictor.load(bare, told)
    expected = keras_answers(bare, x)
    assert_answers_match(described.predict_files(paths, 3), expected, described.class_names)
    assert described.predict_files(paths, 1)[0].labels[0].startswith("digit ")
    (bare.parent / runs.PREPROCESSING_FILE).write_text(json.dumps(told), encoding="utf-8")
    assert Predictor.load(bare).prep == told


def test_a_model_file_in_some_folder_does_not_take_a_preprocessing_from_above(cnn_run,
                                                                              tmp_path):
    (tmp_path / runs.PREPROCESSING_FILE).write_text(json.dumps(run_prep(cnn_run)))
    (tmp_path / "models").mkdir()
    shutil.copy(cnn_run / runs.MODEL_FILE, tmp_path / "models" / "m.keras")
    with pytest.raises(PreprocessingMissing):
        Predictor.load(tmp_path / "models" / "m.keras")


def test_every_bad_file_says_why_and_the_others_in_the_call_are_answered(cnn, cnn_run,
                                                                        tmp_path):
    good = write_digits(tmp_path, 3)
    x, _ = load_arrays(DatasetChoice())
    notes = tmp_path / "notes.txt"
    notes.write_text("not a picture")
    renamed = tmp_path / "notes.png"
    renamed.write_text("not a picture either")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    truncated = tmp_path / "truncated.png"
    truncated.write_bytes(good[0].read_bytes()[:70])
    cut_jpeg = tmp_path / "cut.jpg"
    Image.fromarray(np.tile(x[5], (4, 4, 3))).save(cut_jpeg, quality=90)
    cut_jpeg.write_bytes(cut_jpeg.read_bytes()[:600])
    huge = tmp_path / "huge.jpg"
    pixels = np.zeros((4000, 5000, 3), np.uint8)
    pixels[500:3500, 1500:3500] = 255
    Image.fromarray(pixels).save(huge, quality=80)
    rgba = tmp_path / "rgba.png"
    Image.fromarray(np.dstack([x[3]] * 3 + [np.full_like(x[3], 200)])).save(rgba)
    bmp_named_png = tmp_path / "really-a-bmp.png"
    Image.fromarray(x[4, ..., 0]).save(bmp_named_png, format="BMP")
    files = [notes, good[0], renamed, empty, truncated, bomb_png(tmp_path / "bomb.png"),
             good[1], cut_jpeg, huge, tmp_path / "missing.png", rgba, tmp_path,
             bmp_named_png, good[2]]
    predictions = cnn.predict_files(files, top_k=3)
    assert [p.source for p in predictions] == [str(f) for f in files]
    errors = {Path(p.source).name: p.error for p in predictions if p.error}
    assert errors == {
        "notes.txt": "not a JPEG, PNG, GIF, BMP, WebP or TIFF image",
        "notes.png": "not a JPEG, PNG, GIF, BMP, WebP or TIFF image",
        "empty.png": "empty file (0 bytes)",
        "truncated.png": "truncated or corrupt",
        "bomb.png": "100,000 × 100,000 pixels in mode L decode to 9,537 MB, more than the limit "
                    "of 256 MB (possible decompression bomb)",
        "cut.jpg": "truncated or corrupt",
        "missing.png": "there is no such file",
        tmp_path.name: "a folder, not an image file",
    }
    assert all(p.thumbnail is None and not p.labels for p in predictions if p.error)
    answered = [p for p in predictions if p.error is None]
    names = [Path(p.source).name for p in answered]
    assert names == [good[0].name, good[1].name, "huge.jpg", "rgba.png", "really-a-bmp.png",
                     good[2].name]
    readable = [good[0], good[1], huge, rgba, good[2]]
    expected = keras_answers(cnn_run / runs.MODEL_FILE,
                             preprocess_image_files(cnn.prep, readable))
    assert_answers_match([answered[i] for i in (0, 1, 2, 3, 5)], expected, cnn.class_names)
    grey = x[3, ..., 0].astype(np.float64)  # RGBA read as grey: 0.299 R + 0.587 G + 0.114 B
    assert np.allclose(cnn.model_inputs([rgba])[0, ..., 0], grey / 255, atol=1 / 255)
    bmp_answer = cnn.predict_images([x[4]], ["same digit"], 3)[0]
    assert answered[4].labels == bmp_answer.labels
    assert answered[2].thumbnail.shape == (28, 28, 1)


def test_a_call_with_no_usable_file_gives_only_reasons(cnn, tmp_path):
    notes = tmp_path / "notes.png"
    notes.write_text("not a picture")
    assert [p.error for p in cnn.predict_files([notes])] == [
        "not a JPEG, PNG, GIF, BMP, WebP or TIFF image"]
    assert cnn.predict_files([]) == []


def test_a_file_that_cannot_be_read_in_a_batch_is_read_alone(cnn, tmp_path, monkeypatch):
    paths = write_digits(tmp_path, 4)
    original = Predictor.standard_files

    def fails_on_the_third(self, files, by_content=False):
        if paths[2] in [Path(f) for f in files]:
            raise ValueError("{{function_node __inference_read_9}} Invalid PNG data, size 9")
        return original(self, files, by_content)

    monkeypatch.setattr(Predictor, "standard_files", fails_on_the_third)
    predictions = cnn.predict_files(paths, top_k=2)
    assert [p.error is None for p in predictions] == [True, True, False, True]
    assert predictions[2].error == ("truncated or corrupt: the image cannot be decoded "
                                    "(Invalid PNG data, size 9)")
    monkeypatch.setattr(Predictor, "standard_files", original)
    alone = cnn.predict_files([paths[0], paths[1], paths[3]], top_k=2)
    assert [p.labels for p in alone] == [predictions[i].labels for i in (0, 1, 3)]


def test_in_memory_images_of_any_size_and_channels_are_answered(cnn, cnn_run):
    x, _ = load_arrays(DatasetChoice())
    digit = x[7, ..., 0]
    images = [digit, np.dstack([digit] * 3), np.dstack([digit] * 3 + [np.full_like(digit, 9)]),
              np.kron(digit, np.ones((5, 3), np.uint8)), np.zeros((4, 4, 5), np.uint8),
              np.zeros((0, 3), np.uint8), digit[..., None]]
    names = [f"pasted {i}" for i in range(len(images))]
    predictions = cnn.predict_images(images, names, top_k=10)
    assert [p.source for p in predictions] == names
    assert predictions[4].error == "not an image: an array of shape 4 × 4 × 5"
    assert predictions[5].error == "not an image: an array of shape 0 × 3"
    good = [0, 1, 2, 3, 6]
    expected = np.concatenate([
        keras_answers(cnn_run / runs.MODEL_FILE, preprocess_images(cnn.prep, images[i][None]
                                                                   if images[i].ndim == 3
                                                                   else images[i][None, ...,
                                                                                  None]))
        for i in good])
    assert_answers_match([predictions[i] for i in good], expected, cnn.class_names)
    assert predictions[3].thumbnail.shape == (28, 28, 1)


def test_in_memory_images_answer_as_the_same_pixels_saved_as_png_files(cnn, tmp_path):
    rng = np.random.default_rng(8)
    colour = rng.integers(0, 256, (40, 30, 4), dtype=np.uint8)
    images = [colour[..., 0], colour[..., :1], colour[..., :3], colour]
    paths = [tmp_path / f"pasted {i} – chat noir ü 狗.png" for i in range(len(images))]
    for image, path in zip(images, paths, strict=True):
        Image.fromarray(image[..., 0] if image.shape[-1:] == (1,) else image).save(path)
    from_files = cnn.predict_files(paths, top_k=10)
    in_memory = cnn.predict_images(images, [p.name for p in paths], top_k=10)
    assert [p.source for p in from_files] == [str(p) for p in paths]
    pixels = [image if image.ndim == 3 else image[..., None] for image in images]
    assert np.array_equal(cnn.model_inputs(paths), np.concatenate(
        [preprocess_images(cnn.prep, image[None]) for image in pixels]))
    for file_answer, memory_answer in zip(from_files, in_memory, strict=True):
        assert file_answer.error is None and memory_answer.error is None
        assert file_answer.labels == memory_answer.labels
        assert file_answer.probabilities == pytest.approx(memory_answer.probabilities,
                                                          abs=1e-5)
        assert np.array_equal(file_answer.thumbnail, memory_answer.thumbnail)
    assert not np.array_equal(from_files[0].thumbnail, from_files[3].thumbnail)


def test_an_in_memory_image_is_explained_from_its_kept_pixels_as_its_file_is(cnn, tmp_path):
    (path,) = write_digits(tmp_path, 1)
    (from_file,) = cnn.predict_files([path])
    (in_memory,) = cnn.predict_images([np.asarray(Image.open(path))], ["pasted"])
    assert from_file.image is None and in_memory.image.shape == (28, 28, 1)
    assert cnn.can_explain(from_file) and cnn.can_explain(in_memory)
    assert np.array_equal(cnn.explained_input(in_memory), cnn.explained_input(from_file))
    assert "image" not in in_memory.to_dict()
    path.unlink()
    assert not cnn.can_explain(from_file) and cnn.can_explain(in_memory)


def test_warming_up_traces_the_forward_pass_once_for_every_batch_size(cnn_run):
    predictor = Predictor.load(cnn_run)
    assert predictor._call.experimental_get_tracing_count() == 0
    predictor.warm_up()
    assert predictor._call.experimental_get_tracing_count() == 1
    predictor.outputs(np.zeros((3, 28, 28, 1), np.float32))
    assert predictor._call.experimental_get_tracing_count() == 1


def test_thumbnails_are_at_most_128_pixels_a_side():
    assert thumbnail_of(np.zeros((600, 400, 3), np.uint8)).shape == (128, 85, 3)
    assert thumbnail_of(np.zeros((30, 900, 1), np.uint8)).shape == (4, 128, 1)
    small = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    assert thumbnail_of(small) is small


def text_model_and_prep():
    prep = {"kind": "text", "task": "classification", "class_names": ["bad", "good"],
            "sample_shape": [6], "input_dtype": "int64",
            "vocabulary": ["", "[UNK]", "good", "bad", "film", "plot"], "sequence_length": 6,
            "max_tokens": 100, "standardize": "lower_and_strip_punctuation",
            "split": "whitespace"}
    model = keras.Sequential([keras.Input((6,), dtype="int64"), keras.layers.Embedding(6, 4),
                              keras.layers.GlobalAveragePooling1D(),
                              keras.layers.Dense(2, activation="softmax")])
    return model, prep


def table_model_and_prep(task: str = "classification", units: int = 3,
                         activation: str | None = "softmax"):
    prep = {"kind": "table", "task": task,
            "class_names": ["small", "medium", "large"] if task == "classification" else [],
            "sample_shape": [2], "input_dtype": "float32", "columns": ["width", "height"],
            "mean": [1.0, 2.0], "std": [2.0, 4.0]}
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(units,
                                                                    activation=activation)])
    return model, prep


def test_texts_are_answered_with_the_runs_vocabulary(tmp_path):
    model, prep = text_model_and_prep()
    path = saved_model(tmp_path, model, prep)
    predictor = Predictor.load(path)
    texts = ["A good film!", "bad PLOT", "", "words it never saw"]
    predictions = predictor.predict_texts(texts, top_k=2)
    assert [p.source for p in predictions] == texts
    expected = keras_answers(path, preprocess_texts(prep, texts))
    assert_answers_match(predictions, expected, ["bad", "good"])
    with pytest.raises(ValueError, match="trained on text data, not images"):
        predictor.predict_files([tmp_path / "a.png"])


def test_table_rows_are_standardised_as_in_training_and_missing_cells_take_the_mean(tmp_path):
    model, prep = table_model_and_prep()
    path = saved_model(tmp_path, model, prep)
    predictor = Predictor.load(path)
    rows = [{"width": "3", "height": ""}, {"width": 1.5, "height": 7, "colour": "red"},
            {"height": "NA"}]
    predictions = predictor.predict_rows(rows, top_k=3)
    x = preprocess_rows(prep, rows)
    assert np.array_equal(x[2], [0.0, 0.0])
    assert_answers_match(predictions, keras_answers(path, x), prep["class_names"])
    assert predictions[0].source == "width=3, height="
    assert json.loads(json.dumps([p.to_dict() for p in predictions]))[1]["labels"]
    assert "thumbnail" not in predictions[0].to_dict()


def test_logits_become_probabilities_and_regression_gives_values(tmp_path):
    model, prep = table_model_and_prep(activation=None)
    path = saved_model(tmp_path / "logits", model, prep)
    rows = [{"width": 9, "height": -4}, {"width": -3, "height": 2}]
    x = preprocess_rows(prep, rows)
    predictions = Predictor.load(path).predict_rows(rows, top_k=3)
    expected = np.asarray(keras.ops.softmax(keras_answers(path, x)))
    assert_answers_match(predictions, expected, prep["class_names"])

    model, prep = table_model_and_prep("regression", units=2, activation=None)
    path = saved_model(tmp_path / "regression", model, prep)
    predictions = Predictor.load(path).predict_rows(rows)
    values = keras_answers(path, x)
    assert np.allclose([p.value for p in predictions], values, atol=1e-6)
    assert len(set(np.ravel(values).round(4))) == 4  # four different values, as given
    assert all(p.labels == [] and p.probabilities == [] for p in predictions)
    assert json.loads(json.dumps(predictions[0].to_dict()))["value"] == pytest.approx(
        values[0].tolist(), abs=1e-6)


def test_one_sigmoid_unit_in_an_h5_file_answers_two_classes(tmp_path):
    model = keras.Sequential([keras.Input((4, 4, 3)), keras.layers.Flatten(),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.save(tmp_path / "binary.h5")
    prep = image_preprocessing((4, 4, 3), "rgb", "symmetric", class_names=["cat", "dog"])
    predictor = Predictor.load(tmp_path / "binary.h5", prep)
    images = np.random.default_rng(3).integers(0, 256, (2, 4, 4, 3), dtype=np.uint8)
    dog = np.asarray(model(preprocess_images(prep, images)))[:, 0]
    predictions = predictor.predict_images(list(images), ["a", "b"], top_k=5)
    expected = np.stack([1 - dog, dog], axis=1)
    assert_answers_match(predictions, expected, ["cat", "dog"])
    assert all(len(p.labels) == 2 for p in predictions)


def test_model_files_that_cannot_answer_are_refused_in_words(cnn_run, tmp_path):
    junk = tmp_path / "junk.keras"
    junk.write_text("not a model")
    with pytest.raises(ModelFileError, match=r"^junk.keras is not a Keras model file"):
        Predictor.load(junk)
    fake_h5 = tmp_path / "weights.h5"
    fake_h5.write_bytes(b"GIF89a" + bytes(100))
    with pytest.raises(ModelFileError, match=r"^weights.h5 is not a Keras model file"):
        Predictor.load(fake_h5)
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    with pytest.raises(ModelFileError, match="notes.txt is not a Keras model file: Layer "
                                             "Studio answers with .keras and .h5 files"):
        Predictor.load(notes)
    with pytest.raises(ModelFileError, match="gone.keras does not exist"):
        Predictor.load(tmp_path / "gone.keras")
    with pytest.raises(ModelFileError, match="holds no model"):
        Predictor.load(tmp_path)
    lambda_model().save(tmp_path / "code.keras")
    with pytest.raises(ModelFileError, match="code.keras holds Python code"):
        Predictor.load(tmp_path / "code.keras", {"kind": "table", "columns": list("abcd")})


def test_a_layer_from_custom_code_is_named(tmp_path):
    @keras.saving.register_keras_serializable(package="tests")
    class Doubling(keras.layers.Layer):
        def call(self, x):
            return x * 2

    inputs = keras.Input((3,))
    keras.Model(inputs, keras.layers.Dense(2)(Doubling()(inputs))).save(tmp_path / "c.keras")
    del keras.saving.get_custom_objects()["tests>Doubling"]
    with pytest.raises(ModelFileError, match=r"c.keras uses a layer Keras does not know "
                                             r"\(Doubling\)"):
        Predictor.load(tmp_path / "c.keras", {"kind": "table", "columns": list("abc")})


def test_an_unfinished_run_points_to_its_checkpoints(cnn_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(cnn_run, run)
    (run / runs.MODEL_FILE).unlink()
    with pytest.raises(ModelFileError, match="has no final model.*pick one of its checkpoints"):
        Predictor.load(run)
    assert [name for name, _ in answer_choices(run)] == ["Checkpoint, epoch 2",
                                                         "Checkpoint, epoch 1"]


def test_a_preprocessing_that_does_not_fit_the_model_is_refused(cnn_run):
    wrong = image_preprocessing((32, 32), "rgb", "symmetric")
    with pytest.raises(ModelFileError, match=r"model.keras takes inputs of shape 28 × 28 × 1, "
                                             r"but the preprocessing given makes 32 × 32 × 3"):
        Predictor.load(cnn_run, wrong)


def trained_csv_run(tmp_path: Path, header: str, lines: list[str], nodes: list[Node],
                    **dataset) -> Path:
    """A finished one-epoch run of ``nodes`` on a CSV file of ``lines`` under ``header``."""
    path = tmp_path / "data.csv"
    path.write_text(header + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    project = Project(name="CSV", graph=Graph.from_chain(nodes))
    project.dataset = DatasetChoice(source="csv", path=str(path), **dataset)
    project.training.epochs = 1
    result = train(project, tmp_path / "runs")
    assert result.status == "finished"
    return result.run_dir


def test_a_trained_table_run_answers_rows_as_its_model_does(tmp_path):
    rng = np.random.default_rng(1)
    lines = [f"{a:.3f},{b:.3f},{'big' if a + b > 1 else 'small'}"
             for a, b in rng.uniform(0, 1, (60, 2))]
    run = trained_csv_run(tmp_path, "a,b,size", lines, [
        Node("input_1", "Input", {"shape": [2]}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})])
    predictor = Predictor.load(run)
    assert predictor.kind == "table" and predictor.class_names == ["big", "small"]
    rows = [{"a": "0.9", "b": "0.8", "size": "big"}, {"a": 0.1, "b": ""}, {"b": "NA"}]
    predictions = predictor.predict_rows(rows, top_k=2)
    expected = keras_answers(run / runs.MODEL_FILE, preprocess_rows(predictor.prep, rows))
    assert_answers_match(predictions, expected, predictor.class_names)


def trained_text_run(tmp_path: Path) -> Path:
    """A finished one-epoch run of a small embedding model on reviews (``review,label``)."""
    words = {"good": ["great fun", "loved it", "very good"],
             "bad": ["awful mess", "hated it", "very bad"]}
    lines = [f'"{text} {i}",{label}' for i in range(6) for label, texts in words.items()
             for text in texts]
    return trained_csv_run(tmp_path, "review,label", lines, [
        Node("input_1", "Input", {"shape": [6]}),
        Node("embedding_1", "Embedding", {"input_dim": 40, "output_dim": 4}),
        Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})],
        text_column="review", max_tokens=40, sequence_length=6)


def test_a_trained_text_run_answers_texts_as_its_model_does(tmp_path):
    run = trained_text_run(tmp_path)
    predictor = Predictor.load(run)
    assert predictor.kind == "text" and predictor.class_names == ["bad", "good"]
    texts = ["Great FUN!", "hated it, very bad", "", "words it never saw"]
    predictions = predictor.predict_texts(texts, top_k=2)
    expected = keras_answers(run / runs.MODEL_FILE, preprocess_texts(predictor.prep, texts))
    assert_answers_match(predictions, expected, predictor.class_names)
    assert [p.source for p in predictions] == texts
