"""Training a project with Keras, reporting live metrics through a plain callback.

``train`` starts a run and ``resume`` continues one from its last checkpoint. Both take their
inputs, an ``on_event`` callback and a ``threading.Event`` to stop, and are the same for the
GUI worker and the command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import threading
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from studio.core.base.events import OnEvent, progress_events
from studio.core.base.messages import first_line, unwritable
from studio.core.base.runtime import start_tensorflow
from studio.core.base.versions import package_versions
from studio.core.build.analysis import output_settings
from studio.core.build.estimate import estimate, oom_advice
from studio.core.build.imported_weights import apply_imported_weights, apply_model_weights
from studio.core.build.keras_model import build_model, compile_model, model_endpoints
from studio.core.build.optimizers import reduce_only_across_devices, schedule_callbacks
from studio.core.data import sources as data
from studio.core.data.pipelines import Pipelines, make_pipelines
from studio.core.data.types import DataError, DatasetInfo, LoadedData
from studio.core.hardware.devices import (
    DeviceDiscovery,
    DeviceError,
    Devices,
    StaticDiscovery,
    TensorFlowDiscovery,
    apply_determinism,
    apply_precision,
    cpu_info,
    device_scope,
    training_devices,
)
from studio.core.project.document import DatasetChoice, Project
from studio.core.project.weights import WeightsError, check_weights, file_sha256
from studio.core.runs.folders import (
    CHECKPOINTS,
    CONFIG_FILE,
    LOGS,
    CheckpointWriteError,
    RunFolder,
    checkpoints,
)
from studio.core.runs.history import effective_status
from studio.core.runs.lock import RunLock
from studio.core.tasks.registry import task_for
from studio.core.training.callbacks import (
    checkpoint_callback,
    early_stopping_callback,
    tensorboard_callback,
)
from studio.core.training.live_metrics import (
    DivergedError,
    live_metrics_callback,
    plain_metrics,
)


class TrainingError(RuntimeError):
    """Training ended with an error; the message is meant for a person."""


@dataclass
class RunResult:
    """How a run ended (finished, stopped), where its folder is, its epochs and, if it
    stopped early or was resumed, a note saying so."""

    run_dir: Path
    status: str
    epochs: list[dict[str, float]] = field(default_factory=list)
    note: str = ""


@dataclass
class _Plan:
    """What one session of a run trains: the epochs to reach and where it starts from."""

    epochs: int
    batch_size: int
    initial_epoch: int = 0
    checkpoint: Path | None = None


def train(
    project: Project,
    run_root: Path,
    on_event: OnEvent | None = None,
    stop: threading.Event | None = None,
    *,
    epochs: int | None = None,
    batch_size: int | None = None,
    report_every: int = 5,
    discovery: DeviceDiscovery | None = None,
) -> RunResult:
    """Train ``project`` and write a new run folder under ``run_root``.

    Events are plain dicts: ``progress`` (loading the data: ``what``, ``done``, ``total``),
    ``note`` (what loading skipped or changed), ``start``, ``batch`` (every ``report_every``
    batches), ``epoch``, ``checkpoint`` and ``test`` (scores on the held-out test split after
    the last epoch). Setting ``stop`` ends training after the current batch; the run is
    "finished" if every epoch ran or early stopping ended it, else "stopped" (with no model
    saved if it stopped before the first batch). Raises TrainingError on failure, after
    recording it in the run folder. ``epochs=0`` saves the model as it starts, untrained.
    """
    settings = project.training
    folder = _new_run_folder(Path(run_root), project)
    with folder.lock:
        plan = _Plan(settings.epochs if epochs is None else epochs,
                     batch_size or settings.batch_size)
        return _run(folder, project, plan, on_event, stop, report_every, discovery)


def _new_run_folder(root: Path, project: Project) -> RunFolder:
    """A new run folder holding the project, its training lock held; if the disk refuses it
    (full, read-only), a TrainingError saying so, and no run folder left behind."""
    folder = None
    try:
        folder = RunFolder.create(root, project)
        folder.write_start(project)
    except OSError as exc:
        if folder is not None:
            folder.lock.release()
            shutil.rmtree(folder.path, ignore_errors=True)
        raise TrainingError(f"The run cannot start. {unwritable(root, exc)}") from None
    return folder


def resume(
    run_dir: Path,
    on_event: OnEvent | None = None,
    stop: threading.Event | None = None,
    *,
    epochs: int | None = None,
    report_every: int = 5,
    discovery: DeviceDiscovery | None = None,
) -> RunResult:
    """Continue a stopped, failed or interrupted run from its last checkpoint, in its own
    folder: the epoch counter, optimizer state and metrics go on from there, up to the
    run's planned epochs (or ``epochs``). Events are those of ``train``; ``start`` carries
    the earlier epochs' metrics as ``history`` so curves continue. The run's training lock
    is held throughout: a run another process trains is refused at once."""

    run_dir = Path(run_dir)
    info = RunFolder(run_dir, "").info()
    lock = RunLock(run_dir)
    try:
        if effective_status(info, run_dir) == "running" or not lock.acquire():
            raise TrainingError(f"{run_dir.name} is being trained by another process.")
    except OSError as exc:
        raise TrainingError(f"{run_dir.name} cannot be resumed: its folder cannot be written "
                            f"({exc.strerror or exc}).") from None
    with lock:
        found = checkpoints(run_dir)
        if not found:
            raise TrainingError(f"{run_dir.name} has no checkpoint to resume from: it ended "
                                "before its first checkpoint, or checkpoints were off. Start a "
                                "new run.")
        epoch, path = found[-1]
        try:
            config = json.loads((run_dir / CONFIG_FILE).read_text(encoding="utf-8"))
            planned = config["training"]
        except (OSError, ValueError, KeyError) as exc:
            raise TrainingError(f"{run_dir.name} cannot be resumed: its {CONFIG_FILE} is "
                                f"missing or damaged ({first_line(exc)}).") from None
        folder, project = RunFolder.reopen(run_dir, epoch)
        plan = _Plan(epochs or planned["epochs"], planned["batch_size"], epoch, path)
        if plan.epochs <= epoch:
            raise TrainingError(f"{run_dir.name} already has {epoch} epochs; ask for more than "
                                f"{epoch} to continue it.")
        return _run(folder, project, plan, on_event, stop, report_every, discovery)


@dataclass
class _Session:
    """What one session of a run has set up so far: a failure is explained with the devices
    found, and the early-stopping callback says whether it ended the run."""

    devices: Devices | None = None
    stopper: Any = None


@dataclass
class Prepared:
    """The data, its pipelines and the devices a session fits on, ready to train."""

    loaded: LoadedData
    pipes: Pipelines
    names: list[str]
    devices: Devices


def _run(folder: RunFolder, project: Project, plan: _Plan, on_event: OnEvent | None,
         stop: threading.Event | None, report_every: int,
         discovery: DeviceDiscovery | None) -> RunResult:
    """One session of a run: prepare (data, devices, records), fit, and record how it ended,
    a failure explained in plain words."""
    on_event = on_event or (lambda event: None)
    stop = stop or threading.Event()
    settings = project.training
    folder.epochs_planned = plan.epochs
    session = _Session()
    try:
        folder.write_status("running")
        prepared = _prepare(session, folder, project, plan, on_event, stop, discovery)
        _fit(session, prepared, folder, project, plan, on_event, stop, report_every)
    except DataError as exc:
        if not stop.is_set():  # else loading was cancelled: the run simply stopped
            _fail(folder, str(exc))
    except Exception as exc:  # noqa: BLE001 - every failure is recorded and explained
        _fail(folder, str(exc) if isinstance(exc, TrainingError | DivergedError | DeviceError)
              else _explain(exc, project, plan, folder, session.devices))
    finally:
        apply_precision("float32")
    stopper = session.stopper
    note = _early_note(stopper, settings) if stopper is not None else ""
    status = "finished" if len(folder.rows) == plan.epochs or note else "stopped"
    folder.write_status(status)
    return RunResult(folder.path, status, folder.rows, note)


def _prepare(session: _Session, folder: RunFolder, project: Project, plan: _Plan,
             on_event: OnEvent, stop: threading.Event,
             discovery: DeviceDiscovery | None) -> Prepared:
    """Prepare the data and devices (``prepare``), and write the run's config and
    preprocessing."""
    if plan.checkpoint is None:  # before the data loads: a missing file fails at once
        check_start(project, folder.path.parent)
    prepared = prepare(project, plan.batch_size, on_event, stop, discovery)
    session.devices = prepared.devices
    folder.write_config(_config(project, plan, prepared.loaded, prepared.names,
                                folder.path.parent))
    record_fingerprint(folder, project.dataset, prepared.loaded)
    folder.write_preprocessing(prepared.pipes.preprocessing)
    return prepared


def prepare(project: Project, batch_size: int, on_event: OnEvent, stop: threading.Event,
            discovery: DeviceDiscovery | None = None) -> Prepared:
    """Start TensorFlow, load the data, register the task's Keras objects, find the devices,
    seed and set the precision, and make the pipelines in batches of ``batch_size``. The
    caller sets the precision back to float32 once done."""
    settings = project.training
    note = start_tensorflow()
    if note:
        on_event({"type": "note", "text": note})
    loaded = data.load(project.dataset, progress_events(on_event), stop)
    for text in loaded.notes + loaded.split_notes():
        on_event({"type": "note", "text": text})
    import keras

    task_for(loaded.info.task).register_keras_objects()  # a checkpoint or run's model loads
    devices = (discovery or TensorFlowDiscovery()).discover()
    names = training_devices(settings.device, devices)
    apply_determinism(settings.device.deterministic, settings.seed)
    keras.utils.set_random_seed(settings.seed)
    apply_precision(settings.device.precision)
    inputs, outputs = model_endpoints(project.graph)
    pipes = make_pipelines(loaded, project.dataset, batch_size, settings.seed,
                           len(inputs), len(outputs), output_settings(project.graph, loaded.info))
    return Prepared(loaded, pipes, names, devices)


def _fit(session: _Session, prepared: Prepared, folder: RunFolder, project: Project,
         plan: _Plan, on_event: OnEvent, stop: threading.Event, report_every: int) -> None:
    """Build or reload the model on the devices and fit it, saving it and scoring the test
    split once every epoch has run."""
    settings = project.training
    loaded, pipes, names = prepared.loaded, prepared.pipes, prepared.names
    with device_scope(names) as replicas:
        model = _model(project, loaded.info, plan, pipes, on_event, folder.path.parent)
        samples = loaded.size("train")
        on_event({
            "type": "start",
            "run_dir": str(folder.path),
            "task": loaded.info.task,
            "epochs": plan.epochs,
            "initial_epoch": plan.initial_epoch,
            "steps": pipes.steps,
            "samples": samples,
            "params": int(model.count_params()),
            "devices": ", ".join(names),
            "replicas": replicas,
            "history": json.dumps(folder.rows),
        })
        live = live_metrics_callback(on_event, folder.add_epoch, stop, plan.epochs,
                                     plan.initial_epoch, pipes.steps, samples,
                                     plan.batch_size, report_every)
        session.stopper = stopper = early_stopping_callback(settings.early_stopping,
                                                            folder.rows)
        checkpointer = checkpoint_callback(settings.checkpoints, folder, on_event)
        scores = task_for(loaded.info.task).training_callbacks(pipes.scoring,
                                                               pipes.preprocessing)
        callbacks = [*scores, live, *_schedule_callbacks(settings), checkpointer,
                     tensorboard_callback(folder.path / LOGS)]
        if stopper is not None:
            callbacks.insert(len(scores) + 1, stopper)
        started = not stop.is_set()  # a run stopped while fitting keeps its model
        if started and plan.epochs > plan.initial_epoch:
            try:
                model.fit(epochs=plan.epochs, initial_epoch=plan.initial_epoch, verbose=0,
                          callbacks=callbacks, **pipes.fit_arguments())
            except BaseException:
                with contextlib.suppress(Exception):
                    checkpointer.flush()  # the last checkpoint is written before the failure
                raise
        if started:
            folder.save_model(model)
        if pipes.test is not None and len(folder.rows) == plan.epochs:
            scores = plain_metrics(model.evaluate(pipes.test, verbose=0, return_dict=True),
                                   model.output_names)
            folder.test_metrics = scores
            on_event({"type": "test", **scores})


def start_from_run(project: Project, model_file: Path, run_root: Path) -> None:
    """Have ``project`` start from a run's final model or checkpoint ``model_file``, named
    relative to ``run_root`` (the project's runs folder) when it lies there."""
    model_file = Path(os.path.abspath(model_file))
    inside = model_file.is_relative_to(os.path.abspath(run_root))
    project.training.start_from = "run"
    project.training.start_model = (model_file.relative_to(os.path.abspath(run_root)).as_posix()
                                    if inside else str(model_file))


def start_model_path(project: Project, run_root: Path) -> Path:
    """The run's model a project starts from (``start_model``, taken from ``run_root``, the
    project's runs folder, when relative)."""
    return Path(run_root) / project.training.start_model


def check_start(project: Project, run_root: Path) -> None:
    """TrainingError (one line) unless what the project starts from can be used: its
    imported weights, or the run's model it names."""
    start = project.training.start_from
    try:
        if start == "imported" and project.weights is None:
            raise WeightsError("Training starts from imported weights, but this project has "
                               "none: choose Start from: random weights, or import a model.")
        if start == "imported":
            check_weights(project.weights)
    except WeightsError as exc:
        raise TrainingError(str(exc)) from None
    if start == "run" and not start_model_path(project, run_root).is_file():
        name = project.training.start_model or "no run"
        raise TrainingError(f"Training starts from a run's model, but {name[:80]} is not "
                            "there: choose another run, or start from random weights.")


def _model(project: Project, info: DatasetInfo, plan: _Plan, pipes: Pipelines,
           on_event: OnEvent, run_root: Path) -> Any:
    """The model to fit: reloaded from the checkpoint (with its optimizer state), or built
    and compiled anew with float32 outputs (which mixed precision needs for a stable loss),
    from the imported weights or a run's model if the project says so."""
    import keras

    if plan.checkpoint is not None:
        model = keras.saving.load_model(plan.checkpoint, safe_mode=True)
        reduce_only_across_devices(model.optimizer)
        return model
    model = starting_model(project, info, on_event, run_root)
    # The schedule spans the epochs this run plans (``--epochs`` may differ from the project's).
    training = replace(project.training, epochs=plan.epochs)
    compile_model(model, project.graph, training, info.task, steps_per_epoch=pipes.steps,
                  class_weights=pipes.loss_class_weights)
    return model


def starting_model(project: Project, info: DatasetInfo, on_event: OnEvent,
                   run_root: Path) -> Any:
    """The project's model for ``info``, built with the weights it starts from (imported, a
    run's model under ``run_root``, or random; a note says which layers could not take
    theirs), and float32 outputs under mixed precision (which a stable loss needs)."""
    import keras

    model = build_model(project.graph, info, project.name)
    start = project.training.start_from
    try:
        if start == "imported":
            dropped, since = apply_imported_weights(model, project), "since the import"
        elif start == "run":
            source = start_model_path(project, run_root)
            dropped, since = apply_model_weights(model, project, source), f"in {source.name}"
        else:
            dropped, since = [], ""
    except WeightsError as exc:
        raise TrainingError(str(exc)) from None
    if dropped:
        on_event({"type": "note", "text": f"{', '.join(dropped)} start from random weights: "
                  f"their weight shapes differ {since}."})
    if keras.mixed_precision.global_policy().compute_dtype != "float32":
        outputs = [keras.layers.Activation("linear", dtype="float32", name=f"{o.name}_float32")(o)
                   for o in model.outputs]
        model = keras.Model(model.inputs, outputs if len(outputs) > 1 else outputs[0],
                            name=model.name)
    return model


def _schedule_callbacks(settings) -> list[Any]:
    return schedule_callbacks(settings)


def _config(project: Project, plan: _Plan, loaded: LoadedData, devices: list[str],
            run_root: Path) -> dict[str, Any]:
    """Everything that decides what a run computes, for its record."""
    training = asdict(project.training)
    training.update(epochs=plan.epochs, batch_size=plan.batch_size)
    return {
        "training": training,
        "dataset": asdict(project.dataset),
        "seed": project.training.seed,
        "dataset_fingerprint": loaded.fingerprint(),
        "samples": {name: loaded.size(name) for name in loaded.splits},
        "versions": package_versions(),
        "devices": devices,
        "replicas": len(devices),
        "host": socket.gethostname(),
        "started_from": _started_from(project, run_root),
    }


def record_fingerprint(folder: RunFolder, choice: DatasetChoice, loaded: LoadedData) -> None:
    """Record the image ids per class of an image-folder dataset in the run folder, from the
    hashes loading took (nothing is read again), so two runs' datasets can be compared."""
    if choice.source != "folder":
        return
    # imported here: the trainer module loads with the window, image reading only to train
    from studio.core.data.editable.fingerprint import loaded_fingerprint

    classes = loaded_fingerprint(loaded)
    if classes is not None:
        folder.write_fingerprint(Path(choice.path), classes)


def _started_from(project: Project, run_root: Path) -> dict[str, Any]:
    """What the run's weights started from, for its record: random, the imported weights
    file, or a run's model file, with its SHA-256."""
    start, weights = project.training.start_from, project.weights
    if start == "imported" and weights is not None:
        return {"kind": "imported", "file": weights.file, "sha256": weights.sha256}
    if start == "run":
        source = start_model_path(project, run_root)
        return {"kind": "run", "file": str(source), "run": _run_of(source),
                "sha256": file_sha256(source) if source.is_file() else None}
    return {"kind": "random"}


def _run_of(model_file: Path) -> str:
    """The id of the run a final model or checkpoint file belongs to."""
    folder = model_file.parent
    return (folder.parent if folder.name == CHECKPOINTS else folder).name


def _fail(folder: RunFolder, message: str) -> None:
    """Record the failure in the run folder (if the disk lets us) and raise it."""
    try:
        folder.write_status("failed", message)
    except OSError:
        pass
    raise TrainingError(message)


def _early_note(stopper: Any, settings) -> str:
    if not stopper.stopped_epoch:
        return ""
    rule = settings.early_stopping
    return (f"Stopped early after epoch {stopper.stopped_epoch + 1}: "
            f"{rule.monitor.replace('_', ' ')} did not improve for {rule.patience} epochs.")


def _explain(exc: Exception, project: Project, plan: _Plan, folder: RunFolder,
             devices: Devices | None) -> str:
    """A failure in plain words, with what to do about it."""
    if isinstance(exc, CheckpointWriteError):
        kept = checkpoints(folder.path)
        where = (f"The {len(kept)} earlier checkpoint(s) in {folder.path} are intact."
                 if kept else "No earlier checkpoint was lost.")
        return (f"Could not write {Path(exc.filename or '').name or 'a checkpoint'}: "
                f"{exc.strerror}. The disk may be full or the workspace read-only; free some "
                f"space or choose another folder, then resume the run. {where}")
    if type(exc).__name__ == "ResourceExhaustedError":

        devices = devices or StaticDiscovery(Devices(cpu_info())).discover()
        figures = estimate(project, plan.batch_size, devices, project.training.device)
        return oom_advice(figures, plan.batch_size)
    return f"Training failed: {first_line(exc)}"
