"""The background worker: a job runs until its last signal has been delivered on the thread
that made it, not merely until its thread ends."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QCoreApplication

from studio.gui.shell.app import create_application
from studio.gui.widgets.worker import Worker


def ended_but_undelivered(task) -> tuple[Worker, list[str]]:
    """A worker running ``task`` whose thread has ended while the GUI thread was held, so its
    signals are still queued; and the list its signals are recorded in, in order."""
    create_application()
    received: list[str] = []
    worker = Worker(task)
    worker.succeeded.connect(lambda result: received.append(f"succeeded {result}"))
    worker.failed.connect(lambda message: received.append(f"failed {message}"))
    worker.done.connect(lambda: received.append("done"))
    worker.start()
    worker.wait()  # the GUI thread runs no event loop meanwhile: nothing is delivered
    return worker, received


def failing(on_event, stop):
    raise OSError("the data is gone")


@pytest.mark.parametrize("task, last", [(lambda on_event, stop: 42, "succeeded 42"),
                                        (failing, "failed the data is gone")])
def test_a_job_runs_until_its_last_signal_is_delivered(qtbot, task, last):
    worker, received = ended_but_undelivered(task)
    assert not received and worker.is_running()
    qtbot.waitUntil(lambda: not worker.is_running())
    assert received == [last, "done"]


def test_a_worker_runs_from_start(qtbot):
    create_application()
    release = threading.Event()
    worker = Worker(lambda on_event, stop: release.wait())
    assert not worker.is_running()
    worker.start()
    assert worker.is_running()
    release.set()
    with qtbot.waitSignal(worker.done):
        pass
    assert not worker.is_running()


def test_a_discarded_worker_runs_until_its_thread_ends(qtbot):
    returned = threading.Event()
    worker, received = ended_but_undelivered(lambda on_event, stop: returned.set())
    assert returned.is_set() and worker.is_running()
    worker.discard()
    assert not worker.is_running()
    QCoreApplication.sendPostedEvents()  # the queued signals, delivered to nobody
    assert received == [] and not worker.is_running()


def test_a_discarded_worker_relays_nothing_and_is_asked_to_stop(qtbot, gate):
    create_application()
    received = []
    worker = Worker(lambda on_event, stop: (on_event({"at": "start"}), gate.hold(),
                                            on_event({"stopped": stop.is_set()}), 42))
    for signal in (worker.event, worker.succeeded, worker.failed, worker.done):
        signal.connect(lambda *args, signal=signal: received.append((signal, args)))
    worker.start()
    qtbot.waitUntil(lambda: bool(received))  # the first event arrived: it is held at the gate
    worker.discard()
    assert worker.stop_requested() and worker.is_running()
    gate.open()
    worker.wait()
    QCoreApplication.sendPostedEvents()
    assert len(received) == 1 and not worker.is_running()
