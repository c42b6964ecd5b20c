"""Where and how precisely to train: the device, the float precision and determinism."""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QWidget

from studio.core.hardware.devices import (
    DeviceDiscovery,
    Devices,
    choice_label,
    cpu_info,
    describe_devices,
    device_options,
    no_gpu_reason,
    option_for,
    precision_options,
    with_device,
)
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.jobs import JobSlot
from studio.gui.widgets.sync import show_value

LOOKING = "Looking for devices…"
PRECISION_LABELS = {
    "float32": "float32 (full precision)",
    "mixed_float16": "mixed_float16 (GPU tensor cores)",
    "mixed_bfloat16": "mixed_bfloat16 (CPU bfloat16)",
}
PRECISION_HELP = {
    "float32": "Compute and keep weights in 32-bit floats: the safe default.",
    "mixed_float16": "Compute in 16-bit floats and keep weights in float32: faster and "
                     "lighter on GPUs of compute capability 7.0 or newer.",
    "mixed_bfloat16": "Compute in bfloat16 and keep weights in float32: faster on CPUs "
                      "with bfloat16 instructions.",
}
NO_GPU_HINT = ('No GPU found. For an NVIDIA GPU: pip install -e ".[gpu]" (or '
               "layer-studio[gpu]), and check the driver with nvidia-smi.")
WARNING_STYLE = "color: #b3261e;"
Entry = tuple[str, object, bool, str]
"""A menu entry: label, key, enabled, tooltip."""


def _discover(discovery: DeviceDiscovery):
    def task(on_event, stop) -> Devices:
        return discovery.discover()

    return task


