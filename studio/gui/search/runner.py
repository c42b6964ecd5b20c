"""Running a search from the Search tab: Start, Stop and Resume, the progress and status
lines, the search on a worker thread (in worker processes kept warm for the next one, or on
Ray), and a Ray cluster's address checked before anything starts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStyle, QWidget

from studio.core.base.events import Event
from studio.core.project.document import Project
from studio.core.runs.folders import runs_root
from studio.core.search.runner import (
    WorkerPool,
    last_search,
    resume_search,
    run_search,
    search_folder,
)
from studio.core.search.space import searched_project
from studio.core.search.state import SearchError, read_state
from studio.gui.search.engine import EngineChoice, RayTarget
from studio.gui.search.results import SearchResults
from studio.gui.search.trial_table import metric_words
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.jobs import JobSlot

ERROR_STYLE = "color: #b3261e;"


def _search_task(project: Project, root: Path, search_dir: Path, workers: int,
                 pool: WorkerPool | None, ray: RayTarget | None):
    def task(on_event, stop):
        if ray is None:
            return run_search(project, root, search_dir, on_event, stop, workers=workers,
                              pool=pool)
        from studio.core.search.on_ray import run_search_on_ray

        return run_search_on_ray(project, root, search_dir, on_event, stop,
                                 address=ray.address, token=ray.token, workers=workers)

    return task


def _resume_task(search_dir: Path, root: Path, workers: int, pool: WorkerPool | None,
                 ray: RayTarget | None):
    def task(on_event, stop):
        if ray is None:
            return resume_search(search_dir, root, on_event, stop, workers=workers, pool=pool)
        from studio.core.search.on_ray import resume_search_on_ray

        return resume_search_on_ray(search_dir, root, on_event, stop, address=ray.address,
                                    token=ray.token, workers=workers)

    return task


def _check_task(address: str):
    def task(on_event, stop):
        from studio.core.search.on_ray import check_ray_address

        check_ray_address(address)

    return task


class SearchRunner(QObject):
    """Starts, stops and resumes the document's search on a worker thread, shows its
    progress, and feeds its events to ``results``."""

    message = Signal(str)
    """A short note for the status bar."""
    started = Signal()
    """A search started (or resumed)."""
    looking = Signal()
    """The Ray a search is to run on is being looked for, or was not found (the search did
    not start)."""
    trial_ended = Signal()
    """A trial ended: its run is in the history."""
    finished = Signal(str)
    """A search ended: ``finished``, ``stopped`` or ``failed``."""

    def __init__(self, doc: ProjectDocument, results: SearchResults, engine: EngineChoice,
                 reasons: Callable[[], list[str]], style_from: QWidget) -> None:
        super().__init__(style_from)
        self.doc = doc
        self.results = results
        self.engine = engine
        self.reasons = reasons
        """Why the search cannot start now (empty if it can)."""
        self.checking = JobSlot(self)
        """Asks whether the Ray the search is to run on can be reached, before it starts."""
        self.checking.failed.connect(self._refused)
        self.checking.finished.connect(self._checked)
        self.then: Callable[[], None] | None = None
        """What starts once the check passes (on the Ray checked, whatever is chosen
        meanwhile)."""
        self.job = JobSlot(self)
        self.job.event.connect(self._on_event)
        self.job.succeeded.connect(self._on_succeeded)
        self.job.failed.connect(self._on_failed)
        self.job.finished.connect(self._on_done)
        self.pool: WorkerPool | None = None
        """Worker processes started while the tab shows a search that can start, so that
        Start does not wait for TensorFlow to load in them; kept for the next search."""
        self.search_dir = ""
        """The folder of the last search started here."""
        self.outcome = ""
        """How the last search ended: finished, stopped or failed (empty before any)."""
        self.last_error = ""
        self.searched: Project | None = None
        """The snapshot of the project searched last (None: none yet)."""
        """The settings of the search shown in the table (a snapshot taken at Start)."""
        self.planned = 0

        style = style_from.style()
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
        self.progress = QProgressBar()
        self.progress.setObjectName("search-progress")
        self.progress.setFormat("Ready")
        self.progress.setValue(0)
        self.status = QLabel()
        self.status.setObjectName("search-status")
        self.status.setWordWrap(True)

    def show_buttons(self, reasons: list[str]) -> None:
        """Enable Start, Stop and Resume as the search's state allows; ``reasons`` say why
        a search cannot start."""
        running = self.is_running()
        self.start_button.setEnabled(not reasons and not running)
        self.start_button.setToolTip(
            f"Cannot start: {reasons[0]}" if reasons else
            "Run the search in the background; each trial is a run in the history "
            "(Ctrl+Return)")
        self.stop_button.setEnabled(running)
        self.resume_button.setEnabled(not running and self.outcome == "stopped"
                                      and bool(self.search_dir))

    def warm_workers(self) -> None:
        """Start as many worker processes as trials run at once (TensorFlow loads in them in
        the background), unless they are up, a search runs, or searches run on Ray."""
        workers = self.doc.project.search.workers
        if self.engine.ray() is not None or self.is_running() or (
                self.pool is not None and self.pool.size == workers):
            return
        self.close_pool()
        self.pool = WorkerPool(workers)

    def close_pool(self) -> None:
        """Let the idle worker processes go."""
        if self.pool is not None:
            self.pool.close(timeout=0)  # idle workers hold nothing: never wait for them
            self.pool = None

    def is_running(self) -> bool:
        """True from Start (or Resume) until the search's last signal has been delivered,
        and while the Ray it is to run on is looked for."""
        return self.job.busy() or self.checking.busy()

    def start(self) -> None:
        """Search a snapshot of the project in a new search folder; its trials are runs in
        the project's runs folder."""
        if not self.is_running() and not self.reasons():
            self._when_reachable(self._start)

    def _start(self, ray: RayTarget | None) -> None:
        project = searched_project(self.doc.project)
        root = runs_root(self.doc.place)
        self.search_dir = str(search_folder(self.doc.place))
        self.searched = project
        self.warm_workers()
        self._launch(_search_task(project, root, Path(self.search_dir), project.search.workers,
                                  self.pool, ray),
                     "Starting the search: loading TensorFlow and the data…")

    def resume(self) -> None:
        """Continue the last stopped search, keeping its finished trials."""
        if not self.is_running() and self.outcome == "stopped" and self.search_dir:
            self._when_reachable(self._resume)

    def _resume(self, ray: RayTarget | None) -> None:
        workers = self.doc.project.search.workers
        self.warm_workers()
        self._launch(_resume_task(Path(self.search_dir), runs_root(self.doc.place), workers,
                                  self.pool, ray),
                     "Resuming the search…")

    def _when_reachable(self, then: Callable[[RayTarget | None], None]) -> None:
        """Call ``then`` with the chosen Ray (None: here): now for a search here; for one on
        Ray, once a thread has found Ray installed and its address answering (the refusal is
        the status line otherwise)."""
        ray = self.engine.ray()
        if ray is None:
            then(None)
            return
        self.then = lambda: then(ray)
        self.status.setStyleSheet("")
        self.status.setText(f"Looking for Ray at {ray.address}…")
        self.checking.start(_check_task(ray.address))
        self.looking.emit()

    @Slot(str)
    def _refused(self, message: str) -> None:
        self.then = None
        note_error("Search not started", message)
        self.status.setStyleSheet(ERROR_STYLE)
        self.status.setText(message)

    @Slot()
    def _checked(self) -> None:
        then, self.then = self.then, None
        if then is not None:
            then()
        else:
            self.looking.emit()

    def _launch(self, task, text: str) -> None:
        self.outcome = ""
        self.last_error = ""
        self.results.begin(self.searched)
        self.results.draw_parallel(self.searched.search)
        self.progress.setRange(0, 0)
        self.progress.setFormat("Starting…")
        self.status.setStyleSheet("")
        self.status.setText(text)
        self.job.start(task)
        self.started.emit()

    def show_last_search(self) -> None:
        """Show the project's last search, as its record left it: its trials, and Resume if
        it was stopped (nothing for a project never searched)."""
        if self.is_running():
            return
        path = last_search(self.doc.place)
        try:
            state = read_state(path) if path is not None else None
        except SearchError:
            state = None
        self.search_dir = str(path) if state is not None else ""
        self.searched = state.project if state is not None else None
        self.planned = state.planned if state is not None else 0
        self.outcome = ("" if state is None else "stopped" if state.stopped else "finished")
        records = [t.to_dict() for t in state.trials] if state is not None else []
        self.results.begin(self.shown_search(), records)
        self.status.setStyleSheet("")
        self.status.setText("")
        self._trial_ended()
        self.results.curves.redraw()
        self.progress.setFormat({"": "Ready", "finished": "Done", "stopped": "Stopped"}[
            self.outcome])
        if self.outcome == "stopped":
            self.status.setText(f"{self.status.text()} The last search was stopped after "
                                f"{len(records)} of {self.planned} trials: Resume goes on.".strip())

    def shown_search(self) -> Project:
        """The project of the search shown: the one searched, else the project as it would
        be searched."""
        return self.searched or searched_project(self.doc.project)

    def stop(self) -> None:
        """Stop the search: running trials end, finished ones are kept (a search still
        waiting for its Ray to answer does not start)."""
        if self.checking.busy():
            self.then = None
            self.checking.stop()
        if self.job.busy():
            self.job.stop()
            self.stop_button.setEnabled(False)
            self.progress.setFormat("Stopping…")

    @Slot(object)
    def _on_event(self, event: Event) -> None:
        kind = self.results.handle(event)
        if kind == "search_start":
            self.planned = event["planned"]
            self.search_dir = event.get("search_dir") or self.search_dir
            self._trial_ended()
        elif kind == "trial_start":
            self._show_progress()
        elif kind == "trial_end":
            self._trial_ended()
            self.trial_ended.emit()

    def _trial_ended(self) -> None:
        self.results.trial_ended(self.shown_search().search)
        self._show_progress()

    def _show_progress(self) -> None:
        ended, running = self.results.ended_and_running()
        planned = max(self.planned, ended + running, 1)
        self.progress.setRange(0, planned)
        self.progress.setValue(ended)
        if self.job.busy() and not self.job.stop_requested():
            self.progress.setFormat(f"{ended} of {planned} trials done · {running} running")
        best = self.results.best_trial()
        if best is not None:
            metric = metric_words(self.results.table.trials.metric)
            self.status.setStyleSheet("")
            so_far = " so far" if self.is_running() else ""
            model = self.results.table.trials
            front = (f" {len(model.front)} trials on the Pareto front (highlighted)."
                     if model.objectives else "")
            self.status.setText(f"Best{so_far}: trial {best['number']}, {metric} "
                                f"{best['value']:.4f} with {self.results.values_text(best)}."
                                f"{front}")

    @Slot(object)
    def _on_succeeded(self, result) -> None:
        self.outcome = "stopped" if result.stopped else "finished"
        self.progress.setFormat("Stopped" if result.stopped else "Done")
        done = sum(t["status"] == "finished" for t in self.results.table.trials.trials)
        self.message.emit(f"Search {self.outcome}: {done} trials finished, saved in "
                          f"{self.search_dir}")

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.outcome = "failed"
        self.last_error = message
        note_error("Search failed", message)
        self.progress.setRange(0, 1)
        self.progress.setFormat("Failed")
        self.status.setStyleSheet(ERROR_STYLE)
        self.status.setText(message)
        self.message.emit("The search failed")

    @Slot()
    def _on_done(self) -> None:
        self.results.curves.redraw()
        if self.outcome != "failed":
            self._show_progress()
        self.finished.emit(self.outcome)
