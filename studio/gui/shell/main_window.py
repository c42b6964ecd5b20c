"""The main window: palette, model list, inspector, data and training panels, menus.

The tabs and docks the window does not show at first (Data, Try, Evaluate, Search, Runs) are
built, and their modules imported, when they first show or are first asked for: start-up
builds only what the first paint shows."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QTabBar,
    QUndoView,
    QVBoxLayout,
    QWidget,
)

from studio.core.hardware.devices import DeviceDiscovery, TensorFlowDiscovery
from studio.core.project.document import SUFFIX, Project, ProjectFileError
from studio.core.project.templates import BLANK, demo_project
from studio.core.runs.folders import runs_root
from studio.core.search.moving import has_work
from studio.gui.editor.canvas_scene import CanvasScene
from studio.gui.editor.canvas_view import ZOOM_STEP, CanvasView
from studio.gui.editor.inspector import Inspector
from studio.gui.editor.model_list import ModelList
from studio.gui.editor.model_summary import ModelSummary
from studio.gui.editor.palette import LayerPalette
from studio.gui.shell.bottom_docks import BottomDocks
from studio.gui.shell.help_menu import HelpMenu
from studio.gui.shell.keras_files import KerasFiles
from studio.gui.shell.recent_projects import RecentProjects
from studio.gui.shell.run_moves import RunMoves
from studio.gui.shell.template_gallery import TemplateGallery, blank_for, new_project
from studio.gui.shell.weights_carrying import SAVING, SaveStopped, WeightsCarrier
from studio.gui.shell.weights_download import WeightsDownload
from studio.gui.shell.welcome import WelcomePage
from studio.gui.training.panel import TrainingPanel
from studio.gui.widgets import errors
from studio.gui.widgets.deferred import Deferred, DeferredTabs, When
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.forms import VerticalScrollArea
from studio.gui.widgets.jobs import shutdown_jobs

if TYPE_CHECKING:
    from studio.gui.data.panel import DataPanel
    from studio.gui.inference.evaluation_panel import EvaluationPanel
    from studio.gui.inference.model_chooser import ModelChooser
    from studio.gui.inference.try_panel import TryPanel
    from studio.gui.runs.history_panel import HistoryPanel
    from studio.gui.search.panel import SearchPanel

FILE_FILTER = f"Layer Studio projects (*{SUFFIX});;All files (*)"
FIRST_RUN_SIZE = (1400, 900)
"""The window's size until the person resizes it (then it opens as they left it)."""
TRAINING_SHARE = (0.3, 0.42)
"""The first run's Training dock takes the height its contents need to show unscrolled,
within these shares of the window's height: the canvas keeps most of the room."""


def _with_summary(view: QWidget, summary: QWidget) -> QWidget:
    """``view`` above its one-line model summary."""
    host = QWidget()
    layout = QVBoxLayout(host)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.addWidget(view, 1)
    layout.addWidget(summary)
    return host


