"""Exporting a run's model for other programs, verified before it is called done.

The model is written in the chosen format (see ``export_formats``) with ``labels.txt``, the
run's ``preprocessing.json``, a README with a loader snippet and ``verification.json``. The
export is loaded again with its own runtime and answers a sample of the run's validation
images, read exactly as in training; its answers are compared with the Keras model's as the
task measures agreement (``Task.export_agreement``: a classifier's top-1 agreement, a
detector's boxes found again and mAP@0.5), with the largest difference and the latency. An
agreement under the task's threshold for the format is flagged in the report, never hidden.
Nothing reaches the target folder unless all of this succeeded.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.events import OnEvent, progress_events
from studio.core.base.messages import count, first_line, look_up, unwritable
from studio.core.build.analysis import output_settings
from studio.core.data import sources as data
from studio.core.data.pipelines import make_pipelines
from studio.core.data.types import DataError
from studio.core.export.formats import (
    FORMATS,
    ConversionError,
    ExportFormat,
    load_answer,
    write_model,
)
from studio.core.export.staging import Staging
from studio.core.inference.predictor import ModelFileError, Predictor
from studio.core.inference.timing import answered_one_by_one
from studio.core.project.document import Augmentation, ProjectFileError, load_project
from studio.core.runs import folders as runs
from studio.core.tasks.registry import task_for
from studio.core.tasks.task import ExportAgreement

CALIBRATION_LIMIT = 100
"""Training samples int8 quantisation is calibrated on."""
BATCH_SIZE = 100
VERIFICATION_FILE = "verification.json"
LABELS_FILE = "labels.txt"
README_FILE = "README.md"

class ExportError(ValueError):
    """An export that could not be made or written, in plain words."""


class ExportCancelled(ExportError):
    """The person stopped the export; the target folder is as it was."""


@dataclass
class ExportReport:
    """What was exported where, and how closely the export answers like the Keras model.

    ``size`` is the model file's (or SavedModel folder's) bytes; ``agreement`` is in percent,
    as the task measures it and ``agreement_name`` says (a classifier's top-1 agreement, a
    detector's box agreement; None for a regression model); ``scores`` are the task's
    further figures beside the Keras model's (a detector's ``map50`` and ``keras_map50``);
    ``latency_ms`` is the median time per image."""

    format: str
    directory: str
    files: list[str]
    size: int
    max_abs_diff: float
    agreement: float | None
    latency_ms: float
    samples: int
    threshold: float
    flagged: bool
    note: str
    agreement_name: str = ""
    scores: dict[str, float | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values."""
        return asdict(self)


def _check(stop: threading.Event) -> None:
    if stop.is_set():
        raise ExportCancelled("The export was stopped; the target folder is as it was.")


def export_format(name: str) -> ExportFormat:
    """The format called ``name``, or ExportError listing those there are."""
    return look_up(FORMATS, name, "export format", ExportError)


def _predictor(run_dir: Path):
    if not (run_dir / runs.PROJECT_FILE).is_file():
        raise ExportError(f"{run_dir} is not a run folder: export a run (its folder, or its "
                          f"id among the project's runs).")
    try:
        return Predictor.load(run_dir)
    except (ModelFileError, ValueError) as exc:
        raise ExportError(str(exc)) from None


def _take(dataset: Any, limit: int) -> np.ndarray:
    """Up to ``limit`` inputs from the first batches of ``dataset`` of (x, y) batches."""
    batches, taken = [], 0
    for x, _ in dataset:
        if taken >= limit:
            break
        batches.append(x.numpy()[: limit - taken])
        taken += len(batches[-1])
    return np.concatenate(batches) if batches else np.zeros((0,), np.float32)


@dataclass(frozen=True)
class _Samples:
    """What an export is checked and calibrated on: validation inputs, what the task scores
    them with (``Pipelines.scoring``: a detector's true boxes) and, if asked, training inputs
    to calibrate int8 quantisation on."""

    validation: np.ndarray
    scoring: Any
    calibration: np.ndarray | None


