"""Where training runs: finding the CPU and GPUs, the choices they allow, and turning a saved
``DeviceChoice`` into TensorFlow device names, a device scope, a precision policy and
(optionally) deterministic ops.

Discovery sits behind the small ``DeviceDiscovery`` interface so tests and the GUI can present
fake GPUs (``StaticDiscovery``); ``TensorFlowDiscovery`` asks the real machine. TensorFlow is
imported only inside functions.
"""

from __future__ import annotations

import os
import platform
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from studio.core.base.messages import count, unknown_choice
from studio.core.base.runtime import start_tensorflow
from studio.core.project.document import DeviceChoice

PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")
FLOAT16_COMPUTE = (7, 0)
"""The oldest GPU compute capability (Volta) whose tensor cores make float16 pay off."""
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
"""Linux CPU flags of the instructions that make bfloat16 fast on a CPU."""
GPU_HELP = ('install the gpu extra (pip install -e ".[gpu]" in a checkout, or '
            "pip install layer-studio[gpu]) and check the NVIDIA driver with nvidia-smi")


class DeviceError(RuntimeError):
    """A device choice cannot be honoured on this machine; the message says what is missing
    and what to pick instead."""


@dataclass(frozen=True)
class CpuInfo:
    """The CPU: its name, logical cores, total memory and whether it has bfloat16 instructions."""

    name: str
    cores: int
    memory_bytes: int
    bfloat16: bool


@dataclass(frozen=True)
class GpuInfo:
    """One GPU TensorFlow can use: its index (as in ``/gpu:<index>``), name, memory (None if
    unknown) and CUDA compute capability (None if unknown)."""

    index: int
    name: str
    memory_bytes: int | None
    compute_capability: tuple[int, int] | None


@dataclass(frozen=True)
class Devices:
    """What this machine offers; ``cpu_devices`` is how many logical CPU devices TensorFlow
    has (more than one only when the CPU is split, see ``studio.core.base.runtime``)."""

    cpu: CpuInfo
    gpus: list[GpuInfo] = field(default_factory=list)
    cpu_devices: int = 1


class DeviceOption(NamedTuple):
    """One entry of the device menu: the choice it stands for (``kind``, ``gpus``), its label,
    and, if it cannot be picked here, why not and what to do."""

    kind: str
    gpus: tuple[int, ...]
    label: str
    enabled: bool
    reason: str = ""


class PrecisionOption(NamedTuple):
    """One entry of the precision menu and, if it is not offered, why."""

    precision: str
    enabled: bool
    reason: str = ""


class DeviceDiscovery(Protocol):
    """Finds the devices; ``discover`` may import TensorFlow, so call it off the GUI thread."""

    def discover(self) -> Devices:
        """The devices of this machine."""
        ...


class StaticDiscovery:
    """Presents fixed devices (fakes for tests and demonstrations)."""

    def __init__(self, devices: Devices) -> None:
        self.devices = devices

    def discover(self) -> Devices:
        """The fixed devices."""
        return self.devices


class TensorFlowDiscovery:
    """The real devices: the CPU from the operating system and the GPUs TensorFlow sees.

    The first call starts TensorFlow (``runtime.start_tensorflow``) and takes a few seconds;
    the result is kept for the life of the process, since TensorFlow never finds new devices.
    """

    _lock = threading.Lock()
    _found: Devices | None = None

    def discover(self) -> Devices:
        """The devices of this machine (found once per process)."""
        with TensorFlowDiscovery._lock:
            if TensorFlowDiscovery._found is None:
                TensorFlowDiscovery._found = _discover_tensorflow()
            return TensorFlowDiscovery._found


def cpu_info() -> CpuInfo:
    """The CPU of this machine, without TensorFlow."""
    import psutil

    flags: set[str] = set()
    name = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and not name:
                name = value.strip()
            elif key == "flags" and not flags:
                flags = set(value.split())
    name = name or platform.processor() or platform.machine() or "CPU"
    return CpuInfo(name=name, cores=os.cpu_count() or 1,
                   memory_bytes=int(psutil.virtual_memory().total),
                   bfloat16=any(flag in flags for flag in BF16_FLAGS))


