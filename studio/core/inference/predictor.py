"""Answering new inputs with a trained model: load a run's model (or a checkpoint, or any
Keras model file) with the preprocessing it was trained with, and predict images, table
rows or texts, one input's failure never stopping the others."""

from __future__ import annotations

import json
import re
import time
import warnings
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.archives import ArchiveRefused, check_member
from studio.core.base.messages import count, first_line
from studio.core.base.runtime import start_tensorflow
from studio.core.build.keras2_archive import written_by_keras_2
from studio.core.build.keras_import import CodeRefused, ImportFailure, load_model_file
from studio.core.data.image_check import CORRUPT, UnusableImage, inspect_image
from studio.core.data.image_pipeline import (
    ImageForm,
    decode_image,
    decoder_for,
    normalised,
    read_images,
    standard_images,
)
from studio.core.data.table_pipeline import preprocess_rows, preprocess_texts
from studio.core.runs import folders as runs
from studio.core.tasks.registry import DEFAULT_TASK, task_for

MODEL_SUFFIXES = (".keras", ".h5", ".hdf5")
THUMBNAIL_SIDE = 128
DEFAULT_TOP_K = 5
NORMALIZATIONS = {"unit": (1 / 255.0, 0.0), "symmetric": (1 / 127.5, -1.0)}
_UNKNOWN_CLASS = re.compile(r"Could not locate class '([^']+)'")
_TF_FUNCTION = re.compile(r"\{\{[^}]*\}\}")
_SKIPPED_MEMBER = re.compile(r"Skipping invalid path during archive extraction: '(.*)'")


class ModelFileError(ValueError):
    """A model that cannot answer: missing, not a Keras model, or refused; in plain words."""


class PreprocessingMissing(ValueError):
    """A model file with no record of how its inputs were prepared: ask the person.
    ``input_shape`` is the model's input shape without the batch axis (None where free)."""

    def __init__(self, path: Path, input_shape: tuple) -> None:
        what = ("images were prepared" if len(input_shape) == 3
                else "inputs were prepared (only image models can be told how)")
        super().__init__(f"{path.name} does not say how its {what}: there is no "
                         f"{runs.PREPROCESSING_FILE} beside it. It takes inputs of shape "
                         f"{_shape_text(input_shape)}; give their size, colour mode and pixel "
                         f"scaling.")
        self.input_shape = input_shape


@dataclass
class Prediction:
    """What the model answered for one input, or why it could not."""

    source: str
    labels: list[str] = field(default_factory=list)
    probabilities: list[float] = field(default_factory=list)
    value: list[float] | None = None
    seconds: float = 0.0
    error: str | None = None
    boxes: list[list[float]] | None = None
    """A detector's boxes (x_min, y_min, x_max, y_max), one per label, best first."""
    thumbnail: np.ndarray | None = field(default=None, repr=False)
    """The image as the model saw it (uint8, at most THUMBNAIL_SIDE a side), for showing."""
    image: np.ndarray | None = field(default=None, repr=False)
    """The image in the model's standard form (uint8 H × W × C), kept for an input that has
    no file to read again (a pasted or drawn image), so it can still be explained."""
    task: str = ""
    """The task of the model that answered, which says how to draw the answer (empty for an
    input that could not be read)."""
    output: np.ndarray | None = field(default=None, repr=False)
    """A detector's head output for this image, kept so that ``redecoded`` gives boxes for
    other settings without running the model again."""
    decoding: dict[str, Any] | None = field(default=None, repr=False)
    """The settings the boxes were decoded with (the run's, with the image's own size)."""
    areas: list[int] | None = None
    """A segmentation's pixels of each class in ``labels`` (the largest first), counted in
    the image's own pixels."""
    mask: np.ndarray | None = field(default=None, repr=False)
    """A segmentation's predicted mask: uint8, the image's own height × width, each pixel
    its class's index in the run's class names (``masks.IGNORE`` where a crop left it out)."""
    class_names: list[str] | None = field(default=None, repr=False)
    """The run's class names (a mask's values index them), for drawing the answer."""

    @property
    def percents(self) -> list[float] | None:
        """Each of ``areas`` as a share, in percent, of the pixels given a class."""
        if self.areas is None:
            return None
        total = sum(self.areas) or 1
        return [pixels / total * 100 for pixels in self.areas]

    def to_dict(self) -> dict[str, Any]:
        """The answer as JSON-ready values (without what is only for showing it: no
        pixels); a segmentation's ``areas`` with their ``percents`` (None for other tasks,
        as ``boxes`` is for all but a detector)."""
        found = {f.name: getattr(self, f.name) for f in fields(self)
                 if f.name not in ("thumbnail", "image", "task", "output", "decoding", "mask",
                                   "class_names")}
        found["percents"] = (None if self.percents is None
                             else [round(share, 4) for share in self.percents])
        return found


