"""Devices: menus and their reasons on fake machines, the real discovery, and real training on a
CPU split into two devices under MirroredStrategy (in subprocesses: TensorFlow accepts a CPU
split only before its runtime starts, and op determinism is process-wide)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from studio.core.hardware import devices as devices_module
from studio.core.hardware.devices import (
    BF16_FLAGS,
    CpuInfo,
    DeviceError,
    Devices,
    GpuInfo,
    StaticDiscovery,
    TensorFlowDiscovery,
    apply_precision,
    cpu_info,
    describe_devices,
    device_options,
    option_for,
    precision_options,
    training_devices,
    with_device,
)
from studio.core.project.document import DeviceChoice

GB = 2**30
ROOT = Path(__file__).resolve().parents[2]
CPU = CpuInfo("Test CPU", cores=8, memory_bytes=16 * GB, bfloat16=False)
BF16_CPU = CpuInfo("Test CPU with bfloat16", cores=8, memory_bytes=16 * GB, bfloat16=True)
NO_GPU = Devices(cpu=CPU)
OLD_GPU = Devices(cpu=CPU, gpus=[GpuInfo(0, "Tesla P4", 8 * GB, (6, 1))])
TWO_GPUS = Devices(cpu=CPU, gpus=[GpuInfo(0, "A100", 40 * GB, (8, 0)),
                                  GpuInfo(1, "A100", 40 * GB, (8, 0))])
MIXED_GPUS = Devices(cpu=CPU, gpus=[GpuInfo(0, "A100", 40 * GB, (8, 0)),
                                    GpuInfo(1, "Tesla P4", None, (6, 1))])


def choice(kind: str = "cpu", gpus: list[int] | None = None,
           precision: str = "float32") -> DeviceChoice:
    return DeviceChoice(kind=kind, gpus=gpus or [], precision=precision)


def offered(devices: Devices, device: DeviceChoice) -> dict[str, bool]:
    return {option.precision: option.enabled for option in precision_options(devices, device)}


def test_without_a_gpu_the_gpu_entries_are_disabled_and_say_what_to_do():
    options = device_options(StaticDiscovery(NO_GPU).discover())
    assert [(o.kind, o.enabled) for o in options] == [("cpu", True), ("gpu", False),
                                                       ("gpus", False)]
    assert options[0].label == "CPU (8 cores, 16.0 GB)"
    for option in options[1:]:
        assert 'pip install -e ".[gpu]"' in option.reason
        assert "layer-studio[gpu]" in option.reason
        assert "nvidia-smi" in option.reason


def test_each_gpu_is_an_entry_and_several_train_mirrored():
    labels = [(o.label, o.kind, o.gpus, o.enabled) for o in device_options(TWO_GPUS)]
    assert labels == [
        ("CPU (8 cores, 16.0 GB)", "cpu", (), True),
        ("GPU 0: A100 (40.0 GB, compute 8.0)", "gpu", (0,), True),
        ("GPU 1: A100 (40.0 GB, compute 8.0)", "gpu", (1,), True),
        ("All 2 GPUs (MirroredStrategy)", "gpus", (), True),
    ]


def test_one_gpu_is_offered_but_not_several():
    options = device_options(OLD_GPU)
    assert [(o.label, o.enabled) for o in options] == [
        ("CPU (8 cores, 16.0 GB)", True),
        ("GPU 0: Tesla P4 (8.0 GB, compute 6.1)", True),
        ("Several GPUs (MirroredStrategy)", False),
    ]
    assert "two or more" in options[-1].reason
    unknown = Devices(cpu=CPU, gpus=[GpuInfo(0, "Mystery", None, None)])
    assert device_options(unknown)[1].label == "GPU 0: Mystery"


def test_mixed_float16_needs_compute_capability_7_on_every_chosen_gpu():
    assert offered(TWO_GPUS, choice("gpu", [1])) == {
        "float32": True, "mixed_float16": True, "mixed_bfloat16": False}
    assert offered(TWO_GPUS, choice("gpus")) == {
        "float32": True, "mixed_float16": True, "mixed_bfloat16": False}
    assert not offered(OLD_GPU, choice("gpu", [0]))["mixed_float16"]
    assert offered(MIXED_GPUS, choice("gpu", [0]))["mixed_float16"]
    reasons = {o.precision: o.reason for o in precision_options(MIXED_GPUS, choice("gpus"))}
    assert "GPU 1 has compute capability 6.1" in reasons["mixed_float16"]
    assert "7.0" in reasons["mixed_float16"]


def test_mixed_bfloat16_only_when_training_on_a_cpu_that_has_it():
    bf16 = Devices(cpu=BF16_CPU, gpus=TWO_GPUS.gpus)
    assert offered(bf16, choice("cpu")) == {
        "float32": True, "mixed_float16": False, "mixed_bfloat16": True}
    assert not offered(bf16, choice("gpu", [0]))["mixed_bfloat16"]
    reasons = {o.precision: o.reason for o in precision_options(NO_GPU, choice("cpu"))}
    assert offered(NO_GPU, choice("cpu"))["mixed_bfloat16"] is False
    assert "bfloat16 instructions" in reasons["mixed_bfloat16"]
    assert "GPUs of compute capability 7.0" in reasons["mixed_float16"]


def test_training_devices_for_each_choice():
    split = Devices(cpu=CPU, cpu_devices=2)
    assert training_devices(choice("cpu"), NO_GPU) == ["/cpu:0"]
    assert training_devices(choice("cpu"), split) == ["/cpu:0", "/cpu:1"]
    assert training_devices(choice("gpu", [1]), TWO_GPUS) == ["/gpu:1"]
    assert training_devices(choice("gpu"), TWO_GPUS) == ["/gpu:0"]
    assert training_devices(choice("gpus"), TWO_GPUS) == ["/gpu:0", "/gpu:1"]
    assert training_devices(choice("gpus", [1]), TWO_GPUS) == ["/gpu:1"]


def test_a_choice_this_machine_cannot_honour_says_what_to_pick():
    with pytest.raises(DeviceError, match="GPU 1.*no GPU.*Pick the CPU.*gpu"):
        training_devices(choice("gpu", [1]), NO_GPU)
    with pytest.raises(DeviceError, match=r"no GPU 1 \(it has GPU 0\)"):
        training_devices(choice("gpu", [1]), OLD_GPU)
    with pytest.raises(DeviceError, match=r"no GPU 2, GPU 3 \(it has GPU 0, GPU 1\)"):
        training_devices(choice("gpus", [0, 2, 3]), TWO_GPUS)
    with pytest.raises(DeviceError, match="Unknown device kind"):
        training_devices(choice("tpu"), TWO_GPUS)


def test_the_saved_choice_gets_an_entry_saying_why_it_is_unavailable():
    missing = option_for(choice("gpu", [1]), OLD_GPU)
    assert (missing.label, missing.enabled) == ("GPU 1 (not on this machine)", False)
    assert "it has GPU 0" in missing.reason
    assert option_for(choice("gpu", [1]), TWO_GPUS).label.startswith("GPU 1: A100")
    assert option_for(choice("gpus"), TWO_GPUS).label == "All 2 GPUs (MirroredStrategy)"
    some = option_for(choice("gpus", [0, 1]), TWO_GPUS)
    assert (some.label, some.enabled) == ("GPUs 0, 1 (MirroredStrategy)", True)


def test_moving_to_another_device_keeps_the_precision_only_if_offered_there():
    on_gpu = choice("gpu", [0], precision="mixed_float16")
    assert with_device(on_gpu, "gpu", (1,), TWO_GPUS) == choice("gpu", [1], "mixed_float16")
    assert with_device(on_gpu, "cpu", (), TWO_GPUS) == choice("cpu", [], "float32")
    bf16 = Devices(cpu=BF16_CPU)
    on_cpu = choice("cpu", precision="mixed_bfloat16")
    assert with_device(on_cpu, "cpu", (), bf16).precision == "mixed_bfloat16"


def test_device_summary_line():
    assert describe_devices(NO_GPU) == "CPU: Test CPU, 8 cores, 16.0 GB. No GPU found."
    assert describe_devices(Devices(cpu=BF16_CPU, gpus=MIXED_GPUS.gpus, cpu_devices=2)) == (
        "CPU: Test CPU with bfloat16, 8 cores, 16.0 GB, bfloat16, split into 2 devices. "
        "2 GPUs: A100 (40.0 GB, compute 8.0); Tesla P4 (compute 6.1).")


def test_cpu_info_describes_this_machine():
    cpu = cpu_info()
    assert cpu.cores == os.cpu_count()
    assert cpu.memory_bytes == psutil.virtual_memory().total
    assert cpu.name
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        flags = set()
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.partition(":")[2].split())
                break
        assert cpu.bfloat16 == any(flag in flags for flag in BF16_FLAGS)


def test_tensorflow_discovery_looks_once_per_process(monkeypatch):
    calls = []

    def discover() -> Devices:
        calls.append(1)
        return NO_GPU

    monkeypatch.setattr(devices_module, "_discover_tensorflow", discover)
    monkeypatch.setattr(TensorFlowDiscovery, "_found", None)
    assert TensorFlowDiscovery().discover() is NO_GPU
    assert TensorFlowDiscovery().discover() is NO_GPU
    assert calls == [1]


def test_an_unknown_precision_is_refused():
    with pytest.raises(DeviceError, match="Unknown precision"):
        apply_precision("float8")


TRAINING_SCRIPT = textwrap.dedent("""
    import contextlib, json
    import numpy as np
    from studio.core.hardware.devices import (TensorFlowDiscovery, apply_determinism,
                                              apply_precision, device_scope,
                                              op_determinism_enabled, training_devices)
    from studio.core.project.document import DeviceChoice
    from studio.core.base.runtime import start_tensorflow

    result = {"note": start_tensorflow()}
    import keras
    import tensorflow as tf

    devices = TensorFlowDiscovery().discover()
    result["cpu_devices"] = devices.cpu_devices
    result["gpus"] = len(devices.gpus)
    result["tf_gpus"] = len(tf.config.list_physical_devices("GPU"))
    result["cores"] = devices.cpu.cores
    result["threads"] = tf.config.threading.get_intra_op_parallelism_threads()
    rng = np.random.default_rng(0)
    x = rng.random((16, 4), dtype=np.float32)
    y = rng.integers(0, 2, 16)

    def model(output_dtype=None):
        return keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                                 keras.layers.Dropout(0.3),
                                 keras.layers.Dense(2, activation="softmax",
                                                    dtype=output_dtype)])

    def fit(names=None):
        with device_scope(names) if names else contextlib.nullcontext():
            net = model()
            net.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            return net.fit(x, y, batch_size=8, epochs=2, verbose=0).history["loss"]

    names = training_devices(DeviceChoice(kind="cpu"), devices)
    result["devices"] = names
    with device_scope(names) as replicas:
        result["replicas"] = replicas
        result["mirrored"] = type(tf.distribute.get_strategy()).__name__
    result["mirrored_losses"] = fit(names)
    with device_scope(names[1:]) as replicas:
        result["one_device"] = [replicas, tf.distribute.has_strategy()]
    result["one_device_losses"] = fit(names[1:])

    runs = []
    for seed in (7, 7, 8):
        apply_determinism(True, seed)
        runs.append(fit())
    result["deterministic_runs"] = runs
    result["determinism_on"] = op_determinism_enabled()
    apply_determinism(False, 7)
    result["determinism_off"] = not op_determinism_enabled()
    tf.random.normal([1])  # with determinism on, an unseeded random op would raise

    apply_precision("mixed_bfloat16")
    net = model(output_dtype="float32")
    result["bf16_compute"] = net.layers[0].compute_dtype
    out = net.predict(x, verbose=0)
    result["bf16_output"] = str(out.dtype)
    net.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    result["bf16_loss"] = net.fit(x, y, batch_size=8, epochs=1, verbose=0).history["loss"]
    apply_precision("float32")
    result["after_policy"] = keras.mixed_precision.global_policy().name
    print(json.dumps(result))
