"""The Search tab: the search space, strategy and objectives, how many trials and about how
long, where they run (this machine or Ray), Start, Stop and Resume, and the search watched
live (trial table, overlaid curves, parallel coordinates, the Pareto front of several
objectives); "Apply to project" copies the picked (else the best) trial's values into the
design.

The tab puts together five parts: the space editor, the engine, the estimate, the runner and
the results, each in a module of its own."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from studio.core.base.preferences import ENGINES
from studio.core.search.space import problems
from studio.gui.search.engine import EngineChoice
from studio.gui.search.estimate import SearchEstimate
from studio.gui.search.results import SearchResults
from studio.gui.search.runner import ERROR_STYLE, SearchRunner
from studio.gui.search.space_editor import SpaceEditor
from studio.gui.widgets.dimension_dialog import DimensionDialog
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.forms import VerticalScrollArea, scrolled_body
from studio.gui.widgets.jobs import JobSlot


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
    engine_changed = Signal(str, str)
    """The engine or the Ray cluster's address changed (for the window to remember)."""

    def __init__(self, doc: ProjectDocument, cores: int | None = None,
                 engine: tuple[str, str] = (ENGINES[0], "")) -> None:
        """``engine``: where searches run at first, and the Ray cluster's address."""
        super().__init__()
        self.doc = doc
        self.cores = cores or os.cpu_count() or 1
        self.editor = SpaceEditor(doc, self.cores)
        self.engine = EngineChoice(*engine)
        self.engine.changed.connect(self.engine_changed)
        self.engine.box.currentIndexChanged.connect(self._engine_chosen)
        self.engine.address.textChanged.connect(self.refresh)
        self.estimator = SearchEstimate(doc, self.cores, self.reasons, self)
        self.estimator.changed.connect(self.refresh)
        self.results = SearchResults(doc)
        self.results.message.connect(self.message)
        self.results.run_requested.connect(self.run_requested)
        self.runner = SearchRunner(doc, self.results, self.engine, self.reasons, self)
        self.runner.message.connect(self.message)
        self.runner.started.connect(self._started)
        self.runner.looking.connect(self.refresh)
        self.runner.trial_ended.connect(self.trial_ended)
        self.runner.finished.connect(self._finished)

        # The widgets tests and the window reach, by their names of old.
        editor, runner, results = self.editor, self.runner, self.results
        self.dimensions, self.add_menu = editor.dimensions, editor.add_menu
        self.edit_button, self.remove_button = editor.edit_button, editor.remove_button
        self.strategy, self.trials, self.workers = editor.strategy, editor.trials, editor.workers
        self.seed, self.metric_box = editor.seed, editor.metric_box
        self.start_button, self.stop_button = runner.start_button, runner.stop_button
        self.resume_button, self.progress = runner.resume_button, runner.progress
        self.status = runner.status
        self.table, self.curves, self.parallel = results.table, results.curves, results.parallel
        self.pareto = results.pareto
        self.apply_button = results.apply_button

        self.estimate = QLabel()
        self.estimate.setObjectName("search-estimate")
        self.estimate.setWordWrap(True)
        self.problems = QLabel()
        self.problems.setObjectName("search-problems")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet(ERROR_STYLE)
        for text, keys, slot in (("Start search", "Ctrl+Return", runner.start),
                                 ("Stop search", "Ctrl+.", runner.stop)):
            action = QAction(text, self)
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(slot)
            self.addAction(action)
        self._build_layout()
        doc.changed.connect(self.refresh)
        doc.replaced.connect(self.show_last_search)
        self.show_last_search()

    def _build_layout(self) -> None:
        run_row = QHBoxLayout()
        for button in (self.start_button, self.stop_button, self.resume_button):
            run_row.addWidget(button)
        run_row.addWidget(self.progress, 1)
        run_row.addWidget(self.apply_button)
        settings = QWidget()
        column = QVBoxLayout(settings)
        column.setContentsMargins(0, 0, 6, 0)
        column.addWidget(self.editor, 1)
        column.addWidget(self.engine)
        column.addWidget(self.estimate)
        column.addWidget(self.problems)

        watch = QWidget()
        watch_layout = QVBoxLayout(watch)
        watch_layout.setContentsMargins(6, 0, 0, 0)
        watch_layout.addLayout(run_row)
        watch_layout.addWidget(self.status)
        watch_layout.addWidget(self.results, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(VerticalScrollArea(settings))
        self.splitter.addWidget(watch)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([320, 900])
        layout = QVBoxLayout(scrolled_body(self))  # a small window scrolls the page
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.splitter)

    # What the parts hold, by the names the window and tests use.

    @property
    def dialog(self) -> DimensionDialog | None:
        """The dimension dialog opened last from this tab."""
        return self.editor.dialog

    @property
    def job(self) -> JobSlot:
        """The slot the search runs in."""
        return self.runner.job

    @property
    def measuring(self) -> JobSlot:
        """The slot measuring the time per epoch."""
        return self.estimator.measuring

    @property
    def pool(self):
        """The worker processes kept warm for the next search, if any."""
        return self.runner.pool

    @property
    def last_error(self) -> str:
        """Why the last search failed (empty unless it did)."""
        return self.runner.last_error

    def is_running(self) -> bool:
        """True while a search's thread is alive."""
        return self.runner.is_running()

    def best_trial(self):
        """The best finished trial's record, or None."""
        return self.results.best_trial()

    def start(self) -> None:
        """Start a search of a snapshot of the project."""
        self.runner.start()

    def stop(self) -> None:
        """Stop the search: running trials end, finished ones are kept."""
        self.runner.stop()

    def resume(self) -> None:
        """Continue the last stopped search."""
        self.runner.resume()

    def apply_chosen(self) -> None:
        """Copy the values of the trial selected (else the best) into the project as one undo
        step."""
        self.results.apply_chosen()

    # Keeping the parts in step.

    def refresh(self) -> None:
        """Show the document's search settings, the trial count and time, and what stops
        the search from starting."""
        self.editor.refresh()
        reasons = self.reasons()
        self.problems.setText("\n".join(reasons))
        self.problems.setVisible(bool(reasons))
        self.estimator.read_runs()
        if self.isVisible() and not reasons:
            self.estimator.measure()
            self.runner.warm_workers()
        self.estimate.setText(self.estimator.text(reasons))
        self.runner.show_buttons(reasons)
        self.results.show_apply()

    def reasons(self) -> list[str]:
        """Why the search cannot start now, in words (empty if it can)."""
        found = problems(self.doc.project, self.doc.project.search)
        analysis = self.doc.analysis()
        if not analysis.ok:
            found.append(f"The model cannot train: {analysis.reason}")
        if engine := self.engine.problem():
            found.append(engine)
        return found

    def runs_changed(self) -> None:
        """A run ended somewhere: read the newest run's time per epoch again."""
        self.estimator.runs_changed()
        self.refresh()

    def show_last_search(self) -> None:
        """Show the project's last search, as its record left it (unless one runs)."""
        if self.is_running():
            return
        self.runner.show_last_search()
        self.refresh()

    def _engine_chosen(self) -> None:
        if self.engine.ray() is not None:
            self.runner.close_pool()  # no worker processes wait for a search on Ray
        self.refresh()

    def _started(self) -> None:
        self.refresh()
        self.search_started.emit()

    def _finished(self, outcome: str) -> None:
        self.estimator.runs_changed()
        self.refresh()
        self.search_finished.emit(outcome)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Measure the time per epoch, if nothing says it yet, and start the workers, when
        the tab shows a search that can start."""
        super().showEvent(event)
        if not self.reasons():
            self.estimator.measure()
            self.runner.warm_workers()

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Let idle workers go when the tab is left (their memory is the app's)."""
        super().hideEvent(event)
        if not self.is_running():
            self.runner.close_pool()

    def close_pool(self) -> None:
        """Let the worker processes go (the tab is left or the window closes)."""
        self.runner.close_pool()
