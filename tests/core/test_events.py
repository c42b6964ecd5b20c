"""The event vocabulary (studio.core.base.events) is honest: every event the trainer emits and
every message a search worker sends is one of the declared TypedDicts, with its keys."""

from __future__ import annotations

import json
import threading
import typing
from pathlib import Path

import pytest

from studio.core.base import events
from studio.core.data.sources import choice_for_path
from studio.core.project.document import Checkpoints
from studio.core.search.worker import run_trial
from studio.core.training.trainer import train
from tests.helpers import digit_folder, tiny_project


def declared(union: typing.Any) -> dict[str, type]:
    """The TypedDicts of ``union``, by the ``type`` each declares."""
    kinds = {}
    for cls in typing.get_args(union):
        (name,) = typing.get_args(typing.get_type_hints(cls)["type"])
        assert name not in kinds, f"two {union} members declare type {name!r}"
        kinds[name] = cls
    return kinds


def undeclared(message: dict, union: typing.Any, open_types: frozenset[str]) -> str:
    """What is wrong with ``message`` as a member of ``union`` ("" if nothing): an unknown
    type, a declared key missing, or (unless its type is in ``open_types``) a key it does not
    declare."""
    kinds = declared(union)
    cls = kinds.get(message.get("type"))
    if cls is None:
        return f"type {message.get('type')!r} is none of {sorted(kinds)}"
    missing = cls.__required_keys__ - message.keys()
    extra = set() if message["type"] in open_types else (
        message.keys() - cls.__required_keys__ - cls.__optional_keys__)
    return f"{cls.__name__} lacks {sorted(missing)}, has {sorted(extra)}" if missing or extra \
        else ""


def folder_project(tmp_path: Path):
    """A tiny project on an image folder (read with progress), with a test split and a
    checkpoint each epoch, so a run emits every kind of training event."""
    project = tiny_project(epochs=2, units=2)
    project.dataset = choice_for_path(digit_folder(tmp_path / "digits"), project.dataset,
                                      (28, 28, 1))
    project.dataset.test_split = 0.2
    project.training.batch_size = 4
    project.training.checkpoints = Checkpoints(every_epochs=1)
    return project


def test_every_event_of_a_training_run_is_declared(tmp_path):
    emitted = []
    result = train(folder_project(tmp_path), tmp_path / "runs", emitted.append, report_every=1)
    assert result.status == "finished"
    assert {"progress", "start", "batch", "epoch", "checkpoint", "test"} <= {
        e["type"] for e in emitted}
    wrong = [(e["type"], problem) for e in emitted
             if (problem := undeclared(e, events.Event, events.WITH_METRICS))]
    assert wrong == []
    json.dumps(emitted)  # the CLI prints them as JSON lines


def test_every_message_of_a_search_worker_is_declared(tmp_path):
    """A trial's messages, as ``run_trial`` sends and returns them (the pool adds the worker's
    index, pid and threads, which ``_FromWorker`` declares)."""
    sent = []
    task = {"number": 3, "project": folder_project(tmp_path).to_dict(),
            "runs_root": str(tmp_path / "runs"), "report_every": 1}
    end = run_trial(task, sent.append, threading.Event())
    messages = [*sent, end]
    assert [m["type"] for m in messages] == ["begin", "start", "epoch", "epoch", "end"]
    assert end["status"] == "finished"
    pooled = [{"number": 3, "worker": 0, "pid": 1, "threads": 1, **m} for m in messages]
    wrong = [(m["type"], problem) for m in [*messages, *pooled]
             if (problem := undeclared(m, events.WorkerMessage, frozenset()))]
    assert wrong == []


def test_a_stopped_trial_still_answers_in_the_vocabulary():
    stop = threading.Event()
    stop.set()
    sent = []
    end = run_trial({"number": 0}, sent.append, stop)
    assert [m["type"] for m in [*sent, end]] == ["begin", "end"]
    assert not [m for m in [*sent, end] if undeclared(m, events.WorkerMessage, frozenset())]


@pytest.mark.parametrize("message", [
    {"type": "epoch", "epoch": 1},  # a training epoch lacks its learning rate and seconds
    {"type": "trial_begin", "number": 0},  # no such event
    {"type": "note", "text": "hi", "colour": "red"},  # a key a note does not declare
])
def test_the_check_tells_an_undeclared_event(message):
    assert undeclared(message, events.Event, events.WITH_METRICS)


def test_progress_events_report_each_call():
    seen = []
    events.progress_events(seen.append)("Reading images", 3, 10)
    assert seen == [{"type": "progress", "what": "Reading images", "done": 3, "total": 10}]
