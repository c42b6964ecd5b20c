"""Resource use while training: this process's CPU and memory, and GPU figures from a probe."""

from __future__ import annotations

import sys

import psutil

from studio.core.hardware.resources import GpuUsage, NoGpuProbe, ResourceSampler, default_probe


class FakeProbe:
    """Two GPUs: one NVML-like with every figure, one with memory in use only."""

    def read(self) -> list[GpuUsage]:
        return [GpuUsage(0, 87.0, 3 * 2**30, 8 * 2**30), GpuUsage(1, memory_used_bytes=2**30)]


def test_sampler_reports_this_process():
    sampler = ResourceSampler(NoGpuProbe())
    sum(i * i for i in range(200_000))  # some CPU time between the readings
    values = sampler.sample()
    assert 0.0 <= values["cpu_percent"] <= 100.0
    assert 0.0 <= values["system_cpu_percent"] <= 100.0
    rss = psutil.Process().memory_info().rss
    assert 0.5 * rss <= values["memory_bytes"] <= 2 * rss
    assert 0.0 < values["system_memory_percent"] < 100.0
    assert not any(key.startswith("gpu") for key in values)
    assert all(isinstance(v, float) for v in values.values())


def test_sampler_passes_gpu_figures_from_its_probe():
    values = ResourceSampler(FakeProbe()).sample()
    assert values["gpu0_percent"] == 87.0
    assert values["gpu0_memory_bytes"] == 3 * 2**30
    assert values["gpu0_memory_total_bytes"] == 8 * 2**30
    assert values["gpu1_memory_bytes"] == 2**30
    assert "gpu1_percent" not in values and "gpu1_memory_total_bytes" not in values


def test_default_probe_never_loads_tensorflow():
    loaded = "tensorflow" in sys.modules
    probe = default_probe()
    assert ("tensorflow" in sys.modules) == loaded
    assert isinstance(probe.read(), list)  # no GPU here: empty, and no error