class MainWindow(QMainWindow):
    """Layer Studio's window over one :class:`ProjectDocument`."""

    def __init__(self, project: Project, path: Path | None = None,
                 discovery: DeviceDiscovery | None = None) -> None:
        """``discovery`` finds the devices to train on (TensorFlow's, unless a test fakes
        them)."""
        super().__init__()
        self._shown = False
        self.doc = ProjectDocument(project, path)
        # Queued: the first wait is told before the Data panel's place exists.
        self.doc.data_wanted.connect(self._read_data, Qt.ConnectionType.QueuedConnection)
        self.palette = LayerPalette()
        self.model_list = ModelList(self.doc)
        self.inspector = Inspector(self.doc)
        self.training = TrainingPanel(self.doc, discovery or TensorFlowDiscovery())
        self.weights = WeightsDownload(self.doc, self)
        self.keras_files = KerasFiles(self, self.doc)
        self.keras_files.imported.connect(self._show_imported)
        self.scene = CanvasScene(self.doc)
        self.scene.setParent(self)
        self.canvas = CanvasView(self.scene)
        self.views = DeferredTabs()
        self.views.setDocumentMode(True)
        self.views.addTab(_with_summary(self.canvas, ModelSummary(self.doc)), "Canvas")
        self.views.addTab(self.model_list, "List")
        self.views.setTabToolTip(1, "The model as an ordered list (for models without branches)")
        self._data_page = Deferred(self._build_data_panel)
        self.views.addTab(self._data_page, "Data")
        self.views.setTabToolTip(2, "The data to train on: source, options, samples, classes, "
                                    "health report and augmentation")
        self._try_page = Deferred(self._build_try_panel)
        self.views.addTab(self._try_page, "Try")
        self.views.setTabToolTip(3, "Drop, paste or pick images and see what a trained model "
                                    "answers")
        self._evaluation_page = Deferred(self._build_evaluation)
        self.views.addTab(self._evaluation_page, "Evaluate")
        self.views.setTabToolTip(4, "Score a trained run on its validation or test split: "
                                    "confusion matrix, per-class scores and the most confident "
                                    "mistakes")
        self._search_page = Deferred(self._build_search)
        self.views.addTab(self._search_page, "Search")
        self.views.setTabToolTip(5, "Hyperparameter search: try several values of training "
                                    "settings and layer parameters, and compare the trials")
        self.setAcceptDrops(True)
        self.setCentralWidget(self.views)
        for corner in (Qt.Corner.BottomLeftCorner, Qt.Corner.BottomRightCorner):
            self.setCorner(corner, Qt.DockWidgetArea.BottomDockWidgetArea)  # curves want width
        layers = self._dock("Layers", self.palette, Qt.DockWidgetArea.LeftDockWidgetArea)
        inspector = self._dock("Inspector", VerticalScrollArea(self.inspector),
                               Qt.DockWidgetArea.RightDockWidgetArea)
        self.inspector_dock = inspector
        self._inspector_put_away = False
        """The Data tab hid the inspector, so leaving the tab shows it again."""
        training = self._dock("Training", self.training, Qt.DockWidgetArea.BottomDockWidgetArea)
        self._runs_page = Deferred(self._build_runs, When.ASKED)
        runs = self._dock("Runs", self._runs_page, Qt.DockWidgetArea.BottomDockWidgetArea)
        runs.visibilityChanged.connect(self._runs_shown)
        self.tabifyDockWidget(training, runs)
        training.raise_()
        self.training_dock = training
        self.runs_dock = runs
        self.bottom_docks = BottomDocks(self, [training, runs])
        history = self._dock("History", QUndoView(self.doc.undo_stack),
                             Qt.DockWidgetArea.LeftDockWidgetArea)
        self.tabifyDockWidget(layers, history)
        layers.raise_()

        self.carrier = WeightsCarrier(self)
        self.moving = RunMoves(self, self.doc, self.training, self._search_page,
                               self._refresh_runs)
        self.training.run_started.connect(self._refresh_runs)
        # a run started with the docks put away (F5) shows its progress and curves
        self.training.run_started.connect(lambda: self.bottom_docks.bring_back(self.training_dock))
        self.training.run_finished.connect(self._refresh_runs)
        self.doc.path_changed.connect(self._refresh_runs)
        self.views.currentChanged.connect(self._view_changed)
        inspector.toggleViewAction().triggered.connect(self._inspector_toggled)
        self.palette.add_requested.connect(self.add_layer)
        self.model_list.selection_changed.connect(self._list_selected)
        self.scene.selectionChanged.connect(self._canvas_selected)
        for source in (self.model_list, self.training, self.scene, self.weights,
                       self.keras_files):
            source.message.connect(self._note)
        self.doc.undo_stack.cleanChanged.connect(self._clean_changed)
        self.doc.changed.connect(self._show_modified)
        self.doc.path_changed.connect(self._update_title)
        self.recent = RecentProjects(self)
        self.recent.note.connect(lambda text: self.statusBar().showMessage(text, 15000))
        self.statusBar().addPermanentWidget(self.training.usage)  # the dock keeps its room
        self._build_menus()
        self._update_title()
        self._clean_changed(True)
        self.resize(*FIRST_RUN_SIZE)
        self.restoreGeometry(QSettings().value("window/geometry", b""))
        self._docks_restored = self.restoreState(QSettings().value("window/state", b""))
        self.statusBar().showMessage("Welcome to Layer Studio", 4000)

    @property
    def data_panel(self) -> DataPanel:
        """The Data tab (built now if it was not yet, as are the tabs and Runs below)."""
        return self._data_page.widget()

    @property
    def try_panel(self) -> TryPanel:
        """The Try tab."""
        return self._try_page.widget()

    @property
    def evaluation(self) -> EvaluationPanel:
        """The Evaluate tab."""
        return self._evaluation_page.widget()

    @property
    def search(self) -> SearchPanel:
        """The Search tab."""
        return self._search_page.widget()

    @property
    def runs(self) -> HistoryPanel:
        """The Runs dock's run history."""
        return self._runs_page.widget()

    @Slot()
    def _read_data(self) -> None:
        """The document waits for its data (a CSV, a detection set): the Data panel reads it,
        so build it even if its tab was never shown (else a project opened on such data said
        it was being read for ever)."""
        self._data_page.widget()

    def _build_data_panel(self) -> DataPanel:
        from studio.gui.data.panel import DataPanel

        panel = DataPanel(self.doc)
        preferences = self.recent.preferences
        panel.editor.set_adding(preferences.max_side, preferences.keep_originals)
        panel.editor.adding_changed.connect(self.recent.remember_adding)
        return panel

    def _build_try_panel(self) -> TryPanel:
        from studio.gui.inference.try_panel import TryPanel

        panel = TryPanel()
        panel.runs_wanted.connect(self._list_runs)
        panel.message.connect(self._note)
        panel.offer_corrections(self.doc, self.train_again)
        self._offer_imported(panel.chooser)
        self._offer_runs(panel)
        return panel

    def _build_evaluation(self) -> EvaluationPanel:
        from studio.gui.inference.evaluation_panel import EvaluationPanel

        panel = EvaluationPanel()
        panel.message.connect(self._note)
        panel.offer_corrections(self.doc, self.train_again)
        self._offer_imported(panel)
        self._offer_runs(panel)
        return panel

    def _build_search(self) -> SearchPanel:
        from studio.gui.search.panel import SearchPanel

        preferences = self.recent.preferences
        search = SearchPanel(self.doc, engine=(preferences.search_engine,
                                               preferences.ray_address))
        search.engine_changed.connect(self.recent.remember_engine)
        search.search_finished.connect(self.moving.finish)
        self.training.run_finished.connect(search.runs_changed)
        search.trial_ended.connect(self._refresh_runs)
        search.search_finished.connect(self._refresh_runs)
        self.doc.path_changed.connect(search.runs_changed)
        search.run_requested.connect(self._show_trial_run)
        search.message.connect(self._note)
        return search

    def _build_runs(self) -> HistoryPanel:
        from studio.gui.runs.history_panel import HistoryPanel

        runs = HistoryPanel(lambda: runs_root(self.doc.place), lambda: self.doc.project)
        runs.resume_requested.connect(self._resume_run)
        runs.open_model_requested.connect(self.keras_files.import_path)
        runs.refreshed.connect(self._runs_listed)
        runs.adopt_requested.connect(self.moving.adopt_earlier)
        return runs

    def train_again(self) -> None:
        """Train the project again as it is (after corrections to its dataset), in the
        Training dock; the status bar says why if it cannot start."""
        self.training_dock.show()
        self.training_dock.raise_()
        problem = self.training.train_again()
        self._note(problem or "Training again on the dataset as it is now: see the Training "
                              "dock.")

    def _offer_imported(self, picker: ModelChooser | EvaluationPanel) -> None:
        """Have ``picker`` offer "Imported model" while the project has imported weights and
        no run of them (as the runs' listing found, off the GUI thread), made by the Training
        dock (progress, Cancel) when chosen."""

        def make() -> None:
            self.training_dock.raise_()
            if not self.training.keep_imported_model():
                self._note("The imported model cannot be kept as a run now: see the Training "
                           "dock.")

        picker.imported_missing = lambda: self.runs.imported_missing
        picker.imported_wanted.connect(make)

    def _offer_runs(self, panel: TryPanel | EvaluationPanel) -> None:
        """Offer a Try or Evaluate panel just built the runs as listed, or list them if no
        view has yet (they are offered once listed, see ``_runs_listed``)."""
        if self._runs_page.is_built():
            panel.set_runs(self.runs.model.runs)
        else:
            self.runs.refresh()

    @Slot(bool)
    def _runs_shown(self, visible: bool) -> None:
        """Build the Runs dock's history when the dock first comes into view."""
        if visible:
            self._runs_page.widget()

    @Slot()
    def _list_runs(self) -> None:
        """List the runs again, for the Runs dock and the views that answer with a run."""
        self.runs.refresh()

    @Slot()
    def _refresh_runs(self) -> None:
        """List the runs again if a view that shows them is built (one built later lists
        them then)."""
        if any(page.is_built() for page in (self._runs_page, self._try_page,
                                            self._evaluation_page)):
            self.runs.refresh()

    @Slot(str)
    def _note(self, text: str) -> None:
        """A panel's note, in the status bar."""
        self.statusBar().showMessage(text, 8000)

    def fit_screen(self) -> None:
        """Keep the window, at its first-run or saved size, inside its screen's available
        area (a laptop's screen less its taskbar)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        area = screen.availableGeometry()
        frame = self.frameGeometry().size() - self.size()  # the title bar and borders
        self.resize(self.size().boundedTo(area.size() - frame))
        box = self.frameGeometry()
        self.move(min(max(box.x(), area.x()), area.x() + area.width() - box.width()),
                  min(max(box.y(), area.y()), area.y() + area.height() - box.height()))

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Show the model in the canvas the first time the window shows."""
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            if not self._docks_restored:
                QTimer.singleShot(0, self._size_docks)
            QTimer.singleShot(0, self.canvas.show_model)

    def _size_docks(self) -> None:
        """The first run's dock sizes (they take effect only once the window is laid out):
        the training dock tall enough not to scroll, within TRAINING_SHARE of the height."""
        chrome = self.training_dock.height() - self.training.height()  # its title
        chrome += sum(bar.height() for bar in self.findChildren(QTabBar)  # the dock's tabs
                      if bar.isVisible() and "Training" in map(bar.tabText, range(bar.count())))
        least, most = (round(self.height() * share) for share in TRAINING_SHARE)
        wanted = self.training.unscrolled_height() + chrome
        self.resizeDocks([self.training_dock], [min(max(wanted, least), most)],
                         Qt.Orientation.Vertical)
        self.resizeDocks([self.findChild(QDockWidget, "dock-Layers"), self.inspector_dock],
                         [self.palette.sizeHint().width(), 360], Qt.Orientation.Horizontal)
        self.layout().activate()  # now: measuring the training dock laid out what was pending

    def add_layer(self, layer_type: str) -> None:
        """Add a layer in the view in front: the canvas (mid-view or after the selection)
        or the list (after the selected row)."""
        if self.views.currentWidget() is self.model_list:
            self.model_list.add_layer(layer_type)
        else:
            self.scene.add_layer(layer_type, self.canvas.visible_centre())

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Accept images and folders dragged anywhere a view does not take them itself."""
        from studio.gui.inference.try_panel import local_paths, wants_answer

        paths = local_paths(event.mimeData())
        if paths and all(wants_answer(p) for p in paths):
            event.acceptProposedAction()

    dragMoveEvent = dragEnterEvent

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Show the dropped images or folders to the model, in the Try view."""
        from studio.gui.inference.try_panel import local_paths, wants_answer

        paths = local_paths(event.mimeData())
        if paths and all(wants_answer(p) for p in paths):
            event.acceptProposedAction()
            self.views.setCurrentWidget(self.try_panel)
            self.try_panel.add_paths(paths)

    @Slot()
    def _runs_listed(self) -> None:
        """Offer the runs just listed to the views that answer with them (not those listed
        while they move: the views follow a chosen run once it has moved)."""
        if self.moving.busy():
            return
        for page in (self._try_page, self._evaluation_page):
            if page.is_built():
                page.widget().set_runs(self.runs.model.runs)

    @Slot(int)
    def _view_changed(self, index: int) -> None:
        """Give the Data, Try and Evaluate views the inspector's room (nothing to inspect
        there); bring it back on leaving them, unless the person had closed it."""
        view = self.views.widget(index)
        answering = [page.built_widget() for page in (self._try_page, self._evaluation_page)]
        roomy = view in (*answering, self._data_page.built_widget(),
                         self._search_page.built_widget())
        if view in answering:
            self.runs.refresh()  # the runs to answer with, as they are now
        if roomy and not self.inspector_dock.isHidden():
            self.inspector_dock.hide()
            self._inspector_put_away = True
        elif not roomy and self._inspector_put_away:
            self.inspector_dock.show()
            self._inspector_put_away = False

    @Slot()
    def _inspector_toggled(self) -> None:
        """The person showed or closed the inspector (View menu): leave it as they chose."""
        self._inspector_put_away = False

    @Slot(str)
    def _list_selected(self, node_id: str) -> None:
        self.inspector.show_node(node_id)
        if node_id in self.scene.nodes and self.scene.selected_ids() != [node_id]:
            self.scene.select_ids([node_id])
            self.canvas.ensureVisible(self.scene.nodes[node_id], 40, 40)

    @Slot()
    def _canvas_selected(self) -> None:
        ids = self.scene.selected_ids()
        if len(ids) == 1:
            self.inspector.show_node(ids[0])
            self.model_list.select(ids[0])

    def _show_trial_run(self, run_dir: str) -> None:
        """Show a search trial's run in the Runs dock."""
        self.runs_dock.show()
        self.runs_dock.raise_()
        self.runs.select_runs([Path(run_dir).name])

    def _resume_run(self, run_dir: Path) -> None:
        self.training_dock.raise_()
        self.training.resume(run_dir)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title}")
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable  # View menu reopens
                         | QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self._action(file_menu, "&New", lambda: self.new_project(BLANK),
                     QKeySequence.StandardKey.New,
                     "Start an empty model whose Input fits the current data")
        self._action(file_menu, "&New from Template…", self.open_gallery, "Ctrl+Shift+N",
                     "Start a new project from one of the starter models")
        self._action(file_menu, "&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(
            lambda: self.recent.fill_menu(self.recent_menu, self.open_path))
        self._action(file_menu, "&Save", self.save, QKeySequence.StandardKey.Save)
        self._action(file_menu, "Save &As…", self.save_as, QKeySequence.StandardKey.SaveAs)
        file_menu.addSeparator()
        self._action(file_menu, "&Import Keras Model…", self.keras_files.import_dialog, "Ctrl+I",
                     "Open a .keras or .h5 model as a graph")
        self._action(file_menu, "&Export as Python Script…", self.keras_files.export_dialog,
                     "Ctrl+E", "Write a runnable Keras script that builds and trains this model")
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        edit_menu = bar.addMenu("&Edit")
        undo = self.doc.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.doc.undo_stack.createRedoAction(self, "&Redo")
        redo.setShortcut(QKeySequence.StandardKey.Redo)
        edit_menu.addActions([undo, redo])
        self.undo_action, self.redo_action = undo, redo
        edit_menu.addSeparator()
        canvas = self.canvas
        for text, slot, keys in (
            ("&Copy", canvas.copy, QKeySequence.StandardKey.Copy),
            ("&Paste", canvas.paste, QKeySequence.StandardKey.Paste),
            ("&Duplicate", canvas.duplicate, "Ctrl+D"),
            ("&Delete", self.scene.delete_selected, QKeySequence.StandardKey.Delete),
            ("Select &All", self._select_all, QKeySequence.StandardKey.SelectAll),
            ("Mark as &Block", self.scene.mark_block, "Ctrl+B"),
            ("Add Layer by &Name…", canvas.open_quick_add, "/"),
        ):
            self._canvas_action(edit_menu, text, slot, keys)

        train_menu = bar.addMenu("&Training")
        self.start_action = self._action(train_menu, "&Start", self.training.start, "F5",
                                         "Train the model in the background")
        self.stop_action = self._action(train_menu, "S&top", self.training.stop, "Shift+F5",
                                        "Stop the run after the current batch")

        view_menu = bar.addMenu("&View")
        for text, slot, keys in (
            ("&Fit to View", canvas.fit, "F"),
            ("Zoom &In", lambda: canvas.zoom_by(ZOOM_STEP), QKeySequence.StandardKey.ZoomIn),
            ("Zoom &Out", lambda: canvas.zoom_by(1 / ZOOM_STEP),
             QKeySequence.StandardKey.ZoomOut),
            ("Auto-&Layout", self.scene.lay_out, "Ctrl+L"),
        ):
            self._canvas_action(view_menu, text, slot, keys)
        view_menu.addSeparator()
        for dock in self.findChildren(QDockWidget):
            view_menu.addAction(dock.toggleViewAction())
        view_menu.addAction(self.bottom_docks.action)

        self.help = HelpMenu(self, self.training.device_form, self.show_welcome)

    def _canvas_action(self, menu, text: str, slot, keys) -> QAction:
        """A menu action whose shortcut works while the canvas has focus, so that Ctrl+C in a
        text field still copies text."""
        action = self._action(menu, text, lambda _=False: slot(), keys)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.canvas.addAction(action)
        return action

    def _select_all(self) -> None:
        self.scene.select_ids(self.doc.project.graph.ids())

    @Slot()
    def _update_title(self) -> None:
        self.setWindowTitle(f"{self.doc.title}[*] — Layer Studio")

    @Slot(bool)
    def _clean_changed(self, clean: bool) -> None:
        """Mark unsaved changes in the title; reads no other object when ``clean``, as the
        undo stack also reports its last (clean) state while it is being destroyed."""
        if clean:
            self.setWindowModified(False)
        else:
            self._show_modified()

    @Slot()
    def _show_modified(self) -> None:
        """Star the title while the project differs from its file (see ``modified``)."""
        self.setWindowModified(self.doc.modified())

    def show_error(self, title: str, message: str) -> None:
        """Tell the user what went wrong, in a dialog (Copy Diagnostics remembers it)."""
        errors.show_error(self, title, message)

    @Slot(object, object)
    def _show_imported(self, project: Project, scratch: Path) -> None:
        if self._confirm_discard():
            self.doc.replace(project, None, scratch)
        elif project.weights is not None:  # the import is dropped, and its weights with it
            project.weights.path.unlink(missing_ok=True)

    def _confirm_discard(self) -> bool:
        """Ask to save unsaved changes, and an unsaved project's runs and searches (which no
        other project lists); False if the person cancels, or while a save is under way."""
        if self.carrier.busy():
            self.statusBar().showMessage(SAVING, 5000)
            return False
        text = f"Save the changes to {self.doc.title}?"
        if self.doc.path is None and has_work(self.doc.place):
            text = (f"Save {self.doc.title} with its runs? Unless it is saved, no other project "
                    f"lists them (they stay in {self.doc.place.parent}).")
        elif not self.doc.modified():
            return True
        answer = QMessageBox.question(
            self,
            "Unsaved changes",
            text,
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_project(self, template: str) -> bool:
        """Replace the project with a fresh one from ``template`` (BLANK: an empty model on
        the current data); False if the user kept the current one."""
        if not self._confirm_discard():
            return False
        self.doc.replace(new_project(template, self.doc), None)
        return True

    def open_gallery(self) -> TemplateGallery:
        """Show the template gallery; choosing a template opens it."""
        gallery = TemplateGallery(self, blank_for(self.doc))
        gallery.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        gallery.chosen.connect(self.open_template)
        gallery.inserted.connect(self.insert_template)
        gallery.open()
        return gallery

    def open_template(self, template: str) -> None:
        """Start a project from ``template`` and fetch any ImageNet weights it lacks."""
        if self.new_project(template):
            self.weights.fetch_missing()

    def insert_template(self, template: str) -> None:
        """Add ``template``'s layers beside the current model as one undoable step."""
        if self.scene.insert_template(template):
            self.views.setCurrentWidget(self.views.widget(0))
            self.canvas.fit()
            self.weights.fetch_missing()

    def open_demo(self) -> None:
        """Replace the project with a fresh demo project (the user may keep the current one)."""
        if self._confirm_discard():
            self.doc.replace(demo_project(), None)

    def show_welcome(self) -> WelcomePage:
        """Show the welcome page; its choices act on this window."""
        page = WelcomePage(self.recent.paths(), self)
        page.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        page.demo_requested.connect(self.open_demo)
        page.open_requested.connect(self.open_dialog)
        page.folder_requested.connect(self.open_image_folder)
        page.model_requested.connect(self.keras_files.import_dialog)
        page.recent_chosen.connect(self.open_path)
        page.template_chosen.connect(self.open_template)
        page.gallery_requested.connect(self.open_gallery)
        page.open()
        return page

    def open_image_folder(self) -> None:
        """Show the Data view and ask for a folder of images to train on."""
        self.views.setCurrentWidget(self.data_panel)
        self.data_panel.source.ask_path("folder")

    def open_dialog(self) -> None:
        """Ask for a project file and open it."""
        path, _ = QFileDialog.getOpenFileName(self, "Open project", "", FILE_FILTER)
        if path:
            self.open_path(Path(path))

    def open_path(self, path: Path) -> bool:
        """Open ``path``; on failure explain why and keep the current project."""
        if not self._confirm_discard():
            return False
        try:
            self.doc.open(path)
        except ProjectFileError as exc:
            self.show_error("Cannot open project", str(exc))
            return False
        self.recent.add(path)
        self.statusBar().showMessage(f"Opened {path}", 5000)
        self.moving.finish()  # one interrupted before
        return True

    def save(self) -> bool:
        """Save to the current file, asking for one if the project is new."""
        if self.doc.path is None:
            return self.save_as()
        return self._save_to(self.doc.path)

    def save_as(self) -> bool:
        """Ask for a file name and save there."""
        path, _ = QFileDialog.getSaveFileName(self, "Save project",
                                              f"{self.doc.title}{SUFFIX}", FILE_FILTER)
        if not path:
            return False
        if not path.endswith(SUFFIX):
            path = str(Path(path).with_suffix("")) + SUFFIX
        return self._save_to(Path(path))

    def _save_to(self, path: Path) -> bool:
        """Save to ``path``; saved under a new name, the project takes its runs and searches
        with it (see RunMoves), and its imported weights are copied beside it in the
        background first (see WeightsCarrier)."""
        if self.carrier.busy():
            self.statusBar().showMessage(SAVING, 5000)
            return False
        try:
            record = self.doc.weights_to_carry(path)
            self.moving.save(path, None if record is None else self.carrier.carry(record, path))
        except SaveStopped as exc:
            if exc.cancelled:
                self.statusBar().showMessage(str(exc), 8000)
            else:
                self.show_error("Cannot save project", str(exc))
            return False
        except (OSError, ProjectFileError) as exc:
            self.show_error("Cannot save project", str(exc) if isinstance(exc, ProjectFileError)
                            else f"{path}: {exc.strerror or exc}")
            return False
        self.recent.add(path)
        self.statusBar().showMessage(f"Saved {path}", 5000)
        self.moving.finish()
        return True

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        """Offer to save, stop any run, wait for worker threads, then close."""
        if not self._confirm_discard():
            event.ignore()
            return
        shutdown_jobs(self)  # every slot of every panel and dialog is a child of the window
        self.training.curves.timer.stop()  # nothing more arrives to draw
        search = self._search_page.built_widget()
        if search is not None:
            search.close_pool()
            search.curves.timer.stop()
        if self._inspector_put_away:
            self.inspector_dock.show()  # put away for a view: the next session shows it
        QSettings().setValue("window/geometry", self.saveGeometry())
        QSettings().setValue("window/state", self.saveState())
        event.accept()
