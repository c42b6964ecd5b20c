"""Estimates before training: counts by hand, memory against Keras's own variables, the largest
batch that fits, a measured micro-run, the device recommendation and out-of-memory advice."""

from __future__ import annotations

import math
import threading
from dataclasses import replace

import numpy as np
import psutil
import pytest

from studio.core.build import estimate as estimates
from studio.core.build.estimate import (
    OVERHEAD_BYTES,
    Estimate,
    MicroRun,
    estimate,
    format_bytes,
    measure_epoch_time,
    oom_advice,
    recommend_device,
)
from studio.core.data.types import DatasetInfo
from studio.core.hardware.devices import CpuInfo, Devices, GpuInfo
from studio.core.model.graph import Graph, Node
from studio.core.project.document import OPTIMIZERS, DeviceChoice, Project

CPU = CpuInfo("Test CPU", 2, 8 * 2**30, False)
NO_GPU = Devices(CPU)
FOUR_FEATURES = DatasetInfo("fake", "Fake", (4,), 2, ("a", "b"), 1000, kind="table")
GPU_CHOICE = DeviceChoice(kind="gpu", gpus=[0])


def dense_project() -> Project:
    """Input(4) → Dense(3, relu) → Dense(2, softmax), trained with Adam."""
    return Project(name="Dense", graph=Graph.from_chain([
        Node("input", "Input", {"shape": [4]}),
        Node("hidden", "Dense", {"units": 3, "activation": "relu"}),
        Node("output", "Dense", {"units": 2, "activation": "softmax"}),
    ]))


def conv_project() -> Project:
    """A small CNN with batch normalization (whose moving statistics never learn)."""
    return Project(name="Conv", graph=Graph.from_chain([
        Node("input", "Input", {"shape": [8, 8, 1]}),
        Node("conv", "Conv2D", {"filters": 4, "kernel_size": 3}),
        Node("norm", "BatchNormalization", {}),
        Node("flat", "Flatten", {}),
        Node("output", "Dense", {"units": 10, "activation": "softmax"}),
    ]))


def one_gpu(memory: int | None, index: int = 0) -> GpuInfo:
    return GpuInfo(index, f"Fake GPU {index}", memory, (8, 0))


def test_a_tiny_dense_model_counted_by_hand():
    result = estimate(dense_project(), 10, NO_GPU, DeviceChoice())
    assert result.params == result.trainable_params == (4 * 3 + 3) + (3 * 2 + 2) == 23
    # Multiply-adds count 2, then one per output for the bias and for the activation.
    assert result.flops_per_sample == (2 * 4 * 3 + 3 + 3) + (2 * 3 * 2 + 2 + 2) == 46
    assert result.training_flops_per_sample == 3 * 46
    assert result.weights_bytes == result.gradients_bytes == 23 * 4
    assert result.optimizer_bytes == 2 * 23 * 4  # Adam keeps two moments per weight
    values = 4 + 3 + 2  # every layer's output, the Input's too
    assert result.activation_bytes_per_sample == 2 * values * 4
    assert result.activations_bytes == 10 * 2 * values * 4
    assert result.total_bytes == 4 * 23 * 4 + 10 * 72 + OVERHEAD_BYTES
    assert result.device == "CPU" and result.replicas == 1


def test_attention_keeps_its_scores_and_a_bidirectional_layer_both_directions():
    project = Project(name="Attention", graph=Graph.from_chain([
        Node("input", "Input", {"shape": [10, 8]}),
        Node("attend", "MultiHeadAttention", {"num_heads": 2}),
        Node("both", "Bidirectional", {"layer": "GRU", "units": 3}),
    ]))
    result = estimate(project, 1, NO_GPU, DeviceChoice())
    outputs = 10 * 8 + 10 * 8 + 2 * 3
    projected = 2 * 4 * (10 + 2 * 10)  # 2 heads of 4: queries, keys and values
    scores = 2 * 2 * 10 * 10  # each head's scores and their softmax
    recurrent = 2 * 10 * 4 * 3  # each way, a GRU keeps 4 values per step and unit
    assert result.activation_bytes_per_sample == 2 * 4 * (
        outputs + projected + scores + recurrent)


def test_mixed_precision_halves_activations_only():
    full = estimate(dense_project(), 10, NO_GPU, DeviceChoice())
    mixed = estimate(dense_project(), 10, NO_GPU, DeviceChoice(precision="mixed_bfloat16"))
    assert mixed.activation_bytes_per_sample * 2 == full.activation_bytes_per_sample
    assert mixed.fixed_bytes == full.fixed_bytes


def test_frozen_layers_need_no_gradients_or_optimizer_state():
    result = estimate(conv_project(), 1, NO_GPU, DeviceChoice())
    norm = 4 * 4
    assert result.params - result.trainable_params == norm // 2
    frozen = Project(name="Frozen", graph=Graph.from_chain([
        Node("input", "Input", {"shape": [32, 32, 3]}),
        Node("base", "Application", {"name": "MobileNetV2", "weights": "random",
                                     "trainable_layers": 0}),
    ]))
    base = estimate(frozen, 1, NO_GPU, DeviceChoice())
    assert base.params > 2_000_000 and base.trainable_params == 0
    assert base.gradients_bytes == base.optimizer_bytes == 0


