"""Hyperparameter search on this machine: Optuna proposes values (ask/tell, in this process)
and worker processes train the trials (``search_worker``), each trial an ordinary run.

Strategies: ``grid`` tries every combination of the dimensions' points, in order (each is
enqueued, so a resumed grid runs only the combinations not yet tried; Optuna's GridSampler is
the study's sampler but never has to choose); ``random`` samples with ``RandomSampler``;
``bayes`` with ``TPESampler``, whose first trials are random (``space.startup_trials``: by
default a fifth of the trials, 2 to 10); ``hyperband`` with the same ``TPESampler`` and a
``HyperbandPruner`` (rungs from epoch 1 to the project's epochs) fed each epoch's metric, which
stops poor trials early ("pruned"). Samplers are seeded with the search's seed plus the number
of trials kept, so a search is repeatable and a resumed one does not redraw the trials it
already has.

A trial's value is the best epoch's value of the search metric (lowest for losses, highest
for accuracies), not the last epoch's. A search may also minimise ``objectives`` measured on
each finished trial's model (latency, parameters or file size, see ``worker.measure``): then
the study has one direction per objective, the samplers above work on all of them (TPE in its
multi-objective form, see ``_study``) and the result is a Pareto front
(``SearchState.front``); Hyperband is refused, as Optuna prunes no multi-objective study.
Events are plain dicts (see ``run_search`` and ``studio.core.base.events``).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.base.events import OnEvent, WorkerMessage
from studio.core.project.document import Dimension, Project
from studio.core.search.space import (
    apply_values,
    check_dimension,
    param_for,
    problems,
    searched_project,
    startup_trials,
    trial_count,
)
from studio.core.search.state import (
    KEPT_ON_RESUME,
    SEARCH_FILE,
    SearchError,
    SearchResult,
    SearchState,
    TrialRecord,
    read_state,
    searches_root,
    write_state,
)
from studio.core.search.worker import Worker, WorkerPool

__all__ = ["SearchError", "SearchResult", "TrialRecord", "WorkerPool", "last_search",
           "resume_search", "run_search", "search_folder", "searches_root"]

POLL_SECONDS = 0.2
STOP_GRACE_SECONDS = 60.0
"""How long stopped trials may take to end before their workers are ended."""


def run_search(project: Project, runs_root: Path, search_dir: Path,
               on_event: OnEvent | None = None, stop: threading.Event | None = None, *,
               workers: int | None = None, report_every: int = 5,
               pool: WorkerPool | None = None) -> SearchResult:
    """Search ``project.search``'s space, training each trial as a run under ``runs_root``
    and keeping the search's state in ``search_dir/search.json``.

    ``workers`` trials run at once (default: the search's setting), in ``pool``'s worker
    processes if given (it is left running, for the next search) or in a pool made for this
    search. Events: ``search_start`` (``planned``, ``search_dir``, ``done``: trials kept on
    resume), ``trial_start`` (``number``, ``params``, ``run_dir``, ``pid`` of its worker and
    ``threads``, its TensorFlow's threads),
    ``trial_epoch`` (``number``, ``epoch``, ``metrics``), ``trial_end`` (a TrialRecord's
    fields) and ``search_end`` (``stopped``, ``best``: a trial number or None, ``front``: the
    numbers of the trials on the Pareto front, see ``SearchState.front``). Setting
    ``stop`` ends the running trials ("stopped") and starts no more; ``resume_search``
    continues. Raises SearchError, with every reason, for a space that cannot be searched.
    """
    return _LocalSearch(new_state(project, workers), runs_root, search_dir, on_event, stop,
                        report_every).run(pool)


def resume_search(search_dir: Path, runs_root: Path, on_event: OnEvent | None = None,
                  stop: threading.Event | None = None, *, workers: int | None = None,
                  report_every: int = 5, pool: WorkerPool | None = None) -> SearchResult:
    """Continue the search saved in ``search_dir``: finished, failed and pruned trials are
    kept, the others run again, up to the planned count (a grid: the combinations not yet
    tried). Arguments and events are those of ``run_search``; SearchError if there is no
    readable search there."""
    return _LocalSearch(resumed_state(search_dir, workers), runs_root, search_dir, on_event,
                        stop, report_every).run(pool)


def new_state(project: Project, workers: int | None = None) -> SearchState:
    """The state of a new search of ``project.search``, ``workers`` trials at once (default:
    the search's setting); SearchError, with every reason, for a space that cannot be
    searched."""
    reasons = problems(project, project.search)
    if workers is not None and workers < 1:
        reasons.append("At least one trial must run at a time.")
    if reasons:
        raise SearchError(reasons)
    return SearchState(searched_project(project), workers or project.search.workers,
                       trial_count(project, project.search))


def resumed_state(search_dir: Path, workers: int | None = None) -> SearchState:
    """The state of the search saved in ``search_dir`` as it resumes: its finished, failed and
    pruned trials kept, ``workers`` trials at once if given; SearchError if there is no
    readable search there."""
    state = read_state(search_dir)
    state.trials = [t for t in state.trials if t.status in KEPT_ON_RESUME]
    state.stopped = False
    if workers is not None:
        if workers < 1:
            raise SearchError("At least one trial must run at a time.")
        state.workers = workers
    return state


def search_folder(project_path: str | Path | None) -> Path:
    """A new folder for a search of the project saved at ``project_path``: beside its runs
    (``searches/<project>/<time>``), or in the workspace for an unsaved project."""
    from datetime import datetime

    root = searches_root(project_path)
    path = root / datetime.now().strftime("%Y%m%d-%H%M%S")
    suffix = 1
    while path.exists():
        suffix += 1
        path = root / f"{datetime.now():%Y%m%d-%H%M%S}-{suffix}"
    return path


def last_search(project_path: str | Path | None) -> Path | None:
    """The folder of the search of the project saved at ``project_path`` whose record
    (``search.json``) was written last, or None (always for an unsaved project)."""
    if project_path is None:
        return None
    records = sorted(searches_root(project_path).glob(f"*/{SEARCH_FILE}"),
                     key=lambda path: path.stat().st_mtime)
    return records[-1].parent if records else None


def trial_value(epochs: list[dict[str, float]], metric: str, minimize: bool) -> float | None:
    """The best finite value of ``metric`` over ``epochs``, or None if none has it."""
    values = [row[metric] for row in epochs
              if isinstance(row.get(metric), int | float) and math.isfinite(row[metric])]
    if not values:
        return None
    return min(values) if minimize else max(values)


def _distribution(project: Project, dimension: Dimension, grid: bool) -> Any:
    """The Optuna distribution of ``dimension``: its points for a grid or a list of values,
    else its range (whole numbers for whole-number parameters)."""
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    if grid or not dimension.is_range:
        return CategoricalDistribution(check_dimension(project, dimension))
    log = dimension.scale == "log"
    step = dimension.step if dimension.step is not None and not log else None
    if param_for(project, dimension.target).kind == "int":
        return IntDistribution(int(dimension.low), int(dimension.high), log=log,
                               step=int(step or 1))
    return FloatDistribution(float(dimension.low), float(dimension.high), log=log, step=step)


def _study(state: SearchState) -> Any:
    """An in-memory Optuna study with the strategy's sampler and pruner, and a direction for
    each objective.

    Bayesian search keeps TPE with several objectives (Optuna's TPE splits the trials into
    good and bad by their non-dominated rank) rather than NSGA-II: a desktop search runs tens
    of trials, and NSGA-II's generations of about 50 trials each start from random ones, so it
    would be random search for the whole budget."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    search = state.project.search
    seed = search.seed + len(state.trials)
    pruner = None
    if search.strategy == "grid":
        space = {d.target: check_dimension(state.project, d) for d in search.dimensions}
        sampler = optuna.samplers.GridSampler(space, seed=seed)
    elif search.strategy == "random":
        sampler = optuna.samplers.RandomSampler(seed=seed)
    else:
        sampler = optuna.samplers.TPESampler(seed=seed,
                                             n_startup_trials=startup_trials(search))
        if search.strategy == "hyperband":
            pruner = optuna.pruners.HyperbandPruner(
                min_resource=1, max_resource=max(1, state.project.training.epochs))
    metric = "minimize" if search.minimize else "maximize"
    return optuna.create_study(study_name="search",  # Hyperband's brackets hash the name
                               directions=[metric, *("minimize" for _ in search.objectives)],
                               sampler=sampler, pruner=pruner or optuna.pruners.NopPruner())


class SearchSession:
    """What every runner of one session of a search shares: the Optuna study proposing trials,
    their records, ``search.json`` and the events. A runner calls ``prepare``, ``begin``,
    ``propose`` and ``conclude`` for each trial, and ``end``."""

    def __init__(self, state: SearchState, runs_root: Path, search_dir: Path,
                 on_event: OnEvent | None, stop: threading.Event | None,
                 report_every: int) -> None:
        self.state = state
        self.runs_root = Path(runs_root)
        self.search_dir = Path(search_dir)
        self.emit = on_event or (lambda event: None)
        self.stop = stop or threading.Event()
        self.report_every = report_every
        search = state.project.search
        self.metric, self.minimize = search.metric, search.minimize
        self.objectives = list(search.objectives)
        self.grid = search.strategy == "grid"
        self.distributions = {d.target: _distribution(state.project, d, self.grid)
                              for d in search.dimensions}
        self.study = _study(state)
        self.next_number = max((t.number for t in state.trials), default=-1) + 1

    def prepare(self) -> int:
        """Tell the study the kept trials (and, for a grid, queue the combinations not yet
        tried); how many trials remain to run."""
        import optuna

        for record in self.state.trials:
            state = {"finished": optuna.trial.TrialState.COMPLETE,
                     "pruned": optuna.trial.TrialState.PRUNED}.get(
                record.status, optuna.trial.TrialState.FAIL)
            complete = state == optuna.trial.TrialState.COMPLETE
            self.study.add_trial(optuna.trial.create_trial(
                state=state, params=record.params, distributions=self.distributions,
                values=record.values(self.objectives) if complete else None,
                intermediate_values={} if self.objectives else {
                    int(r["epoch"]): r[self.metric] for r in record.epochs
                    if math.isfinite(r.get(self.metric, math.nan))}))
        if not self.grid:
            return max(0, self.state.planned - len(self.state.trials))
        tried = {tuple(t.params[target] for target in self.distributions)
                 for t in self.state.trials}
        combinations = [c for c in itertools.product(
            *(d.choices for d in self.distributions.values())) if c not in tried]
        for combination in combinations:
            self.study.enqueue_trial(dict(zip(self.distributions, combination, strict=True)))
        return len(combinations)

    def begin(self) -> None:
        """Save the search and tell that it starts (with the trials kept)."""
        write_state(self.search_dir, self.state)
        self.emit({"type": "search_start", "planned": self.state.planned,
                   "search_dir": str(self.search_dir),
                   "done": [t.to_dict() for t in self.state.trials]})

    def propose(self) -> tuple[TrialRecord, Any]:
        """The next trial: its record (numbered, not yet in the state) and its Optuna trial."""
        trial = self.study.ask(self.distributions)
        record = TrialRecord(self.next_number, dict(trial.params))
        self.next_number += 1
        return record, trial

    def trial_project(self, record: TrialRecord) -> Project:
        """The project with ``record``'s values applied."""
        return apply_values(self.state.project, record.params)

    def conclude(self, record: TrialRecord, trial: Any, status: str, reason: str = "") -> None:
        """Record how a trial ended (its value is the best epoch's metric; a finished trial
        without the metric fails), tell the study its objectives, save the search and tell
        the trial's end."""
        import optuna

        record.value = trial_value(record.epochs, self.metric, self.minimize)
        if status == "finished" and record.value is None:
            status, reason = "failed", (f"The trial reported no {self.metric.replace('_', ' ')}"
                                        f"; the search metric needs it (a validation split "
                                        f"for validation metrics).")
        missing = [name for name in self.objectives if name not in record.measures]
        if status == "finished" and missing:
            status, reason = "failed", (f"The trained model's {', '.join(missing)} could not "
                                        f"be measured.")
        record.status, record.reason = status, reason
        states = optuna.trial.TrialState
        if status == "finished":
            self.study.tell(trial, record.values(self.objectives))
        else:
            self.study.tell(trial, state=states.PRUNED if status == "pruned" else states.FAIL)
        write_state(self.search_dir, self.state)
        self.emit({"type": "trial_end", **record.to_dict()})

    def end(self, stopped: bool) -> SearchResult:
        """Save the search as ended (``stopped`` if trials are left or were stopped), tell
        its end; its result."""
        self.state.stopped = stopped or any(t.status == "stopped" for t in self.state.trials)
        write_state(self.search_dir, self.state)
        result = self.state.result(self.search_dir)
        self.emit({"type": "search_end", "stopped": result.stopped,
                   "best": result.best.number if result.best else None,
                   "front": result.front})
        return result


@dataclass
class _Running:
    """A trial handed to a worker."""

    record: TrialRecord
    trial: Any
    worker: Worker
    began: float = field(default_factory=time.perf_counter)
    announced: bool = False
    pruning: bool = False


class _LocalSearch(SearchSession):
    """A session of a search on this machine: hands trials to worker processes."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.running: dict[int, _Running] = {}

    def run(self, pool: WorkerPool | None) -> SearchResult:
        """Run the trials still to run; the search's result."""
        pending = self.prepare()
        self.begin()
        count = min(self.state.workers, pending)
        if count and not self.stop.is_set():
            own = pool is None
            pool = pool or WorkerPool(count)
            try:
                pending = self._loop(pool, pool.ensure(count), pending)
            finally:
                if own:
                    pool.close()
        return self.end(pending > 0)

    def _loop(self, pool: WorkerPool, workers: list[Worker], pending: int) -> int:
        """Keep every worker busy until no trial is left (or ``stop``); trials not started."""
        deadline = None
        while True:
            if not self.stop.is_set():
                for worker in workers:
                    if pending and worker.number is None:
                        self._submit(pool, worker)
                        pending -= 1
            elif deadline is None:
                deadline = time.perf_counter() + STOP_GRACE_SECONDS
                for run in self.running.values():
                    run.worker.stop.set()
            if not self.running:
                return pending
            message = pool.message(POLL_SECONDS)
            if message is not None:
                self._handle(message)
            for index, worker in enumerate(workers):
                if worker.number is not None and not worker.process.is_alive():
                    code = worker.process.exitcode
                    workers[index] = pool.replace(worker)
                    self._end(worker.number, "failed", reason=(
                        f"The process training this trial ended unexpectedly (exit code "
                        f"{code}); it may have run out of memory. Try a smaller batch size "
                        f"or model."))
            if deadline is not None and time.perf_counter() > deadline:
                for number in list(self.running):
                    self.running[number].worker.process.terminate()
                    self._end(number, "stopped")

    def _submit(self, pool: WorkerPool, worker: Worker) -> None:
        record, trial = self.propose()
        self.state.trials.append(record)
        self.running[record.number] = _Running(record, trial, worker)
        pool.submit(worker, {"number": record.number,
                             "project": self.trial_project(record).to_dict(),
                             "runs_root": str(self.runs_root),
                             "report_every": self.report_every})

    def _handle(self, message: WorkerMessage) -> None:
        """A worker's message about one of the running trials (late ones are ignored)."""
        run = self.running.get(message["number"])
        if run is None or run.worker.process.pid != message["pid"]:
            return
        kind = message["type"]
        if kind == "begin":
            run.began = time.perf_counter()
        elif kind == "start":
            run.record.run_dir = message["run_dir"]
            self._announce(run, message.get("threads"))
        elif kind == "epoch":
            self._epoch(run, message["epoch"], message["metrics"])
        elif kind == "end":
            status = message["status"]
            if status == "stopped":
                status = "pruned" if run.pruning else "stopped"
            run.record.measures = message.get("measures", {})
            self._end(run.record.number, status, message["reason"], message["run_dir"],
                      message["epochs"])

    def _announce(self, run: _Running, threads: int | None = None) -> None:
        run.announced = True
        self.emit({"type": "trial_start", "number": run.record.number,
                   "params": run.record.params, "run_dir": run.record.run_dir,
                   "pid": run.worker.process.pid, "threads": threads})

    def _epoch(self, run: _Running, epoch: int, metrics: dict[str, float]) -> None:
        run.record.epochs.append({"epoch": epoch, **metrics})
        self.emit({"type": "trial_epoch", "number": run.record.number, "epoch": epoch,
                   "metrics": metrics})
        value = metrics.get(self.metric)
        if self.state.project.search.strategy != "hyperband" or value is None \
                or not math.isfinite(value) or run.pruning:
            return
        run.trial.report(value, epoch)
        if epoch < self.state.project.training.epochs and run.trial.should_prune():
            run.pruning = True
            run.worker.stop.set()

    def _end(self, number: int, status: str, reason: str = "", run_dir: str = "",
             epochs: list[dict[str, float]] | None = None) -> None:
        """Record how trial ``number`` ended."""
        run = self.running.pop(number)
        run.worker.number = None
        record = run.record
        if not run.announced:
            record.run_dir = run_dir or record.run_dir
            self._announce(run)
        record.run_dir = run_dir or record.run_dir
        record.epochs = epochs or record.epochs
        record.seconds = round(time.perf_counter() - run.began, 3)
        self.conclude(record, run.trial, status, reason)
