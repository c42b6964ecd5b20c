"""Checkpoints written in the background hold the state of their epoch's end, whatever
training does meanwhile, and are reported only once on disk."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from studio.core.build.keras_model import build_model, compile_model
from studio.core.data.bundled import MNIST_10K
from studio.core.runs.folders import CheckpointWriteError, RunFolder, checkpoints
from studio.core.runs.keras_saving import save_model
from studio.core.training.checkpoint_writer import CheckpointWriter
from tests.helpers import small_cnn_project


@pytest.fixture
def fitted():
    """The small CNN after one step of training, and a batch to train it further on."""
    import keras

    project = small_cnn_project()
    model = build_model(project.graph, MNIST_10K)
    compile_model(model, project.graph, project.training, steps_per_epoch=4)
    rng = np.random.default_rng(0)
    x = rng.random((16, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, 16)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    yield project, model, (x, y)
    keras.backend.clear_session()


def state(model) -> list[np.ndarray]:
    return [v.numpy().copy() for v in [*model.variables, *model.optimizer.variables]]


def test_a_checkpoint_holds_its_epoch_s_state_and_is_reported_once_written(tmp_path, fitted):
    import keras

    project, model, (x, y) = fitted
    folder = RunFolder.create(tmp_path, project)
    gate = threading.Event()
    save = folder.save_checkpoint

    def held(*args, **kwargs):
        gate.wait()
        return save(*args, **kwargs)

    folder.save_checkpoint = held
    events = []
    writer = CheckpointWriter(folder, events.append)
    expected = state(model)
    writer.save(model, 1, replace=False)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)  # training goes on meanwhile
    moved = zip(state(model)[:2], expected[:2], strict=True)  # the first layer's weights
    assert not any(np.array_equal(now, then) for now, then in moved)
    assert events == [] and checkpoints(folder.path) == []
    gate.set()
    writer.flush()
    ((epoch, path),) = checkpoints(folder.path)
    assert events == [{"type": "checkpoint", "epoch": 1, "path": str(path)}]
    loaded = keras.saving.load_model(path, safe_mode=True)
    for saved, wanted in zip(state(loaded), expected, strict=True):
        np.testing.assert_array_equal(saved, wanted)
    assert loaded.get_compile_config() == model.get_compile_config()
    folder.lock.release()


def test_a_write_the_disk_refuses_is_raised_on_the_training_thread(tmp_path, fitted):
    project, model, _ = fitted
    folder = RunFolder.create(tmp_path, project)

    def full(*args, **kwargs):
        raise CheckpointWriteError(28, "No space left on device", "epoch-0001.keras")

    folder.save_checkpoint = full
    events = []
    writer = CheckpointWriter(folder, events.append)
    writer.save(model, 1, replace=False)
    with pytest.raises(CheckpointWriteError, match="No space"):
        writer.flush()
    assert events == []
    writer.flush()  # reported once
    folder.lock.release()


def test_saving_in_a_new_thread_makes_no_throw_away_layers(tmp_path, fitted, monkeypatch):
    """Keras lists the attributes to skip by making a throw-away object of each kind, once
    per save (it keeps the lists where it does not look); the writer's threads reuse them."""
    import keras
    from keras.src.layers.layer import Layer

    _, model, _ = fitted
    save_model(model, tmp_path / "first.keras")
    made = []
    init = Layer.__init__

    def counted(self, *args, **kwargs):
        made.append(type(self).__name__)
        init(self, *args, **kwargs)

    monkeypatch.setattr(Layer, "__init__", counted)
    thread = threading.Thread(target=save_model, args=(model, tmp_path / "again.keras"))
    thread.start()
    thread.join()
    assert made == []
    monkeypatch.undo()
    loaded = keras.saving.load_model(tmp_path / "again.keras", safe_mode=True)
    for saved, wanted in zip(state(loaded), state(model), strict=True):
        np.testing.assert_array_equal(saved, wanted)
