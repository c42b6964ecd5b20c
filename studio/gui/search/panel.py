"""The Search tab: the search space and strategy, how many trials and about how long, Start,
Stop and Resume, and the search watched live (trial table, overlaid curves, parallel
coordinates); "Apply best to project" copies the winning values into the design."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QAction, QBrush, QColor, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import Event
from studio.core.build.estimate import measure_epoch_time
from studio.core.model.registry import REGISTRY
from studio.core.project.document import METRICS, Project, SearchSettings
from studio.core.runs.folders import runs_root
from studio.core.runs.history import read_run, run_folders
from studio.core.search.runner import (
    WorkerPool,
    last_search,
    resume_search,
    run_search,
    search_folder,
)
from studio.core.search.space import (
    STRATEGY_NAMES,
    TRAINING_TARGETS,
    SearchSpaceError,
    apply_values,
    check_dimension,
    estimated_seconds,
    layer_target,
    param_for,
    problems,
    target_label,
    training_target,
    trial_count,
)
from studio.core.search.state import SearchError, read_state
from studio.gui.editor.inspector import SEARCHABLE_KINDS
from studio.gui.search.parallel_coordinates import ParallelCoordinates
from studio.gui.search.plots import TrialCurves
from studio.gui.search.trial_table import TrialTable, metric_words
from studio.gui.widgets.dimension_dialog import (
    DimensionDialog,
    format_points,
    format_value,
    open_dimension_dialog,
    remove_dimension,
)
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.forms import scrolling
from studio.gui.widgets.jobs import JobSlot

ERROR_STYLE = "color: #b3261e;"
TARGET_ROLE = Qt.ItemDataRole.UserRole
EMPTY_HINT = ("Nothing is searched yet. Click the\nmagnifier beside a layer parameter\n"
              "or a training setting, or Add… below.")
MEASURE_DEVICES = ["/CPU:0"]


def estimate_words(seconds: float) -> str:
    """A rough duration: ``about 40 s``, ``about 2 min``, ``about 1 h 20 min``."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"about {hours} h {minutes:02d} min"


def latest_seconds_per_epoch(root: Path) -> float | None:
    """Seconds per epoch of the newest run under ``root`` that trained an epoch, or None."""
    for path in reversed(run_folders(root)):
        run = read_run(path)
        if run.epochs > 0 and run.seconds > 0:
            return run.seconds / run.epochs
    return None


def _search_task(project: Project, root: Path, search_dir: Path, workers: int,
                 pool: WorkerPool | None):
    def task(on_event, stop):
        return run_search(project, root, search_dir, on_event, stop, workers=workers,
                          pool=pool)

    return task


def _resume_task(search_dir: Path, root: Path, workers: int, pool: WorkerPool | None):
    def task(on_event, stop):
        return resume_search(search_dir, root, on_event, stop, workers=workers, pool=pool)

    return task


def _measure_task(project: Project, info):
    def task(on_event, stop):
        return measure_epoch_time(project, info, project.training.batch_size,
                                  MEASURE_DEVICES, None, stop).seconds_per_epoch

    return task


