"""The learning-rate range test (Smith, 2015): a short run whose rate grows exponentially
each batch, the loss recorded against it, and the rate where the loss falls fastest.

``find_learning_rate`` runs it on a project with the trainer's own data pipeline, model,
starting weights and optimizer; ``range_test`` runs it on any compiled Keras model. Neither
writes anything: no run folder, no checkpoint.
"""

from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.events import OnEvent
from studio.core.base.messages import first_line
from studio.core.build.keras_model import ModelError, compile_model
from studio.core.build.optimizers import current_learning_rate
from studio.core.data.types import DataError
from studio.core.hardware.devices import DeviceDiscovery, DeviceError, apply_precision, device_scope
from studio.core.project.document import Project, Schedule
from studio.core.training.trainer import TrainingError, check_start, prepare, starting_model

SMOOTHING = 0.7
"""The weight of the past in the loss's moving average (about the last ten batches)."""
EXPLODED = 4.0
"""The test ends once the smoothed loss is this many times its lowest so far."""
SKIPPED_SHARE = 0.1
"""The share of the first batches never suggested: their average rests on few batches."""
LEAST_POINTS = 5
"""The fewest batches before the loss's lowest point that make a suggestion."""


@dataclass(frozen=True)
class RangeTest:
    """The rates swept: from ``start`` to ``end`` over at most ``batches`` batches."""

    start: float = 1e-7
    end: float = 10.0
    batches: int = 100

    def rates(self) -> np.ndarray:
        """The rate of each batch, growing by the same factor from one to the next."""
        return np.geomspace(self.start, self.end, self.batches)

    def problem(self) -> str:
        """Why these settings cannot run, in one sentence; empty if they can."""
        if not 0 < self.start < self.end:
            return (f"The rates must grow from a start above 0 to a larger end, not from "
                    f"{self.start:g} to {self.end:g}.")
        if self.batches < 2 * LEAST_POINTS:
            return f"The test needs at least {2 * LEAST_POINTS} batches, not {self.batches}."
        return ""


@dataclass
class LrFinding:
    """What a range test found: each batch's rate, loss and smoothed loss (up to the batch
    where it ended), the suggested rate (None when the loss never fell clearly) and how it
    ended (``finished``, ``diverged`` or ``stopped``)."""

    rates: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    smoothed: list[float] = field(default_factory=list)
    suggestion: float | None = None
    status: str = "finished"

    def to_dict(self) -> dict[str, Any]:
        """The finding as plain JSON values."""
        return asdict(self)


def find_learning_rate(project: Project, run_root: Path, on_event: OnEvent | None = None,
                       stop: threading.Event | None = None, *, test: RangeTest = RangeTest(),
                       discovery: DeviceDiscovery | None = None) -> LrFinding:
    """Run the range test on ``project``: its data in batches of its batch size, its model
    from the weights it starts from (a run's model is read under ``run_root``), its optimizer
    with the rate the test sets (no schedule), on its devices.

    The test reads ``test.batches`` batches even when an epoch has fewer (the pipeline
    repeats): its curve needs that many points along the rates more than it needs unseen
    data; on data of more batches it stops within the first epoch. The model is built for
    the test and dropped after it (``range_test`` restores its weights anyway), so nothing
    of it reaches the project or its runs. Reports ``progress`` events (loading the data,
    then each batch with its point, see ``range_test``) and ``note`` events; setting
    ``stop`` ends it after the current batch, with what it found so far. Raises
    TrainingError (one line) when it cannot run.
    """
    on_event = on_event or (lambda event: None)
    stop = stop or threading.Event()
    problem = test.problem()
    if problem:
        raise TrainingError(problem)
    check_start(project, run_root)
    try:
        prepared = prepare(project, project.training.batch_size, on_event, stop, discovery)
        info, pipes = prepared.loaded.info, prepared.pipes
        with device_scope(prepared.names):
            model = starting_model(project, info, on_event, run_root)
            constant = replace(project.training, learning_rate=test.start, schedule=Schedule())
            compile_model(model, project.graph, constant, info.task, steps_per_epoch=pipes.steps,
                          class_weights=pipes.loss_class_weights)
            return range_test(model, pipes.train, test, on_event, stop,
                              class_weight=pipes.class_weight)
    except DataError as exc:
        if stop.is_set():  # loading was cancelled
            return LrFinding(status="stopped")
        raise TrainingError(str(exc)) from None
    except (ModelError, DeviceError) as exc:
        raise TrainingError(str(exc)) from None
    except TrainingError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure is said in one line
        raise TrainingError(f"The learning-rate finder failed: {first_line(exc)}") from None
    finally:
        apply_precision("float32")