def _discover_tensorflow() -> Devices:
    start_tensorflow()
    import tensorflow as tf

    details = [_gpu_details(tf, gpu) for gpu in tf.config.list_physical_devices("GPU")]
    memories = _nvml_memories([str(found.get("device_name", "")) for found in details])
    gpus = []
    for index, found in enumerate(details):
        capability = found.get("compute_capability")
        gpus.append(GpuInfo(
            index=index,
            name=str(found.get("device_name") or f"GPU {index}"),
            memory_bytes=memories[index],
            compute_capability=tuple(int(part) for part in capability) if capability else None,
        ))
    return Devices(cpu=cpu_info(), gpus=gpus,
                   cpu_devices=max(1, len(tf.config.list_logical_devices("CPU"))))


def _gpu_details(tf, gpu) -> dict[str, Any]:
    try:
        return dict(tf.config.experimental.get_device_details(gpu))
    except (RuntimeError, ValueError):
        return {}


def _nvml_memories(names: list[str]) -> list[int | None]:
    """Total memory of each GPU TensorFlow lists (by name), from NVIDIA's management library
    when it is installed; None where it is not known.

    TensorFlow numbers the GPUs that ``CUDA_VISIBLE_DEVICES`` leaves visible; NVML numbers all
    of them, so the visible list maps one to the other, and a name mismatch means unknown.
    """
    unknown: list[int | None] = [None] * len(names)
    try:
        import pynvml
    except ImportError:
        return unknown
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver, no library: memory stays unknown
        return unknown
    try:
        count = pynvml.nvmlDeviceGetCount()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        try:
            order = [int(part) for part in visible.split(",")] if visible else list(range(count))
        except ValueError:
            order = list(range(count))
        memories = list(unknown)
        for index, name in enumerate(names):
            if index < len(order) and 0 <= order[index] < count:
                handle = pynvml.nvmlDeviceGetHandleByIndex(order[index])
                nvml_name = pynvml.nvmlDeviceGetName(handle)
                if isinstance(nvml_name, bytes):
                    nvml_name = nvml_name.decode(errors="replace")
                if not name or nvml_name == name:
                    memories[index] = int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
        return memories
    except Exception:  # noqa: BLE001 - a driver hiccup leaves memory unknown, nothing more
        return unknown
    finally:
        pynvml.nvmlShutdown()


def _gigabytes(count: int) -> str:
    return f"{count / 2**30:.1f} GB"


def gpu_label(gpu: GpuInfo) -> str:
    """``GPU 0: NVIDIA A100 (40.0 GB, compute 8.0)``, leaving out what is unknown."""
    facts = []
    if gpu.memory_bytes is not None:
        facts.append(_gigabytes(gpu.memory_bytes))
    if gpu.compute_capability is not None:
        facts.append("compute {}.{}".format(*gpu.compute_capability))
    return f"GPU {gpu.index}: {gpu.name}" + (f" ({', '.join(facts)})" if facts else "")


def describe_devices(devices: Devices) -> str:
    """One line about the machine: the CPU's cores and memory, and its GPUs."""
    cpu = devices.cpu
    text = f"CPU: {cpu.name}, {cpu.cores} cores, {_gigabytes(cpu.memory_bytes)}"
    if cpu.bfloat16:
        text += ", bfloat16"
    if devices.cpu_devices > 1:
        text += f", split into {devices.cpu_devices} devices"
    if not devices.gpus:
        return text + ". No GPU found."
    names = "; ".join(gpu_label(gpu).partition(": ")[2] for gpu in devices.gpus)
    return f"{text}. {count(len(devices.gpus), 'GPU')}: {names}."


def no_gpu_reason() -> str:
    """Why GPU choices are off on a machine without one, and what to do."""
    return f"TensorFlow sees no GPU here. To train on an NVIDIA GPU, {GPU_HELP}."


