"""Before training: what a model costs (parameters, FLOPs, memory) and how long an epoch takes.

``estimate`` works from the analysis alone, without TensorFlow, so it can follow every edit.
Memory is a linear model of the batch size: weights, gradients, optimizer state and a
framework overhead do not depend on it; activations grow with it. ``measure_epoch_time``
trains the real model for a few steps on synthetic data; ``recommend_device`` compares such
measurements between the CPU and a GPU, and ``oom_advice`` explains an out-of-memory error.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from studio.core.base.events import OnEvent
from studio.core.base.messages import format_bytes
from studio.core.base.runtime import start_tensorflow
from studio.core.build.analysis import Analysis, analyze
from studio.core.build.keras_model import build_model, compile_model, model_endpoints
from studio.core.build.optimizers import optimizer_slots
from studio.core.data.types import DatasetInfo, LoadedData
from studio.core.hardware.devices import Devices, apply_precision, device_scope
from studio.core.model.applications import APPLICATION, BASES, chosen_part, image_pixels
from studio.core.model.graph import Node
from studio.core.model.layers import OPAQUE_TYPE
from studio.core.model.layers.attention import kept_values as attention_kept_values
from studio.core.project.document import DeviceChoice, Project
from studio.core.tasks.registry import task_for

FLOAT_BYTES = 4
"""Weights, gradients and optimizer state are float32, also under mixed precision."""
HALF_BYTES = 2
"""Activations under mixed precision (float16 or bfloat16)."""
ACTIVATION_FACTOR = 2
"""Bytes kept per activation value, in units of its dtype: each layer's output is kept for the
backward pass (1), and about as much again is held by what some layers keep beside it
(pre-activation values, dropout masks, normalised inputs) and by the gradient flowing back."""
OVERHEAD_BYTES = 256 * 2**20
"""TensorFlow's own workspace (kernels' scratch space, prefetched batches), a flat allowance."""
MAX_BATCH_SIZE = 65_536
"""The largest batch size a project accepts; ``largest_batch_size`` never says more."""
TRAINING_FLOPS_FACTOR = 3
"""A training step costs about three forward passes: forward, and a backward pass of twice
the work (gradients with respect to both the inputs and the weights)."""
VALIDATION_STEP_SHARE = 1 / TRAINING_FLOPS_FACTOR
"""A validation batch runs the forward pass only: about a third of a training step."""
APPLICATION_VALUES_PER_PIXEL = {
    "MobileNetV2": 435, "ResNet50": 740, "VGG16": 304, "EfficientNetB0": 501,
}
"""Values in all layer outputs of each base, per input pixel (measured with Keras at 96 × 96
and 224 × 224; they differ by under 2%)."""
RECURRENT_KEPT = {"SimpleRNN": 1, "LSTM": 6, "GRU": 4}
"""Values a recurrent layer keeps per step and unit for the backward pass: its gates, plus the
hidden state (and, for an LSTM, the cell state); a SimpleRNN keeps only its state."""


@dataclass(frozen=True)
class Estimate:
    """What training a model costs on one device at one batch size.

    Byte counts are per device: with several GPUs each holds the weights, gradients and
    optimizer state, and activations for its share of the batch (``replicas`` shares).
    ``device_memory`` is the memory of that device (available RAM for the CPU), None if
    unknown; ``memory_by_device`` holds it for every device found, by label ("CPU", "GPU 0").
    """

    params: int
    trainable_params: int
    flops_per_sample: int
    batch_size: int
    weights_bytes: int
    gradients_bytes: int
    optimizer_bytes: int
    activation_bytes_per_sample: int
    device: str
    device_memory: int | None
    replicas: int = 1
    overhead_bytes: int = OVERHEAD_BYTES
    memory_by_device: dict[str, int | None] = field(default_factory=dict)
    note: str = ""

    @property
    def training_flops_per_sample(self) -> int:
        """Operations per sample of one training step (forward and backward)."""
        return TRAINING_FLOPS_FACTOR * self.flops_per_sample

    @property
    def fixed_bytes(self) -> int:
        """Memory that does not depend on the batch size."""
        return self.weights_bytes + self.gradients_bytes + self.optimizer_bytes + \
            self.overhead_bytes

    @property
    def activations_bytes(self) -> int:
        """Activations at ``batch_size``, per device."""
        return self.activations_at(self.batch_size)

    @property
    def total_bytes(self) -> int:
        """Everything at ``batch_size``, per device."""
        return self.total_at(self.batch_size)

    @property
    def fits(self) -> bool | None:
        """Whether ``batch_size`` fits in the device's memory; None if that is unknown."""
        return None if self.device_memory is None else self.fits_in(self.device_memory)

    @property
    def largest_batch_size(self) -> int | None:
        """The largest batch size that fits the device; None if unknown or not even 1 fits."""
        return self.largest_for(self.device_memory)

    def activations_at(self, batch_size: int) -> int:
        """Activations per device for ``batch_size`` samples split over the replicas."""
        return math.ceil(batch_size / self.replicas) * self.activation_bytes_per_sample

    def total_at(self, batch_size: int) -> int:
        """Memory per device at ``batch_size``."""
        return self.fixed_bytes + self.activations_at(batch_size)

    def fits_in(self, memory: int, batch_size: int | None = None) -> bool:
        """Whether ``batch_size`` (default: this estimate's) fits in ``memory`` bytes."""
        return self.total_at(batch_size or self.batch_size) <= memory

    def largest_for(self, memory: int | None) -> int | None:
        """The largest batch size that fits in ``memory`` bytes, at most MAX_BATCH_SIZE; None
        if ``memory`` is unknown or even one sample does not fit."""
        if memory is None or memory < self.total_at(1):
            return None
        if self.activation_bytes_per_sample == 0:
            return MAX_BATCH_SIZE
        per_replica = (memory - self.fixed_bytes) // self.activation_bytes_per_sample
        return min(per_replica * self.replicas, MAX_BATCH_SIZE)


