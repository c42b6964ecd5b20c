"""The events long work reports as it goes, shared by the core, the CLI and the GUI.

Every event is a plain dict (it crosses threads, worker pipes and Ray, and the CLI prints it
as a JSON line) whose ``type`` names one of the TypedDicts below; ``Event`` is their union,
and ``OnEvent`` the one kind of callback that receives them. ``batch``, ``epoch`` and ``test``
events also carry the metrics Keras logs (``loss``, ``val_accuracy``...), and ``batch`` events
the ``gpu<i>_...`` figures of the GPUs that can be read: those keys vary with the model and
the machine, so they are not declared (``WITH_METRICS``).

A search's trial workers answer their parent with ``WorkerMessage``s, dicts tagged by
``type`` too (see ``studio.core.search.worker``).
"""

from collections.abc import Callable
from typing import Any, Literal, NotRequired, TypedDict

Progress = Callable[[str, int, int], None]
"""``on_progress(what, done, total)``: what is being done (for a person), and how far."""


class NoteEvent(TypedDict):
    """Something a person should know, in a sentence: how TensorFlow started, a split
    adjusted, the export step that runs."""

    type: Literal["note"]
    text: str


class ProgressEvent(TypedDict):
    """How far a step of ``total`` parts (loading data, measuring, exporting) has gone;
    ``label`` names the device the GUI's estimate is measuring on, and a learning-rate range
    test's batch carries the point it recorded (its ``learning_rate`` and ``loss``)."""

    type: Literal["progress"]
    what: str
    done: int
    total: int
    label: NotRequired[str]
    learning_rate: NotRequired[float]
    loss: NotRequired[float]


class DownloadEvent(TypedDict):
    """How many of ``total`` bytes of a model's weights (``name``) have arrived."""

    type: Literal["download"]
    name: str
    done: int
    total: int


class StartEvent(TypedDict):
    """A training session starts: its run folder, its task (which words its scores), the
    plan, the model's size, the devices and the epochs recorded so far (``history``, JSON
    rows: a resumed run has some)."""

    type: Literal["start"]
    run_dir: str
    task: str
    epochs: int
    initial_epoch: int
    steps: int
    samples: int
    params: int
    devices: str
    replicas: int
    history: str


class BatchEvent(TypedDict):
    """Training went ``step`` batches into epoch ``epoch`` (1-based): the share of the run
    done, its speed, the time left, the learning rate and the resources in use, with the
    metrics so far (``WITH_METRICS``)."""

    type: Literal["batch"]
    epoch: int
    step: int
    steps: int
    progress: float
    samples_per_sec: float
    eta_sec: float
    learning_rate: float
    cpu_percent: float
    system_cpu_percent: float
    memory_bytes: float
    system_memory_percent: float


class EpochEvent(TypedDict):
    """Epoch ``epoch`` (1-based) ended: the row the run records, its metrics included."""

    type: Literal["epoch"]
    epoch: int
    learning_rate: float
    seconds: float


class CheckpointEvent(TypedDict):
    """A checkpoint of epoch ``epoch`` was saved at ``path``."""

    type: Literal["checkpoint"]
    epoch: int
    path: str


class ScoresEvent(TypedDict):
    """The trained model's metrics on the test split."""

    type: Literal["test"]


class DoneEvent(TypedDict):
    """The CLI's last JSON line for a run: how it ended (``finished``, ``stopped``)."""

    type: Literal["done"]
    status: str
    note: str
    run_dir: str


class SearchStartEvent(TypedDict):
    """A search starts: the trials it plans, its folder and the trials kept on resume
    (TrialRecord dicts)."""

    type: Literal["search_start"]
    planned: int
    search_dir: str
    done: list[dict[str, Any]]


class TrialStartEvent(TypedDict):
    """Trial ``number`` started training with ``params`` in ``run_dir``; ``pid`` is its
    process (None if it ended before it said), ``threads`` its TensorFlow threads (on this
    machine) or ``node_ip`` its Ray node."""

    type: Literal["trial_start"]
    number: int
    params: dict[str, Any]
    run_dir: str
    pid: int | None
    threads: NotRequired[int | None]
    node_ip: NotRequired[str | None]


class TrialEpochEvent(TypedDict):
    """Trial ``number`` ended epoch ``epoch`` with ``metrics``."""

    type: Literal["trial_epoch"]
    number: int
    epoch: int
    metrics: dict[str, float]


class TrialEndEvent(TypedDict):
    """Trial ``number`` ended: a TrialRecord's fields."""

    type: Literal["trial_end"]
    number: int
    params: dict[str, Any]
    status: str
    value: float | None
    reason: str
    seconds: float
    run_dir: str
    epochs: list[dict[str, float]]


class SearchEndEvent(TypedDict):
    """A search ended, ``stopped`` with trials left or stopped; ``best`` is a trial number."""

    type: Literal["search_end"]
    stopped: bool
    best: int | None


Event = (NoteEvent | ProgressEvent | DownloadEvent | StartEvent | BatchEvent | EpochEvent
         | CheckpointEvent | ScoresEvent | DoneEvent | SearchStartEvent | TrialStartEvent
         | TrialEpochEvent | TrialEndEvent | SearchEndEvent)
OnEvent = Callable[[Event], None]
"""``on_event(event)``: how long work reports what happens."""

WITH_METRICS = frozenset({"batch", "epoch", "test"})
"""The types of the events that carry more keys than they declare (metrics, GPU figures)."""


def progress_events(on_event: OnEvent) -> Progress:
    """A ``Progress`` callback that reports each call to ``on_event`` as a progress event."""
    def report(what: str, done: int, total: int) -> None:
        on_event({"type": "progress", "what": what, "done": done, "total": total})
    return report


class _FromWorker(TypedDict):
    """What a worker process adds to each of its messages (a Ray trial's carry none): the
    trial's ``number``, the ``worker``'s index in its pool, its ``pid`` and its TensorFlow's
    ``threads``."""

    number: NotRequired[int]
    worker: NotRequired[int]
    pid: NotRequired[int]
    threads: NotRequired[int]


class WorkerBegin(_FromWorker):
    """The worker picked the trial up."""

    type: Literal["begin"]


class WorkerStart(_FromWorker):
    """The trial's run folder exists and training starts."""

    type: Literal["start"]
    run_dir: str


class WorkerEpoch(_FromWorker):
    """The trial ended epoch ``epoch`` with ``metrics``."""

    type: Literal["epoch"]
    epoch: int
    metrics: dict[str, float]


class WorkerEnd(_FromWorker):
    """The trial ended (``status``: finished, stopped or failed, with its ``reason``);
    ``measures``: its trained model's extra objectives, in a search of several."""

    type: Literal["end"]
    status: str
    reason: str
    run_dir: str
    epochs: list[dict[str, float]]
    measures: NotRequired[dict[str, float]]


WorkerMessage = WorkerBegin | WorkerStart | WorkerEpoch | WorkerEnd