def test_a_base_in_parts_keeps_about_what_the_whole_base_keeps():
    def learning(*parts: dict) -> Project:
        return Project(name="Parts", graph=Graph.from_chain([
            Node("input", "Input", {"shape": [64, 64, 3]}),
            *[Node(f"part{i}", "Application", {"name": "MobileNetV2", "weights": "random",
                                                "trainable_layers": layers, **strides})
              for i, (layers, strides) in enumerate(parts)]]))

    # The part after stride 8 reads a map 64 times smaller than the image, but keeps the
    # values of its share of the base's layers on the whole image.
    whole = estimate(learning((97, {})), 1, NO_GPU, DeviceChoice())
    parts = estimate(learning((0, {"output_stride": "8"}), (98, {"input_stride": "8"})), 1,
                     NO_GPU, DeviceChoice())
    assert parts.params == whole.params
    assert 0.97 < parts.activation_bytes_per_sample / whole.activation_bytes_per_sample < 1.03


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_weights_gradients_and_optimizer_state_match_keras_variables(optimizer):
    from studio.core.build.keras_model import build_keras_model, compile_model

    project = conv_project()
    project.training.optimizer = optimizer
    project.training.weight_decay = 0.004
    result = estimate(project, 1, NO_GPU, DeviceChoice())
    model = build_keras_model(project.graph)
    compile_model(model, project.graph, project.training, steps_per_epoch=1)
    model.optimizer.build(model.trainable_variables)

    def size(variables, rank=0):
        return sum(math.prod(v.shape) * np.dtype(v.dtype).itemsize
                   for v in variables if len(v.shape) >= rank)

    assert result.weights_bytes == size(model.weights)
    assert result.gradients_bytes == size(model.trainable_weights)
    # Scalars (the step counter, the learning rate) are left out of the estimate.
    assert result.optimizer_bytes == size(model.optimizer.variables, rank=1)


def test_sgd_without_momentum_keeps_no_state():
    project = dense_project()
    project.training.optimizer = "sgd"
    project.training.momentum = 0.0
    assert estimate(project, 1, NO_GPU, DeviceChoice()).optimizer_bytes == 0


def test_device_memory_of_the_cpu_is_the_available_ram():
    result = estimate(dense_project(), 10, NO_GPU, DeviceChoice())
    assert 0 < result.device_memory <= psutil.virtual_memory().total
    assert result.memory_by_device == {"CPU": result.device_memory}
    assert result.fits and result.largest_batch_size == estimates.MAX_BATCH_SIZE


def test_device_memory_of_a_fake_gpu_and_the_largest_batch_that_fits():
    probe = estimate(dense_project(), 1, NO_GPU, DeviceChoice())
    memory = probe.fixed_bytes + 100 * probe.activation_bytes_per_sample + 50
    devices = Devices(CPU, [one_gpu(memory)])
    result = estimate(dense_project(), 500, devices, GPU_CHOICE)
    assert result.device == "GPU 0" and result.device_memory == memory
    assert result.memory_by_device["GPU 0"] == memory
    assert result.largest_batch_size == 100
    assert result.total_at(100) <= memory < result.total_at(101)
    assert result.fits is False
    assert estimate(dense_project(), 100, devices, GPU_CHOICE).fits is True


def test_several_gpus_split_the_batch_and_the_smallest_decides():
    probe = estimate(dense_project(), 1, NO_GPU, DeviceChoice())
    small = probe.fixed_bytes + 100 * probe.activation_bytes_per_sample
    devices = Devices(CPU, [one_gpu(small * 4, 0), one_gpu(small, 1)])
    result = estimate(dense_project(), 64, devices, DeviceChoice(kind="gpus", gpus=[0, 1]))
    assert result.replicas == 2 and result.device == "GPU 1"
    assert result.activations_bytes == 32 * probe.activation_bytes_per_sample
    assert result.largest_batch_size == 200
    assert result.total_at(200) <= small < result.total_at(201)


def test_no_batch_fits_a_tiny_gpu_and_unknown_memory_says_nothing():
    tiny = estimate(dense_project(), 8, Devices(CPU, [one_gpu(1024)]), GPU_CHOICE)
    assert tiny.largest_batch_size is None and tiny.fits is False
    unknown = estimate(dense_project(), 8, Devices(CPU, [one_gpu(None)]), GPU_CHOICE)
    assert unknown.device_memory is None and unknown.fits is None
    assert unknown.largest_batch_size is None


def test_a_gpu_choice_without_a_gpu_is_estimated_for_the_cpu():
    result = estimate(dense_project(), 8, NO_GPU, GPU_CHOICE)
    assert result.device == "CPU" and "No GPU" in result.note


def test_units_read_as_a_person_reads_them():
    assert format_bytes(512) == "512 bytes"
    assert format_bytes(1536) == "1.5 KB"
    assert format_bytes(1.2 * 2**30) == "1.2 GB"
    assert format_bytes(3 * 2**40) == "3,072 GB"
    assert format_bytes(1_028_648) == "1,005 KB"  # not 1e+03 KB


