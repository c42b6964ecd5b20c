"""Run folders: each training run keeps its project snapshot, config, metrics, checkpoints,
model, preprocessing and TensorBoard logs, written as the run goes so a crash keeps what was
done."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import socket
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from studio.core.base.files import atomic_path, atomic_write_text
from studio.core.base.paths import workspace
from studio.core.project.document import (
    MAXIMISED,
    SUFFIX,
    Project,
    load_project,
    project_stem,
    save_project,
)
from studio.core.runs.keras_saving import save_model
from studio.core.runs.lock import RunLock
from studio.core.tasks.registry import TASKS

PROJECT_FILE = "project.studio.json"
CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.csv"
MODEL_FILE = "model.keras"
PREPROCESSING_FILE = "preprocessing.json"
RUN_FILE = "run.json"
FINGERPRINT_FILE = "dataset_fingerprint.json"
"""An image-folder dataset's image ids per class, as training found it."""
FINGERPRINT_VERSION = 1
CHECKPOINTS = "checkpoints"
LOGS = "logs"
UNSAVED = "unsaved"
"""The workspace's folder of unsaved projects' scratch folders."""
STATUSES = ("running", "finished", "stopped", "failed", "interrupted")
BEST = {name: max if name in MAXIMISED or f"val_{name}" in MAXIMISED else min
        for task in TASKS.values() for name in ("val_loss", "loss", *task.search_metrics)}
"""Metrics whose best value a run records (every task's summary metrics and their training
forms), and which way is better."""


class CheckpointWriteError(OSError):
    """A checkpoint or the model could not be written; earlier checkpoints are intact."""


def runs_root(project_path: str | Path | None) -> Path:
    """The ``runs`` folder next to a saved project, or in the workspace for an unsaved one."""
    if project_path is None:
        return workspace() / "runs"
    path = Path(project_path)
    return path.parent / "runs" / project_stem(path)


def scratch_project() -> Path:
    """Where a new unsaved project is said to live: a project file (never written) in a
    scratch folder of its own in the workspace, ``unsaved/<id>/untitled.studio.json``. Its
    runs and searches are kept beside it, as a saved project's are beside its file, so two
    unsaved projects never see each other's runs; saving moves them (see
    ``studio.core.search.moving``)."""
    return workspace() / UNSAVED / uuid.uuid4().hex[:12] / f"untitled{SUFFIX}"


def runs_home(run_dir: Path) -> Path:
    """The folder that moves with ``run_dir``: the one holding the ``runs`` folder it lies in
    (a saved project's folder or the workspace, see runs_root), else the run's parent."""
    run_dir = Path(os.path.abspath(run_dir))
    for folder in (run_dir.parent, run_dir.parent.parent):
        if folder.name == "runs":
            return folder.parent
    return run_dir.parent


def checkpoint_name(epoch: int) -> str:
    """The file name of the checkpoint taken after ``epoch`` (counted from 1)."""
    return f"epoch-{epoch:04d}.keras"


def checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    """A run's complete checkpoints as (epoch, path), oldest first."""
    found = []
    for path in (Path(run_dir) / CHECKPOINTS).glob("epoch-*.keras"):
        try:
            found.append((int(path.stem.split("-")[1]), path))
        except ValueError:
            continue
    return sorted(found)


def answer_choices(run_dir: Path) -> list[tuple[str, Path]]:
    """What in a run can answer (or be started from): its final model, then its
    checkpoints, newest first."""
    run_dir = Path(run_dir)
    choices = []
    if (run_dir / MODEL_FILE).is_file():
        choices.append(("Final model", run_dir / MODEL_FILE))
    for epoch, path in reversed(checkpoints(run_dir)):
        choices.append((f"Checkpoint, epoch {epoch}", path))
    return choices


