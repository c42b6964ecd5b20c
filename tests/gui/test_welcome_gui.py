"""The welcome page, the recent projects and what the window remembers between sessions."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QFileDialog

from studio.core.base.preferences import VERSION
from studio.core.project.document import save_project
from studio.core.project.templates import TEMPLATES, demo_project, from_template
from studio.gui.shell.app import open_window
from studio.gui.shell.main_window import MainWindow
from studio.gui.shell.recent_projects import preferences_path
from studio.gui.shell.welcome import WelcomePage
from tests.gui.support import isolate_settings
from tests.keras_models import branched_model

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture(autouse=True)
def _private_settings(tmp_path):
    isolate_settings(tmp_path / "settings")


def new_window(qtbot) -> MainWindow:
    """Another window, as after a restart (reads the settings afresh)."""
    win = MainWindow(demo_project())
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def welcome(window, qtbot) -> WelcomePage:
    """Help > Welcome…, as a person opens it."""
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    next(a for a in help_menu.actions() if a.text() == "&Welcome…").trigger()
    (page,) = [page for page in window.findChildren(WelcomePage) if page.isVisible()]
    qtbot.waitExposed(page)
    return page


def project_files(tmp_path, *names: str):
    """Project files of the templates ``names`` (named after them)."""
    paths = []
    for name in names:
        path = tmp_path / f"{name}.studio.json"
        save_project(from_template(name), path)
        paths.append(path)
    return paths


def choose_files(monkeypatch, *paths) -> None:
    """Answer the open dialogs with ``paths`` in turn."""
    answers = iter(paths)
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda *args, **kwargs: (str(next(answers)), "")))


def recent_menu_names(window) -> list[str]:
    window.recent_menu.aboutToShow.emit()
    return [action.text() for action in window.recent_menu.actions()]


def test_a_template_card_starts_a_new_project_by_click_or_key(window, qtbot):
    page = welcome(window, qtbot)
    assert [card.name for card in page.cards] == list(TEMPLATES)
    card = next(card for card in page.cards if card.name == "lenet5")
    qtbot.mouseClick(card, LEFT)
    assert not page.isVisible()
    assert window.doc.project.name == TEMPLATES["lenet5"].title
    assert window.doc.path is None

    page = welcome(window, qtbot)
    card = next(card for card in page.cards if card.name == "mlp")
    card.setFocus()
    qtbot.keyClick(card, Qt.Key.Key_Space)
    assert window.doc.project.name == TEMPLATES["mlp"].title


def test_the_demo_button_brings_back_the_demo_project(window, qtbot, dialogs):
    window.new_project("resnet")
    page = welcome(window, qtbot)
    assert page.demo.isDefault()
    qtbot.mouseClick(page.demo, LEFT)
    assert window.doc.project.to_dict() == demo_project().to_dict()


def test_open_a_folder_of_images_uses_it_as_the_data(window, qtbot, monkeypatch, tmp_path):
    folder = tmp_path / "leaves"
    for name in ("healthy", "spotted"):
        (folder / name).mkdir(parents=True)
    asked = []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(
        lambda parent, title, start: asked.append(title) or str(folder)))
    qtbot.mouseClick(welcome(window, qtbot).open_folder, LEFT)
    assert asked == ["Choose an image folder (one subfolder per class)"]
    assert window.views.currentWidget() is window.data_panel
    dataset = window.doc.project.dataset
    assert (dataset.source, dataset.path) == ("folder", str(folder))
    assert window.doc.undo_stack.undoText() == "Use image folder leaves"


def test_open_a_keras_model_imports_it(window, qtbot, monkeypatch, tmp_path):
    path = tmp_path / "branched.keras"
    model = branched_model()
    model.save(path)
    choose_files(monkeypatch, path)
    qtbot.mouseClick(welcome(window, qtbot).open_model, LEFT)
    qtbot.waitUntil(lambda: not window.keras_files.job.busy(), timeout=60_000)
    assert len(window.doc.project.graph.nodes) == len(model.layers)
    assert window.statusBar().currentMessage() == "Imported branched.keras"


def test_recent_projects_follow_opening_and_saving(window, qtbot, monkeypatch, tmp_path):
    assert recent_menu_names(window) == ["No recent projects"]
    page = welcome(window, qtbot)
    assert page.recent_buttons == []
    qtbot.keyClick(page, Qt.Key.Key_Escape)
    assert not page.isVisible()
    mlp, vgg = project_files(tmp_path, "mlp", "vgg")
    choose_files(monkeypatch, mlp, vgg)
    for _ in range(2):
        qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert recent_menu_names(window) == ["&1 vgg.studio.json", "&2 mlp.studio.json"]

    saved = tmp_path / "copy.studio.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *args, **kwargs: (str(saved), "")))
    assert window.save_as()
    assert recent_menu_names(window)[0] == "&1 copy.studio.json"

    vgg.unlink()  # a moved or deleted project is not offered
    page = welcome(window, qtbot)
    assert [b.text() for b in page.recent_buttons] == ["copy", "mlp"]
    qtbot.mouseClick(page.recent_buttons[1], LEFT)
    assert window.doc.path == mlp and window.doc.project.name == TEMPLATES["mlp"].title
    assert recent_menu_names(window) == ["&1 mlp.studio.json", "&2 copy.studio.json"]
    window.recent_menu.actions()[1].trigger()
    assert window.doc.path == saved


def test_a_restart_restores_the_layout_and_the_recent_projects(window, qtbot, tmp_path):
    (project,) = project_files(tmp_path, "lenet5")
    assert window.open_path(project)
    window.runs_dock.raise_()
    window.findChild(QDockWidget, "dock-History").hide()
    window.removeDockWidget(window.training_dock)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, window.training_dock)
    window.training_dock.show()
    window.resize(window.width(), 700)
    size = window.size()
    window.views.setCurrentWidget(window.data_panel)  # puts the inspector away for a while
    assert window.close()

    again = new_window(qtbot)
    assert again.findChild(QDockWidget, "dock-History").isHidden()
    assert not again.inspector_dock.isHidden()
    assert again.dockWidgetArea(again.training_dock) == Qt.DockWidgetArea.RightDockWidgetArea
    assert again.size() == size
    assert recent_menu_names(again) == ["&1 lenet5.studio.json"]


def started(qtbot, project_path=None) -> MainWindow:
    """The window as ``studio [PROJECT]`` opens it, once what it queued at the start ran."""
    win = open_window(project_path)
    qtbot.addWidget(win)
    ran = []
    QTimer.singleShot(0, lambda: ran.append(True))  # runs after what open_window queued
    qtbot.waitUntil(lambda: bool(ran))
    return win


def welcome_pages(window) -> list[WelcomePage]:
    return [page for page in window.findChildren(WelcomePage) if page.isVisible()]


def test_the_welcome_page_shows_on_the_first_start_only(qtbot, dialogs, tmp_path):
    (project,) = project_files(tmp_path, "vgg")
    with_project = started(qtbot, project)
    assert with_project.doc.path == project and welcome_pages(with_project) == []

    first = started(qtbot)
    (page,) = welcome_pages(first)
    assert first.doc.project.to_dict() == demo_project().to_dict()  # open under the page
    qtbot.keyClick(page, Qt.Key.Key_Escape)
    assert preferences_path().is_file()
    assert welcome_pages(started(qtbot)) == []


def test_a_broken_preferences_file_is_explained_not_fatal(qtbot, dialogs, tmp_path):
    path = preferences_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{ not json")
    window = new_window(qtbot)
    page = welcome(window, qtbot)
    assert page.recent_buttons == []
    assert "could not be read" in window.statusBar().currentMessage()
    page.close()
    (project,) = project_files(tmp_path, "mlp")
    assert window.open_path(project)
    assert recent_menu_names(new_window(qtbot)) == ["&1 mlp.studio.json"]


def test_preferences_from_a_newer_version_are_left_alone(qtbot, dialogs, tmp_path):
    path = preferences_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"version": VERSION + 1, "recent_projects": []})
    path.write_text(text)
    window = started(qtbot)
    assert welcome_pages(window) == []  # not a first run: a newer version ran here
    assert "newer Layer Studio" in window.statusBar().currentMessage()
    (project,) = project_files(tmp_path, "mlp")
    assert window.open_path(project)
    assert path.read_text() == text
