"""The device form, driven by clicks and keys, on machines faked through StaticDiscovery."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QVBoxLayout, QWidget

from studio.core.hardware.devices import CpuInfo, Devices, GpuInfo, StaticDiscovery
from studio.core.project.document import DeviceChoice, Project
from studio.gui.shell.app import create_application
from studio.gui.training.device_form import LOOKING, DeviceForm
from studio.gui.widgets.document import ProjectDocument

GB = 2**30
CPU = CpuInfo("Test CPU", cores=4, memory_bytes=16 * GB, bfloat16=True)
NO_GPU = Devices(cpu=CPU)
TWO_GPUS = Devices(cpu=CPU, gpus=[GpuInfo(0, "Tesla P4", 8 * GB, (6, 1)),
                                  GpuInfo(1, "A100", 40 * GB, (8, 0))])
CTRL = Qt.KeyboardModifier.ControlModifier


class GatedDiscovery:
    """Finds ``devices`` only once ``release`` is set, so the wait can be seen."""

    def __init__(self, devices: Devices) -> None:
        self.devices = devices
        self.release = threading.Event()

    def discover(self) -> Devices:
        self.release.wait(30)
        return self.devices


class FailingDiscovery:
    def discover(self) -> Devices:
        raise RuntimeError("driver exploded")


HOSTS: list[QWidget] = []
"""Windows of the running test (qtbot holds its widgets weakly)."""


@pytest.fixture(autouse=True)
def hosts():
    yield HOSTS
    HOSTS.clear()


def make_form(qtbot, discovery, device: DeviceChoice | None = None) -> DeviceForm:
    """The form in a shown window that undoes on Ctrl+Z, as the main window does."""
    create_application()
    project = Project()
    if device is not None:
        project.training.device = device
    doc = ProjectDocument(project)
    host = QWidget()
    qtbot.addWidget(host)
    HOSTS.append(host)
    undo = doc.undo_stack.createUndoAction(host)
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    host.addAction(undo)
    form = DeviceForm(doc, discovery)
    form.look_for_devices()
    QVBoxLayout(host).addWidget(form)
    host.show()
    qtbot.waitExposed(host)
    host.activateWindow()
    return form


def found(qtbot, form: DeviceForm) -> DeviceForm:
    qtbot.waitUntil(lambda: form.devices is not None and not form.discovering.busy())
    return form


def entries(combo) -> dict[str, tuple[bool, str]]:
    return {label: (enabled, tip) for label, _, enabled, tip in combo.entries()}


def pick(qtbot, combo, label: str) -> None:
    """Open ``combo``'s list with a click and click the entry ``label``."""
    qtbot.mouseClick(combo, Qt.MouseButton.LeftButton)
    view = combo.view()
    qtbot.waitUntil(view.isVisible)
    row = next(i for i, entry in enumerate(combo.entries()) if entry[0] == label)
    center = view.visualRect(combo.model().index(row, 0)).center()
    qtbot.mouseMove(view.viewport(), center)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=center)
    qtbot.waitUntil(lambda: not view.isVisible())


def device(form: DeviceForm) -> DeviceChoice:
    return form.doc.project.training.device


def test_looks_for_devices_in_the_background_and_then_lists_them(qtbot):
    discovery = GatedDiscovery(NO_GPU)
    form = make_form(qtbot, discovery)
    assert form.summary.text() == LOOKING
    assert not form.device.isEnabled() and form.device.currentText() == "CPU"
    discovery.release.set()
    with qtbot.waitSignal(form.devices_found) as signal:
        pass
    assert signal.args == [NO_GPU]
    found(qtbot, form)
    assert form.device.isEnabled()
    assert form.summary.text() == "CPU: Test CPU, 4 cores, 16.0 GB, bfloat16. No GPU found."


def test_without_a_gpu_the_gpu_entries_are_disabled_with_the_reason_shown(qtbot, tmp_path):
    form = found(qtbot, make_form(qtbot, StaticDiscovery(NO_GPU)))
    menu = entries(form.device)
    assert menu["CPU (4 cores, 16.0 GB)"][0]
    for label in ("GPU (none found)", "Several GPUs (none found)"):
        enabled, tip = menu[label]
        assert not enabled
        assert "pip install" in tip and "nvidia-smi" in tip
    assert form.device_hint.isVisible()
    assert "[gpu]" in form.device_hint.text() and "nvidia-smi" in form.device_hint.text()
    assert not form.warning.isVisible()
    qtbot.keyClick(form.device, Qt.Key.Key_Down)
    assert form.device.currentText() == "CPU (4 cores, 16.0 GB)"
    assert form.doc.undo_stack.count() == 0
    assert form.grab().save(str(tmp_path / "device_form.png"))


