"""The computer's camera through Qt Multimedia. Qt Multimedia comes with PySide6-Addons, which
a smaller install may lack: it is imported only when a camera is wanted, and its absence is
a reason shown to the person, not an error."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, Slot

from studio.gui.camera.source import FrameSource
from studio.gui.widgets.images import image_array

MULTIMEDIA = "PySide6.QtMultimedia"
NEEDS_MULTIMEDIA = "The camera needs Qt Multimedia: pip install PySide6-Addons"
NO_CAMERA = "No camera found"
REFUSED = "Layer Studio may not use the camera: allow it in the system's privacy settings"
PREFERRED_WIDTH = 640
"""The camera format asked for is the one closest to this width: enough to see and to train
on, and cheap to convert and keep at 30 frames a second."""


def multimedia() -> tuple[ModuleType | None, str]:
    """Qt Multimedia, or None and why it cannot be used."""
    try:
        return importlib.import_module(MULTIMEDIA), ""
    except ModuleNotFoundError:
        return None, NEEDS_MULTIMEDIA
    except ImportError as exc:  # installed, but a library it needs is missing (libpulse…)
        return None, f"Qt Multimedia did not load: {exc}"


def _permission() -> Any:
    """The camera permission, where this Qt asks for one (macOS, Android)."""
    from PySide6.QtCore import QCameraPermission

    return QCameraPermission()


class QtCamera(FrameSource):
    """The system's default camera. Frames are converted from Qt's video frames on the GUI
    thread as they arrive."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._camera: Any = None
        self._session: Any = None
        self._sink: Any = None

    def why_unavailable(self) -> str:
        module, why = multimedia()
        if module is None:
            return why
        if not module.QMediaDevices.videoInputs():
            return NO_CAMERA
        if QCoreApplication.instance().checkPermission(_permission()) \
                == Qt.PermissionStatus.Denied:
            return REFUSED
        return ""

    def start(self) -> None:
        if self._camera is not None:
            return
        why = self.why_unavailable()
        if why:
            self.failed.emit(why)
            return
        app = QCoreApplication.instance()
        if app.checkPermission(_permission()) == Qt.PermissionStatus.Undetermined:
            app.requestPermission(_permission(), self, self._permission_answered)
            return
        self._open()

    def _permission_answered(self, permission: Any) -> None:
        if permission.status() == Qt.PermissionStatus.Granted:
            self._open()
        else:
            self.failed.emit(REFUSED)

    def _open(self) -> None:
        module = importlib.import_module(MULTIMEDIA)
        device = module.QMediaDevices.defaultVideoInput()
        self._camera = module.QCamera(device, self)
        formats = device.videoFormats()
        if formats:
            self._camera.setCameraFormat(min(
                formats, key=lambda f: (abs(f.resolution().width() - PREFERRED_WIDTH),
                                        -f.maxFrameRate())))
        self._session = module.QMediaCaptureSession(self)
        self._sink = module.QVideoSink(self)
        self._session.setCamera(self._camera)
        self._session.setVideoSink(self._sink)
        # A slot of this object: frames, sent from Qt's video thread, are queued to the GUI's.
        self._sink.videoFrameChanged.connect(self._frame_arrived)
        self._camera.errorOccurred.connect(self._camera_failed)
        self._camera.start()
        self.running_changed.emit(True)

    def stop(self) -> None:
        if self._camera is None:
            return
        self._sink.videoFrameChanged.disconnect(self._frame_arrived)
        self._camera.stop()
        for part in (self._camera, self._session, self._sink):
            part.deleteLater()
        self._camera = self._session = self._sink = None
        self.running_changed.emit(False)

    def is_running(self) -> bool:
        return self._camera is not None

    @Slot(object)
    def _frame_arrived(self, frame: Any) -> None:
        if self._camera is None:
            return  # queued before the camera stopped
        image = frame.toImage()
        if not image.isNull():
            self.frame.emit(image_array(image))

    @Slot(object, str)
    def _camera_failed(self, error: Any, text: str) -> None:
        self.stop()
        self.failed.emit(f"The camera stopped: {text}" if text else "The camera stopped.")