def device_options(devices: Devices) -> list[DeviceOption]:
    """The device menu: the CPU, each GPU, and all GPUs together when there are several.

    Without a GPU the GPU entries are still listed, disabled, with the reason and what to do.
    """
    cpu = devices.cpu
    options = [DeviceOption("cpu", (), f"CPU ({cpu.cores} cores, {_gigabytes(cpu.memory_bytes)})",
                            True)]
    if not devices.gpus:
        reason = no_gpu_reason()
        return options + [DeviceOption("gpu", (0,), "GPU (none found)", False, reason),
                          DeviceOption("gpus", (), "Several GPUs (none found)", False, reason)]
    options += [DeviceOption("gpu", (gpu.index,), gpu_label(gpu), True) for gpu in devices.gpus]
    count = len(devices.gpus)
    if count > 1:
        options.append(DeviceOption("gpus", (), f"All {count} GPUs (MirroredStrategy)", True))
    else:
        options.append(DeviceOption("gpus", (), "Several GPUs (MirroredStrategy)", False,
                                    "Training on several GPUs needs two or more; TensorFlow "
                                    "sees one GPU here."))
    return options


def option_for(choice: DeviceChoice, devices: Devices) -> DeviceOption:
    """The menu entry of ``choice``; a choice this machine cannot honour (say GPU 1 of a
    project saved elsewhere) gets an entry of its own, disabled, with the reason."""
    gpus = _chosen_gpus(choice)
    for option in device_options(devices):
        if option.kind == choice.kind and option.gpus == gpus:
            return option
    try:
        training_devices(choice, devices)
    except DeviceError as exc:
        return DeviceOption(choice.kind, gpus, f"{choice_label(choice)} (not on this machine)",
                            False, str(exc))
    return DeviceOption(choice.kind, gpus, f"{choice_label(choice)} (MirroredStrategy)", True)


def choice_label(choice: DeviceChoice) -> str:
    """A short name for a choice that does not depend on this machine: CPU, GPU 1, GPUs 0, 2."""
    if choice.kind == "cpu":
        return "CPU"
    gpus = _chosen_gpus(choice)
    if choice.kind == "gpu":
        return f"GPU {gpus[0]}"
    if not gpus:
        return "All GPUs"
    return "GPUs " + ", ".join(str(index) for index in gpus)


def _chosen_gpus(choice: DeviceChoice) -> tuple[int, ...]:
    """The GPU indices of a choice as the menu keys them: one for ``gpu`` (0 if unset)."""
    if choice.kind == "gpu":
        return (choice.gpus[0] if choice.gpus else 0,)
    if choice.kind == "gpus":
        return tuple(choice.gpus)
    return ()


def precision_options(devices: Devices, choice: DeviceChoice) -> list[PrecisionOption]:
    """The precision menu for training on ``choice``: float32 always; mixed_float16 when every
    chosen GPU has compute capability 7.0 or newer; mixed_bfloat16 on a CPU with bfloat16."""
    return [PrecisionOption("float32", True),
            _float16_option(devices, choice),
            _bfloat16_option(devices, choice)]


def _float16_option(devices: Devices, choice: DeviceChoice) -> PrecisionOption:
    if choice.kind == "cpu":
        return PrecisionOption("mixed_float16", False,
                               "Mixed float16 is for GPUs of compute capability 7.0 or newer; "
                               "on the CPU it is slower than float32.")
    try:
        names = training_devices(choice, devices)
    except DeviceError as exc:
        return PrecisionOption("mixed_float16", False, str(exc))
    needed = "{}.{}".format(*FLOAT16_COMPUTE)
    for gpu in (devices.gpus[int(name.rpartition(":")[2])] for name in names):
        if gpu.compute_capability is None:
            return PrecisionOption("mixed_float16", False,
                                   f"The compute capability of GPU {gpu.index} is unknown; "
                                   f"mixed float16 needs {needed} or newer.")
        if gpu.compute_capability < FLOAT16_COMPUTE:
            have = "{}.{}".format(*gpu.compute_capability)
            return PrecisionOption("mixed_float16", False,
                                   f"GPU {gpu.index} has compute capability {have}; mixed "
                                   f"float16 needs {needed} or newer (Volta and later).")
    return PrecisionOption("mixed_float16", True)


def _bfloat16_option(devices: Devices, choice: DeviceChoice) -> PrecisionOption:
    if choice.kind != "cpu":
        return PrecisionOption("mixed_bfloat16", False,
                               "Mixed bfloat16 is offered for training on the CPU; on a GPU "
                               "pick mixed_float16.")
    if not devices.cpu.bfloat16:
        return PrecisionOption("mixed_bfloat16", False,
                               "This CPU has no bfloat16 instructions (AVX512_BF16 or AMX), so "
                               "mixed bfloat16 would be slower than float32.")
    return PrecisionOption("mixed_bfloat16", True)


