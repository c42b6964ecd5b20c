"""Reading run folders for the history: a summary of each run, its curves, the differences
between two runs' configs, and deleting a run. Every reader tolerates missing, partial or
damaged files (a run killed mid-write), so no run ever disappears from the history."""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from studio.core.base.messages import format_duration
from studio.core.runs.folders import (
    CONFIG_FILE,
    MODEL_FILE,
    PROJECT_FILE,
    RUN_FILE,
    as_float,
    as_int,
    best_metrics,
    checkpoints,
    read_metrics,
    runs_root,
)
from studio.core.runs.lock import RunLock, is_locked
from studio.core.tasks.registry import DEFAULT_TASK, TASKS

FOREIGN_STALE_SECONDS = 24 * 3600.0
"""A run of another host not updated for this long is taken to be interrupted."""
Signature = tuple[int, int, int]
"""``run.json``'s modification time (ns), size and inode: it changes whenever it is rewritten."""
NO_RUN_FILE: Signature = (0, 0, 0)


class RunInUseError(RuntimeError):
    """The run is still running in a live process and cannot be deleted."""


class RunNotFoundError(LookupError):
    """No run folder matches what was asked for."""


@dataclass
class RunSummary:
    """What the history shows of one run."""

    id: str
    """The folder name, e.g. ``20261122-101500-demo-cnn``."""
    path: Path
    name: str = ""
    task: str = DEFAULT_TASK
    """What the run learnt (``dataset.task`` of its config); classification for a run of
    before tasks."""
    status: str = "interrupted"
    """Effective status: running, finished, stopped, failed or interrupted."""
    recorded_status: str = ""
    """The status as ``run.json`` says (``running`` for a run whose process died)."""
    started: str = ""
    updated: str = ""
    seconds: float = 0.0
    epochs: int = 0
    epochs_planned: int = 0
    best: dict[str, float] = field(default_factory=dict)
    test: dict[str, float] | None = None
    error: str | None = None
    optimizer: str = ""
    learning_rate: float | None = None
    batch_size: int | None = None
    pid: int | None = None
    host: str = ""

    @property
    def model_path(self) -> Path:
        """Where the run's final model is (it may not exist)."""
        return self.path / MODEL_FILE

    def headline_metric(self) -> str | None:
        """The most telling of its task's summary metrics the run's best scores hold
        (``val_mean_iou``), or None (none, or a task unknown here)."""
        task = TASKS.get(self.task)
        return next(iter(task.summary_names(self.best)), None) if task else None

    def headline(self) -> str:
        """The run's best ``headline_metric`` as its task words it (``val mean IoU 71.2%``),
        or empty."""
        name = self.headline_metric()
        return TASKS[self.task].score_text(name, self.best[name]) if name else ""

    def has_model(self) -> bool:
        """True if the run saved a final model."""
        return self.model_path.is_file()

    def has_checkpoint(self) -> bool:
        """True if the run has a checkpoint to resume from."""
        return bool(checkpoints(self.path))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {**asdict(self), "path": str(self.path)}


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object file, or ``{}`` if missing, unreadable, partial or not an object."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _timestamp(iso: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(iso)).timestamp()
    except ValueError:
        return None


def effective_status(info: dict[str, Any], run_dir: Path, now: float | None = None) -> str:
    """The status to show for the ``run.json`` record of ``run_dir``: "completed" reads as
    "finished"; a run is "running" while a process holds its training lock (see run_lock),
    else a record saying "running", or none yet, is "interrupted" (its process died). A
    lock may not be seen across hosts, so a run of another host stays "running" until it
    has not been updated for a day."""
    status = info.get("status")
    if status == "completed":
        return "finished"
    if status in ("finished", "stopped", "failed", "interrupted"):
        return status
    if is_locked(run_dir):
        return "running"
    host = info.get("host")
    if status == "running" and host and host != socket.gethostname():
        now = time.time() if now is None else now
        updated = _timestamp(info.get("updated")) or _timestamp(info.get("started"))
        stale = updated is None or now - updated > FOREIGN_STALE_SECONDS
        return "interrupted" if stale else "running"
    return "interrupted"


def run_config(path: Path) -> dict[str, Any]:
    """A run's ``config.json``, or for a run without one, the training settings and dataset
    of its project snapshot."""
    config = _read_json(Path(path) / CONFIG_FILE)
    if config:
        return config
    snapshot = _read_json(Path(path) / PROJECT_FILE)
    return {key: snapshot[key] for key in ("training", "dataset") if key in snapshot}


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).isoformat(timespec="seconds")