""")


def run_python(code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter with ``env`` added; its last output line is JSON."""
    full_env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **env}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=full_env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def split_cpu_run() -> dict:
    """One process with the CPU split in two and one thread per op pool, that trains."""
    return run_python(TRAINING_SCRIPT, LAYER_STUDIO_CPU_DEVICES="2", LAYER_STUDIO_THREADS="1")


def test_real_discovery_sees_this_machine_and_the_split_cpu(split_cpu_run):
    assert split_cpu_run["note"] == ""
    assert split_cpu_run["cpu_devices"] == 2
    assert split_cpu_run["gpus"] == split_cpu_run["tf_gpus"]
    assert split_cpu_run["cores"] == os.cpu_count()
    assert split_cpu_run["threads"] == 1


def test_training_on_two_cpu_devices_under_mirrored_strategy(split_cpu_run):
    assert split_cpu_run["devices"] == ["/cpu:0", "/cpu:1"]
    assert split_cpu_run["replicas"] == 2
    assert split_cpu_run["mirrored"] == "MirroredStrategy"
    losses = split_cpu_run["mirrored_losses"]
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)


def test_one_device_trains_without_a_distribution_strategy(split_cpu_run):
    assert split_cpu_run["one_device"] == [1, False]
    losses = split_cpu_run["one_device_losses"]
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)


