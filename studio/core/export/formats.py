"""The formats a run's model exports to: how each is written, how its own runtime loads it
again to answer one input, and how a person loads it (the README's snippet).

TensorFlow Lite int8 is full-integer quantisation: weights, activations and outputs are int8,
and so are the inputs of image models, so the file runs on integer-only accelerators: callers
quantise the float image with the input tensor's scale and zero point and dequantise each
output with its own. Table and text models keep float inputs (token ids and column values
do not fit int8). A task may split its output into several for int8, each then getting a
scale of its own (``Task.export_model``: a detector's heatmaps, offsets and sizes).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.messages import first_line
from studio.core.inference.predictor import Predictor

Answer = Callable[[np.ndarray], np.ndarray]
"""A reloaded export answering one float32 input batch with its (first) output."""

_LACKING = re.compile(r"TF Select ops: (.+)")


class ConversionError(ValueError):
    """The converter cannot express the model; the message says why, in its words."""


@dataclass(frozen=True)
class ExportFormat:
    """One export format: its command-line name, its title, the file (or folder) the model
    is written to, how to load and answer with it in Python, and whether it is quantised
    (its agreement threshold is then the task's lower one, see ``Task.export_thresholds``)."""

    name: str
    title: str
    file: str
    loader: str
    quantised: bool = False


_TFLITE_FLOAT = """import tensorflow as tf  # or: from ai_edge_litert.interpreter import Interpreter

interpreter = tf.lite.Interpreter(model_path="model.tflite")
interpreter.allocate_tensors()
given = interpreter.get_input_details()[0]
answer = interpreter.get_output_details()[0]
interpreter.set_tensor(given["index"], x)  # one image at a time: shape (1, H, W, C)
interpreter.invoke()
outputs = interpreter.get_tensor(answer["index"])"""

_TFLITE_INT8 = """import tensorflow as tf  # or: from ai_edge_litert.interpreter import Interpreter

interpreter = tf.lite.Interpreter(model_path="model.tflite")
interpreter.allocate_tensors()
given = interpreter.get_input_details()[0]
if given["dtype"] == np.int8:  # image models take int8 inputs
    scale, zero = given["quantization"]
    x = np.clip(np.round(x / scale + zero), -128, 127).astype(np.int8)
interpreter.set_tensor(given["index"], x)
interpreter.invoke()
answers = interpreter.get_signature_runner().get_output_details().values()  # in model order
outputs = [(interpreter.get_tensor(answer["index"]).astype(np.float32)
            - answer["quantization"][1]) * answer["quantization"][0]  # outputs are int8
           for answer in answers]
outputs = outputs[0] if len(outputs) == 1 else outputs"""

FORMATS: dict[str, ExportFormat] = {form.name: form for form in (
    ExportFormat("keras", "Keras (.keras)", "model.keras",
                 "import keras\n\n# compile=False: answering needs no training loss (a detector's "
                 "is Layer Studio's)\n"
                 'model = keras.saving.load_model("model.keras", compile=False)\n'
                 "outputs = model.predict(x)"),
    ExportFormat("savedmodel", "TensorFlow SavedModel", "saved_model",
                 'import tensorflow as tf\n\nmodel = tf.saved_model.load("saved_model")\n'
                 "outputs = model.serve(x).numpy()"),
    ExportFormat("onnx", "ONNX", "model.onnx",
                 'import onnxruntime as ort\n\nsession = ort.InferenceSession("model.onnx")\n'
                 "outputs = session.run(None, {session.get_inputs()[0].name: x})[0]"),
    ExportFormat("tflite", "TensorFlow Lite (float32)", "model.tflite",
                 _TFLITE_FLOAT),
    ExportFormat("tflite-fp16", "TensorFlow Lite (float16 weights)", "model.tflite",
                 _TFLITE_FLOAT),
    ExportFormat("tflite-int8", "TensorFlow Lite (int8, full-integer)", "model.tflite",
                 _TFLITE_INT8, quantised=True),
)}


def suggested_folder(run_dir: Path, fmt: str) -> Path:
    """Where to export ``run_dir`` in format ``fmt`` unless the person picks a folder: one
    of its own per format (``RUN/export/onnx``), as an export replaces files of its names."""
    return Path(run_dir) / "export" / fmt


def _without_location(text: str) -> str:
    """``text`` without the MLIR source location (``loc(...)``, nested) it starts with."""
    if not text.startswith("loc("):
        return text
    depth = 0
    for index, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if char == ")" and depth == 0:
            return text[index + 1:].lstrip(": ")
    return text


def converter_reason(exc: BaseException) -> str:
    """The converter's own reason from its (often long) message: its first ``error:`` line
    without the source location, and the operations TensorFlow Lite lacks, else the
    message's first line."""
    text = str(exc)
    lacking = _LACKING.search(text)
    for line in text.splitlines():
        said = _without_location(line.partition("error: ")[2]).strip()
        if said:
            return said + (f" (TensorFlow Lite has no built-in operation for {lacking[1]})"
                           if lacking else "")
    return first_line(exc)


def _tflite_bytes(form: ExportFormat, model: Any, calibration: np.ndarray | None,
                  integer_inputs: bool) -> bytes:
    import tensorflow as tf

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    if form.name != "tflite":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if form.name == "tflite-fp16":
        converter.target_spec.supported_types = [tf.float16]
    if form.name == "tflite-int8":
        samples = np.asarray(calibration, np.float32)
        converter.representative_dataset = lambda: ([samples[i:i + 1]]
                                                    for i in range(len(samples)))
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.int8 if integer_inputs else tf.float32
        converter.inference_output_type = tf.int8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return converter.convert()


def write_model(form: ExportFormat, model: Any, model_file: Path, target: Path,
                calibration: np.ndarray | None = None, integer_inputs: bool = True) -> Path:
    """Write ``model`` (loaded from ``model_file``, called once already) in ``form`` into the
    folder ``target``; int8 needs ``calibration`` inputs from the training split, and takes
    int8 inputs if ``integer_inputs`` (images), float ones otherwise. Raises
    ConversionError with the converter's reason, OSError when the folder cannot take it."""
    path = target / form.file
    if form.name == "keras":
        shutil.copyfile(model_file, path)
        return path
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # Keras prints what it saved
            if form.name == "savedmodel":
                model.export(str(path), format="tf_saved_model", verbose=False)
            elif form.name == "onnx":
                model.export(str(path), format="onnx", verbose=False)
            else:
                path.write_bytes(_tflite_bytes(form, model, calibration, integer_inputs))
    except OSError:
        raise
    except ImportError as exc:
        raise ConversionError(f"{form.title} export needs a package that is not installed "
                              f"({first_line(exc)}): pip install tf2onnx onnxruntime.") from None
    except Exception as exc:  # noqa: BLE001 - every converter failure is said in words
        refused = disk_refusal(exc)
        if refused is not None:
            raise OSError(refused, os.strerror(refused), str(path)) from None
        raise ConversionError(converter_reason(exc)) from None
    return path


DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)
"""What a disk says when it refuses a write: full, over quota, read-only, not allowed."""