def estimate(project: Project, batch_size: int, devices: Devices, device_choice: DeviceChoice,
             analysis: Analysis | None = None) -> Estimate:
    """Parameters, FLOPs and memory for training ``project`` at ``batch_size`` on the device
    ``device_choice`` names, compared with that device's memory.

    ``analysis`` defaults to the graph's own (no data is read); layers whose shapes are
    unknown count nothing. Activations are ``ACTIVATION_FACTOR`` × the values of every
    layer's output (Input included) × the batch × 4 bytes (2 under mixed precision).
    """
    analysis = analysis if analysis is not None else analyze(project.graph)
    graph = project.graph
    params = trainable = values = 0
    for node_id, report in analysis.nodes.items():
        node = graph.node(node_id)
        params += report.params
        trainable += _trainable_params(node, report.params)
        values += _kept_values(node, report.output_shape or (),
                               [analysis.nodes[i].output_shape or () for i in
                                graph.inputs_of(node_id) if i in analysis.nodes])
    half = device_choice.precision != "float32"
    memory = _device_memory(devices)
    device, replicas, note = _target(devices, device_choice)
    return Estimate(
        params=params,
        trainable_params=trainable,
        flops_per_sample=analysis.total_flops,
        batch_size=batch_size,
        weights_bytes=params * FLOAT_BYTES,
        gradients_bytes=trainable * FLOAT_BYTES,
        optimizer_bytes=optimizer_slots(project.training) * trainable * FLOAT_BYTES,
        activation_bytes_per_sample=ACTIVATION_FACTOR * values
        * (HALF_BYTES if half else FLOAT_BYTES),
        device=device,
        device_memory=memory[device],
        replicas=replicas,
        memory_by_device=memory,
        note=note,
    )


def _trainable_params(node: Node, count: int) -> int:
    """How many of a layer's ``count`` parameters learn: batch normalization's moving mean
    and variance never do; an Application learns in its last ``trainable_layers`` layers
    (taken as that share of its parameters); an imported layer may be frozen."""
    if node.type == "BatchNormalization":
        return count // 2
    if node.type == APPLICATION.name:
        params = node.resolved_params()
        return count * params["trainable_layers"] // chosen_part(params).layers
    if node.type == OPAQUE_TYPE:
        config = node.params.get("config") or {}
        if not config.get("trainable", True):
            return 0
        return count // 2 if node.params.get("class_name") == "BatchNormalization" else count
    return count


def _kept_values(node: Node, output: tuple[int, ...], inputs: list[tuple[int, ...]]) -> int:
    """Values per sample a layer holds for the backward pass, before ACTIVATION_FACTOR."""
    kept = math.prod(output)
    params = node.resolved_params() if node.type != OPAQUE_TYPE else {}
    if node.type in RECURRENT_KEPT and inputs:
        kept += inputs[0][0] * RECURRENT_KEPT[node.type] * params["units"]
    elif node.type == "Bidirectional" and inputs:  # one recurrent layer each way
        kept += 2 * inputs[0][0] * RECURRENT_KEPT[params["layer"]] * params["units"]
    elif node.type == "MultiHeadAttention" and inputs:
        kept += attention_kept_values(params, inputs)
    elif node.type == APPLICATION.name and inputs:
        # Spread evenly over the whole base's layers, so a part keeps its share.
        inside = APPLICATION_VALUES_PER_PIXEL[params["name"]] * image_pixels(params, inputs)
        kept += inside * params["trainable_layers"] // BASES[params["name"]].layers
    return kept


def device_label(gpu_index: int | None) -> str:
    """How estimates name a device: "CPU", or "GPU 0"."""
    return "CPU" if gpu_index is None else f"GPU {gpu_index}"


