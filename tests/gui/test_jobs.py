"""Job slots: a new job replaces the running one, or waits and runs once it has ended; closing
stops every slot under a window in one call. Jobs are held at a gate, never raced."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QObject

from studio.gui.shell.app import create_application
from studio.gui.widgets.jobs import JobSlot, Policy, shutdown_jobs
from tests.gate import HOLD_SECONDS


class Record:
    """What a slot delivered, in order: ``("event", x)``, ``("succeeded", x)``,
    ``("failed", text)``, ``("started",)`` and ``("finished",)``."""

    def __init__(self, slot: JobSlot) -> None:
        self.seen: list[tuple] = []
        slot.event.connect(lambda event: self.seen.append(("event", event)))
        slot.succeeded.connect(lambda result: self.seen.append(("succeeded", result)))
        slot.failed.connect(lambda text: self.seen.append(("failed", text)))
        slot.started.connect(lambda: self.seen.append(("started",)))
        slot.finished.connect(lambda: self.seen.append(("finished",)))


def held(gate, name: str, stops: list[str] | None = None):
    """A task that reports ``name``, waits at ``gate``, notes in ``stops`` whether it was
    asked to stop, and returns ``name``."""
    def task(on_event, stop):
        on_event(name)
        gate.hold()
        if stops is not None and stop.is_set():
            stops.append(name)
        return name

    return task


def answer(name: str):
    return lambda on_event, stop: name


@pytest.fixture
def owner(qtbot):
    create_application()
    owner = QObject()
    yield owner
    shutdown_jobs(owner)


def test_a_new_job_replaces_the_running_one_whose_late_signals_are_dropped(qtbot, owner, gate):
    slot = JobSlot(owner, Policy.REPLACE)
    record, stops = Record(slot), []
    slot.start(held(gate, "first", stops))
    qtbot.waitUntil(gate.reached.is_set)
    slot.start(answer("second"))
    with qtbot.waitSignal(slot.finished):
        pass
    assert not slot.busy()
    gate.open()
    shutdown_jobs(owner)  # waits for the first job's thread
    QCoreApplication.sendPostedEvents()  # whatever the first job still had queued
    assert stops == ["first"]  # it was asked to stop
    assert ("succeeded", "first") not in record.seen
    assert record.seen[-2:] == [("succeeded", "second"), ("finished",)]


def test_a_job_asked_for_while_one_runs_waits_and_only_the_latest_runs(qtbot, owner, gate):
    slot = JobSlot(owner, Policy.RERUN)
    record = Record(slot)
    slot.start(held(gate, "first"))
    qtbot.waitUntil(gate.reached.is_set)
    slot.start(answer("second"))
    slot.start(answer("third"))
    assert slot.busy() and slot.waiting()
    QCoreApplication.sendPostedEvents()  # nothing starts while the first job is held
    assert record.seen == [("started",), ("event", "first")]
    gate.open()
    qtbot.waitUntil(lambda: record.seen.count(("finished",)) == 2)
    assert record.seen == [("started",), ("event", "first"), ("succeeded", "first"),
                           ("finished",), ("started",), ("succeeded", "third"), ("finished",)]
    assert not slot.busy() and not slot.waiting()


def test_a_slot_is_busy_until_the_last_signal_is_delivered(qtbot, owner, started_workers):
    slot = JobSlot(owner)
    record = Record(slot)
    slot.start(answer("done"))
    (worker,) = started_workers
    worker.wait()  # the thread has ended; its signals wait for this thread's event loop
    assert slot.busy() and record.seen == [("started",)]
    qtbot.waitUntil(lambda: not slot.busy())
    assert record.seen == [("started",), ("succeeded", "done"), ("finished",)]


def test_cancel_drops_the_running_and_the_waiting_job(qtbot, owner, gate):
    slot = JobSlot(owner, Policy.RERUN)
    record = Record(slot)
    slot.start(held(gate, "first"))
    slot.start(answer("second"))
    slot.cancel()
    assert not slot.busy() and not slot.waiting()
    gate.open()
    shutdown_jobs(owner)
    QCoreApplication.sendPostedEvents()
    assert record.seen == [("started",)]


def until_stopped(reached: threading.Event):
    """A task that says it runs through ``reached`` and ends only when asked to stop."""
    def task(on_event, stop):
        reached.set()
        if not stop.wait(HOLD_SECONDS):
            raise TimeoutError("never asked to stop")
        return "stopped"

    return task


def test_shutting_down_stops_every_slot_under_the_owner_and_waits(
    qtbot, owner, started_workers
):
    child = QObject(owner)
    slots = [JobSlot(owner), JobSlot(child, Policy.RERUN)]
    records = [Record(slot) for slot in slots]
    running = [threading.Event(), threading.Event()]
    for slot, reached in zip(slots, running, strict=True):
        slot.start(until_stopped(reached))
    slots[1].start(answer("waiting"))
    qtbot.waitUntil(lambda: all(reached.is_set() for reached in running))
    shutdown_jobs(owner)
    assert len(started_workers) == 2
    assert not any(worker.is_running() for worker in started_workers)
    QCoreApplication.sendPostedEvents()
    for slot, record in zip(slots, records, strict=True):
        assert not slot.busy() and not slot.waiting()
        assert record.seen == [("started",)]
    slots[0].start(answer("too late"))  # nothing starts once the window has closed
    assert not slots[0].busy() and len(started_workers) == 2



def test_closing_the_window_finds_every_slot_its_panels_made(qtbot, monkeypatch, dialogs):
    from studio.core.project.templates import demo_project
    from studio.gui.shell.main_window import MainWindow
    from studio.gui.widgets.deferred import build_all

    made: list[JobSlot] = []
    real_init = JobSlot.__init__

    def recording_init(slot, *args, **kwargs):
        real_init(slot, *args, **kwargs)
        made.append(slot)

    monkeypatch.setattr(JobSlot, "__init__", recording_init)
    create_application()
    window = MainWindow(demo_project())
    qtbot.addWidget(window)
    build_all(window)  # the tabs and docks built when first shown, and their slots
    found = window.findChildren(JobSlot)
    assert len(made) > 10 and all(any(slot is other for other in found) for slot in made)


def test_a_slot_deleted_with_its_owner_while_its_job_runs_lets_the_job_end(qtbot, gate):
    create_application()
    owner = QObject()
    slot = JobSlot(owner)
    slot.start(held(gate, "orphaned"))
    worker = slot._current
    qtbot.waitUntil(gate.reached.is_set)
    owner.deleteLater()  # a view rebuilt while its job runs
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gate.open()
    qtbot.waitUntil(lambda: not worker.is_running())  # its end heard, no error raised