def range_test(model: Any, dataset: Any, test: RangeTest = RangeTest(),
               on_event: OnEvent | None = None, stop: threading.Event | None = None,
               class_weight: dict[int, float] | None = None) -> LrFinding:
    """Fit the compiled ``model`` on ``dataset`` (which gives at least ``test.batches``
    batches) for one batch per rate of ``test``, until the loss explodes (NaN, or the
    smoothed loss ``EXPLODED`` times its lowest) or ``stop`` is set. Each batch's
    ``progress`` event carries the point it recorded (``learning_rate`` and ``loss``; none
    for a NaN loss), so a curve can grow as the test goes. The model's weights and learning
    rate are restored after, so a caller's model is left as it was given (its optimizer's
    state excepted)."""
    import keras

    on_event = on_event or (lambda event: None)
    stop = stop or threading.Event()
    rates = test.rates()
    finding = LrFinding()
    what = "Finding the learning rate"

    class Sweep(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            self.model.optimizer.learning_rate = float(rates[batch])
            self.model.reset_metrics()  # else Keras logs the loss averaged since the start

        def on_train_batch_end(self, batch, logs=None):
            rate, loss = float(rates[batch]), float((logs or {}).get("loss", math.nan))
            ended = _record(finding, rate, loss)
            point = {"learning_rate": rate, "loss": loss} if math.isfinite(loss) else {}
            on_event({"type": "progress", "what": what, "done": batch + 1,
                      "total": len(rates), **point})
            if ended or stop.is_set():
                finding.status = ended or "stopped"
                self.model.stop_training = True

    initial_weights = model.get_weights()
    initial_rate = current_learning_rate(model.optimizer)
    on_event({"type": "progress", "what": what, "done": 0, "total": len(rates)})
    if stop.is_set():
        return LrFinding(status="stopped")
    try:
        model.fit(dataset, epochs=1, steps_per_epoch=len(rates), verbose=0, shuffle=False,
                  class_weight=class_weight, callbacks=[Sweep()])
    finally:
        model.set_weights(initial_weights)
        model.optimizer.learning_rate = initial_rate
    finding.smoothed = smoothed(finding.losses)
    finding.suggestion = suggest(finding.rates, finding.smoothed)
    return finding


def _record(finding: LrFinding, rate: float, loss: float) -> str:
    """Add a batch's rate and loss to ``finding``; ``diverged`` if the loss exploded (a NaN
    loss is not kept), else an empty string."""
    if not math.isfinite(loss):
        return "diverged"
    finding.rates.append(rate)
    finding.losses.append(loss)
    running = _average(finding.losses)
    return "diverged" if running[-1] > EXPLODED * min(running) else ""


def _average(values: list[float] | np.ndarray) -> np.ndarray:
    """The running average of ``values`` with weight ``SMOOTHING`` on the past, corrected
    for its start at 0 (so the first values are not pulled down)."""
    out = np.empty(len(values))
    mean = 0.0
    for index, value in enumerate(values):
        mean = SMOOTHING * mean + (1 - SMOOTHING) * value
        out[index] = mean / (1 - SMOOTHING ** (index + 1))
    return out


def smoothed(losses: list[float]) -> list[float]:
    """``losses`` averaged forwards then backwards: as smooth as the running average, without
    its lag of about five batches (almost half a decade of rates over 100 batches), which
    would move the steepest fall towards larger rates."""
    if not losses:
        return []
    return [float(v) for v in _average(_average(losses)[::-1])[::-1]]


def suggest(rates: list[float], losses: list[float]) -> float | None:
    """The rate where ``losses`` (smoothed) fall fastest against the rate's logarithm, looked
    for only before their lowest point (beyond it, larger rates no longer help) and after the
    first ``SKIPPED_SHARE`` of the batches; None if the loss never clearly fell."""
    if len(losses) < 2 * LEAST_POINTS:
        return None
    lowest = int(np.argmin(losses))
    first = max(1, round(SKIPPED_SHARE * len(losses)))
    if lowest - first < LEAST_POINTS:
        return None
    slopes = np.gradient(np.asarray(losses[:lowest + 1]), np.log10(rates[:lowest + 1]))
    steepest = first + int(np.argmin(slopes[first:]))
    return float(rates[steepest]) if slopes[steepest] < 0 else None