def test_picking_gpu_1_with_clicks_is_one_undo_step(qtbot, tmp_path):
    form = found(qtbot, make_form(qtbot, StaticDiscovery(TWO_GPUS)))
    assert not form.device_hint.isVisible()
    assert "2 GPUs: Tesla P4 (8.0 GB, compute 6.1); A100" in form.summary.text()
    pick(qtbot, form.device, "GPU 1: A100 (40.0 GB, compute 8.0)")
    assert device(form) == DeviceChoice(kind="gpu", gpus=[1])
    assert form.doc.undo_stack.count() == 1
    assert form.grab().save(str(tmp_path / "device_form_gpus.png"))
    qtbot.keyClick(form.device, Qt.Key.Key_Z, CTRL)
    assert device(form) == DeviceChoice()
    assert form.device.currentText() == "CPU (4 cores, 16.0 GB)"


def test_stepping_to_gpu_1_with_keys_undoes_in_one_step(qtbot):
    form = found(qtbot, make_form(qtbot, StaticDiscovery(TWO_GPUS)))
    form.device.setFocus()
    qtbot.keyClick(form.device, Qt.Key.Key_Down)
    qtbot.keyClick(form.device, Qt.Key.Key_Down)
    assert device(form) == DeviceChoice(kind="gpu", gpus=[1])
    assert form.doc.undo_stack.count() == 1
    qtbot.keyClick(form.device, Qt.Key.Key_Down)
    assert device(form) == DeviceChoice(kind="gpus", gpus=[])
    qtbot.keyClick(form.device, Qt.Key.Key_Z, CTRL)
    assert device(form) == DeviceChoice()


@pytest.mark.parametrize("gpu, float16", [("GPU 0: Tesla P4 (8.0 GB, compute 6.1)", False),
                                          ("GPU 1: A100 (40.0 GB, compute 8.0)", True)])
def test_precision_entries_follow_the_device(qtbot, gpu, float16):
    form = found(qtbot, make_form(qtbot, StaticDiscovery(TWO_GPUS)))
    on_cpu = entries(form.precision)
    assert [enabled for enabled, _ in on_cpu.values()] == [True, False, True]
    assert "GPUs of compute capability 7.0" in on_cpu["mixed_float16 (GPU tensor cores)"][1]
    pick(qtbot, form.precision, "mixed_bfloat16 (CPU bfloat16)")
    assert device(form).precision == "mixed_bfloat16"
    pick(qtbot, form.device, gpu)
    assert device(form).precision == "float32"
    on_gpu = entries(form.precision)
    assert [enabled for enabled, _ in on_gpu.values()] == [True, float16, False]
    assert "on a GPU pick mixed_float16" in on_gpu["mixed_bfloat16 (CPU bfloat16)"][1]
    if not float16:
        assert "compute capability 6.1" in on_gpu["mixed_float16 (GPU tensor cores)"][1]


def test_a_saved_gpu_missing_here_is_shown_with_a_warning(qtbot, tmp_path):
    form = found(qtbot, make_form(qtbot, StaticDiscovery(NO_GPU),
                                  DeviceChoice(kind="gpu", gpus=[1])))
    assert form.device.currentText() == "GPU 1 (not on this machine)"
    assert not entries(form.device)["GPU 1 (not on this machine)"][0]
    assert form.warning.isVisible()
    assert "trains on GPU 1" in form.warning.text()
    assert "Training will not start until you pick a device" in form.warning.text()
    assert form.grab().save(str(tmp_path / "device_form_missing.png"))
    pick(qtbot, form.device, "CPU (4 cores, 16.0 GB)")
    assert device(form) == DeviceChoice()
    assert not form.warning.isVisible()
    assert "GPU 1 (not on this machine)" not in entries(form.device)


def test_deterministic_says_it_trades_speed_and_is_undoable(qtbot):
    form = found(qtbot, make_form(qtbot, StaticDiscovery(NO_GPU)))
    box = form.deterministic
    assert "speed" in box.toolTip() and "reproducib" in box.toolTip()
    assert "slower" in box.text()
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    assert device(form).deterministic
    qtbot.keyClick(box, Qt.Key.Key_Z, CTRL)
    assert not device(form).deterministic and not box.isChecked()


def test_when_discovery_fails_the_cpu_is_still_offered(qtbot):
    form = found(qtbot, make_form(qtbot, FailingDiscovery()))
    assert form.device.currentText().startswith("CPU (")
    assert "Looking for GPUs failed: driver exploded" in form.summary.text()
