"""Trial worker processes: started once (spawn, never fork, as TensorFlow is threaded), each
imports TensorFlow once and then trains trial after trial, so a trial costs its training, not
a TensorFlow start.

The parent sends a worker tasks on its own queue (plain dicts, or None to quit) and stops the
running trial with the worker's ``multiprocessing.Event``. Each worker answers on a pipe of its
own, never on a channel shared with the others: a worker killed in the middle of a message (by
the out-of-memory killer, say) would leave a shared queue's lock held, or a message half
written, and silence every other worker for good. Messages are plain dicts (``WorkerMessage``
in ``studio.core.base.events``) carrying ``type``, ``worker`` (its index), ``pid`` and
``threads`` (its TensorFlow's threads):

- ``begin`` (``number``): the worker picked the trial up;
- ``start`` (``number``, ``run_dir``): the trial's run folder exists and training starts;
- ``epoch`` (``number``, ``epoch``, ``metrics``): an epoch ended;
- ``end`` (``number``, ``status`` finished|stopped|failed, ``reason``, ``run_dir``,
  ``epochs`` and, for a search of several objectives, ``measures``: see ``measure``).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.events import Event, WorkerEnd, WorkerMessage
from studio.core.base.messages import first_line
from studio.core.base.runtime import THREADS_ENV, start_tensorflow
from studio.core.build.analysis import analyze
from studio.core.data.sources import describe
from studio.core.data.types import DataError
from studio.core.inference.predictor import Predictor
from studio.core.inference.timing import answered_one_by_one
from studio.core.project.document import Project
from studio.core.training.trainer import TrainingError, train

TRIAL_NAME = "{name} · trial {number}"
"""How a trial's run is named in the run history."""


def worker_threads(size: int) -> int:
    """TensorFlow threads for each of ``size`` workers: an equal share of the cores."""
    return max(1, (os.cpu_count() or 1) // max(1, size))


def worker_main(index: int, tasks: Any, results: Any, stop: Any, ready: Any,
                threads: int) -> None:
    """A worker process's life: start TensorFlow with ``threads`` threads and load the
    trainer (then set ``ready``), then run each task until it receives None. Ctrl+C is left to
    the parent, which stops trials cleanly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ[THREADS_ENV] = str(threads)

    start_tensorflow()
    import tensorflow as tf

    ready.set()
    base = {"worker": index, "pid": os.getpid(),
            "threads": tf.config.threading.get_intra_op_parallelism_threads()}
    while (task := tasks.get()) is not None:
        def send(message: WorkerMessage, number: int = task["number"]) -> None:
            results.send({**base, "number": number, **message})

        send(run_trial(task, send, stop))
        _release_memory()
    results.close()
    os._exit(0)  # nothing left to save: skip TensorFlow's teardown, which takes a second


LATENCY_SAMPLES = 6
"""How many single inputs a trial's model answers to measure its latency (the first, which
traces the model, is not counted)."""


def measure(run_dir: Path, objectives: list[str]) -> dict[str, float]:
    """The ``objectives`` of the final model of the run in ``run_dir``: ``latency``, its
    median milliseconds per sample answered alone (timed as the export's verification times
    it, on inputs of zeros: the time does not depend on the values), ``params``, its parameter
    count, and ``size``, its saved file's bytes."""
    predictor = Predictor.load(run_dir)
    measures: dict[str, float] = {}
    if "latency" in objectives:
        shape = tuple(predictor.model.inputs[0].shape[1:])
        x = np.zeros((LATENCY_SAMPLES, *shape), predictor.prep.get("input_dtype") or "float32")
        measures["latency"] = answered_one_by_one(predictor.outputs, x)[1]
    if "params" in objectives:
        measures["params"] = float(predictor.model.count_params())
    if "size" in objectives:
        measures["size"] = float(predictor.path.stat().st_size)
    return measures