def _shape_text(shape: Sequence[int | None]) -> str:
    return " × ".join("any" if d is None else str(d) for d in shape)


def image_preprocessing(input_shape: Sequence[int], color: str, normalization: str,
                        resize: str = "squash", class_names: Sequence[str] | None = None
                        ) -> dict[str, Any]:
    """The preprocessing a person describes for a model file that does not record its own:
    images of ``input_shape`` (height, width, channels), grey or RGB, scaled to 0..1
    (``unit``) or -1..1 (``symmetric``)."""
    height, width = int(input_shape[0]), int(input_shape[1])
    channels = 1 if color == "grayscale" else 3
    scale, offset = NORMALIZATIONS[normalization]
    return {"kind": "image", "task": DEFAULT_TASK,
            "class_names": list(class_names) if class_names else None,
            "sample_shape": [height, width, channels], "input_dtype": "float32",
            "image_size": [height, width], "color": color, "resize": resize,
            "normalization": normalization, "scale": [scale] * channels,
            "offset": [offset] * channels}


def _preprocessing_beside(path: Path) -> dict[str, Any] | None:
    """The preprocessing recorded next to a model file, or in the run a checkpoint is of."""
    folders = [path.parent]
    if path.parent.name == runs.CHECKPOINTS:
        folders.append(path.parent.parent)
    for folder in folders:
        record = folder / runs.PREPROCESSING_FILE
        if record.is_file():
            try:
                return json.loads(record.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ModelFileError(f"{record} cannot be read ({first_line(exc)}).") from None
    return None


def _model_file(path: Path) -> Path:
    if path.is_dir():
        if (path / runs.MODEL_FILE).is_file():
            return path / runs.MODEL_FILE
        if runs.checkpoints(path):
            raise ModelFileError(f"The run {path.name} has no final model (it did not finish): "
                                 f"pick one of its checkpoints.")
        raise ModelFileError(f"{path} holds no model: train a run, or pick a .keras file.")
    if not path.exists():
        raise ModelFileError(f"{path} does not exist: check the path.")
    if path.suffix.lower() not in MODEL_SUFFIXES:
        raise ModelFileError(f"{path.name} is not a Keras model file: Layer Studio answers "
                             f"with .keras and .h5 files.")
    return path


def _is_container(path: Path) -> bool:
    """Whether the file is the kind its name says: a zip archive (.keras) or HDF5 (.h5);
    ModelFileError if the archive is a decompression bomb."""
    if path.suffix.lower() == ".keras":
        try:
            with zipfile.ZipFile(path) as archive:
                check_member(archive, path, "config.json")  # which Keras reads whole
        except ArchiveRefused as exc:
            raise ModelFileError(str(exc)) from None
        except (KeyError, OSError, zipfile.BadZipFile):
            return False
        return True
    import h5py

    return bool(h5py.is_hdf5(path))


@contextmanager
def _noting_skipped_members(path: Path, notes: list[str]) -> Iterator[None]:
    """Keras's warning about archive members whose paths lead outside the folder it unpacks
    into (it skips them, writing nothing) as one note of ours in ``notes``; other warnings
    pass on as they were."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    skipped = []
    for warning in caught:
        found = _SKIPPED_MEMBER.search(str(warning.message))
        if found:
            skipped.append(found[1])
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)
    if skipped:
        notes.append(f"{path.name} holds {count(len(skipped), 'file')} whose path leads "
                     f"outside the model file (e.g. {skipped[0][:80]!r}), a sign of a damaged "
                     f"or hostile file: {'it was' if len(skipped) == 1 else 'they were'} "
                     f"skipped, and nothing was written outside.")


def _load_model(path: Path, notes: list[str]) -> Any:
    """The Keras model in ``path``, loaded in safe mode (no Python code from the file); what
    the person should know about the file goes to ``notes``."""
    # TensorFlow is imported once, under start_tensorflow's lock: importing it from a second
    # thread while the window's warm-up imports it failed ("Registering two gradient with
    # name 'ReduceDataset'"), and its device settings apply only before it starts
    start_tensorflow()
    import keras

    if not _is_container(path):
        raise ModelFileError(f"{path.name} is not a Keras model file: it is damaged, or "
                             f"another kind of file named {path.suffix}.")
    if written_by_keras_2(path):
        return _load_legacy_model(path)
    try:
        with _noting_skipped_members(path, notes):
            return keras.saving.load_model(path, safe_mode=True, compile=False)
    except Exception as exc:  # noqa: BLE001 - every loading failure is said in words
        text = first_line(exc)
        unknown = _UNKNOWN_CLASS.search(str(exc))
        if unknown:
            raise ModelFileError(f"{path.name} uses a layer Keras does not know "
                                 f"({unknown[1]}): it was saved from custom Python code, "
                                 f"which is not in the file.") from None
        if "safe_mode" in str(exc) or "lambda" in text.lower():
            raise ModelFileError(f"{path.name} holds Python code (a Lambda layer), which "
                                 f"Layer Studio never runs from a file.") from None
        raise ModelFileError(f"{path.name} cannot be loaded as a Keras model "
                             f"({text}).") from None


def _load_legacy_model(path: Path) -> Any:
    """A Keras 2 model file loaded as import reads it: its config rewritten for Keras 3, then
    built in safe mode with its weights."""
    try:
        return load_model_file(path)
    except CodeRefused:
        raise ModelFileError(f"{path.name} holds Python code (a Lambda layer), which Layer "
                             f"Studio never runs from a file.") from None
    except ImportFailure as exc:
        raise ModelFileError(str(exc)) from None


def _check_fits(path: Path, model: Any, prep: dict[str, Any]) -> None:
    """ModelFileError if the preprocessing makes inputs of another shape than the model's."""
    wanted = tuple(model.inputs[0].shape[1:])
    made = tuple(prep.get("sample_shape") or ())
    if made and (len(made) != len(wanted) or any(
            w is not None and w != m for w, m in zip(wanted, made, strict=True))):
        raise ModelFileError(f"{path.name} takes inputs of shape {_shape_text(wanted)}, but "
                             f"the preprocessing given makes {_shape_text(made)}: describe "
                             f"the inputs this model was trained on.")


def image_problem(path: Path) -> str | None:
    """Why a file cannot be answered as an image, in plain words, or None if it can."""
    path = Path(path)
    if path.is_dir():
        return "a folder, not an image file"
    if not path.exists() and not path.is_symlink():
        return "there is no such file"
    try:
        inspect_image(path)
    except UnusableImage as exc:
        return exc.detail
    return None


def redecoded(prediction: Prediction, **settings: Any) -> Prediction:
    """``prediction`` (a detector's answer) with its boxes decoded again from the head output
    it keeps, with ``settings`` (``score_threshold``, ``nms_iou``) in place of those it was
    decoded with: the model is not run again. ValueError for an answer that keeps none."""
    if prediction.output is None or prediction.decoding is None:
        raise ValueError(f"The answer for {prediction.source} keeps no model output to "
                         f"decode again.")
    decoding = {**prediction.decoding, **settings}
    (answer,) = task_for(prediction.task).image_answers(
        prediction.output[np.newaxis], decoding.get("class_names") or [], 0,
        {"decoding": decoding}, [tuple(decoding["image_size"])])
    return replace(prediction, **{**answer, "output": prediction.output})


def thumbnail_of(image: np.ndarray) -> np.ndarray:
    """``image`` (uint8 H × W × C) at most THUMBNAIL_SIDE pixels a side."""
    height, width = image.shape[:2]
    if max(height, width) <= THUMBNAIL_SIDE:
        return image
    from PIL import Image

    factor = THUMBNAIL_SIDE / max(height, width)
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    picture = Image.fromarray(image[..., 0] if image.shape[-1] == 1 else image)
    smaller = np.asarray(picture.resize(size, Image.Resampling.BILINEAR))
    return smaller.reshape(*smaller.shape[:2], -1)


class Predictor:
    """A loaded model with its preprocessing; ``predict_*`` answer batches of inputs."""

    def __init__(self, path: Path, model: Any, prep: dict[str, Any]) -> None:
        self.path = path
        self.model = model
        self.notes: list[str] = []
        """What the person should know about the model file, said once when it is loaded."""
        self.prep = prep
        self.kind: str = prep.get("kind", "image")
        self.task: str = prep.get("task", DEFAULT_TASK)
        outputs = int(self._output(model.outputs).shape[-1] or 1)
        names = prep.get("class_names") or [str(i) for i in range(max(outputs, 2))]
        self.class_names: list[str] = [str(n) for n in names]
        self._call = self._compiled()
        self._readers: dict[Any, Any] = {}

    @classmethod
    def load(cls, path: Path, preprocessing: dict[str, Any] | None = None) -> Predictor:
        """The model at ``path``: a run folder (its final model), a checkpoint in a run, or a
        .keras/.h5 file, with ``preprocessing``, else the one recorded beside it, else
        PreprocessingMissing."""
        model_path = _model_file(Path(path))
        prep = preprocessing or _preprocessing_beside(model_path)
        notes: list[str] = []
        if prep is not None:  # a task's own Keras objects (a custom loss) known before loading
            task_for(prep.get("task", DEFAULT_TASK)).register_keras_objects()
        model = _load_model(model_path, notes)
        if prep is None:
            raise PreprocessingMissing(model_path, tuple(model.inputs[0].shape[1:]))
        _check_fits(model_path, model, prep)
        predictor = cls(model_path, model, prep)
        predictor.notes = notes
        return predictor

    @staticmethod
    def _output(value: Any) -> Any:
        return value[0] if isinstance(value, list | tuple) else value

    def _compiled(self):
        """The model's forward pass as one function traced once for any batch size (tracing
        again for a new size would hold the interpreter lock, and stall the GUI, for a
        quarter of a second)."""
        import tensorflow as tf

        inputs = len(self.model.inputs)
        model = self.model
        shape = [None, *self.model.inputs[0].shape[1:]]
        dtype = tf.as_dtype(self.prep.get("input_dtype") or "float32")

        @tf.function(input_signature=[tf.TensorSpec(shape, dtype)])
        def call(x):
            return model(x if inputs == 1 else (x,) * inputs, training=False)

        return call

    def outputs(self, x: np.ndarray) -> np.ndarray:
        """The model's (first) output for a preprocessed batch, as float64."""
        if not len(x):
            return np.zeros((0, len(self.class_names)))
        return np.asarray(self._output(self._call(x)), dtype=np.float64)

    def warm_up(self) -> None:
        """Trace the forward pass now, on a batch of zeros, so the first answer does not wait
        for it (a drawing answered as it is drawn would stall for a quarter of a second)."""
        shape = tuple(self.model.inputs[0].shape[1:])
        if all(shape):
            self.outputs(np.zeros((1, *shape), self.prep.get("input_dtype") or "float32"))

    def answers(self, outputs: np.ndarray, top_k: int,
                image_sizes: Sequence[tuple[int, int]] | None = None) -> list[dict[str, Any]]:
        """Each output row as labels and probabilities (top ``top_k``), values or boxes;
        ``image_sizes``: the images' own (height, width), where a detector's boxes go (else
        the boxes are in the model's input pixels)."""
        if not len(outputs):  # nothing was readable: no row to answer
            return []
        found = task_for(self.task).image_answers(outputs, self.class_names, top_k, self.prep,
                                                  image_sizes)
        return [{**answer, "task": self.task, "class_names": self.class_names}
                for answer in found]

    def _answered(self, sources: Sequence[str], x: np.ndarray, top_k: int, started: float,
                  thumbnails: Sequence[np.ndarray | None],
                  image_sizes: Sequence[tuple[int, int]] | None = None) -> list[Prediction]:
        answers = self.answers(self.outputs(x), top_k, image_sizes)
        share = (time.perf_counter() - started) / max(1, len(sources))
        return [Prediction(source, seconds=share, thumbnail=thumbnail, **answer)
                for source, answer, thumbnail in zip(sources, answers, thumbnails, strict=True)]

    def image_sizes(self, paths: Sequence[Path]) -> list[tuple[int, int]] | None:
        """The (height, width) of image files that passed ``image_problem``, if this model's
        answers need them (see ``Task.answers_need_image_sizes``), else None."""
        if not task_for(self.task).answers_need_image_sizes:
            return None
        sizes = []
        for path in paths:
            width, height = inspect_image(path).size
            sizes.append((height, width))
        return sizes

    def _need(self, kind: str) -> None:
        if self.kind != kind:
            raise ValueError(f"This model was trained on {self.kind} data, not {kind}s.")

    def standard_files(self, paths: Sequence[Path], by_content: bool = False) -> np.ndarray:
        """Image files in the model's standard form (uint8), read exactly as training reads
        them (its ``read_images``, traced once per decoder rather than per call), or each
        decoded by its content whatever its name if ``by_content``."""
        import tensorflow as tf

        form = ImageForm.from_prep(self.prep)
        if not paths:
            return np.zeros((0, *form.size, form.channels), np.uint8)
        paths = [Path(p) for p in paths]
        decode = decode_image if by_content else decoder_for(paths)
        if decode not in self._readers:
            self._readers[decode] = tf.function(
                lambda names: read_images(names, form, decode),
                input_signature=[tf.TensorSpec([None], tf.string)])
        return self._readers[decode](tf.constant([str(p) for p in paths])).numpy()

    def normalised(self, images: np.ndarray) -> np.ndarray:
        """Standard-form uint8 images as the model's float32 input."""

        return normalised(images, self.prep["scale"], self.prep["offset"]).numpy()

    def read_checked(self, paths: Sequence[Path]
                     ) -> tuple[list[int], np.ndarray, dict[int, str]]:
        """Read files that passed ``image_problem``: the positions read, their images in
        the standard form, and why each other position could not be decoded. The files are
        read in one batch; if TensorFlow fails on one of them, each is read on its own,
        decoded by its content (a BMP named .png is answered)."""
        try:
            return list(range(len(paths))), self.standard_files(paths), {}
        except Exception:  # noqa: BLE001 - find the file TensorFlow cannot decode
            pass
        read, images, errors = [], [], {}
        for index, path in enumerate(paths):
            try:
                images.append(self.standard_files([path], by_content=True))
                read.append(index)
            except Exception as exc:  # noqa: BLE001 - said in words for that file only
                reason = _TF_FUNCTION.sub("", first_line(exc)).strip()
                errors[index] = (image_problem(path)  # changed since it was checked
                                 or f"{CORRUPT}: the image cannot be decoded ({reason})")
        return read, np.concatenate([self.standard_files([]), *images]), errors

    def model_inputs(self, paths: Sequence[Path]) -> np.ndarray:
        """Image files as the model's input batch (for predictions and explanations)."""
        return self.normalised(self.standard_files(paths))

    def can_explain(self, prediction: Prediction) -> bool:
        """Whether ``prediction`` is of an image the model can be shown again: one kept in
        memory (pasted or drawn) or an image file still there."""
        return self.kind == "image" and prediction.error is None and (
            prediction.image is not None or Path(prediction.source).is_file())

    def explained_input(self, prediction: Prediction) -> np.ndarray:
        """The model's input batch of one for an answered image (see ``can_explain``): its
        image kept in memory, else its file read again."""
        if prediction.image is not None:
            return self.normalised(prediction.image[np.newaxis])
        return self.model_inputs([Path(prediction.source)])

    def predict_files(self, paths: Sequence[Path], top_k: int = DEFAULT_TOP_K
                      ) -> list[Prediction]:
        """Answer image files, in order; a file that is not a usable image gets an error
        saying why, and the others are still answered."""
        self._need("image")
        started = time.perf_counter()
        results = {i: Prediction(str(path), error=problem) for i, path in enumerate(paths)
                   if (problem := image_problem(path)) is not None}
        good = [i for i in range(len(paths)) if i not in results]
        read, images, errors = self.read_checked([Path(paths[i]) for i in good])
        results.update({good[i]: Prediction(str(paths[good[i]]), error=error)
                        for i, error in errors.items()})
        answered = self._answered([str(paths[good[i]]) for i in read], self.normalised(images),
                                  top_k, started, [thumbnail_of(image) for image in images],
                                  self.image_sizes([Path(paths[good[i]]) for i in read]))
        results.update(zip((good[i] for i in read), answered, strict=True))
        return [results[i] for i in range(len(paths))]

    def predict_images(self, images: Sequence[np.ndarray], names: Sequence[str],
                       top_k: int = DEFAULT_TOP_K) -> list[Prediction]:
        """Answer in-memory uint8 images (H × W or H × W × C, any size and 1 to 4
        channels); an array that is not such an image gets an error, the others answers."""

        self._need("image")
        form = ImageForm.from_prep(self.prep)
        out = []
        for image, name in zip(images, names, strict=True):
            started = time.perf_counter()
            pixels = np.asarray(image)
            pixels = pixels if pixels.ndim == 3 else pixels[..., None]
            if pixels.ndim != 3 or not 1 <= pixels.shape[-1] <= 4 or not pixels.size:
                out.append(Prediction(name, error=f"not an image: an array of shape "
                                                  f"{_shape_text(np.shape(image))}"))
                continue
            standard = standard_images(pixels[None].astype(np.uint8), form).numpy()
            (answered,) = self._answered([name], self.normalised(standard), top_k, started,
                                         [thumbnail_of(standard[0])], [pixels.shape[:2]])
            answered.image = standard[0]
            out.append(answered)
        return out

    def predict_rows(self, rows: Sequence[Mapping[str, Any]], top_k: int = DEFAULT_TOP_K
                     ) -> list[Prediction]:
        """Answer table rows given as {column: value}; missing values take the training
        mean, as in training."""

        self._need("table")
        started = time.perf_counter()
        x = preprocess_rows(self.prep, list(rows)).astype(np.float32)
        sources = [", ".join(f"{k}={v}" for k, v in row.items()) for row in rows]
        return self._answered(sources, x, top_k, started, [None] * len(rows))

    def predict_texts(self, texts: Sequence[str], top_k: int = DEFAULT_TOP_K
                      ) -> list[Prediction]:
        """Answer texts, vectorised with the run's vocabulary."""

        self._need("text")
        started = time.perf_counter()
        x = preprocess_texts(self.prep, list(texts))
        return self._answered(list(texts), x, top_k, started, [None] * len(texts))