def with_device(choice: DeviceChoice, kind: str, gpus: tuple[int, ...] | list[int],
                devices: Devices) -> DeviceChoice:
    """``choice`` moved to another device; its precision is kept if still offered there, else
    it falls back to float32."""
    moved = replace(choice, kind=kind, gpus=list(gpus))
    offered = {option.precision for option in precision_options(devices, moved)
               if option.enabled}
    return moved if moved.precision in offered else replace(moved, precision="float32")


def training_devices(choice: DeviceChoice, devices: Devices) -> list[str]:
    """The TensorFlow device names to train on for ``choice``.

    CPU: every logical CPU device (more than one when the CPU is split); GPU: the chosen one
    (GPU 0 if none is named); GPUs: the chosen ones, all if none is named. Raises DeviceError
    when this machine cannot honour the choice.
    """
    if choice.kind == "cpu":
        return [f"/cpu:{index}" for index in range(devices.cpu_devices)]
    if choice.kind not in ("gpu", "gpus"):
        raise DeviceError(f"Unknown device kind {choice.kind!r}; pick CPU, GPU or GPUs.")
    wanted = list(_chosen_gpus(choice)) or [gpu.index for gpu in devices.gpus]
    have = {gpu.index for gpu in devices.gpus}
    if not have:
        raise DeviceError(f"This project trains on {choice_label(choice)}, but TensorFlow sees "
                          f"no GPU on this machine. Pick the CPU, or {GPU_HELP}.")
    missing = [index for index in wanted if index not in have]
    if missing:
        names = ", ".join(f"GPU {index}" for index in missing)
        available = ", ".join(f"GPU {index}" for index in sorted(have))
        raise DeviceError(f"This project trains on {choice_label(choice)}, but this machine "
                          f"has no {names} (it has {available}). Pick one of those, or the CPU.")
    return [f"/gpu:{index}" for index in wanted]


@contextmanager
def device_scope(device_names: list[str]) -> Iterator[int]:
    """Build and train the model inside this block to run it on ``device_names``; yields the
    number of replicas.

    Several devices train under ``MirroredStrategy`` (one replica each). One device is a plain
    ``tf.device`` scope under the default strategy: ``OneDeviceStrategy`` distributes the
    input pipeline, which cost the demo CNN a quarter of its throughput and stalled one epoch
    in two for over a second (bench/trainer_throughput.py).
    """
    import tensorflow as tf

    if not device_names:
        raise DeviceError("No device to train on.")
    if len(device_names) > 1:
        strategy = tf.distribute.MirroredStrategy(device_names)
        with strategy.scope():
            yield int(strategy.num_replicas_in_sync)
    else:
        with tf.device(device_names[0]):
            yield 1


def apply_precision(precision: str) -> None:
    """Make ``precision`` Keras's global dtype policy for models built from now on; with a
    mixed policy, give the output layer ``dtype="float32"`` to keep outputs in float32."""
    if precision not in PRECISIONS:
        raise DeviceError(unknown_choice("precision", precision, PRECISIONS))
    import keras

    keras.mixed_precision.set_global_policy(precision)


def apply_determinism(enabled: bool, seed: int) -> None:
    """Seed Python, NumPy, TensorFlow and Keras with ``seed`` and switch TensorFlow's op
    determinism on or off (on: the same inputs give the same results, more slowly).

    Op determinism is process-wide. TensorFlow 2.21 exports only ``enable_op_determinism``;
    its counterpart ``disable_op_determinism`` lives in ``tensorflow.python.framework.config``
    (not exported) and switches it off again for ops and functions created afterwards, so
    each run gets the setting it asks for without a restart.
    """
    import keras
    import tensorflow as tf
    from tensorflow.python.framework import config as tf_config

    if enabled:
        tf.config.experimental.enable_op_determinism()
    else:
        tf_config.disable_op_determinism()
    keras.utils.set_random_seed(seed)


def op_determinism_enabled() -> bool:
    """Whether TensorFlow's op determinism is on in this process."""
    from tensorflow.python.framework import config as tf_config

    return bool(tf_config.is_op_determinism_enabled())