class _Menu(QComboBox):
    """A combo box whose entries carry Python keys and may be disabled with a reason."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self.keys: list[object] = []

    def show_entries(self, entries: list[Entry], key: object) -> None:
        """Show ``entries`` (disabled ones greyed, each with its tooltip) and select the one
        keyed ``key``, without emitting; the items are rebuilt only when they differ."""
        model = self.model()
        assert isinstance(model, QStandardItemModel)
        with QSignalBlocker(self):
            if self.entries() != entries:
                model.clear()
                for label, _, enabled, tip in entries:
                    item = QStandardItem(label)
                    item.setEnabled(enabled)
                    item.setToolTip(tip)
                    model.appendRow(item)
                self.keys = [entry[1] for entry in entries]
            self.setCurrentIndex(self.keys.index(key) if key in self.keys else -1)

    def entries(self) -> list[Entry]:
        """The entries shown: label, key, enabled, tooltip."""
        model = self.model()
        assert isinstance(model, QStandardItemModel)
        return [(model.item(row).text(), key, model.item(row).isEnabled(),
                 model.item(row).toolTip()) for row, key in enumerate(self.keys)]

    def key_at(self, row: int) -> object:
        """The key of entry ``row``, or None."""
        return self.keys[row] if 0 <= row < len(self.keys) else None


class DeviceForm(QWidget):
    """The device menu (entries this machine lacks are greyed, with the reason), precision
    menu, determinism toggle and a summary of the machine; devices are looked for on a worker
    thread, and every change is an undoable edit of ``training.device``."""

    devices_found = Signal(object)
    """The devices were found (a ``Devices``)."""

    def __init__(self, doc: ProjectDocument, discovery: DeviceDiscovery) -> None:
        super().__init__()
        self.doc = doc
        self.devices: Devices | None = None
        """What this machine offers, once found."""

        self.device = _Menu("device")
        self.device.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.device.setMinimumContentsLength(24)
        self.device.currentIndexChanged.connect(self._device_picked)
        self.device_hint = QLabel()
        self.device_hint.setObjectName("device-hint")
        self.device_hint.setWordWrap(True)
        self.device_hint.setStyleSheet("color: palette(placeholder-text);")
        self.precision = _Menu("precision")
        self.precision.currentIndexChanged.connect(self._precision_picked)
        self.deterministic = QCheckBox("Deterministic (reproducible, slower)")
        self.deterministic.setObjectName("deterministic")
        self.deterministic.setToolTip(
            "Trades speed for reproducibility: ops run deterministically and the seed is "
            "fixed, so two runs of the same project give identical metrics, more slowly.")
        self.deterministic.toggled.connect(self._deterministic_toggled)
        self.summary = QLabel(LOOKING)
        self.summary.setObjectName("device-summary")
        self.summary.setWordWrap(True)
        self.summary.setToolTip("What TensorFlow can train on here")
        self.warning = QLabel()
        self.warning.setObjectName("device-warning")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(WARNING_STYLE)

        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow("Device", self.device)
        layout.addRow(self.device_hint)
        layout.addRow("Precision", self.precision)
        layout.addRow(self.deterministic)
        layout.addRow(self.summary)
        layout.addRow(self.warning)

        self.discovering = JobSlot(self)
        self.discovering.succeeded.connect(self._found)
        self.discovering.failed.connect(self._not_found)
        self._discover = _discover(discovery)
        """Looking for devices, until it has started (it runs once)."""
        doc.changed.connect(self.refresh)
        self.refresh()

    def look_for_devices(self) -> None:
        """Start looking for devices on the worker thread (it loads TensorFlow, so the window
        calls this once it shows)."""
        task, self._discover = self._discover, None
        if task is not None:
            self.discovering.start(task)

    def _found(self, devices: Devices) -> None:
        self.devices = devices
        self.refresh()
        self.devices_found.emit(devices)

    def _not_found(self, message: str) -> None:
        try:
            cpu = cpu_info()
        except Exception:  # noqa: BLE001 - the message below says discovery failed
            return
        self._found(Devices(cpu=cpu))
        self.summary.setText(f"{self.summary.text()} Looking for GPUs failed: {message}")

    def refresh(self) -> None:
        """Show the project's device choice and what this machine offers."""
        choice = self.doc.project.training.device
        show_value(self.deterministic, choice.deterministic)
        devices = self.devices
        if devices is None:
            self.device.show_entries([(choice_label(choice), None, True, "")], None)
            self.precision.show_entries(
                [(PRECISION_LABELS[choice.precision], None, True, "")], None)
            for combo in (self.device, self.precision):
                combo.setEnabled(False)
                combo.setToolTip(LOOKING)
            self.device_hint.hide()
            self.warning.hide()
            return
        current = option_for(choice, devices)
        options = device_options(devices)
        if current not in options:
            options.append(current)
        key = (current.kind, current.gpus)
        self.device.show_entries([(o.label, (o.kind, o.gpus), o.enabled, o.reason or o.label)
                            for o in options], key)
        precisions = precision_options(devices, choice)
        self.precision.show_entries([(PRECISION_LABELS[p.precision], p.precision, p.enabled,
                                p.reason or PRECISION_HELP[p.precision]) for p in precisions],
              choice.precision)
        self.device.setEnabled(True)
        self.precision.setEnabled(True)
        self.device.setToolTip(current.reason or "Where to train: the CPU, one GPU, or all "
                               "GPUs together (MirroredStrategy)")
        chosen = next(p for p in precisions if p.precision == choice.precision)
        self.precision.setToolTip(chosen.reason or PRECISION_HELP[chosen.precision])
        self.device_hint.setText(NO_GPU_HINT)
        self.device_hint.setToolTip(no_gpu_reason())
        self.device_hint.setVisible(not devices.gpus)
        self.summary.setText(describe_devices(devices))
        problems = []
        if not current.enabled:
            problems.append(f"⚠ {current.reason} Training will not start until you pick a "
                            "device this machine has.")
        elif not chosen.enabled:
            problems.append(f"⚠ {chosen.precision} is not offered here: {chosen.reason} "
                            "Training would still use it, probably more slowly than float32.")
        self.warning.setText(" ".join(problems))
        self.warning.setVisible(bool(problems))

    def _device_picked(self, row: int) -> None:
        key = self.device.key_at(row)
        devices = self.devices
        if devices is None or key is None:
            return
        kind, gpus = key
        self.doc.edit(f"Train on {self.device.itemText(row)}",
                      lambda p: setattr(p.training, "device",
                                        with_device(p.training.device, kind, gpus, devices)),
                      merge_key="training.device")

    def _precision_picked(self, row: int) -> None:
        precision = self.precision.key_at(row)
        if precision is None:
            return
        self.doc.edit(f"Set precision to {precision}",
                      lambda p: setattr(p.training.device, "precision", precision),
                      merge_key="training.device.precision")

    def _deterministic_toggled(self, on: bool) -> None:
        self.doc.edit("Turn determinism " + ("on" if on else "off"),
                      lambda p: setattr(p.training.device, "deterministic", on),
                      merge_key="training.device.deterministic")