def _spin(low: int, high: int, tip: str, name: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setToolTip(tip)
    spin.setObjectName(name)
    return spin


class SearchPanel(QWidget):
    """Sets up, runs and shows a hyperparameter search of the document's project; the search
    runs on a worker thread and never blocks the window."""

    message = Signal(str)
    """A short note for the status bar."""
    search_started = Signal()
    """A search started (or resumed)."""
    trial_ended = Signal()
    """A trial ended: its run is in the history."""
    search_finished = Signal(str)
    """A search ended: ``finished``, ``stopped`` or ``failed``."""
    run_requested = Signal(str)
    """The person asked to see a trial's run (its folder) in the run history."""

    def __init__(self, doc: ProjectDocument, cores: int | None = None) -> None:
        super().__init__()
        self.doc = doc
        self.cores = cores or os.cpu_count() or 1
        self.job = JobSlot(self)
        self.job.event.connect(self._on_event)
        self.job.succeeded.connect(self._on_succeeded)
        self.job.failed.connect(self._on_failed)
        self.job.finished.connect(self._on_done)
        self.measuring = JobSlot(self)
        self.measuring.succeeded.connect(
            lambda seconds: self._measured.__setitem__(self._measuring_key, seconds))
        self.measuring.failed.connect(
            lambda _: self._measured.__setitem__(self._measuring_key, None))
        self.measuring.finished.connect(self.refresh)
        self._measuring_key = ""
        self.pool: WorkerPool | None = None
        """Worker processes started while the tab shows a search that can start, so that
        Start does not wait for TensorFlow to load in them; kept for the next search."""
        self.search_dir = ""
        """The folder of the last search started here."""
        self.outcome = ""
        """How the last search ended: finished, stopped or failed (empty before any)."""
        self.last_error = ""
        self.searched: SearchSettings | None = None
        """The settings of the search shown in the table (a snapshot taken at Start)."""
        self.planned = 0
        self._latest: tuple[Path, float | None] | None = None
        """The runs folder last read and the seconds per epoch of its newest run."""
        self._measured: dict[str, float | None] = {}
        """Seconds per epoch measured, by what they depend on (model, data, training)."""

        self.dimensions = QListWidget()
        self.dimensions.setObjectName("search-dimensions")
        self.dimensions.setToolTip("The values the search varies. Double-click or Enter to "
                                   "change one, Delete to remove it")
        self.dimensions.itemActivated.connect(lambda item: self.edit_dimension())
        self.dimensions.currentRowChanged.connect(self._selection_changed)
        self.add_button = QToolButton()
        self.add_button.setText("Add…")
        self.add_button.setObjectName("search-add")
        self.add_button.setToolTip("Make a training setting or a layer parameter a search "
                                   "dimension (or use the magnifier beside it)")
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(self)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.add_button.setMenu(self.add_menu)
        self.edit_button = QPushButton("Edit…")
        self.edit_button.setObjectName("search-edit")
        self.edit_button.setToolTip("Change the values of the selected dimension (Enter)")
        self.edit_button.clicked.connect(self.edit_dimension)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("search-remove")
        self.remove_button.setToolTip("Stop searching the selected value (Delete)")
        self.remove_button.clicked.connect(self.remove_selected)
        remove_key = QAction(self.dimensions)
        remove_key.setShortcut(QKeySequence.StandardKey.Delete)
        remove_key.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        remove_key.triggered.connect(self.remove_selected)
        self.dimensions.addAction(remove_key)
        self.dialog: DimensionDialog | None = None
        """The dimension dialog opened last from this tab."""

        self.strategy = QComboBox()
        self.strategy.setObjectName("search-strategy")
        for key, name in STRATEGY_NAMES.items():
            self.strategy.addItem(name, key)
        self.strategy.setToolTip(
            "Grid tries every combination; Random samples the ranges; Bayesian (TPE) samples "
            "where earlier trials did well; Hyperband also stops poor trials early")
        self.strategy.currentIndexChanged.connect(
            lambda: self._edit("strategy", self.strategy.currentData(), "strategy"))
        self.trials = _spin(1, 100_000, "How many trials random, Bayesian and Hyperband search "
                            "run (a grid runs every combination)", "search-trials")
        self.trials.valueChanged.connect(lambda v: self._edit("trials", v, "number of trials"))
        self.workers = _spin(1, self.cores, "How many trials run at once, each in its own "
                             "process with its share of the CPU cores", "search-workers")
        self.workers.valueChanged.connect(lambda v: self._edit("workers", v, "trials at once"))
        self.seed = _spin(0, 2**31 - 1, "Seeds the sampler: the same seed samples the same "
                          "trials", "search-seed")
        self.seed.valueChanged.connect(lambda v: self._edit("seed", v, "search seed"))
        self.metric_box = QComboBox()
        self.metric_box.setObjectName("search-metric")
        for name in METRICS:
            self.metric_box.addItem(metric_words(name).capitalize(), name)
        self.metric_box.setToolTip("What the search optimises: accuracies are maximised, losses "
                               "minimised")
        self.metric_box.currentIndexChanged.connect(
            lambda: self._edit("metric", self.metric_box.currentData(), "search metric"))

        self.estimate = QLabel()
        self.estimate.setObjectName("search-estimate")
        self.estimate.setWordWrap(True)
        self.problems = QLabel()
        self.problems.setObjectName("search-problems")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet(ERROR_STYLE)

        style = self.style()
        self.start_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay),
                                        "Start")
        self.start_button.setObjectName("search-start")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_MediaStop),
                                       "Stop")
        self.stop_button.setObjectName("search-stop")
        self.stop_button.setToolTip("Stop the running trials and keep the finished ones; Resume "
                                    "goes on later")
        self.stop_button.clicked.connect(self.stop)
        self.resume_button = QPushButton(
            style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward), "Resume")
        self.resume_button.setObjectName("search-resume")
        self.resume_button.setToolTip("Continue the last stopped search, keeping its finished "
                                      "trials")
        self.resume_button.clicked.connect(self.resume)
        self.apply_button = QPushButton("Apply best to project")
        self.apply_button.setObjectName("apply-best")
        self.apply_button.clicked.connect(self.apply_best)
        for text, keys, slot in (("Start search", "Ctrl+Return", self.start),
                                 ("Stop search", "Ctrl+.", self.stop)):
            action = QAction(text, self)
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(slot)
            self.addAction(action)
        self.progress = QProgressBar()
        self.progress.setObjectName("search-progress")
        self.progress.setFormat("Ready")
        self.progress.setValue(0)
        self.status = QLabel()
        self.status.setObjectName("search-status")
        self.status.setWordWrap(True)

        self.table = TrialTable()
        self.table.setToolTip("Double-click a trial (or press Enter) to see its run in the Runs "
                              "dock; click a header to sort")
        self.table.activated.connect(self._trial_activated)
        self.curves = TrialCurves()
        self.parallel = ParallelCoordinates()
        self._build_layout()
        doc.changed.connect(self.refresh)
        doc.replaced.connect(self.show_last_search)
        self.show_last_search()

    def _build_layout(self) -> None:
        dimension_buttons = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button):
            dimension_buttons.addWidget(button)
        dimension_buttons.addStretch(1)
        form = QFormLayout()
        for label, widget in (("Strategy", self.strategy), ("Trials", self.trials),
                              ("At once", self.workers), ("Seed", self.seed),
                              ("Optimise", self.metric_box)):
            form.addRow(label, widget)
        run_row = QHBoxLayout()
        for button in (self.start_button, self.stop_button, self.resume_button):
            run_row.addWidget(button)
        run_row.addWidget(self.progress, 1)
        run_row.addWidget(self.apply_button)
        settings = QWidget()
        column = QVBoxLayout(settings)
        column.setContentsMargins(0, 0, 6, 0)
        title = QLabel("Search space")
        title.setStyleSheet("font-weight: bold;")
        column.addWidget(title)
        column.addWidget(self.dimensions, 1)
        column.addLayout(dimension_buttons)
        column.addLayout(form)
        column.addWidget(self.estimate)
        column.addWidget(self.problems)
        self.dimensions.setMinimumHeight(70)

        watch = QWidget()
        watch_layout = QVBoxLayout(watch)
        watch_layout.setContentsMargins(6, 0, 0, 0)
        watch_layout.addLayout(run_row)
        watch_layout.addWidget(self.status)
        plots = QSplitter(Qt.Orientation.Horizontal)
        plots.addWidget(self.curves)
        plots.addWidget(self.parallel)
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.addWidget(self.table)
        vertical.addWidget(plots)
        vertical.setSizes([200, 300])
        watch_layout.addWidget(vertical, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(scrolling(settings))
        self.splitter.addWidget(watch)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([320, 900])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.splitter)

    # The search space and settings.

    def _edit(self, field: str, value: Any, label: str) -> None:
        if getattr(self.doc.project.search, field) != value:
            self.doc.edit(f"Set {label}", lambda p: setattr(p.search, field, value),
                          merge_key=f"search.{field}")

    def _fill_add_menu(self) -> None:
        """Every value that can be searched: the training settings, then each layer's."""
        self.add_menu.clear()
        project = self.doc.project
        training = self.add_menu.addMenu("Training")
        for path in TRAINING_TARGETS:
            self._add_entry(training, training_target(path))
        for node in project.graph.nodes:
            params = [p for p in REGISTRY[node.type].params if p.kind in SEARCHABLE_KINDS]
            if params:
                menu = self.add_menu.addMenu(node.id)
                for param in params:
                    self._add_entry(menu, layer_target(node.id, param.name), param.label)

    def _add_entry(self, menu: QMenu, target: str, label: str = "") -> None:
        action = menu.addAction(label or target_label(target))
        action.triggered.connect(lambda: self.open_dialog(target))

    def open_dialog(self, target: str) -> DimensionDialog:
        """Ask for the values of ``target`` to search (one undo step on OK)."""
        self.dialog = open_dimension_dialog(self.window(), self.doc, target)
        return self.dialog

    def selected_target(self) -> str:
        """The target of the selected dimension, or empty."""
        item = self.dimensions.currentItem()
        return (item.data(TARGET_ROLE) or "") if item is not None else ""

    def edit_dimension(self) -> None:
        """Change the values of the selected dimension."""
        if self.selected_target():
            self.open_dialog(self.selected_target())

    def remove_selected(self) -> None:
        """Stop searching the selected dimension (one undo step)."""
        if self.selected_target():
            remove_dimension(self.doc, self.selected_target())

    def _selection_changed(self) -> None:
        chosen = bool(self.selected_target())
        self.edit_button.setEnabled(chosen)
        self.remove_button.setEnabled(chosen)

    def _show_dimensions(self) -> None:
        project = self.doc.project
        selected = self.selected_target()
        self.dimensions.clear()
        for dimension in project.search.dimensions:
            label = target_label(dimension.target)
            item = QListWidgetItem()
            item.setData(TARGET_ROLE, dimension.target)
            try:
                points = check_dimension(project, dimension)
            except SearchSpaceError as exc:
                item.setText(f"{label}: cannot be searched")
                item.setForeground(QBrush(QColor("#b3261e")))
                item.setToolTip(str(exc))
            else:
                ranged = " (range)" if dimension.is_range else ""
                item.setText(f"{label}: {format_points(points, 6)}{ranged}")
                item.setToolTip(f"{len(points)} values: {format_points(points, 50)}")
            self.dimensions.addItem(item)
            if dimension.target == selected:
                self.dimensions.setCurrentItem(item)
        if not project.search.dimensions:
            hint = QListWidgetItem(EMPTY_HINT)
            hint.setFlags(Qt.ItemFlag.NoItemFlags)
            self.dimensions.addItem(hint)
        self._selection_changed()

    def refresh(self) -> None:
        """Show the document's search settings, the trial count and time, and what stops
        the search from starting."""
        search = self.doc.project.search
        self._show_dimensions()
        for combo, value in ((self.strategy, search.strategy), (self.metric_box, search.metric)):
            if combo.currentData() != value:
                combo.blockSignals(True)
                combo.setCurrentIndex(combo.findData(value))
                combo.blockSignals(False)
        for spin, value in ((self.trials, search.trials), (self.workers, search.workers),
                            (self.seed, search.seed)):
            if spin.value() != value:
                spin.blockSignals(True)
                spin.setValue(value)
                spin.blockSignals(False)
        self.trials.setEnabled(search.strategy != "grid")
        self.trials.setToolTip(self.trials.toolTip().split(" (now ")[0] + (
            " (now a grid: every combination)" if search.strategy == "grid" else ""))
        reasons = self.reasons()
        self.problems.setText("\n".join(reasons))
        self.problems.setVisible(bool(reasons))
        if self.isVisible() and not reasons:
            self.measure()
            self.warm_workers()
        self.estimate.setText(self.estimate_text(reasons))
        running = self.is_running()
        self.start_button.setEnabled(not reasons and not running)
        self.start_button.setToolTip(
            f"Cannot start: {reasons[0]}" if reasons else
            "Run the search in the background; each trial is a run in the history "
            "(Ctrl+Return)")
        self.stop_button.setEnabled(running)
        self.resume_button.setEnabled(not running and self.outcome == "stopped"
                                      and bool(self.search_dir))
        self._show_apply()

    def reasons(self) -> list[str]:
        """Why the search cannot start now, in words (empty if it can)."""
        found = problems(self.doc.project, self.doc.project.search)
        analysis = self.doc.analysis()
        if not analysis.ok:
            found.append(f"The model cannot train: {analysis.reason}")
        return found

    def estimate_text(self, reasons: list[str]) -> str:
        """``4 trials, about 2 min`` (or why the time is unknown)."""
        project, search = self.doc.project, self.doc.project.search
        if reasons:
            return "The number of trials is known once the search space is valid."
        count = trial_count(project, search)
        trials = f"{count:,} trial{'s' if count != 1 else ''}"
        per_epoch = self.seconds_per_epoch()
        if per_epoch is None:
            measuring = " (measuring…)" if self.measuring.busy() else ""
            return f"{trials}, time unknown until measured{measuring}"
        seconds = estimated_seconds(project, search, per_epoch, self.cores)
        return f"{trials}, {estimate_words(seconds)}"

    def seconds_per_epoch(self) -> float | None:
        """Seconds an epoch takes: of the newest run in the project's runs, else as measured
        for this model, data and training; None until known."""
        root = runs_root(self.doc.path)
        if self._latest is None or self._latest[0] != root:
            self._latest = (root, latest_seconds_per_epoch(root))
        if self._latest[1] is not None:
            return self._latest[1]
        return self._measured.get(_measured_key(self.doc.project))

    def runs_changed(self) -> None:
        """A run ended somewhere: read the newest run's time per epoch again."""
        self._latest = None
        self.refresh()

    def measure(self) -> None:
        """Measure the time per epoch in the background, once per model, data and training,
        if no run says it and the search could start."""
        project = self.doc.project.copy()
        key = _measured_key(project)
        info = self.doc.dataset()
        if (self.measuring.busy() or info is None or key in self._measured
                or self.seconds_per_epoch() is not None or self.reasons()):
            return
        self._measuring_key = key
        self.measuring.start(_measure_task(project, info))
        self.refresh()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Measure the time per epoch, if nothing says it yet, and start the workers, when
        the tab shows a search that can start."""
        super().showEvent(event)
        if not self.reasons():
            self.measure()
            self.warm_workers()

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Let idle workers go when the tab is left (their memory is the app's)."""
        super().hideEvent(event)
        if not self.is_running():
            self.close_pool()

    def warm_workers(self) -> None:
        """Start as many worker processes as trials run at once (TensorFlow loads in them in
        the background), unless they are up or a search runs."""
        workers = self.doc.project.search.workers
        if self.is_running() or (self.pool is not None and self.pool.size == workers):
            return
        self.close_pool()
        self.pool = WorkerPool(workers)

    def close_pool(self) -> None:
        """Let the worker processes go (the tab is left or the window closes)."""
        if self.pool is not None:
            self.pool.close(timeout=0)  # idle workers hold nothing: never wait for them
            self.pool = None

    # Running.

    def is_running(self) -> bool:
        """True from Start until the search's last signal has been delivered."""
        return self.job.busy()

    def start(self) -> None:
        """Search a snapshot of the project in a new search folder; its trials are runs in
        the project's runs folder."""
        if self.is_running() or self.reasons():
            return
        project = self.doc.project.copy()
        root = runs_root(self.doc.path)
        self.search_dir = str(search_folder(self.doc.path))
        self.searched = project.search
        self.warm_workers()
        self._launch(_search_task(project, root, Path(self.search_dir), project.search.workers,
                                  self.pool),
                     "Starting the search: loading TensorFlow and the data…")

    def resume(self) -> None:
        """Continue the last stopped search, keeping its finished trials."""
        if self.is_running() or self.outcome != "stopped" or not self.search_dir:
            return
        workers = self.doc.project.search.workers
        self.warm_workers()
        self._launch(_resume_task(Path(self.search_dir), runs_root(self.doc.path), workers,
                                  self.pool),
                     "Resuming the search…")

    def _launch(self, task, text: str) -> None:
        self.outcome = ""
        self.last_error = ""
        search = self.searched
        self.table.trials.start([d.target for d in search.dimensions], search.metric,
                                search.minimize)
        self.curves.clear()
        self.curves.show_metric(search.metric)
        self._draw_parallel()
        self.progress.setRange(0, 0)
        self.progress.setFormat("Starting…")
        self.status.setStyleSheet("")
        self.status.setText(text)
        self.job.start(task)
        self.refresh()
        self.search_started.emit()

    def show_last_search(self) -> None:
        """Show the project's last search, as its record left it: its trials, and Resume if
        it was stopped (nothing for a project never searched)."""
        if self.is_running():
            return
        path = last_search(self.doc.path)
        try:
            state = read_state(path) if path is not None else None
        except SearchError:
            state = None
        self.search_dir = str(path) if state is not None else ""
        self.searched = state.project.search if state is not None else None
        self.planned = state.planned if state is not None else 0
        self.outcome = ("" if state is None else "stopped" if state.stopped else "finished")
        search = self.searched or self.doc.project.search
        records = [t.to_dict() for t in state.trials] if state is not None else []
        self.table.trials.start([d.target for d in search.dimensions], search.metric,
                                search.minimize, records)
        self.curves.clear()
        self.curves.show_metric(search.metric)
        for record in records:
            self.curves.set_epochs(record["number"], _numbered(record["epochs"]))
        self.status.setStyleSheet("")
        self.status.setText("")
        self._trial_ended()
        self.curves.redraw()
        self.progress.setFormat({"": "Ready", "finished": "Done", "stopped": "Stopped"}[
            self.outcome])
        if self.outcome == "stopped":
            self.status.setText(f"{self.status.text()} The last search was stopped after "
                                f"{len(records)} of {self.planned} trials: Resume goes on.".strip())
        self.refresh()

    def stop(self) -> None:
        """Stop the search: running trials end, finished ones are kept."""
        if self.job.busy():
            self.job.stop()
            self.stop_button.setEnabled(False)
            self.progress.setFormat("Stopping…")

    @Slot(object)
    def _on_event(self, event: Event) -> None:
        kind = event["type"]
        trials = self.table.trials
        if kind == "search_start":
            self.planned = event["planned"]
            self.search_dir = event.get("search_dir") or self.search_dir
            trials.start(trials.targets, trials.metric, trials.minimize, event.get("done", []))
            for record in event.get("done", []):
                self.curves.set_epochs(record["number"], _numbered(record.get("epochs", [])))
            self._trial_ended()
        elif kind == "trial_start":
            trials.update({"number": event["number"], "params": event["params"],
                           "run_dir": event.get("run_dir", ""), "status": "running",
                           "pid": event.get("pid"), "started": time.monotonic()})
            self.curves.set_epochs(event["number"], [])
            self._show_progress()
        elif kind == "trial_epoch":
            number = event["number"]
            trial = trials.trial(number)
            elapsed = time.monotonic() - trial["started"] if trial and "started" in trial else None
            trials.add_epoch(number, event["epoch"], event["metrics"], elapsed)
            self.curves.add_epoch(number, {"epoch": event["epoch"], **event["metrics"]})
        elif kind == "trial_end":
            record = {k: v for k, v in event.items() if k != "type"}
            trials.update(record)
            self.curves.set_epochs(record["number"], _numbered(record.get("epochs", [])))
            self._trial_ended()
            self.trial_ended.emit()

    def _trial_ended(self) -> None:
        self.curves.set_best(self.table.trials.best)
        self._draw_parallel()
        self._show_progress()
        self._show_apply()

    def _show_progress(self) -> None:
        trials = self.table.trials.trials
        ended = sum(t["status"] != "running" for t in trials)
        running = len(trials) - ended
        planned = max(self.planned, len(trials), 1)
        self.progress.setRange(0, planned)
        self.progress.setValue(ended)
        if self.job.busy() and not self.job.stop_requested():
            self.progress.setFormat(f"{ended} of {planned} trials done · {running} running")
        best = self.best_trial()
        if best is not None:
            metric = metric_words(self.table.trials.metric)
            self.status.setStyleSheet("")
            so_far = " so far" if self.is_running() else ""
            self.status.setText(f"Best{so_far}: trial {best['number']}, {metric} "
                                f"{best['value']:.4f} with {self._values_text(best)}.")

    def _values_text(self, trial: dict[str, Any]) -> str:
        return ", ".join(f"{target_label(t).lower()} {format_value(v)}"
                         for t, v in trial.get("params", {}).items())

    def _draw_parallel(self) -> None:
        search = self.searched or self.doc.project.search
        model = self.table.trials
        self.parallel.show_trials([(target_label(d.target), d) for d in search.dimensions],
                                  metric_words(search.metric).capitalize(), model.trials,
                                  search.minimize, model.best)

    @Slot(object)
    def _on_succeeded(self, result) -> None:
        self.outcome = "stopped" if result.stopped else "finished"
        self.progress.setFormat("Stopped" if result.stopped else "Done")
        done = sum(t["status"] == "finished" for t in self.table.trials.trials)
        self.message.emit(f"Search {self.outcome}: {done} trials finished, saved in "
                          f"{self.search_dir}")

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.outcome = "failed"
        self.last_error = message
        self.progress.setRange(0, 1)
        self.progress.setFormat("Failed")
        self.status.setStyleSheet(ERROR_STYLE)
        self.status.setText(message)
        self.message.emit("The search failed")

    @Slot()
    def _on_done(self) -> None:
        self.curves.redraw()
        self._latest = None
        if self.outcome != "failed":
            self._show_progress()
        self.refresh()
        self.search_finished.emit(self.outcome)

    def _trial_activated(self, index) -> None:
        run_dir = self.table.trial_at(index).get("run_dir")
        if run_dir:
            self.run_requested.emit(run_dir)

    # Applying the best trial.

    def best_trial(self) -> dict[str, Any] | None:
        """The best finished trial's record, or None."""
        model = self.table.trials
        return model.trial(model.best) if model.best is not None else None

    def _show_apply(self) -> None:
        best = self.best_trial()
        self.apply_button.setEnabled(best is not None)
        self.apply_button.setToolTip(
            f"Set {self._values_text(best)} in the design (trial {best['number']}), in one "
            "step (Ctrl+Z undoes it)" if best is not None else
            "Once a trial has finished, copies the best trial's values into the design")

    def apply_best(self) -> None:
        """Copy the best trial's values into the project as one undo step."""
        best = self.best_trial()
        if best is None:
            return
        values = best["params"]
        try:
            for target in values:
                param_for(self.doc.project, target)
        except SearchSpaceError as exc:
            self.message.emit(f"Cannot apply trial {best['number']}: {exc}")
            return

        def change(project: Project) -> None:
            applied = apply_values(project, values)
            project.graph = applied.graph
            project.training = applied.training

        self.doc.edit(f"Apply search trial {best['number']}", change)
        self.message.emit(f"Applied trial {best['number']}: {self._values_text(best)}")


def _measured_key(project: Project) -> str:
    """What a measured time per epoch depends on."""
    return repr((project.graph, project.dataset, project.training))


def _numbered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Epoch rows, numbered from 1 where they lack an ``epoch``."""
    return [{"epoch": i, **row} for i, row in enumerate(rows, start=1)]