def run_trial(task: dict[str, Any], send: Callable[[WorkerMessage], None],
              stop: Any) -> WorkerEnd:
    """Train one trial (``task``: ``number``, ``project`` document with the trial's values
    applied, ``runs_root``, ``report_every``) as an ordinary run, telling ``send`` its
    ``begin``, ``start`` and ``epoch`` messages; the ``end`` message, which it returns, with
    the measures of the search's extra objectives once it finished. ``stop`` (any object with
    ``is_set``) ends the trial early."""

    send({"type": "begin"})
    if stop.is_set():  # stopped while queued: no run folder for a trial that never ran
        return {"type": "end", "status": "stopped", "reason": "", "run_dir": "", "epochs": []}
    run_dir = ""

    def forward(event: Event) -> None:
        nonlocal run_dir
        if event["type"] == "start":
            run_dir = event["run_dir"]
            send({"type": "start", "run_dir": run_dir})
        elif event["type"] == "epoch":
            metrics = {k: v for k, v in event.items() if k not in ("type", "epoch")}
            send({"type": "epoch", "epoch": event["epoch"], "metrics": metrics})

    project = Project.from_dict(task["project"])
    project.name = TRIAL_NAME.format(name=project.name, number=task["number"])
    try:
        report = analyze(project.graph, describe(project.dataset))
        if not report.ok:
            return {"type": "end", "status": "failed", "run_dir": "", "epochs": [],
                    "reason": f"These values make a model that cannot be trained: "
                              f"{report.reason}"}
        result = train(project, Path(task["runs_root"]), forward, stop,
                       report_every=task["report_every"])
    except Exception as exc:  # noqa: BLE001 - a failed trial is recorded, the search goes on
        reason = (str(exc) if isinstance(exc, TrainingError | DataError)
                  else f"The trial failed: {first_line(exc)}")
        return {"type": "end", "status": "failed", "reason": reason, "run_dir": run_dir,
                "epochs": []}
    end: WorkerEnd = {"type": "end", "status": result.status, "reason": result.note,
                      "run_dir": str(result.run_dir), "epochs": result.epochs}
    if result.status == "finished" and project.search.objectives:
        try:
            end["measures"] = measure(result.run_dir, project.search.objectives)
        except Exception as exc:  # noqa: BLE001 - as a failed training
            end.update(status="failed", reason=f"The trained model could not be measured: "
                                               f"{first_line(exc)}")
    return end


def _release_memory() -> None:
    """Drop the last trial's models and graphs so a worker's memory stays flat."""
    import keras

    keras.backend.clear_session()  # also collects garbage


@dataclass
class Worker:
    """One worker process as the parent sees it."""

    index: int
    process: Any
    tasks: Any
    stop: Any
    ready: Any
    """Set once TensorFlow and the trainer have loaded."""
    results: multiprocessing.connection.Connection
    """The reading end of the worker's own pipe; closed once the worker has gone."""
    number: int | None = None
    """The trial it is running, if any."""


class WorkerPool:
    """Worker processes that train trials, reusable across searches (a session can keep one
    warm). ``size`` sets each worker's share of the cores; ``ensure`` starts more if needed."""

    def __init__(self, size: int) -> None:
        self.context = multiprocessing.get_context("spawn")
        self.inbox: deque[WorkerMessage] = deque()
        self.size = max(1, size)
        self.workers: list[Worker] = []
        self.ensure(self.size)

    def ensure(self, count: int) -> list[Worker]:
        """The first ``count`` workers, starting any that are missing."""
        self.size = max(self.size, count)
        while len(self.workers) < count:
            self.workers.append(self._start(len(self.workers)))
        return self.workers[:count]

    def _start(self, index: int) -> Worker:
        tasks, stop, ready = self.context.Queue(), self.context.Event(), self.context.Event()
        results, writer = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=worker_main, name=f"studio-trial-worker-{index}", daemon=True,
            args=(index, tasks, writer, stop, ready, worker_threads(self.size)))
        process.start()
        writer.close()  # the worker holds the only writing end: its death reads as end of file
        return Worker(index, process, tasks, stop, ready, results)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until every worker has loaded TensorFlow and the trainer (True), or until
        ``timeout`` seconds have passed (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for worker in self.workers:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not worker.ready.wait(left):
                return False
        return True

    def submit(self, worker: Worker, task: dict[str, Any]) -> None:
        """Give ``worker`` a trial to run."""
        worker.stop.clear()
        worker.number = task["number"]
        worker.tasks.put(task)

    def replace(self, worker: Worker) -> Worker:
        """A fresh process in place of ``worker``, which died."""
        worker.process.join(timeout=1)
        worker.results.close()
        fresh = self._start(worker.index)
        self.workers[worker.index] = fresh
        return fresh

    def message(self, timeout: float) -> WorkerMessage | None:
        """The next message from any worker, or None after ``timeout`` seconds or as soon as
        a worker has ended (so the caller can look at who is still alive)."""
        if not self.inbox:
            pipes = [w.results for w in self.workers if not w.results.closed]
            for pipe in multiprocessing.connection.wait(pipes, timeout):
                self._receive(pipe)
        return self.inbox.popleft() if self.inbox else None

    def _receive(self, pipe: multiprocessing.connection.Connection) -> None:
        """Take every whole message waiting in ``pipe``; close it at its end of file (its
        worker has gone, perhaps in the middle of a message, which is dropped)."""
        try:
            while pipe.poll():
                self.inbox.append(pipe.recv())
        except (EOFError, OSError):
            pipe.close()

    def close(self, timeout: float = 10.0) -> None:
        """Ask every worker to quit (stopping its trial), and end any that do not."""
        for worker in self.workers:
            worker.stop.set()
            if worker.process.is_alive():
                worker.tasks.put(None)
        for worker in self.workers:
            worker.process.join(timeout=timeout)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join(timeout=1)
            worker.results.close()
        self.workers = []
        self.inbox.clear()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
