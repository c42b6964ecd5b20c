"""Process-wide settings TensorFlow reads only once: environment defaults applied before it is
first imported, and device settings applied once it is imported but before its runtime starts.

Environment variables (all optional):

- ``LAYER_STUDIO_CPU_DEVICES=N`` (N > 1) splits the CPU into N logical devices, so training on
  the CPU runs N replicas under ``MirroredStrategy`` (used to test multi-device training on
  machines without GPUs).
- ``LAYER_STUDIO_THREADS=N`` limits TensorFlow's threads within and between ops to N each.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CPU_DEVICES_ENV = "LAYER_STUDIO_CPU_DEVICES"
THREADS_ENV = "LAYER_STUDIO_THREADS"
GROWTH_ENV = "TF_FORCE_GPU_ALLOW_GROWTH"

_lock = threading.Lock()
_count_lock = threading.Lock()
_note: str | None = None
"""What ``start_tensorflow`` could not apply ("" if it applied everything); None until run."""
_loading = 0
"""How many threads are importing TensorFlow or Keras (see ``loading``)."""


def configure_environment() -> None:
    """Quiet TensorFlow's start-up chatter unless the user asked for it, and let it take GPU
    memory as needed rather than all at once; call at start-up, before TensorFlow loads."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault(GROWTH_ENV, "true")


def start_tensorflow() -> str:
    """Import TensorFlow and apply the settings it accepts only before its runtime starts:
    memory growth on every GPU, the CPU split of ``LAYER_STUDIO_CPU_DEVICES`` and the thread
    counts of ``LAYER_STUDIO_THREADS``.

    Safe to call from any thread, any number of times; only the first call does the work.
    Returns "" when everything asked for is in place, else a note saying what could not be
    applied because TensorFlow had already started (it never raises for that).
    """
    global _note
    with _lock:
        if _note is None:
            growth_preset = os.environ.get(GROWTH_ENV) == "true"
            configure_environment()
            with loading():
                _load_native_libraries()
                import tensorflow as tf

            _note = " ".join(problem for problem in (
                _memory_growth(tf, growth_preset), _split_cpu(tf), _threads(tf)) if problem)
        return _note


@contextmanager
def loading() -> Iterator[None]:
    """Mark a stretch that imports TensorFlow or Keras, for ``tensorflow_loading``."""
    global _loading
    with _count_lock:
        _loading += 1
    try:
        yield
    finally:
        with _count_lock:
            _loading -= 1


def tensorflow_loading() -> bool:
    """True while some thread imports TensorFlow or Keras: their hundreds of thousands of
    objects are not worth scanning for garbage until they have loaded (a GUI collector waits)."""
    return _loading > 0


NATIVE_LIBRARIES = {
    "tensorflow": ("libtensorflow_*.so.*",),
    "pyarrow": tuple(f"lib{name}.so.*" for name in (
        "arrow", "arrow_compute", "arrow_acero", "parquet", "arrow_dataset", "arrow_substrait")),
}
"""The native libraries importing TensorFlow and Keras loads (Keras reaches Arrow through
pandas), by package; none uses Python's API (Arrow's Python bindings are left to the import)."""


def _load_native_libraries() -> None:
    """Load the big native libraries that importing TensorFlow and Keras pulls in (TensorFlow's
    core is 1.2 GB) without holding Python's interpreter lock, so other threads (the window's)
    run on meanwhile; the imports then find them loaded. Python's import, and ``ctypes.CDLL``
    too, hold the lock while the system maps and links a library, which froze the window for
    0.4 s when TensorFlow loaded in the background. The system's ``dlopen`` called through
    ctypes lets go of it. The libraries are loaded with the flags Python's import would use,
    and kept loaded, as the import keeps them; where they are not found this does nothing."""
    import ctypes

    paths = []
    for package, patterns in NATIVE_LIBRARIES.items():
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            paths += [path for pattern in patterns for path in sorted(Path(folder).glob(pattern))]
    if not paths:
        return
    try:
        dlopen = ctypes.CDLL(None).dlopen
    except (OSError, AttributeError):
        return  # not a system with dlopen: the imports load them
    dlopen.restype = ctypes.c_void_p
    dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
    for path in paths:
        dlopen(os.fsencode(path), sys.getdlopenflags())  # failing, the import says why


def _env_count(name: str) -> int:
    """The positive whole number in environment variable ``name``, else 0."""
    try:
        return max(0, int(os.environ.get(name, "")))
    except ValueError:
        return 0


def _memory_growth(tf, growth_preset: bool) -> str:
    """Let every GPU take memory as needed rather than all of it at once (``growth_preset``:
    the environment already asked for that, in case TensorFlow started before this)."""
    try:
        for gpu in tf.config.list_physical_devices("GPU"):
            tf.config.experimental.set_memory_growth(gpu, True)
    except RuntimeError:
        if not growth_preset:
            return ("TensorFlow had already started, so it may take all GPU memory at once; "
                    "restart the app to let it grow as needed.")
    return ""


def _split_cpu(tf) -> str:
    """Split the CPU into ``LAYER_STUDIO_CPU_DEVICES`` logical devices, if more than one."""
    count = _env_count(CPU_DEVICES_ENV)
    if count < 2:
        return ""
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)])
    except RuntimeError:
        have = len(tf.config.list_logical_devices("CPU"))
        if have != count:
            return (f"{CPU_DEVICES_ENV}={count} was ignored: TensorFlow had already started "
                    f"with {have} CPU device(s); restart the app to split the CPU.")
    return ""


def _threads(tf) -> str:
    """Use ``LAYER_STUDIO_THREADS`` threads within and between ops, if set."""
    count = _env_count(THREADS_ENV)
    if not count:
        return ""
    threading_config = tf.config.threading
    try:
        threading_config.set_intra_op_parallelism_threads(count)
        threading_config.set_inter_op_parallelism_threads(count)
    except RuntimeError:
        if threading_config.get_intra_op_parallelism_threads() != count:
            return (f"{THREADS_ENV}={count} was ignored: TensorFlow had already started; "
                    "restart the app to change its thread count.")
    return ""
