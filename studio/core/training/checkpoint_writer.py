"""Checkpoints written on a background thread while training goes on.

Saving a model serialises it on the thread that calls ``save`` (36-60 ms a save on the demo
CNN), but copying its state is much quicker. So at an epoch's end a twin of the model (same
layers, same compiled optimizer, built once) takes the model's and its optimizer's variables
in one TensorFlow call on the training thread (about a millisecond), and the twin is saved on
a thread of its own, atomically (``RunFolder.save_checkpoint``), so a kill leaves the earlier
checkpoints and no half-written file. Where no twin can be made (a model Keras cannot clone),
the checkpoint is saved at once, as before.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from studio.core.base.events import OnEvent
from studio.core.runs.folders import RunFolder


class CheckpointWriter:
    """Saves checkpoints of one model in the background, one at a time; ``flush`` waits for
    the one under way and reports it with a ``checkpoint`` event."""

    def __init__(self, folder: RunFolder, on_event: OnEvent) -> None:
        self.folder = folder
        self.on_event = on_event
        self._twin: Any = None
        self._twin_tried = False
        self._thread: threading.Thread | None = None
        self._epoch = 0
        self._written: Path | None = None
        self._error: BaseException | None = None

    def save(self, model: Any, epoch: int, replace: bool) -> None:
        """Copy ``model``'s state after ``epoch`` now and write it in the background (with
        ``replace``, earlier checkpoints are removed once it is written)."""
        self.flush()
        twin = self._twin_of(model)
        if twin is None:
            self._epoch = epoch
            self._written = self.folder.save_checkpoint(model, epoch, replace)
            self._report()
            return
        twin.take_state()  # the next one waits for this write (flush above): no tearing
        self._epoch = epoch
        self._thread = threading.Thread(target=self._write, args=(twin.model, epoch, replace),
                                        name=f"checkpoint {epoch}")
        self._thread.start()

    def flush(self) -> None:
        """Wait for the checkpoint under way, if any, and report it; raise its write error
        (``CheckpointWriteError`` when the disk refused it)."""
        if self._thread is None:
            return
        self._thread.join()
        self._thread = None
        error, self._error = self._error, None
        if error is not None:
            raise error
        self._report()

    def _report(self) -> None:
        self.on_event({"type": "checkpoint", "epoch": self._epoch, "path": str(self._written)})

    def _write(self, twin: Any, epoch: int, replace: bool) -> None:
        try:
            self._written = self.folder.save_checkpoint(twin, epoch, replace)
        except BaseException as exc:  # noqa: BLE001 - raised on the training thread by flush
            self._error = exc

    def _twin_of(self, model: Any) -> Twin | None:
        """``model``'s twin, made at the first call; None if Keras cannot make one."""
        if not self._twin_tried:
            self._twin_tried = True
            self._twin = _twin(model)
        return self._twin


class Twin:
    """A model with another's layers and compiled optimizer, whose variables match its own one
    for one, and a TensorFlow function that copies them over (one call, not one a variable)."""

    def __init__(self, model: Any, original: Any) -> None:
        import tensorflow as tf

        self.model = model
        pairs = list(zip([*model.variables, *model.optimizer.variables],
                         [*original.variables, *original.optimizer.variables], strict=True))

        @tf.function(autograph=False)
        def take_state() -> None:
            for mine, theirs in pairs:
                mine.assign(theirs)

        self.take_state = take_state


def _twin(model: Any) -> Twin | None:
    import keras

    try:
        clone = keras.models.clone_model(model)
        clone.compile_from_config(model.get_compile_config())
        clone.optimizer.build(clone.trainable_variables)
    except Exception:  # noqa: BLE001 - any model Keras cannot clone is saved directly
        return None
    pairs = [(clone.variables, model.variables),
             (clone.optimizer.variables, model.optimizer.variables)]
    for mine, theirs in pairs:
        if [tuple(v.shape) for v in mine] != [tuple(v.shape) for v in theirs]:
            return None
    twin = Twin(clone, model)
    try:
        twin.take_state()  # traced now, and tried: a model whose state it cannot copy
    except Exception:  # noqa: BLE001 - (variables across devices, say) is saved directly
        return None
    return twin
