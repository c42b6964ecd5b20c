"""Start-up device settings: GPU memory growth, asked for before TensorFlow loads and set on
every GPU once it has (checked on a stand-in for TensorFlow's config, as no GPU is here); and
how TensorFlow loads: its native libraries first, the stretch marked for the GUI's collector."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

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


def test_loading_marks_the_stretch_that_imports_tensorflow_even_when_nested():
    assert not runtime.tensorflow_loading()
    with runtime.loading():
        with runtime.loading():
            assert runtime.tensorflow_loading()
        assert runtime.tensorflow_loading()
    assert not runtime.tensorflow_loading()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's memory map")
def test_native_libraries_load_before_tensorflow_s_import_and_the_import_reuses_them():
    code = textwrap.dedent("""
        import json, sys
        from pathlib import Path
        from studio.core.base import runtime

        def mapped():
            maps = Path("/proc/self/maps").read_text()
            return sorted({line.split()[-1] for line in maps.splitlines()
                           if "libtensorflow_" in line or "libarrow" in line})

        runtime._load_native_libraries()
        before = mapped()
        imported = "tensorflow" in sys.modules
        runtime.start_tensorflow()
        print(json.dumps({"before": before, "imported": imported, "after": mapped()}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    names = {Path(path).name.split(".so")[0] for path in result["before"]}
    assert {"libtensorflow_cc", "libtensorflow_framework"} <= names
    if importlib.util.find_spec("pyarrow"):  # Keras imports it through pandas
        assert {"libarrow", "libarrow_compute"} <= names and "libarrow_python" not in names
    assert not result["imported"]
    tensorflow_s = [path for path in result["after"] if "libtensorflow_" in path]
    assert set(result["before"]) <= set(result["after"])
    assert tensorflow_s == [path for path in result["before"] if "libtensorflow_" in path]
