"""While training: CPU, memory and GPU use, cheap enough to sample every few batches.

``ResourceSampler.sample`` never blocks: CPU percentages are measured since the previous call.
GPU figures come from a ``GpuProbe``: NVIDIA's management library when ``pynvml`` is installed
(utilisation and memory), else TensorFlow's memory counters (memory in use only), else none.
Tests pass their own probe to present GPU numbers.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class GpuUsage:
    """One GPU's use now; a figure is None where it cannot be read."""

    index: int
    utilization_percent: float | None = None
    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None


class GpuProbe(Protocol):
    """Reads the GPUs' use; must be cheap and never block."""

    def read(self) -> list[GpuUsage]:
        """The use of every GPU it can see."""
        ...


class NoGpuProbe:
    """No GPU figures (no GPU, or nothing that can read them)."""

    def read(self) -> list[GpuUsage]:
        return []


class NvmlProbe:
    """Utilisation and memory of every NVIDIA GPU, through ``pynvml``."""

    def __init__(self) -> None:
        import pynvml

        pynvml.nvmlInit()
        self._nvml = pynvml
        self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i)
                         for i in range(pynvml.nvmlDeviceGetCount())]

    def read(self) -> list[GpuUsage]:
        usage = []
        for index, handle in enumerate(self._handles):
            rates = self._nvml.nvmlDeviceGetUtilizationRates(handle)
            memory = self._nvml.nvmlDeviceGetMemoryInfo(handle)
            usage.append(GpuUsage(index, float(rates.gpu), int(memory.used), int(memory.total)))
        return usage


class TensorFlowProbe:
    """Memory TensorFlow holds on each GPU it uses (no utilisation, no total)."""

    def __init__(self, count: int) -> None:
        self._count = count

    def read(self) -> list[GpuUsage]:
        import tensorflow as tf

        usage = []
        for index in range(self._count):
            try:
                info = tf.config.experimental.get_memory_info(f"GPU:{index}")
            except ValueError:  # a GPU this process does not use
                continue
            usage.append(GpuUsage(index, memory_used_bytes=int(info["current"])))
        return usage


def default_probe() -> GpuProbe:
    """The best probe available: NVML, else TensorFlow's counters if TensorFlow is already
    loaded and sees a GPU, else none. Never loads TensorFlow itself."""
    try:
        probe = NvmlProbe()
    except Exception:  # noqa: BLE001 - pynvml missing, or no NVIDIA driver: try the next
        pass
    else:
        return probe
    if "tensorflow" in sys.modules:
        gpus = sys.modules["tensorflow"].config.list_physical_devices("GPU")
        if gpus:
            return TensorFlowProbe(len(gpus))
    return NoGpuProbe()


class ResourceSampler:
    """Samples this process's CPU and memory use, the system's, and the GPUs' where known."""

    def __init__(self, gpu_probe: GpuProbe | None = None) -> None:
        import psutil

        self._psutil = psutil
        self._process = psutil.Process()
        self._cores = psutil.cpu_count() or 1
        self._probe = gpu_probe if gpu_probe is not None else default_probe()
        self._process.cpu_percent(interval=None)  # the first reading only starts the clock
        psutil.cpu_percent(interval=None)

    def sample(self) -> dict[str, float]:
        """Plain figures for an event: ``cpu_percent`` (this process, as a share of all
        cores, 0-100), ``system_cpu_percent``, ``memory_bytes`` (this process's resident
        memory), ``system_memory_percent``, and per GPU ``gpu<i>_percent``,
        ``gpu<i>_memory_bytes`` and ``gpu<i>_memory_total_bytes`` where they can be read."""
        psutil = self._psutil
        values = {
            # CPU time counts in clock ticks: over a short interval a busy process can read a
            # little above all its cores' time
            "cpu_percent": min(100.0, self._process.cpu_percent(interval=None) / self._cores),
            "system_cpu_percent": float(psutil.cpu_percent(interval=None)),
            "memory_bytes": float(self._process.memory_info().rss),
            "system_memory_percent": float(psutil.virtual_memory().percent),
        }
        for gpu in self._probe.read():
            for name, value in (("percent", gpu.utilization_percent),
                                ("memory_bytes", gpu.memory_used_bytes),
                                ("memory_total_bytes", gpu.memory_total_bytes)):
                if value is not None:
                    values[f"gpu{gpu.index}_{name}"] = float(value)
        return values