def _samples(run_dir: Path, limit: int, need_calibration: bool, emit: OnEvent,
             stop: threading.Event) -> _Samples:
    """The samples to check the export on (up to ``limit`` validation ones): the run's data
    read, split and prepared as in training (without augmentation)."""

    try:
        project = load_project(run_dir / runs.PROJECT_FILE)
        loaded = data.load(project.dataset, progress_events(emit), stop)
    except (ProjectFileError, DataError) as exc:
        _check(stop)
        raise ExportError(f"The data {run_dir.name} was trained on cannot be read ({exc}); "
                          f"the export is checked on its validation images, so put the data "
                          f"back where it was, then export again.") from None
    _check(stop)
    if not loaded.size("validation"):
        raise ExportError(f"{run_dir.name} holds no validation split to check the export "
                          f"on: set a validation split in Data and train again.")
    plain = replace(project.dataset, augmentation=Augmentation())
    pipes = make_pipelines(loaded, plain, BATCH_SIZE, project.training.seed,
                           output=output_settings(project.graph, loaded.info))
    validation = _take(pipes.validation, min(limit, loaded.size("validation")))
    calibration = (_take(pipes.train, min(CALIBRATION_LIMIT, loaded.size("train")))
                   if need_calibration else None)
    return _Samples(validation, pipes.scoring, calibration)


def _verify(answer: Callable[[np.ndarray], np.ndarray], expected: np.ndarray,
            x: np.ndarray, compare: Callable[[np.ndarray], ExportAgreement], emit: OnEvent,
            stop: threading.Event) -> tuple[dict[str, Any], ExportAgreement]:
    """Answer each input alone with the reloaded export, timing it, and ``compare`` its
    outputs with ``expected`` (the Keras model's), as the task measures agreement."""
    what = f"Checking the export on {count(len(x), 'validation sample')}"

    def after(done: int) -> None:
        if done % 20 == 0 or done == len(x):
            emit({"type": "progress", "what": what, "done": done, "total": len(x)})
        _check(stop)

    _check(stop)
    got, latency_ms = answered_one_by_one(answer, x, after)
    outputs = np.stack(got).reshape(expected.shape)
    return {"max_abs_diff": float(np.max(np.abs(outputs - expected))),
            "latency_ms": latency_ms,
            "samples": len(x)}, compare(outputs)


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def _note(form: ExportFormat, figures: dict[str, Any], agreement: ExportAgreement,
          threshold: float, flagged: bool) -> str:
    if agreement.percent is None:
        samples = count(figures["samples"], "validation sample")
        return (f"Largest difference from the Keras model's answers on {samples}: "
                f"{figures['max_abs_diff']:.3g}.")
    said = f"The {form.title} export {agreement.words}"
    if flagged:
        said = (f"{said}, under the {threshold:g}% this format should reach: check its "
                f"answers before relying on it, or export in a float format.")
    else:
        said = f"{said} (at least {threshold:g}% expected)."
    return f"{said} {agreement.scores_words}".rstrip()


def _prepare_lines(prep: dict[str, Any]) -> str:
    if prep.get("kind", "image") != "image":
        return ("# x: a float32 batch prepared as preprocessing.json records "
                "(Layer Studio's table or text pipeline)\n")
    return ('from PIL import Image\n\nprep = json.load(open("preprocessing.json"))\n'
            "height, width = prep[\"image_size\"]\n"
            'image = Image.open("picture.png").convert("L" if prep["color"] == "grayscale" '
            'else "RGB")\n'
            "pixels = np.asarray(image.resize((width, height)), np.float32)"
            ".reshape(height, width, -1)\n"
            'x = (pixels * np.float32(prep["scale"]) + np.float32(prep["offset"]))[None]\n')


def _readme(form: ExportFormat, prep: dict[str, Any], run_name: str, note: str,
            snippet: str) -> str:
    return (f"# {form.title} export of run {run_name}\n\n"
            f"Made by Layer Studio. `{form.file}` is the model; `{LABELS_FILE}` names its "
            f"classes in output order; `{runs.PREPROCESSING_FILE}` says how its inputs were "
            f"prepared in training (size, colour, `x = pixels * scale + offset`); "
            f"`{VERIFICATION_FILE}` holds the check made when it was exported.\n\n"
            f"{note}\n\n## Loading it in Python\n\n```python\nimport json\n\n"
            f"import numpy as np\n{_prepare_lines(prep)}\n{form.loader}\n"
            f'labels = open("{LABELS_FILE}", encoding="utf-8").read().splitlines()\n'
            f"{snippet}```\n")


