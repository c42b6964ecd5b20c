"""Start-up device settings: GPU memory growth, asked for before TensorFlow loads and set on
every GPU once it has (checked on a stand-in for TensorFlow's config, as no GPU is here)."""

from __future__ import annotations

import os
from types import SimpleNamespace

from studio.core.base import runtime


class FakeConfig:
    """The part of ``tf.config`` that memory growth uses, with two GPUs; ``started`` makes it
    refuse changes as TensorFlow does once its runtime runs."""

    def __init__(self, started: bool = False) -> None:
        self.gpus = ["GPU:0", "GPU:1"]
        self.started = started
        self.growth: dict[str, bool] = {}
        self.experimental = SimpleNamespace(set_memory_growth=self._set_memory_growth)

    def list_physical_devices(self, kind: str) -> list[str]:
        return self.gpus if kind == "GPU" else []

    def _set_memory_growth(self, gpu: str, enabled: bool) -> None:
        if self.started:
            raise RuntimeError("Physical devices cannot be modified after being initialized")
        self.growth[gpu] = enabled


def test_start_up_asks_for_memory_growth_before_tensorflow_loads(monkeypatch):
    monkeypatch.delenv(runtime.GROWTH_ENV, raising=False)
    runtime.configure_environment()
    assert os.environ[runtime.GROWTH_ENV] == "true"


def test_memory_growth_is_set_on_every_gpu():
    config = FakeConfig()
    assert runtime._memory_growth(SimpleNamespace(config=config), growth_preset=False) == ""
    assert config.growth == {"GPU:0": True, "GPU:1": True}


def test_memory_growth_after_tensorflow_started_says_to_restart_unless_asked_for_earlier():
    late = SimpleNamespace(config=FakeConfig(started=True))
    assert "restart the app" in runtime._memory_growth(late, growth_preset=False)
    assert runtime._memory_growth(late, growth_preset=True) == ""