def read_run(path: Path) -> RunSummary:
    """The summary of one run folder; a run without ``run.json`` (starting, or killed
    before writing it) or with a damaged one (interrupted) still appears, its times from the
    folder, its epochs and best metrics from ``metrics.csv``."""
    path = Path(path)
    info = _read_json(path / RUN_FILE)
    if not info:
        damaged = (path / RUN_FILE).exists()
        info = {"status": "interrupted", "error": f"Its {RUN_FILE} is damaged."} if damaged else {}
        try:
            info["updated"] = _iso(path.stat().st_mtime)
        except OSError:
            pass
    config = run_config(path)
    training = config.get("training") if isinstance(config.get("training"), dict) else {}
    dataset = config.get("dataset") if isinstance(config.get("dataset"), dict) else {}
    task = dataset.get("task")
    best = info.get("best")
    epochs = as_int(info.get("epochs"))
    if not isinstance(best, dict) or epochs is None:
        rows = read_metrics(path)
        best = best if isinstance(best, dict) else best_metrics(rows)
        epochs = len(rows) if epochs is None else epochs
    name = info.get("name")
    if not isinstance(name, str):
        name = str(_read_json(path / PROJECT_FILE).get("name", ""))
    test = info.get("test")
    error = info.get("error")
    return RunSummary(
        id=path.name,
        path=path,
        name=name,
        task=task if isinstance(task, str) and task else DEFAULT_TASK,
        status=effective_status(info, path),
        recorded_status=str(info.get("status") or ""),
        started=str(info.get("started") or info.get("updated") or ""),
        updated=str(info.get("updated") or ""),
        seconds=as_float(info.get("seconds")) or 0.0,
        epochs=epochs,
        epochs_planned=as_int(info.get("epochs_planned")) or as_int(training.get("epochs")) or 0,
        best={k: v for k, v in ((k, as_float(v)) for k, v in best.items())
              if v is not None and math.isfinite(v)},
        test=test if isinstance(test, dict) else None,
        error=str(error) if error else None,
        optimizer=str(training.get("optimizer") or ""),
        learning_rate=as_float(training.get("learning_rate")),
        batch_size=as_int(training.get("batch_size")),
        pid=as_int(info.get("pid")),
        host=str(info.get("host") or ""),
    )


def run_signature(path: Path) -> Signature | None:
    """``run.json``'s signature; NO_RUN_FILE for a run folder without one yet (it has its
    project snapshot); None if ``path`` is not a run folder."""
    try:
        stat = os.stat(Path(path) / RUN_FILE)
    except FileNotFoundError:
        return NO_RUN_FILE if (Path(path) / PROJECT_FILE).is_file() else None
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def iter_run_folders(root: Path) -> Iterator[tuple[Path, Signature]]:
    """Each run folder under ``root`` with its signature (folders starting with a dot, such
    as one being deleted, are skipped)."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.startswith(".") or not entry.is_dir():
                continue
        except OSError:
            continue
        signature = run_signature(Path(entry.path))
        if signature is not None:
            yield Path(entry.path), signature


def run_folders(root: Path) -> list[Path]:
    """The run folders under ``root``, by name."""
    return sorted(path for path, _ in iter_run_folders(root))


def latest_seconds_per_epoch(root: Path) -> float | None:
    """Seconds per epoch of the newest run under ``root`` that trained an epoch, or None."""
    for path in reversed(run_folders(root)):
        run = read_run(path)
        if run.epochs > 0 and run.seconds > 0:
            return run.seconds / run.epochs
    return None


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(value, dict):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        flat.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def config_diff(a: Path, b: Path) -> list[tuple[str, Any, Any]]:
    """The settings that differ between two runs' configs (training, dataset, seed,
    versions, devices…) as (key path such as ``training.optimizer``, value in ``a``, value
    in ``b``), sorted by key; a key one run lacks has the value None there."""
    flat_a, flat_b = _flatten(run_config(a)), _flatten(run_config(b))
    return [(key, flat_a.get(key), flat_b.get(key)) for key in sorted(flat_a.keys() | flat_b)
            if flat_a.get(key) != flat_b.get(key)]


def delete_run(path: Path) -> None:
    """Remove a run folder. Refuse (RunInUseError) while a process trains in it, and
    anything that is not a run folder (ValueError). The folder is first renamed to a hidden
    name, so readers never see half a run, holding its training lock so that no training
    starts in it meanwhile."""
    path = Path(path)
    if run_signature(path) is None:
        raise ValueError(f"{path} is not a run folder.")
    summary = read_run(path)
    lock = RunLock(path)
    if summary.status == "running" or not lock.acquire():
        raise RunInUseError(f"{path.name} is still running (process {summary.pid}); stop it "
                            "before deleting it.")
    doomed = path.with_name(f".deleting-{path.name}")
    with lock:  # no training starts in it until it has left its place
        if os.name == "nt":
            lock.release()  # Windows cannot rename a folder holding an open file
        shutil.rmtree(doomed, ignore_errors=True)
        os.replace(path, doomed)
    shutil.rmtree(doomed)


def find_run(root_or_project: Path, run: str | Path) -> Path:
    """The run folder ``run`` names: a path to it, its id, or the start of a single id, under
    a runs root or the runs root of a project file."""
    if run_signature(Path(run)) is not None:
        return Path(run)
    where = Path(root_or_project)
    # A project is a (.json) file; anything else is a runs root, even one not made yet.
    is_project = where.is_file() or (where.suffix == ".json" and not where.is_dir())
    root = runs_root(where) if is_project else where
    if run_signature(root / str(run)) is not None:
        return root / str(run)
    matches = [p for p in run_folders(root) if p.name.startswith(str(run))]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(p.name for p in matches[:5])
        raise RunNotFoundError(f"{run!s} matches {len(matches)} runs ({names}); give more of "
                               "its id.")
    raise RunNotFoundError(f"There is no run {run!s} in {root}.")


def format_started(iso: str) -> str:
    """An ISO time as ``2026-11-22 10:15``."""
    return iso.replace("T", " ")[:16]


def runs_table(found: list[RunSummary]) -> str:
    """Runs as a plain-text table: id, status, start, duration, epochs, the best score its
    task values most (``headline``) and the best validation loss."""
    rows = [("RUN", "STATUS", "STARTED", "DURATION", "EPOCHS", "BEST SCORE", "VAL LOSS")]
    rows += [(run.id, run.status, format_started(run.started), format_duration(run.seconds),
              f"{run.epochs}/{run.epochs_planned or run.epochs}", run.headline() or "-",
              f"{run.best['val_loss']:.4f}" if "val_loss" in run.best else "-")
             for run in found]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                     .rstrip() for row in rows)