def _device_memory(devices: Devices) -> dict[str, int | None]:
    """Memory of every device: the RAM available now for the CPU, each GPU's own if known."""
    import psutil

    memory: dict[str, int | None] = {"CPU": int(psutil.virtual_memory().available)}
    for gpu in devices.gpus:
        memory[device_label(gpu.index)] = gpu.memory_bytes
    return memory


def _target(devices: Devices, choice: DeviceChoice) -> tuple[str, int, str]:
    """The device an estimate is for (the chosen GPU with the least memory when there are
    several), the number of replicas, and a note if the choice cannot be honoured."""
    if choice.kind == "cpu":
        return "CPU", 1, ""
    found = {gpu.index: gpu for gpu in devices.gpus}
    if choice.kind == "gpu":
        wanted = choice.gpus[:1] or list(found)[:1]
    else:
        wanted = choice.gpus or list(found)
    chosen = [found[i] for i in wanted if i in found]
    if not chosen:
        return "CPU", 1, "No GPU chosen for training is visible, so this is for the CPU."
    smallest = min(chosen, key=lambda gpu: gpu.memory_bytes or 0)
    return device_label(smallest.index), len(chosen), ""


def oom_advice(estimate: Estimate, batch_size: int) -> str:
    """Plain words for an out-of-memory error at ``batch_size``, suggesting one that fits."""
    where = "the CPU" if estimate.device == "CPU" else estimate.device
    head = f"Training ran out of memory on {where} at batch size {batch_size}."
    largest = estimate.largest_batch_size
    if estimate.device_memory is not None and largest is None:
        return (f"{head} Even one sample does not fit: the model needs about "
                f"{format_bytes(estimate.total_at(1))} of "
                f"{format_bytes(estimate.device_memory)}. Make it smaller (fewer units or "
                "filters, a smaller input) or train on a device with more memory.")
    suggested = max(1, min(largest or batch_size // 2, batch_size // 2))
    reason = (f" (about {format_bytes(estimate.total_at(suggested))} of "
              f"{format_bytes(estimate.device_memory)} by the estimate)"
              if estimate.device_memory is not None else "")
    return f"{head} Try a smaller batch size, such as {suggested}{reason}."


@dataclass(frozen=True)
class MicroRun:
    """A short measured run on ``devices`` (TensorFlow names such as ``/CPU:0``).

    ``seconds_per_step`` is None if it was stopped (or ran out of memory) before measuring;
    ``seconds_per_epoch`` also needs the number of training samples. An epoch counts its
    training steps plus validation batches at a third of a step each.
    """

    devices: tuple[str, ...]
    batch_size: int
    seconds_per_step: float | None
    steps_per_epoch: int | None
    validation_steps: int = 0
    stopped: bool = False
    out_of_memory: bool = False

    @property
    def seconds_per_epoch(self) -> float | None:
        """Measured step time times the steps of one epoch, validation included."""
        if self.seconds_per_step is None or self.steps_per_epoch is None:
            return None
        steps = self.steps_per_epoch + VALIDATION_STEP_SHARE * self.validation_steps
        return self.seconds_per_step * steps

    @property
    def samples_per_second(self) -> float | None:
        """Training samples per second at this batch size."""
        if not self.seconds_per_step:
            return None
        return self.batch_size / self.seconds_per_step


def split_sizes(project: Project, data: DatasetInfo | LoadedData) -> tuple[int, int] | None:
    """Training and validation samples: counted if loaded, else from the dataset's size and
    the project's split fractions; None if the size is not known yet."""
    if isinstance(data, LoadedData):
        return data.size("train"), data.size("validation")
    if data.num_samples is None:
        return None
    total = data.num_samples
    validation = round(total * project.dataset.validation_split)
    return total - validation - round(total * project.dataset.test_split), validation


def measure_epoch_time(
    project: Project,
    data: DatasetInfo | LoadedData,
    batch_size: int,
    device_names: list[str],
    on_event: OnEvent | None = None,
    stop: threading.Event | None = None,
    steps: int = 5,
) -> MicroRun:
    """Train the real model for ``steps`` steps on ``device_names`` with synthetic batches of
    the data's shape, after one warm-up step (tracing) that is not timed, and extrapolate to
    an epoch of ``data``. Reports ``progress`` events (``what``, ``done``, ``total``); setting
    ``stop`` ends it after the current step, with what was measured so far."""
    on_event = on_event or (lambda event: None)
    stop = stop or threading.Event()
    info = data.info if isinstance(data, LoadedData) else data
    sizes = split_sizes(project, data)
    epoch_steps = math.ceil(sizes[0] / batch_size) if sizes else None
    validation_steps = math.ceil(sizes[1] / batch_size) if sizes else 0
    what = f"Measuring on {', '.join(device_names)}"
    on_event({"type": "progress", "what": what, "done": 0, "total": steps + 1})
    times: list[float] = []
    result = dict(devices=tuple(device_names), batch_size=batch_size,
                  steps_per_epoch=epoch_steps, validation_steps=validation_steps)
    if stop.is_set():
        return MicroRun(seconds_per_step=None, stopped=True, **result)
    try:
        _micro_fit(project, info, batch_size, device_names, steps, epoch_steps or 1, stop,
                   lambda: _timed(times, on_event, what, steps))
    except Exception as exc:
        if type(exc).__name__ != "ResourceExhaustedError":
            raise
        return MicroRun(seconds_per_step=None, out_of_memory=True, **result)
    measured = [b - a for a, b in zip(times[:-1], times[1:], strict=False)]
    per_step = sum(measured) / len(measured) if measured else None
    return MicroRun(seconds_per_step=per_step, stopped=stop.is_set(), **result)


def _timed(times: list[float], on_event: OnEvent, what: str,
           steps: int) -> None:
    """Record the end of a step (the first one ends the warm-up) and report progress."""
    times.append(time.perf_counter())
    on_event({"type": "progress", "what": what, "done": len(times), "total": steps + 1})


def _micro_fit(project: Project, info: DatasetInfo, batch_size: int, device_names: list[str],
               steps: int, steps_per_epoch: int, stop: threading.Event,
               step_ended: Callable[[], None]) -> None:
    """Build and compile the model on the devices (its schedule for ``steps_per_epoch``) and
    fit ``steps`` + 1 steps of one synthetic batch, calling ``step_ended`` after each."""

    start_tensorflow()
    import keras
    import numpy as np
    import tensorflow as tf

    class Timing(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            step_ended()
            if stop.is_set():
                self.model.stop_training = True

    inputs, outputs = model_endpoints(project.graph)
    x = _synthetic_inputs(info, batch_size, np)
    apply_precision(project.training.device.precision)
    try:
        with device_scope(device_names):
            model = build_model(project.graph, info, project.name)
            y = task_for(info.task).synthetic_labels(batch_size,
                                                     tuple(model.outputs[0].shape[1:]))
            batch = (tuple([x] * len(inputs)) if len(inputs) > 1 else x,
                     tuple([y] * len(outputs)) if len(outputs) > 1 else y)
            compile_model(model, project.graph, project.training, info.task,
                          steps_per_epoch=steps_per_epoch)
            dataset = tf.data.Dataset.from_tensors(batch).repeat()
            model.fit(dataset, epochs=1, steps_per_epoch=steps + 1, verbose=0, shuffle=False,
                      callbacks=[Timing()])
    finally:
        apply_precision("float32")


def _synthetic_inputs(info: DatasetInfo, batch_size: int, np: Any) -> Any:
    """A batch of the data's shape: random values, or token id 0 for texts."""
    shape = (batch_size, *info.sample_shape)
    if info.kind == "text":
        return np.zeros(shape, "int32")
    return np.random.default_rng(0).random(shape, dtype="float32")


def recommend_device(micro_runs: dict[str, MicroRun], estimate: Estimate) -> str | None:
    """Which device to train on, in one line with the reason, when runs were measured on both
    the CPU and a GPU (keys are device labels, see ``device_label``); else None.

    A GPU that ran out of memory, or whose memory the estimate says the batch exceeds, loses.
    """
    cpu = micro_runs.get("CPU")
    gpus = {label: run for label, run in micro_runs.items() if label.startswith("GPU")}
    if cpu is None or not gpus:
        return None
    batch = estimate.batch_size
    fitting = {}
    for label, run in gpus.items():
        memory = estimate.memory_by_device.get(label)
        if not run.out_of_memory and (memory is None or estimate.fits_in(memory, batch)):
            fitting[label] = run
    if not fitting:
        label = next(iter(gpus))
        memory = estimate.memory_by_device.get(label)
        have = f" (it needs about {format_bytes(estimate.total_at(batch))} of " \
            f"{format_bytes(memory)})" if memory is not None else ""
        return f"Use the CPU: {label} does not have memory for batch size {batch}{have}."
    label, gpu = min(fitting.items(), key=lambda item: item[1].seconds_per_step or math.inf)
    if cpu.seconds_per_step is None or gpu.seconds_per_step is None:
        return None
    if gpu.seconds_per_step <= cpu.seconds_per_step:
        return (f"Use {label}: {cpu.seconds_per_step / gpu.seconds_per_step:.1f}× faster "
                f"than the CPU for this model at batch size {batch}.")
    return (f"Use the CPU: {gpu.seconds_per_step / cpu.seconds_per_step:.1f}× faster than "
            f"{label} for this model at batch size {batch} (too small to keep a GPU busy).")
