"""The Help menu: About, Keyboard Shortcuts, the guide (README) offline, Copy Diagnostics."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextDocument
from PySide6.QtWidgets import QMenu

from studio.core.base.versions import package_versions
from studio.core.hardware.devices import CpuInfo, Devices, StaticDiscovery, describe_devices
from studio.core.project.templates import demo_project
from studio.gui.shell.about_dialog import LOOKING, AboutDialog
from studio.gui.shell.app import create_application
from studio.gui.shell.main_window import MainWindow
from studio.gui.shell.readme_dialog import IMAGE_WIDTH, README, ReadmeDialog
from studio.gui.shell.shortcuts_dialog import ShortcutsDialog
from tests.gui.support import type_into

MACHINE = Devices(CpuInfo("Test CPU", 4, 8 * 2**30, False))
CTRL = Qt.KeyboardModifier.ControlModifier


class GatedDiscovery(StaticDiscovery):
    """Finds MACHINE once ``gate`` opens, as TensorFlow does once it has loaded."""

    def __init__(self) -> None:
        super().__init__(MACHINE)
        self.gate = threading.Event()

    def discover(self) -> Devices:
        self.gate.wait(30)
        return self.devices


@pytest.fixture
def discovery():
    found = GatedDiscovery()
    yield found
    found.gate.set()  # nothing stays held


@pytest.fixture
def window(qtbot, dialogs, discovery):
    """The main window on the demo, its devices found by ``discovery``."""
    create_application()
    win = MainWindow(demo_project(), discovery=discovery)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    discovery.gate.set()
    qtbot.waitUntil(lambda: not win.training.device_form.discovering.busy())


def help_action(window, text: str):
    """The Help menu's action whose text starts with ``text``."""
    menu = window.help.menu
    assert isinstance(menu, QMenu) and menu.title() == "&Help"
    return next(a for a in menu.actions() if a.text().replace("&", "").startswith(text))


def test_about_shows_the_versions_then_the_devices_once_found(qtbot, window, discovery):
    assert [a.text().replace("&", "") for a in window.help.menu.actions() if a.text()] == [
        "Welcome…", "Layer Studio Guide", "Keyboard Shortcuts…", "Copy Diagnostics",
        "About Layer Studio"]
    help_action(window, "About").trigger()
    about = window.help.dialogs[AboutDialog]
    qtbot.waitExposed(about)
    versions = package_versions()
    assert about.versions["tensorflow"].text() == versions["tensorflow"] != "unknown"
    assert about.versions["keras"].text() == versions["keras"] != "unknown"
    assert about.versions["qt"].text().startswith("6.")
    assert about.devices.text() == LOOKING  # TensorFlow loads meanwhile
    discovery.gate.set()
    qtbot.waitUntil(lambda: about.devices.text() == describe_devices(MACHINE))
    about.close()
    help_action(window, "About").trigger()
    assert window.help.dialogs[AboutDialog] is about and about.isVisible()


def test_keyboard_shortcuts_lists_the_windows_actions_and_filters_them(qtbot, window):
    qtbot.keyClick(window, Qt.Key.Key_Slash, CTRL)
    shortcuts = window.help.dialogs[ShortcutsDialog]
    qtbot.waitExposed(shortcuts)
    rows = shortcuts.shown_rows()
    for row in (("New", "Ctrl+N", "File"), ("Start", "F5", "Training"),
                ("Fit to View", "F", "View"), ("Keyboard Shortcuts", "Ctrl+/", "Help"),
                ("Evaluate", "F6", "Evaluate tab")):
        assert row in rows
    type_into(qtbot, shortcuts.filter, "zoom")
    assert [r[0] for r in shortcuts.shown_rows()] == ["Zoom In", "Zoom Out"]
    type_into(qtbot, shortcuts.filter, "f5")
    assert shortcuts.shown_rows() == [("Start", "F5", "Training"),
                                      ("Stop", "Shift+F5", "Training")]
    type_into(qtbot, shortcuts.filter, "search tab")
    assert {r[0] for r in shortcuts.shown_rows()} == {"Start search", "Stop search"}


def test_the_guide_is_the_readme_with_its_screenshots_offline(qtbot, window):
    qtbot.keyClick(window, Qt.Key.Key_F1)
    guide = window.help.dialogs[ReadmeDialog]
    qtbot.waitExposed(guide)
    text = guide.browser.toPlainText()
    assert text.startswith("Layer Studio\nDesign, train and try neural networks")
    assert "Exporting a trained model" in text
    document = guide.browser.document()
    screenshot = document.resource(QTextDocument.ResourceType.ImageResource,
                                   "assets/screenshots/main-window.png")
    assert screenshot is not None and not screenshot.isNull()
    assert README.is_file() and guide.width() > IMAGE_WIDTH


def test_a_missing_guide_says_where_it_was_looked_for(qtbot, tmp_path):
    create_application()
    guide = ReadmeDialog(None, tmp_path / "README.md")
    qtbot.addWidget(guide)
    assert guide.browser.toPlainText() == (
        f"The guide cannot be read: {tmp_path / 'README.md'}: No such file or directory")


def test_copy_diagnostics_puts_versions_devices_and_the_last_error_on_the_clipboard(
        qtbot, window, discovery, tmp_path, dialogs):
    missing = tmp_path / "gone.studio.json"
    assert not window.open_path(missing)
    (shown,) = dialogs
    discovery.gate.set()
    window.training.device_form.look_for_devices()
    qtbot.waitUntil(lambda: window.training.device_form.devices is not None)
    help_action(window, "Copy Diagnostics").trigger()
    copied = QGuiApplication.clipboard().text()
    versions = package_versions()
    assert copied.startswith(f"Layer Studio diagnostics\nLayer Studio {versions['layer_studio']}\n")
    for line in (f"TensorFlow {versions['tensorflow']}", f"Keras {versions['keras']}",
                 f"Devices: {describe_devices(MACHINE)}",
                 f"Last error: Cannot open project: {shown[2]}"):
        assert f"\n{line}\n" in copied
    assert window.statusBar().currentMessage().startswith("Diagnostics copied")