def as_float(value: Any) -> float | None:
    """``value`` as a float, or None if it is not a number."""
    try:
        return float(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def as_int(value: Any) -> int | None:
    """``value`` as a whole number, or None if it is not a finite number."""
    number = as_float(value)
    return int(number) if number is not None and math.isfinite(number) else None


def read_metrics(run_dir: Path) -> list[dict[str, float]]:
    """A run's metrics per epoch from ``metrics.csv`` (empty if it has none yet); cells that
    are not numbers (a damaged file) are left out, and a row without an epoch gets its
    position."""
    try:
        text = (Path(run_dir) / METRICS_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    rows: list[dict[str, float]] = []
    try:
        for record in csv.DictReader(io.StringIO(text)):
            values = {}
            for key, cell in record.items():
                number = as_float(cell) if isinstance(key, str) else None
                if number is not None:
                    values[key] = number
            values["epoch"] = as_int(values.get("epoch")) or len(rows) + 1
            rows.append(values)
    except csv.Error:
        pass
    return rows


def read_fingerprint(run_dir: Path) -> dict[str, list[str]] | None:
    """The image ids per class of the image folder a run trained on, or None for a run
    that recorded none (older runs, other kinds of data) or whose record is damaged."""
    try:
        data = json.loads((Path(run_dir) / FINGERPRINT_FILE).read_text(encoding="utf-8"))
        classes = data["classes"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(classes, dict) or not all(
            isinstance(ids, list) and all(isinstance(i, str) for i in ids)
            for ids in classes.values()):
        return None
    return classes


def best_metrics(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The best value of each recorded metric over ``rows``."""
    return {name: better(r[name] for r in rows) for name, better in BEST.items()
            if any(name in r for r in rows) and all(name in r for r in rows)}


class RunFolder:
    """One run's folder: a new one (``create``) or one resumed (``reopen``)."""

    def __init__(self, path: Path, name: str, rows: list[dict[str, Any]] | None = None) -> None:
        self.path = path
        self.name = name
        self.started = time.time()
        self.first_started = self.started
        """When the run's first session began."""
        self.seconds_before = 0.0
        """Time spent in earlier sessions of a resumed run."""
        self.epochs_planned = 0
        self._rows: list[dict[str, Any]] = rows or []
        self.test_metrics: dict[str, float] | None = None
        """Scores on the held-out test split, once evaluated."""
        self.lock = RunLock(path)
        """Held while this process trains in the folder."""

    @classmethod
    def create(cls, root: Path, project: Project) -> RunFolder:
        """A new, empty run folder under ``root`` named after the time and the project, its
        training lock held (``lock``; release it when training ends)."""
        slug = "".join(c if c.isalnum() else "-" for c in project.name.lower())
        slug = slug.strip("-")[:40] or "run"
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        root.mkdir(parents=True, exist_ok=True)
        path = root / f"{stamp}-{slug}"
        suffix = 1
        while True:
            try:
                path.mkdir()
                break
            except FileExistsError:
                suffix += 1
                path = root / f"{stamp}-{slug}-{suffix}"
        folder = cls(path, project.name)
        folder.lock.acquire()
        return folder

    @classmethod
    def reopen(cls, path: Path, epoch: int) -> tuple[RunFolder, Project]:
        """An existing run to continue after ``epoch``: metrics of later epochs are dropped."""
        project = load_project(Path(path) / PROJECT_FILE)
        rows = [r for r in read_metrics(path) if r["epoch"] <= epoch]
        folder = cls(Path(path), project.name, rows)
        info = folder.info()
        folder.seconds_before = float(info.get("seconds", 0.0))
        try:
            folder.first_started = datetime.fromisoformat(info["started"]).timestamp()
        except (KeyError, TypeError, ValueError):
            pass
        return folder, project

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Metrics of the epochs done so far."""
        return list(self._rows)

    def info(self) -> dict[str, Any]:
        """The run's ``run.json`` (empty if missing or unreadable)."""
        try:
            return json.loads((self.path / RUN_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def write_start(self, project: Project) -> None:
        """Record the project as trained; paths of data in the project's folder are stored
        relative to the run, so a project folder moved with its data and runs still works."""
        save_project(project, self.path / PROJECT_FILE, runs_home(self.path))
        self.write_status("running")

    def write_config(self, config: dict[str, Any]) -> None:
        """Record the full config: settings, seed, dataset fingerprint, devices, versions."""
        atomic_write_text(self.path / CONFIG_FILE, json.dumps(config, indent=2))

    def write_fingerprint(self, root: Path, classes: dict[str, list[str]]) -> None:
        """Record the image ids per class of the image folder ``root`` the run trains on."""
        atomic_write_text(self.path / FINGERPRINT_FILE, json.dumps(
            {"version": FINGERPRINT_VERSION, "root": str(root), "classes": classes}))

    def write_preprocessing(self, preprocessing: dict[str, Any]) -> None:
        """Record the preprocessing the model's inputs need, for inference later."""
        atomic_write_text(self.path / PREPROCESSING_FILE, json.dumps(preprocessing, indent=2))

    def add_epoch(self, row: dict[str, Any]) -> None:
        """Append one epoch's metrics, rewrite ``metrics.csv`` and update ``run.json``."""
        self._rows.append(row)
        columns = list(dict.fromkeys(k for r in self._rows for k in r))
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self._rows)
        atomic_write_text(self.path / METRICS_FILE, buffer.getvalue())
        self.write_status("running")

    def save_checkpoint(self, model: Any, epoch: int, replace: bool) -> Path:
        """Save the model with its optimizer state after ``epoch``, atomically; with
        ``replace`` the earlier checkpoints are removed once it is written.

        Raise CheckpointWriteError (keeping every earlier checkpoint) if it cannot be written.
        """
        path = self.path / CHECKPOINTS / checkpoint_name(epoch)
        earlier = checkpoints(self.path)
        self._save_model(model, path)
        if replace:
            for _, old in earlier:
                if old != path:
                    old.unlink(missing_ok=True)
        return path

    def save_model(self, model: Any) -> None:
        """Save the trained Keras model as ``model.keras``, atomically."""
        self._save_model(model, self.path / MODEL_FILE)

    @staticmethod
    def _save_model(model: Any, path: Path) -> None:
        try:
            with atomic_path(path) as partial:
                save_model(model, partial)
        except OSError as exc:
            raise CheckpointWriteError(exc.errno, exc.strerror or str(exc),
                                       str(exc.filename or path)) from exc

    def write_status(self, status: str, error: str | None = None) -> None:
        """Record the run's state (running, finished, stopped or failed), its progress and best
        metrics, and the process that runs it (so a killed run shows as interrupted)."""
        info = {
            "status": status,
            "name": self.name,
            "started": datetime.fromtimestamp(self.first_started).isoformat(timespec="seconds"),
            "updated": datetime.now().isoformat(timespec="seconds"),
            "seconds": round(self.seconds_before + time.time() - self.started, 3),
            "epochs": len(self._rows),
            "epochs_planned": self.epochs_planned,
            "error": error,
            "test": self.test_metrics,
            "best": best_metrics(self._rows),
            "pid": os.getpid(),
            "host": socket.gethostname(),
        }
        atomic_write_text(self.path / RUN_FILE, json.dumps(info, indent=2))
