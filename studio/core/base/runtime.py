"""Process-wide settings TensorFlow reads only once: environment defaults applied before it is
first imported, and device settings applied once it is imported but before its runtime starts.

Environment variables (all optional):

- ``LAYER_STUDIO_CPU_DEVICES=N`` (N > 1) splits the CPU into N logical devices, so training on
  the CPU runs N replicas under ``MirroredStrategy`` (used to test multi-device training on
  machines without GPUs).
- ``LAYER_STUDIO_THREADS=N`` limits TensorFlow's threads within and between ops to N each.
"""

from __future__ import annotations

import os
import threading

CPU_DEVICES_ENV = "LAYER_STUDIO_CPU_DEVICES"
THREADS_ENV = "LAYER_STUDIO_THREADS"
GROWTH_ENV = "TF_FORCE_GPU_ALLOW_GROWTH"

_lock = threading.Lock()
_note: str | None = None
"""What ``start_tensorflow`` could not apply ("" if it applied everything); None until run."""


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
            import tensorflow as tf

            _note = " ".join(problem for problem in (
                _memory_growth(tf, growth_preset), _split_cpu(tf), _threads(tf)) if problem)
        return _note


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
