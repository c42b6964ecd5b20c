"""The Keras callback that turns training progress into plain events for the GUI and CLI."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from studio.core.base.events import OnEvent
from studio.core.build.optimizers import current_learning_rate
from studio.core.hardware.resources import ResourceSampler


class DivergedError(RuntimeError):
    """The loss became NaN or infinite; the message says what to try."""


def plain_metrics(logs: dict[str, Any] | None, outputs: Sequence[str] = ()) -> dict[str, float]:
    """Keras logs as floats. A model with several ``outputs`` (their names) logs
    ``<output>_accuracy`` for each; their mean is added as ``accuracy`` (and
    ``val_accuracy``) so curves read the same. Other scores ending in ``_accuracy`` (a
    segmentation's ``pixel_accuracy``) are not an output's."""
    values = {k: float(v) for k, v in (logs or {}).items()}
    values.pop("learning_rate", None)  # Keras's own entry; the callback records the real one
    for prefix in ("", "val_"):
        per_output = [values[name] for name in (f"{prefix}{out}_accuracy" for out in outputs)
                      if name in values]
        if len(outputs) > 1 and per_output and f"{prefix}accuracy" not in values:
            values[f"{prefix}accuracy"] = sum(per_output) / len(per_output)
    return values


def check_loss(loss: float, epoch: int, step: int, learning_rate: float) -> None:
    """Raise DivergedError, saying what to try, if ``loss`` (after batch ``step`` of the
    0-based ``epoch``) is NaN or infinite: training diverged and goes no further."""
    if not math.isfinite(loss):
        raise DivergedError(
            f"The loss became {loss} in epoch {epoch + 1}, batch {step}: training "
            f"diverged. Try a lower learning rate (for example {learning_rate / 10:g} "
            f"instead of {learning_rate:g}), or check that the inputs are scaled."
        )


def pace(epoch: int, step: int, elapsed: float, *, epochs: int, initial_epoch: int,
         samples: int, batch_size: int) -> dict[str, float]:
    """How far a run is after batch ``step`` of the 0-based ``epoch``, ``elapsed`` seconds
    into this session (which began at ``initial_epoch``): ``progress`` over all ``epochs``
    (0 to 1), ``samples_per_sec`` in this session, and ``eta_sec``, the seconds left."""
    seen = min(step * batch_size, samples)
    done = (epoch - initial_epoch) * samples + seen
    rate = done / max(elapsed, 1e-9)
    return {
        "progress": (epoch * samples + seen) / (epochs * samples),
        "samples_per_sec": rate,
        "eta_sec": ((epochs - initial_epoch) * samples - done) / rate,
    }


def live_metrics_callback(
    on_event: OnEvent,
    record_epoch: Callable[[dict[str, float]], None],
    stop: threading.Event,
    epochs: int,
    initial_epoch: int,
    steps: int,
    samples: int,
    batch_size: int,
    report_every: int,
) -> Any:
    """A Keras callback that sends ``batch`` events every ``report_every`` batches and an
    ``epoch`` event per whole epoch (passing the row to ``record_epoch``), with the learning
    rate, speed, ETA and resource use; it honours ``stop`` (an epoch cut short by it is not
    recorded) and ends a run whose loss diverges."""
    import keras

    class LiveMetrics(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.start = time.perf_counter()
            self.epoch = initial_epoch
            self.epoch_start = self.start
            self.sampler = ResourceSampler()

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch
            self.epoch_start = time.perf_counter()
            self.steps_done = 0

        def on_train_batch_end(self, batch, logs=None):
            if stop.is_set():
                self.model.stop_training = True
            step = batch + 1
            self.steps_done = step
            if step % report_every and step != steps:
                return
            values = plain_metrics(logs, self.model.output_names)
            learning_rate = current_learning_rate(self.model.optimizer)
            check_loss(values.get("loss", 0.0), self.epoch, step, learning_rate)
            on_event({
                "type": "batch",
                "epoch": self.epoch + 1,
                "step": step,
                "steps": steps,
                **pace(self.epoch, step, time.perf_counter() - self.start, epochs=epochs,
                       initial_epoch=initial_epoch, samples=samples, batch_size=batch_size),
                "learning_rate": learning_rate,
                **self.sampler.sample(),
                **values,
            })

        def on_epoch_end(self, epoch, logs=None):
            if self.steps_done < steps:  # stopped within the epoch: it does not count
                return
            row = {"epoch": epoch + 1, **plain_metrics(logs, self.model.output_names),
                   "learning_rate": current_learning_rate(self.model.optimizer),
                   "seconds": round(time.perf_counter() - self.epoch_start, 3)}
            record_epoch(row)
            on_event({"type": "epoch", **row})

    return LiveMetrics()
