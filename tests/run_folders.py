"""Synthetic run folders, written as the trainer writes them, for the history's tests and its
benchmark (no training needed)."""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from datetime import datetime, timedelta
from pathlib import Path

from studio.core.project.document import DatasetChoice, Project, TrainingSettings
from studio.core.runs import folders as runs
from studio.core.tasks.registry import DEFAULT_TASK

FIRST_START = datetime(2026, 1, 5, 9, 0)
VERSIONS = {"layer_studio": "0.1.0", "tensorflow": "2.21.0", "keras": "3.15.0",
            "numpy": "2.1.3", "python": "3.12.3"}


def curves(index: int, epochs: int) -> list[dict[str, float]]:
    """Plausible metrics per epoch, a little different for each ``index``."""
    rate = 0.15 + 0.01 * (index % 17)
    rows = []
    for epoch in range(1, epochs + 1):
        loss = 2.3 * math.exp(-rate * epoch) + 0.05
        rows.append({"epoch": epoch, "loss": round(loss, 4),
                     "accuracy": round(1 - loss / 2.6, 4),
                     "val_loss": round(loss * 1.1 + 0.02, 4),
                     "val_accuracy": round(1 - loss / 2.4 - 0.01, 4),
                     "learning_rate": 0.001, "seconds": 1.5})
    return rows


def write_run(root: Path, index: int = 0, *, status: str = "finished", epochs: int = 20,
              epochs_planned: int | None = None, optimizer: str = "adam",
              learning_rate: float = 0.001, batch_size: int = 64, name: str = "Demo CNN",
              started: datetime | None = None, pid: int | None = None,
              host: str | None = None, model: bool = False, checkpoint: bool = False,
              run_id: str | None = None, task: str = DEFAULT_TASK,
              best: dict[str, float] | None = None) -> Path:
    """One run folder under ``root``: project snapshot, config, metrics and run record (of a
    ``task`` run whose record gives ``best`` as its best scores, if given)."""
    started = started or FIRST_START + timedelta(minutes=7 * index)
    run_id = run_id or f"{started:%Y%m%d-%H%M%S}-{index:04d}-demo-cnn"
    path = Path(root) / run_id
    path.mkdir(parents=True)
    training = TrainingSettings(optimizer=optimizer, learning_rate=learning_rate,
                                batch_size=batch_size, epochs=epochs_planned or epochs)
    project = Project(name=name, training=training, dataset=DatasetChoice(task=task))
    (path / runs.PROJECT_FILE).write_text(json.dumps(project.to_dict()), encoding="utf-8")
    config = {"training": asdict(training), "dataset": asdict(project.dataset),
              "seed": training.seed, "dataset_fingerprint": "sha256:synthetic",
              "versions": VERSIONS,
              "devices": ["/device:CPU:0"], "replicas": 1, "host": socket.gethostname()}
    (path / runs.CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")
    rows = curves(index, epochs)
    if rows:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        (path / runs.METRICS_FILE).write_text(buffer.getvalue(), encoding="utf-8")
    seconds = 1.5 * epochs
    info = {"status": status, "name": name,
            "started": started.isoformat(timespec="seconds"),
            "updated": (started + timedelta(seconds=seconds)).isoformat(timespec="seconds"),
            "seconds": seconds, "epochs": epochs, "epochs_planned": epochs_planned or epochs,
            "error": "The loss became NaN." if status == "failed" else None, "test": None,
            "best": runs.best_metrics(rows) if best is None else best,
            "pid": os.getpid() if pid is None else pid,
            "host": socket.gethostname() if host is None else host}
    (path / runs.RUN_FILE).write_text(json.dumps(info, indent=2), encoding="utf-8")
    if model:
        (path / runs.MODEL_FILE).write_bytes(b"not really a model")
    if checkpoint:
        (path / runs.CHECKPOINTS).mkdir()
        (path / runs.CHECKPOINTS / runs.checkpoint_name(max(epochs, 1))).write_bytes(b"ckpt")
    return path


def write_runs(root: Path, count: int, epochs: int = 20) -> list[Path]:
    """``count`` finished runs with varied optimizers, learning rates and batch sizes."""
    optimizers = ("adam", "sgd", "adamw", "rmsprop")
    return [write_run(root, i, epochs=epochs, optimizer=optimizers[i % 4],
                      learning_rate=(0.001, 0.01, 0.0003)[i % 3],
                      batch_size=(32, 64, 128)[i % 3], model=i % 2 == 0)
            for i in range(count)]


def rewrite_record(path: Path, **changes) -> None:
    """Change fields of a run's ``run.json`` as the trainer would (a new file each time)."""
    info = json.loads((path / runs.RUN_FILE).read_text(encoding="utf-8"))
    info.update(changes)
    temp = path / ".run.json.tmp"
    temp.write_text(json.dumps(info, indent=2), encoding="utf-8")
    os.replace(temp, path / runs.RUN_FILE)


def now_iso(delta_seconds: float = 0) -> str:
    """The local time now (plus ``delta_seconds``) as run records write it."""
    return (datetime.now() + timedelta(seconds=delta_seconds)).isoformat(timespec="seconds")


def dead_pid() -> int:
    """The pid of a process that has run and exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@contextmanager
def training_process(run_dir: Path) -> Iterator[subprocess.Popen]:
    """A process holding ``run_dir``'s training lock, as a trainer does, until the block ends
    or it is killed."""
    code = ("import sys; from studio.core.runs.lock import RunLock; "
            "lock = RunLock(sys.argv[1]); assert lock.acquire(); "
            "print('locked', flush=True); sys.stdin.read()")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    child = subprocess.Popen([sys.executable, "-c", code, str(run_dir)], env=env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == "locked\n"
        yield child
    finally:
        child.stdin.close()
        child.stdout.close()
        child.wait()


def rename_failing_at(call: int) -> Callable[[str, str], None]:
    """``os.rename`` failing with an I/O error at its ``call``-th use (a disk failing part-way
    through moving run folders)."""
    real, calls = os.rename, []

    def rename(source, target) -> None:
        calls.append(source)
        if len(calls) == call:
            raise OSError(errno.EIO, "Input/output error")
        real(source, target)

    return rename
