"""Help > About: the version of Layer Studio and of what it runs on, and the devices found."""

from __future__ import annotations

import PySide6
from PySide6.QtCore import Qt, Slot, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from studio.core.base.versions import TITLES, package_versions
from studio.core.hardware.devices import Devices, describe_devices
from studio.gui.training.device_form import DeviceForm

LOOKING = "Looking for them (this loads TensorFlow)…"


def all_versions() -> dict[str, str]:
    """Layer Studio's version and those of the packages and Qt it runs on."""
    return {**package_versions(), "qt": qVersion(), "pyside6": PySide6.__version__}


def devices_text(devices: Devices | None) -> str:
    """The machine in one line, or that it is not known yet."""
    return describe_devices(devices) if devices is not None else "Not known yet."


class AboutDialog(QDialog):
    """Versions, and the devices ``device_form`` finds (looked for now if not yet)."""

    def __init__(self, device_form: DeviceForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Layer Studio")
        versions = all_versions()
        title = QLabel(f"<h2>Layer Studio {versions.pop('layer_studio')}</h2>"
                       "Design, train and try neural networks on your own machine.")
        title.setWordWrap(True)
        form = QFormLayout()
        self.versions: dict[str, QLabel] = {}
        for name, number in versions.items():
            label = QLabel(number)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(TITLES[name], label)
            self.versions[name] = label
        self.devices = QLabel(LOOKING)
        self.devices.setObjectName("about-devices")
        self.devices.setWordWrap(True)
        self.devices.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Devices", self.devices)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.setMinimumWidth(480)
        if device_form.devices is not None:
            self._found(device_form.devices)
        else:
            device_form.devices_found.connect(self._found)
            device_form.look_for_devices()  # once: nothing if the window already started it

    @Slot(object)
    def _found(self, devices: Devices) -> None:
        self.devices.setText(devices_text(devices))
