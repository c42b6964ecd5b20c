"""Keras callbacks that keep a run's checkpoints and TensorBoard logs and stop it early,
resumable from its record."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from studio.core.base.events import OnEvent
from studio.core.project.document import Checkpoints, EarlyStopping
from studio.core.runs.folders import BEST, RunFolder
from studio.core.training.checkpoint_writer import CheckpointWriter


def _better(monitor: str, value: float, best: float | None) -> bool:
    """True if ``value`` of ``monitor`` beats ``best`` (losses fall, accuracies rise)."""
    if not math.isfinite(value):
        return False
    return best is None or (value < best if BEST.get(monitor, min) is min else value > best)


def _best_so_far(monitor: str, rows: list[dict[str, Any]]) -> float | None:
    best = None
    for row in rows:
        if monitor in row and _better(monitor, row[monitor], best):
            best = row[monitor]
    return best


def checkpoint_callback(rule: Checkpoints, folder: RunFolder, on_event: OnEvent) -> Any:
    """Save a checkpoint (model and optimizer state) every ``rule.every_epochs`` epochs, or
    with ``keep_best_only`` only when the monitored metric improves, replacing the last; a
    ``checkpoint`` event follows each once it is written. Only whole epochs (those ``folder``
    recorded) are saved. A resumed run counts its earlier epochs' best.

    Checkpoints are written in the background (``CheckpointWriter``); the one under way is
    waited for when the next epoch's validation begins (so its event comes before that epoch's,
    as when saving took place at once), when the next is due, and when training ends. Call the
    callback's ``flush`` if ``fit`` raised."""
    import keras

    class Checkpointer(keras.callbacks.Callback):
        writer = CheckpointWriter(folder, on_event)

        def on_train_begin(self, logs=None):
            self.best = _best_so_far(rule.monitor, folder.rows)

        def on_test_begin(self, logs=None):
            self.writer.flush()

        def on_train_end(self, logs=None):
            self.writer.flush()

        def flush(self):
            self.writer.flush()

        def on_epoch_end(self, epoch, logs=None):
            done = epoch + 1
            if not rule.every_epochs or done % rule.every_epochs:
                return
            if not folder.rows or folder.rows[-1]["epoch"] != done:
                return  # the epoch was cut short by a stop, so it was not recorded
            if rule.keep_best_only:
                value = float((logs or {}).get(rule.monitor, math.nan))
                if not _better(rule.monitor, value, self.best):
                    return
                self.best = value
            self.writer.save(self.model, done, replace=rule.keep_best_only)

    return Checkpointer()


def early_stopping_callback(rule: EarlyStopping, rows: list[dict[str, Any]]) -> Any | None:
    """Keras's EarlyStopping for ``rule`` (None when off); a resumed run starts from the best
    value and the epochs without improvement that its earlier ``rows`` hold."""
    if not rule.enabled:
        return None
    import keras

    class ResumableEarlyStopping(keras.callbacks.EarlyStopping):
        def on_train_begin(self, logs=None):
            super().on_train_begin(logs)
            best = None
            for row in rows:
                value = row.get(rule.monitor)
                if value is None:
                    continue
                if _better(rule.monitor, value, best):
                    best, self.wait = value, 0
                else:
                    self.wait += 1
            if best is not None:
                self.best = best

    mode = "min" if BEST.get(rule.monitor, min) is min else "max"
    return ResumableEarlyStopping(monitor=rule.monitor, patience=rule.patience, mode=mode)


def tensorboard_callback(log_dir: Path) -> Any:
    """Keras's TensorBoard callback, writing per-epoch scalars into ``log_dir``.

    Its per-batch hook is dropped: even when writing only per epoch (no summary writer is
    active during the batches, so nothing is written) it calls ``tf.summary.scalar`` for
    every metric after every batch, which cost the demo CNN about 3% of its throughput.
    """
    import keras

    class EpochTensorBoard(keras.callbacks.TensorBoard):
        def on_train_batch_end(self, batch, logs=None):
            return None

    return EpochTensorBoard(str(log_dir), write_graph=False, profile_batch=0)