def test_deterministic_runs_with_one_seed_give_identical_losses(split_cpu_run):
    first, again, other_seed = split_cpu_run["deterministic_runs"]
    assert split_cpu_run["determinism_on"]
    assert first == again
    assert first != other_seed


def test_op_determinism_turns_off_again_in_the_same_process(split_cpu_run):
    assert split_cpu_run["determinism_off"]


def test_mixed_bfloat16_computes_in_bfloat16_with_float32_outputs(split_cpu_run):
    assert split_cpu_run["bf16_compute"] == "bfloat16"
    assert split_cpu_run["bf16_output"] == "float32"
    assert all(math.isfinite(loss) for loss in split_cpu_run["bf16_loss"])
    assert split_cpu_run["after_policy"] == "float32"


DETECTOR_SCRIPT = textwrap.dedent("""
    import json, tempfile
    from pathlib import Path
    from studio.core.base.runtime import start_tensorflow
    start_tensorflow()
    from studio.core.training.trainer import train
    from tests.detection_runs import detection_project

    folder = Path(tempfile.mkdtemp())
    project = detection_project(folder)
    project.training.device.precision = "mixed_bfloat16"
    events = []
    result = train(project, folder / "runs", events.append)
    (start,) = [e for e in events if e["type"] == "start"]
    print(json.dumps({"status": result.status, "replicas": start["replicas"],
                      "devices": start["devices"], "epochs": result.epochs}))
""")


