"""The run history: every run of the project in a sortable, filterable table, with curves of
several runs overlaid, the config differences of two, and opening, resuming and deleting
runs. Listing runs goes through the run index on a worker thread, so a thousand runs never
block the window. The table and the details are in modules of their own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.messages import count
from studio.core.project.document import Project
from studio.core.runs.history import RunInUseError, RunSummary
from studio.core.runs.index import RunIndex
from studio.core.search.moving import EARLIER, has_work
from studio.gui.runs.export_dialog import ExportDialog
from studio.gui.runs.run_details import MAX_OVERLAID, RunDetails
from studio.gui.runs.run_table import STATUS_TIPS, RunTable
from studio.gui.widgets.forms import scrolled_body
from studio.gui.widgets.jobs import JobSlot, Policy

RESUMABLE = ("interrupted", "stopped", "failed")
NO_RUNS = ("No runs yet. Press Start (F5) to train the model: each run is listed here, to "
           "overlay its curves, compare its settings, resume it or export its model.")
EARLIER_RUNS = (" Earlier versions kept the runs of unsaved projects in the workspace: Import "
                "earlier runs moves them into this project.")
CHOOSE = "Select runs, then Overlay curves or Compare."
SIDE_BY_SIDE = 3.5
"""A Runs dock this many times as wide as tall shows the curves beside the runs."""


@dataclass
class Listing:
    """What a refresh found, sent from the worker thread."""

    runs: list[RunSummary]
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Why runs asked to be deleted were kept."""
    earlier: bool = False
    """Earlier versions left runs or searches in the workspace's shared folders."""
    imported_missing: bool = False
    """The project (as it was when the listing began) has imported weights and no run of
    them: Try and Evaluate offer "Imported model"."""


def list_runs(index: RunIndex, delete: Sequence[str], project: Project | None = None
              ) -> Listing:
    """Delete the runs ``delete`` names (keeping those that cannot be), sync the index and
    list its runs, newest first, and say whether ``project``'s imported model has no run yet
    (reading run folders' files). Runs on a worker thread."""
    problems = []
    for run_id in delete:
        try:
            index.delete(run_id)
        except (RunInUseError, ValueError, OSError) as exc:
            problems.append(str(exc))
    seen = len(index.notes)
    index.sync()
    missing = False
    if project is not None and project.weights is not None:
        from studio.core.training.imported_model import find_imported_run

        missing = find_imported_run(project, index.root) is None
    return Listing(index.runs(), index.notes[seen:], problems, has_work(EARLIER), missing)