def disk_refusal(exc: BaseException) -> int | None:
    """The errno of a disk refusing a write, if that is what ``exc`` is. TensorFlow writes
    through its own file system, so a full disk comes as an OpError (ResourceExhaustedError)
    naming the system's reason, not as an OSError."""
    if isinstance(exc, OSError):
        return exc.errno if exc.errno in DISK_ERRORS else None
    text = str(exc)
    return next((code for code in DISK_ERRORS if os.strerror(code) in text), None)


def _first(value: Any) -> np.ndarray:
    if isinstance(value, dict):
        value = next(iter(value.values()))
    if isinstance(value, list | tuple):
        value = value[0]
    return np.asarray(value, dtype=np.float64)


def _tflite_answer(path: Path, parts: int) -> Answer:
    import tensorflow as tf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tf.lite.Interpreter warns it moves to LiteRT
        interpreter = tf.lite.Interpreter(model_path=str(path))
    interpreter.allocate_tensors()
    given = interpreter.get_input_details()
    # the signature lists the outputs in the model's order; get_output_details may not
    answers = list(interpreter.get_signature_runner().get_output_details().values())[:parts]

    def dequantised(answer: dict[str, Any]) -> np.ndarray:
        out = interpreter.get_tensor(answer["index"]).astype(np.float64)
        if answer["dtype"] == np.int8:
            scale, zero = answer["quantization"]
            out = (out - zero) * scale
        return out

    def run(x: np.ndarray) -> np.ndarray:
        for tensor in given:
            value = x
            if tensor["dtype"] == np.int8:
                scale, zero = tensor["quantization"]
                value = np.clip(np.round(x / scale + zero), -128, 127).astype(np.int8)
            interpreter.set_tensor(tensor["index"], value)
        interpreter.invoke()
        return np.concatenate([dequantised(answer) for answer in answers], axis=-1)

    return run


def _savedmodel_answer(path: Path, inputs: int) -> Answer:
    import tensorflow as tf

    loaded = tf.saved_model.load(str(path))  # kept: its variables live as long as it does
    return lambda x: _first(loaded.serve(*[tf.constant(x)] * inputs))


def _onnx_answer(path: Path) -> Answer:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [given.name for given in session.get_inputs()]
    return lambda x: _first(session.run(None, {name: x for name in names}))


def _keras_answer(path: Path, prep: dict[str, Any]) -> Answer:
    return Predictor.load(path, prep).outputs


def load_answer(form: ExportFormat, path: Path, prep: dict[str, Any], inputs: int,
                parts: int = 1) -> Answer:
    """The export at ``path`` loaded again with its own runtime (Keras, TensorFlow, ONNX
    Runtime or the TFLite interpreter), answering one batch with its first output (in
    TFLite, its first ``parts`` outputs joined on the last axis: see
    ``Task.export_model``)."""
    if form.name == "keras":
        return _keras_answer(path, prep)
    if form.name == "savedmodel":
        return _savedmodel_answer(path, inputs)
    if form.name == "onnx":
        return _onnx_answer(path)
    return _tflite_answer(path, parts)