def _write_beside(staging: Path, run_dir: Path, predictor: Any, form: ExportFormat,
                  report: ExportReport) -> None:
    """labels.txt, preprocessing.json, README.md and verification.json beside the model
    (plain writes: the staging folder as a whole is what appears atomically)."""
    (staging / LABELS_FILE).write_text("\n".join(predictor.class_names) + "\n", "utf-8")
    shutil.copyfile(run_dir / runs.PREPROCESSING_FILE, staging / runs.PREPROCESSING_FILE)
    snippet = task_for(predictor.task).export_snippet()
    (staging / README_FILE).write_text(_readme(form, predictor.prep, run_dir.name,
                                               report.note, snippet), "utf-8")
    figures = {k: v for k, v in report.to_dict().items() if k not in ("directory", "files")}
    (staging / VERIFICATION_FILE).write_text(
        json.dumps({**figures, "model": form.file, "run": run_dir.name}, indent=2) + "\n",
        "utf-8")


def _export_into(staging: Path, run_dir: Path, form: ExportFormat, predictor: Any,
                 emit: OnEvent, stop: threading.Event) -> ExportReport:
    task = task_for(predictor.task)
    samples = _samples(run_dir, task.export_samples, form.quantised, emit, stop)
    x, calibration = samples.validation, samples.calibration
    expected = predictor.outputs(x)  # the oracle; also calls the model once, as ONNX needs
    given = np.dtype(predictor.model.inputs[0].dtype)  # token ids come as integers
    x = x.astype(given)
    calibration = None if calibration is None else calibration.astype(given)
    emit({"type": "note", "text": f"Converting to {form.title}"})
    try:
        model, parts = task.export_model(predictor.model, form.quantised)
        path = write_model(form, model, predictor.path, staging, calibration,
                           integer_inputs=predictor.kind == "image")
    except ConversionError as exc:
        raise ExportError(f"{form.title} cannot express this model: {exc}. Export it in "
                          f"another format (Keras or SavedModel keep every layer).") from None
    _check(stop)

    def compare(outputs: np.ndarray) -> ExportAgreement:
        return task.export_agreement(outputs, expected, predictor.prep, samples.scoring)

    try:
        answer = load_answer(form, path, predictor.prep, len(predictor.model.inputs), parts)
        figures, agreement = _verify(answer, expected, x, compare, emit, stop)
    except (ExportCancelled, OSError):
        raise
    except Exception as exc:  # noqa: BLE001 - a runtime refusing its own export, in words
        raise ExportError(f"The {form.title} export was written, but its runtime cannot "
                          f"answer with it ({first_line(exc)}), so it was not kept.") from None
    threshold = task.export_thresholds[form.quantised]
    flagged = agreement.percent is not None and agreement.percent < threshold
    report = ExportReport(form.name, "", [], _size(path), agreement=agreement.percent,
                          threshold=threshold, flagged=flagged,
                          note=_note(form, figures, agreement, threshold, flagged),
                          agreement_name=agreement.name, scores=agreement.scores, **figures)
    _write_beside(staging, run_dir, predictor, form, report)
    return report


def export_run(run_dir: Path, fmt: str, out_dir: Path, on_event: OnEvent | None = None,
               stop: threading.Event | None = None) -> ExportReport:
    """Export ``run_dir``'s final model in format ``fmt`` (a key of FORMATS) into the folder
    ``out_dir`` (made if missing; files of the same names in it are replaced, others kept),
    verified on a sample of the run's validation split.

    Progress goes to ``on_event`` as ``{"type": "progress", "what", "done", "total"}`` and
    ``{"type": "note", "text"}``; setting ``stop`` raises ExportCancelled. Raises ExportError
    in plain words for a model or data that cannot be used, a converter that cannot express
    the model, or a folder that cannot be written; then the folder is as it was."""
    form = export_format(fmt)
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    emit = on_event or (lambda event: None)
    stop = stop or threading.Event()
    predictor = _predictor(run_dir)
    try:
        staging = Staging(out_dir)
    except NotADirectoryError:
        raise ExportError(f"{out_dir} is a file: export into a folder.") from None
    except OSError as exc:
        raise ExportError(unwritable(out_dir, exc)) from None
    try:
        report = _export_into(staging.path, run_dir, form, predictor, emit, stop)
        report.files = staging.commit()
    except OSError as exc:
        staging.discard()
        raise ExportError(unwritable(out_dir, exc)) from None
    except BaseException:
        staging.discard()
        raise
    report.directory = str(out_dir)
    emit({"type": "note", "text": report.note})
    return report
