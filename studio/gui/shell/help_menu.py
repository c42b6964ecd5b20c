"""The Help menu: Welcome, the guide, keyboard shortcuts, diagnostics for a bug report, and
About."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QDialog, QMainWindow

from studio.core.base.versions import diagnostics_text
from studio.gui.shell.about_dialog import AboutDialog, all_versions, devices_text
from studio.gui.shell.readme_dialog import ReadmeDialog
from studio.gui.shell.shortcuts_dialog import ShortcutsDialog
from studio.gui.training.device_form import DeviceForm
from studio.gui.widgets.errors import last_error


class HelpMenu(QObject):
    """Adds the Help menu to ``window``; ``welcome`` shows the welcome page, ``device_form``
    knows the devices."""

    def __init__(self, window: QMainWindow, device_form: DeviceForm,
                 welcome: Callable[[], object]) -> None:
        super().__init__(window)
        self.window = window
        self.device_form = device_form
        self.dialogs: dict[type, QDialog] = {}
        """The dialog of each kind, once opened (shown again, not made anew)."""
        self.menu = window.menuBar().addMenu("&Help")
        self._add("&Welcome…", welcome,
                  tip="Start again from the demo, a template, a recent project, a folder of "
                      "images or a Keras model")
        self._add("Layer Studio &Guide", lambda: self.show(ReadmeDialog),
                  QKeySequence.StandardKey.HelpContents, "The README, as installed: no network")
        self._add("&Keyboard Shortcuts…", lambda: self.show(ShortcutsDialog), "Ctrl+/",
                  "Every shortcut, with a filter")
        self.menu.addSeparator()
        self._add("&Copy Diagnostics", self.copy_diagnostics,
                  tip="Copy the versions, devices and last error, for a bug report")
        self._add("&About Layer Studio", lambda: self.show(AboutDialog))

    def _add(self, text: str, slot, keys=None, tip: str = "") -> QAction:
        action = self.menu.addAction(text)
        action.triggered.connect(lambda _=False: slot())
        if keys is not None:
            action.setShortcut(QKeySequence(keys))
        action.setStatusTip(tip)
        return action

    def show(self, kind: type[QDialog]) -> QDialog:
        """Show the dialog of ``kind`` (About, shortcuts, guide), made on first use."""
        dialog = self.dialogs.get(kind)
        if dialog is None:
            dialog = (AboutDialog(self.device_form, self.window) if kind is AboutDialog
                      else kind(self.window))
            self.dialogs[kind] = dialog
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def diagnostics(self) -> str:
        """The versions, the devices and the last error shown, as a bug report wants them."""
        return diagnostics_text(all_versions(), devices_text(self.device_form.devices),
                                last_error())

    def copy_diagnostics(self) -> None:
        """Put :meth:`diagnostics` on the clipboard and say so."""
        QGuiApplication.clipboard().setText(self.diagnostics())
        self.window.statusBar().showMessage(
            "Diagnostics copied: paste them into your bug report.", 8000)