class HistoryPanel(QWidget):
    """The runs of the project whose runs root ``root_provider`` returns."""

    open_model_requested = Signal(Path)
    """The user asked to open this ``model.keras``."""
    resume_requested = Signal(Path)
    """The user asked to resume the run in this folder."""
    refreshed = Signal()
    """The table shows the runs as they are now."""
    adopt_requested = Signal()
    """The user asked to import the runs earlier versions kept for every unsaved project."""

    def __init__(self, root_provider: Callable[[], Path],
                 project_provider: Callable[[], Project | None] = lambda: None) -> None:
        super().__init__()
        self._root_provider = root_provider
        self._project_provider = project_provider
        """The project whose imported model's run a listing looks for (see Listing)."""
        self.imported_missing = False
        """As the last listing found it (``Listing.imported_missing``)."""
        self._index: RunIndex | None = None
        self.listing = JobSlot(self, Policy.RERUN)
        """Lists the runs; a refresh asked for meanwhile lists them again once it ends."""
        self.listing.succeeded.connect(self._show)
        self.listing.failed.connect(self._show_failure)
        self.listing.started.connect(self._listing_started)
        self.listing.finished.connect(self._finished)
        self.export_dialog: ExportDialog | None = None
        """The export dialog opened last."""
        self._listed = False
        """A listing arrived from the worker under way."""
        self.table = RunTable()
        self.model, self.proxy = self.table.runs_model, self.table.proxy

        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("history-filter")
        self.filter_edit.setPlaceholderText("Filter runs…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setToolTip("Show only runs whose id, name, status, optimizer or error "
                                    "contains this text")
        self.filter_edit.textChanged.connect(lambda text: self._filter(text=text))
        self.status_combo = QComboBox()
        self.status_combo.setObjectName("history-status")
        self.status_combo.setToolTip("Show only runs with this status")
        self.status_combo.addItem("All statuses", "")
        for status in STATUS_TIPS:
            self.status_combo.addItem(status.capitalize(), status)
            self.status_combo.setItemData(self.status_combo.count() - 1, STATUS_TIPS[status],
                                          Qt.ItemDataRole.ToolTipRole)
        self.status_combo.currentIndexChanged.connect(
            lambda: self._filter(status=self.status_combo.currentData()))
        self.count_label = QLabel()
        self.count_label.setObjectName("history-count")

        self.table.selectionModel().selectionChanged.connect(self._update_actions)
        self.table.doubleClicked.connect(self.overlay_curves)

        self.overlay_action = self._action(
            "Overlay curves", "history-overlay", self.overlay_curves,
            f"Draw the selected runs' validation accuracy and loss per epoch together "
            f"(up to {MAX_OVERLAID} runs)")
        self.compare_action = self._action(
            "Compare", "history-compare", self.compare,
            "With two runs selected: list the settings that differ between them, and how "
            "their image folder changed (images added, moved and removed per class)")
        self.changes_action = self._action(
            "Dataset changes", "history-dataset", self.dataset_changes,
            "How the image folder changed between the two selected runs, or from the run "
            "before the one selected to it: images added, moved and removed per class")
        self.open_action = self._action(
            "Open model", "history-open", self.open_model,
            "Open the selected run's trained model (model.keras) as a new project, with its "
            "weights")
        self.export_action = self._action(
            "Export…", "history-export", self.export_model,
            "Export the selected run's model (Keras, SavedModel, ONNX, TensorFlow Lite), "
            "verified against it")
        self.resume_action = self._action(
            "Resume", "history-resume", self.resume,
            "Continue the selected stopped, failed or interrupted run from its last "
            "checkpoint, with its epoch counter and optimizer state")
        self.delete_action = self._action(
            "Delete…", "history-delete", self.delete_selected,
            "Delete the selected runs with their models, checkpoints and logs (asks first)")
        self.delete_action.setShortcut(QKeySequence.StandardKey.Delete)
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.refresh_action = self._action(
            "Refresh", "history-refresh", self.refresh,
            "Read the run folders again (runs of other processes appear, deleted ones go)")
        self.adopt_action = self._action(
            "Import earlier runs…", "history-adopt", self.adopt_requested.emit,
            "Move the runs and searches that earlier versions kept for every unsaved project "
            "into this project's folder (asks first)")
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for action in (self.overlay_action, self.compare_action, self.changes_action,
                       self.open_action, self.export_action, self.resume_action,
                       self.delete_action):
            self.table.addAction(action)

        self.details = RunDetails()
        self.accuracy_plot, self.loss_plot = self.details.accuracy_plot, self.details.loss_plot
        self.differences = self.details.differences
        self.no_runs = QLabel(NO_RUNS)
        self.no_runs.setObjectName("history-no-runs")
        self.no_runs.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_runs.setWordWrap(True)
        self.message = QLabel(CHOOSE)
        self.message.setObjectName("history-message")
        self.message.setWordWrap(True)

        self._build_layout()
        self._update_actions()

    def _build_layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.status_combo)
        top.addWidget(self.count_label)
        buttons = QHBoxLayout()
        for action in (self.overlay_action, self.compare_action, self.open_action,
                       self.export_action, self.resume_action, self.delete_action):
            buttons.addWidget(self._button(action))
        buttons.addStretch(1)
        self.adopt_button = self._button(self.adopt_action)
        self.adopt_button.hide()  # until a listing finds earlier runs
        buttons.addWidget(self.adopt_button)
        buttons.addWidget(self._button(self.refresh_action))
        upper = QWidget()
        upper_layout = QVBoxLayout(upper)
        upper_layout.setContentsMargins(0, 0, 0, 0)
        upper_layout.addLayout(top)
        self.listed = QStackedWidget()
        """The table, or while there are no runs a sentence saying how to make one."""
        self.listed.addWidget(self.table)
        self.listed.addWidget(self.no_runs)
        upper_layout.addWidget(self.listed, 1)
        upper_layout.addLayout(buttons)
        upper_layout.addWidget(self.message)  # under the buttons it speaks of
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        """The runs above their curves, or beside them in a wide, short dock."""
        self.splitter.addWidget(upper)
        self.splitter.addWidget(self.details)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)  # the plots never shrink to a sliver
        layout = QVBoxLayout(scrolled_body(self))  # a small window scrolls the page
        layout.addWidget(self.splitter)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Put the curves beside the runs in a dock at least SIDE_BY_SIDE times as wide as
        tall (a laptop's first-run layout, where above the runs they would need scrolling),
        under them otherwise."""
        super().resizeEvent(event)
        beside = event.size().width() >= SIDE_BY_SIDE * event.size().height()
        orientation = Qt.Orientation.Horizontal if beside else Qt.Orientation.Vertical
        if self.splitter.orientation() != orientation:
            self.splitter.setOrientation(orientation)
            self.table.fill_width(not beside)

    def _action(self, text: str, name: str, slot: Callable[[], None], tip: str) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        action.setToolTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    @staticmethod
    def _button(action: QAction) -> QToolButton:
        button = QToolButton()
        button.setObjectName(f"{action.objectName()}-button")
        button.setDefaultAction(action)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        return button

    def selected_runs(self) -> list[RunSummary]:
        """The selected runs, top to bottom as shown."""
        return self.table.selected_runs()

    def select_runs(self, run_ids: Sequence[str]) -> None:
        """Select the rows of these runs (those shown)."""
        self.table.select_runs(run_ids)

    def refresh(self) -> None:
        """Sync the run index with the folders on a worker thread and show the runs."""
        self._run(())

    def showEvent(self, event) -> None:
        """Show runs other processes started or ended since the panel was last shown."""
        super().showEvent(event)
        self.refresh()

    def _run(self, delete: Sequence[str]) -> None:
        root = Path(self._root_provider())
        if self._index is None or self._index.root != root:
            self._index = RunIndex(root)
        index = self._index
        project = self._project_provider()
        # A copy: the worker reads it while the person may edit the project
        snapshot = None if project is None else project.copy()
        self.listing.start(lambda on_event, stop: list_runs(index, delete, snapshot))

    @Slot()
    def _listing_started(self) -> None:
        self.refresh_action.setEnabled(False)
        self._update_actions()

    @Slot(object)
    def _show(self, listing: Listing) -> None:
        chosen = [run.id for run in self.selected_runs()]
        self.imported_missing = listing.imported_missing
        self.model.set_runs(listing.runs)
        self.select_runs(chosen)
        self._update_count()
        if self.details.keep_listed({run.path for run in listing.runs}):
            self.message.setText(CHOOSE)
        if listing.notes:
            self.message.setText(listing.notes[-1])
        self._listed = True
        self.adopt_button.setVisible(listing.earlier)
        self.no_runs.setText(NO_RUNS + (EARLIER_RUNS if listing.earlier else ""))
        if listing.problems:
            QMessageBox.warning(self, "Some runs were kept", "\n".join(listing.problems))

    @Slot(str)
    def _show_failure(self, text: str) -> None:
        self.message.setText(f"The runs could not be listed: {text}")

    @Slot()
    def _finished(self) -> None:
        self.refresh_action.setEnabled(True)
        self._update_actions()
        if self._listed:
            self._listed = False
            self.refreshed.emit()

    def _filter(self, text: str | None = None, status: str | None = None) -> None:
        self.proxy.set_filter(text, status)
        self._update_count()

    def _update_count(self) -> None:
        total, shown = len(self.model.runs), self.proxy.rowCount()
        interrupted = sum(run.status == "interrupted" for run in self.model.runs)
        text = count(total, "run") if shown == total else f"{shown:,} of {count(total, 'run')}"
        self.count_label.setText(text + (f" · {interrupted} interrupted" if interrupted else ""))
        self.listed.setCurrentWidget(self.table if total else self.no_runs)

    @Slot()
    def _update_actions(self) -> None:
        chosen = self.selected_runs()
        one = chosen[0] if len(chosen) == 1 else None
        self.overlay_action.setEnabled(bool(chosen))
        self.compare_action.setEnabled(len(chosen) == 2)
        self.changes_action.setEnabled(len(chosen) == 2 or (
            one is not None and self._before(one) is not None))
        self.open_action.setEnabled(one is not None and one.has_model())
        self.export_action.setEnabled(one is not None and one.has_model())
        self.resume_action.setEnabled(one is not None and one.status in RESUMABLE
                                      and one.has_checkpoint())
        self.delete_action.setEnabled(bool(chosen) and not self.listing.busy())

    @Slot()
    def overlay_curves(self) -> None:
        """Draw the selected runs' curves together, one colour per run."""
        self.message.setText(self.details.overlay(self.selected_runs()))

    @Slot()
    def compare(self) -> None:
        """List the settings that differ between the two selected runs, and how their
        dataset changed (shown first if it is all that differs)."""
        chosen = self.selected_runs()
        if len(chosen) == 2:
            data = self.details.dataset_changes(*sorted(chosen, key=lambda run: run.started))
            settings = self.details.compare(*chosen, dataset_shown=data is not None)
            if data is not None and not self.details.differences.rowCount():
                self.details.setCurrentWidget(self.details.changes)  # the only difference
            self.message.setText(settings if data is None else f"{settings} {data}")

    @Slot()
    def dataset_changes(self) -> None:
        """Show how the dataset changed between the two selected runs (the older first), or
        from the run before the one selected to it."""
        chosen = self.selected_runs()
        if len(chosen) == 1 and (before := self._before(chosen[0])) is not None:
            chosen = [before, chosen[0]]
        if len(chosen) == 2:
            data = self.details.dataset_changes(*sorted(chosen, key=lambda run: run.started))
            self.details.setCurrentWidget(self.details.changes)
            self.message.setText(data or self.details.changes.toPlainText())

    def _before(self, run: RunSummary) -> RunSummary | None:
        """The run started last before ``run``, if any."""
        earlier = [other for other in self.model.runs if other.started < run.started]
        return max(earlier, key=lambda other: other.started, default=None)

    @Slot()
    def open_model(self) -> None:
        """Ask for the selected run's model to be opened."""
        chosen = self.selected_runs()
        if len(chosen) == 1 and chosen[0].has_model():
            self.open_model_requested.emit(chosen[0].model_path)

    def export_model(self) -> ExportDialog | None:
        """Open the export dialog for the selected run's model (it works in the
        background; the dialog stays usable while the panel is)."""
        chosen = self.selected_runs()
        if len(chosen) != 1 or not chosen[0].has_model():
            return None
        self.export_dialog = ExportDialog(chosen[0].path, self)
        self.export_dialog.show()
        return self.export_dialog

    @Slot()
    def resume(self) -> None:
        """Ask for the selected run to be resumed."""
        chosen = self.selected_runs()
        if len(chosen) == 1 and chosen[0].status in RESUMABLE:
            self.resume_requested.emit(chosen[0].path)

    @Slot()
    def delete_selected(self) -> None:
        """Ask, then delete the selected runs and their files on the worker thread."""
        chosen = self.selected_runs()
        if not chosen or self.listing.busy():
            return
        what = (f"{chosen[0].id} with its model," if len(chosen) == 1 else
                f"these {len(chosen)} runs with their models,")
        answer = QMessageBox.question(
            self, "Delete runs", f"Delete {what} checkpoints and logs? This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        if answer == QMessageBox.StandardButton.Yes:
            self._run([run.id for run in chosen])