def fixed_estimate(memory: int | None, per_sample: int = 2**20, batch: int = 256) -> Estimate:
    """An estimate with round numbers: 100 MB fixed (with overhead), 1 MB per sample."""
    return Estimate(params=1, trainable_params=1, flops_per_sample=1, batch_size=batch,
                    weights_bytes=0, gradients_bytes=0, optimizer_bytes=0, overhead_bytes=100
                    * 2**20, activation_bytes_per_sample=per_sample, device="GPU 0",
                    device_memory=memory, memory_by_device={"CPU": 2**40, "GPU 0": memory})


def test_out_of_memory_advice_suggests_a_batch_size_that_fits():
    text = oom_advice(fixed_estimate(228 * 2**20), 256)
    assert "out of memory on GPU 0 at batch size 256" in text
    assert "such as 128 " in text and "228 MB" in text
    # The estimate said it fits, yet memory ran out: halve.
    assert "such as 128" in oom_advice(fixed_estimate(2**40), 256)
    assert "such as 32." in oom_advice(fixed_estimate(None), 64)
    hopeless = oom_advice(fixed_estimate(50 * 2**20), 256)
    assert "Even one sample does not fit" in hopeless and "smaller" in hopeless


def run(label: str, per_step: float | None, **kwargs) -> MicroRun:
    name = "/cpu:0" if label == "CPU" else f"/gpu:{label[-1]}"
    return MicroRun((name,), 256, per_step, 100, **kwargs)


def test_recommendation_needs_both_a_cpu_and_a_gpu_run():
    est = fixed_estimate(2**40)
    assert recommend_device({"CPU": run("CPU", 0.1)}, est) is None
    assert recommend_device({"GPU 0": run("GPU 0", 0.1)}, est) is None


def test_recommendation_picks_the_faster_measured_device():
    est = fixed_estimate(2**40)
    text = recommend_device({"CPU": run("CPU", 0.4), "GPU 0": run("GPU 0", 0.1)}, est)
    assert text.startswith("Use GPU 0: 4.0× faster than the CPU")
    text = recommend_device({"CPU": run("CPU", 0.1), "GPU 0": run("GPU 0", 0.3)}, est)
    assert text.startswith("Use the CPU: 3.0× faster than GPU 0")


def test_recommendation_avoids_a_gpu_without_memory_for_the_batch():
    small = fixed_estimate(200 * 2**20)
    text = recommend_device({"CPU": run("CPU", 0.4), "GPU 0": run("GPU 0", 0.1)}, small)
    assert text.startswith("Use the CPU: GPU 0 does not have memory for batch size 256")
    roomy = fixed_estimate(2**40)
    text = recommend_device({"CPU": run("CPU", 0.4),
                             "GPU 0": run("GPU 0", None, out_of_memory=True)}, roomy)
    assert text.startswith("Use the CPU: GPU 0 does not have memory")


def dense_for_fake_data() -> Project:
    project = dense_project()
    project.dataset = replace(project.dataset, validation_split=0.2, test_split=0.0)
    return project


def test_micro_run_measures_positive_times_and_extrapolates_to_an_epoch():
    events = []
    project = dense_for_fake_data()
    project.training.schedule.kind = "cosine"  # a schedule counted in steps per epoch
    result = measure_epoch_time(project, FOUR_FEATURES, 32, ["/cpu:0"],
                                events.append, threading.Event(), steps=3)
    assert result.seconds_per_step > 0 and not result.stopped
    assert result.steps_per_epoch == 25 and result.validation_steps == 7  # 800 and 200 samples
    assert result.seconds_per_epoch == pytest.approx(result.seconds_per_step * (25 + 7 / 3))
    assert result.samples_per_second == pytest.approx(32 / result.seconds_per_step)
    assert [e["done"] for e in events] == [0, 1, 2, 3, 4]
    assert all(e["type"] == "progress" and e["total"] == 4 for e in events)


def test_micro_run_honours_stop():
    stop = threading.Event()
    events = []

    def on_event(event):
        events.append(event)
        if event["done"] == 2:
            stop.set()

    result = measure_epoch_time(dense_for_fake_data(), FOUR_FEATURES, 32, ["/cpu:0"],
                                on_event, stop, steps=50)
    assert result.stopped and result.seconds_per_step > 0
    assert events[-1]["done"] == 2
    stop_first = threading.Event()
    stop_first.set()
    early = measure_epoch_time(dense_for_fake_data(), FOUR_FEATURES, 32, ["/cpu:0"], None,
                               stop_first)
    assert early.stopped and early.seconds_per_step is None and early.seconds_per_epoch is None


def test_micro_run_out_of_memory_is_a_result_not_a_crash(monkeypatch):
    class ResourceExhaustedError(Exception):
        pass

    def exhausted(*args):
        raise ResourceExhaustedError("OOM when allocating tensor")

    monkeypatch.setattr(estimates, "_micro_fit", exhausted)
    result = measure_epoch_time(dense_for_fake_data(), FOUR_FEATURES, 32, ["/gpu:0"])
    assert result.out_of_memory and result.seconds_per_step is None