def test_a_detector_trains_mirrored_on_two_cpu_devices_in_mixed_precision():
    """A detector trains as a classifier does: on the CPU split in two under a
    MirroredStrategy, computing in bfloat16, and logs finite loss parts and mAP."""
    result = run_python(DETECTOR_SCRIPT, LAYER_STUDIO_CPU_DEVICES="2", LAYER_STUDIO_THREADS="1")
    assert result["status"] == "finished"
    assert result["replicas"] == 2 and result["devices"] == "/cpu:0, /cpu:1"
    (epoch,) = result["epochs"]
    for name in ("loss", "heatmap_loss", "size_loss", "offset_loss", "val_loss"):
        assert math.isfinite(epoch[name]), name
    assert 0.0 <= epoch["val_map50"] <= 1.0


def test_start_tensorflow_after_the_runtime_started_says_what_it_could_not_apply():
    code = textwrap.dedent("""
        import json
        import tensorflow as tf
        tf.constant(1.0) + 1  # starts the runtime
        from studio.core.base.runtime import start_tensorflow
        print(json.dumps({"notes": [start_tensorflow(), start_tensorflow()],
                          "cpus": len(tf.config.list_logical_devices("CPU"))}))
    """)
    result = run_python(code, LAYER_STUDIO_CPU_DEVICES="2", LAYER_STUDIO_THREADS="1")
    first, second = result["notes"]
    assert "LAYER_STUDIO_CPU_DEVICES=2 was ignored" in first
    assert "LAYER_STUDIO_THREADS=1 was ignored" in first
    assert "restart the app" in first
    assert second == first
    assert result["cpus"] == 1
