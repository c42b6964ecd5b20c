"""Hyperparameter search on a Ray cluster (Ray Tune), the optional extra ``pip install ".[ray]"``.

The same search as ``search.run_search``: this process keeps the Optuna study (the same
samplers, seeds, grid order and resume rules), a Ray Tune ``Searcher`` hands its proposals to
Tune, and Tune runs each trial in a Ray actor that trains it with ``search_worker.run_trial``
as an ordinary run under ``runs_root``. Actors are reused from trial to trial, so TensorFlow
starts once per actor; each asks Ray for its share of the cluster's CPUs and limits
TensorFlow's threads to it. ``hyperband`` stops poor trials with Ray's ``ASHAScheduler``
(asynchronous successive halving on each epoch's metric) rather than Optuna's pruner; the
trials it stops are "pruned" and their runs "stopped".

Addresses are Ray's: ``local`` starts a Ray instance on this machine for the search (and
shuts it down after), ``auto`` joins the cluster this machine is part of, ``HOST:PORT`` the
cluster whose head listens there; ``token`` is that cluster's token when it asks for one
(Ray's token authentication, ``RAY_AUTH_MODE=token``). Every node needs Layer Studio
installed, and ``runs_root``, the dataset and ``search_dir`` must be paths every node can
reach (shared storage). Ray's own records go to ``search_dir/ray``, away from the run history.
Trials use CPUs only.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.base.events import OnEvent, WorkerMessage
from studio.core.base.runtime import THREADS_ENV, start_tensorflow
from studio.core.project.document import DATA_PATH_FIELDS, Project, absolute_data_path
from studio.core.search.runner import SearchSession, new_state, resumed_state
from studio.core.search.space import apply_values
from studio.core.search.state import SearchError, SearchResult, SearchState, TrialRecord
from studio.core.search.worker import _release_memory, run_trial

RAY_EXTRA = 'searching on Ray needs the optional extra: pip install ".[ray]"'
LOCAL = "local"
SCORE = "score"
"""The key of the search metric in the results Tune sees (NaN before the first epoch)."""
TUNE_ENVIRONMENT = {
    "RAY_AIR_NEW_OUTPUT": "0",  # Tune's newer output prints a banner even when told to be silent
    "TUNE_DISABLE_SIGINT_HANDLER": "1",  # Ctrl+C sets our `stop`, which stops the search
}
USAGE_STATS = "RAY_USAGE_STATS_ENABLED"
"""Ray's switch for the usage statistics it sends its makers ("0": off); Layer Studio is
private by default, so it is off wherever we start or join Ray unless set otherwise."""
POLL_SECONDS = 0.5
CONNECT_SECONDS = 5.0
AUTH_ENVIRONMENT = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
"""Where Ray reads whether a cluster asks for a token and the token itself (Ray 2.52+)."""


def run_search_on_ray(project: Project, runs_root: Path, search_dir: Path,
                      on_event: OnEvent | None = None,
                      stop: threading.Event | None = None, *, address: str,
                      token: str = "", workers: int | None = None,
                      report_every: int = 5) -> SearchResult:
    """Search ``project.search``'s space on the Ray cluster at ``address`` (with its
    ``token``, if it asks for one): arguments, events, ``search.json`` and the result are
    those of ``search.run_search``, with ``workers`` trials at once across the cluster.
    SearchError for a space that cannot be searched, without Ray, or for a cluster that
    cannot be reached."""
    _import_ray()
    return _RaySearch(new_state(project, workers), runs_root, search_dir, on_event, stop,
                      report_every).run(address, token)


def resume_search_on_ray(search_dir: Path, runs_root: Path,
                         on_event: OnEvent | None = None,
                         stop: threading.Event | None = None, *, address: str,
                         token: str = "", workers: int | None = None,
                         report_every: int = 5) -> SearchResult:
    """Continue the search saved in ``search_dir`` on the Ray cluster at ``address``, keeping
    its finished, failed and pruned trials (as ``search.resume_search`` does)."""
    _import_ray()
    return _RaySearch(resumed_state(search_dir, workers), runs_root, search_dir, on_event, stop,
                      report_every).run(address, token)


def check_ray_address(address: str) -> None:
    """SearchError, in one line, unless Ray is installed and ``address`` can be searched on:
    ``local``, ``auto``, or a HOST:PORT where something answers (Ray itself would retry for
    minutes). It waits up to ``CONNECT_SECONDS``: call it off the GUI thread."""
    _import_ray()
    if address.startswith("ray://"):
        raise SearchError("Ray Client addresses (ray://…) cannot run a search: run studio "
                          "search on a machine of the cluster, with --ray auto or "
                          "--ray HOST:PORT.")
    if address not in (LOCAL, "auto"):
        _check_reachable(address)


class _StopFlag:
    """A Ray actor every trial polls, so that stopping the search stops running trials after
    their current batch rather than after their current epoch."""

    def __init__(self) -> None:
        self.stopped = False

    def set(self) -> None:
        self.stopped = True

    def is_set(self) -> bool:
        return self.stopped


@dataclass
class _Live:
    """A trial Tune runs, as this process sees it."""

    record: TrialRecord
    trial: Any
    """Its Optuna trial."""
    announced: bool = False
    end: dict[str, Any] = field(default_factory=dict)
    """The trial's end message, once its actor reported it."""


class _RaySearch:
    """One session of a search on Ray: proposes trials from the study, turns Tune's results
    into events and records, and saves ``search.json`` after every trial."""

    def __init__(self, state: SearchState, runs_root: Path, search_dir: Path,
                 on_event: OnEvent | None, stop: threading.Event | None,
                 report_every: int) -> None:
        self.search = SearchSession(state, Path(runs_root).absolute(),
                                    Path(search_dir).absolute(), on_event, stop, report_every)
        self.state = state
        self.live: dict[str, _Live] = {}
        self.ended = 0
        """Trials of this session that ended other than stopped."""
        self.flag: Any = None
        self.flagged = False

    def run(self, address: str, token: str = "") -> SearchResult:
        """Connect to Ray and run the trials still to run; the search's result."""
        search = self.search
        ray = _import_ray()
        pending = search.prepare()
        with _connected(ray, address, token):
            search.begin()
            if pending and not search.stop.is_set():
                self._tune(ray, pending)
        for live in list(self.live.values()):
            if live.announced:  # stopped with the search; trials not yet started are dropped
                self._end(live, "stopped")
        return search.end(self.ended < pending)

    def _tune(self, ray: Any, pending: int) -> None:
        """Run ``pending`` trials with Ray Tune, ``state.workers`` at a time."""
        from ray import tune
        from ray.tune.schedulers import ASHAScheduler

        search, project = self.search, self.state.project
        classes = _tune_classes()
        mode = "min" if search.minimize else "max"
        threads = _cpus_per_trial(ray, self.state.workers)
        self.flag = ray.remote(num_cpus=0)(_StopFlag).remote()
        trainable = tune.with_parameters(
            classes.trainable, project=_portable(project).to_dict(),
            runs_root=str(search.runs_root), report_every=search.report_every,
            metric=search.metric, threads=threads, stop_flag=self.flag)
        scheduler = None
        if project.search.strategy == "hyperband" and project.training.epochs > 1:
            # rungs at 1, 3, 9… epochs, below the last one, as Optuna's pruner in search.py
            scheduler = ASHAScheduler(time_attr="epoch", metric=SCORE, mode=mode,
                                      max_t=project.training.epochs - 1, grace_period=1,
                                      reduction_factor=3, stop_last_trials=False)
        ray_dir = search.search_dir / "ray"
        session = len(list(ray_dir.glob("session-*"))) + 1 if ray_dir.is_dir() else 1
        key = str(id(self))
        tuner = tune.Tuner(
            tune.with_resources(trainable, {"cpu": threads}),
            tune_config=tune.TuneConfig(
                search_alg=classes.searcher(key, metric=SCORE, mode=mode),
                scheduler=scheduler, num_samples=pending,
                max_concurrent_trials=self.state.workers, reuse_actors=True),
            run_config=tune.RunConfig(
                storage_path=str(ray_dir), name=f"session-{session}", verbose=0,
                callbacks=[classes.callback(key)], stop=classes.stopper(key),
                checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=False)))
        for name, value in TUNE_ENVIRONMENT.items():
            os.environ.setdefault(name, value)
        _DRIVERS[key] = self
        try:
            tuner.fit()
        finally:
            del _DRIVERS[key]
            ray.kill(self.flag)

    def stop_requested(self) -> bool:
        """Whether the search was stopped (telling the trials, the first time)."""
        if not self.search.stop.is_set():
            return False
        if not self.flagged:
            self.flagged = True
            self.flag.set.remote()
        return True

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        """The Tune config (``number`` and ``params``) of Tune's trial ``trial_id``, asked of
        the study, or None once the search is stopped."""
        if self.search.stop.is_set():
            return None
        record, trial = self.search.propose()
        self.live[trial_id] = _Live(record, trial)
        return {"number": record.number, "params": record.params}

    def result(self, trial_id: str, result: dict[str, Any]) -> None:
        """A trial's result: its start, an epoch or its end."""
        live = self.live.get(trial_id)
        if live is None:
            return
        live.record.run_dir = result.get("run_dir") or live.record.run_dir
        live.record.seconds = round(float(result.get("time_total_s", 0.0)), 3)
        if not live.announced:
            self._announce(live, result)
        if result["event"] == "epoch":
            epoch, metrics = result["epoch"], result["metrics"]
            live.record.epochs.append({"epoch": epoch, **metrics})
            self.search.emit({"type": "trial_epoch", "number": live.record.number,
                              "epoch": epoch, "metrics": metrics})
            value = metrics.get(self.search.metric)
            if value is not None and math.isfinite(value) and not self.search.objectives:
                live.trial.report(value, epoch)  # Optuna takes no reports of several
        elif result["event"] == "end":
            live.end = result

    def complete(self, trial_id: str, error: bool) -> None:
        """Tune is done with a trial: it ended, Tune's scheduler stopped it, or it errored."""
        live = self.live.get(trial_id)
        if live is None:
            return
        if live.end:
            live.record.measures = live.end.get("measures", {})
            self._end(live, live.end["status"], live.end["reason"])
        elif error:
            self._end(live, "failed", (
                "The process training this trial ended unexpectedly or raised an error (it "
                f"may have run out of memory); Ray's error.txt under {self.search.search_dir}"
                "/ray says more. Try a smaller batch size or model."))
        else:
            self._end(live, "stopped" if self.search.stop.is_set() else "pruned")

    def _announce(self, live: _Live, result: dict[str, Any]) -> None:
        live.announced = True
        self.state.trials.append(live.record)
        self.search.emit({"type": "trial_start", "number": live.record.number,
                          "params": live.record.params, "run_dir": live.record.run_dir,
                          "pid": result.get("pid"), "node_ip": result.get("node_ip")})

    def _end(self, live: _Live, status: str, reason: str = "") -> None:
        """Record how a trial ended."""
        self.live = {key: value for key, value in self.live.items() if value is not live}
        if not live.announced:
            self._announce(live, {})
        if status != "stopped":
            self.ended += 1
        self.search.conclude(live.record, live.trial, status, reason)


def _import_ray() -> Any:
    """The ``ray`` module, or SearchError saying how to install it."""
    try:
        import ray
        import ray.tune  # noqa: F401
    except ImportError:
        raise SearchError(RAY_EXTRA) from None
    return ray


@contextmanager
def _connected(ray: Any, address: str, token: str = "") -> Iterator[None]:
    """Connected to the Ray cluster at ``address`` (with ``token``, if given) for the block:
    a connection this process already has is used as it is, one made here is closed after.
    Ray's usage statistics are off in this process and in the workers of the job (a
    cluster's head keeps its own setting, chosen when it was started)."""
    os.environ.setdefault(USAGE_STATS, "0")
    if ray.is_initialized():
        yield
        return
    check_ray_address(address)
    options = {"include_dashboard": False} if address == LOCAL else {}
    with _token(token):
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
                     runtime_env={"env_vars": {USAGE_STATS: os.environ[USAGE_STATS]}},
                     **options)
        except ray.exceptions.AuthenticationError:
            raise SearchError(f"The Ray cluster at {address} refused the connection: it asks "
                              f"for its token (ray get-auth-token on its head prints it), and "
                              f"the token given is missing or not its own.") from None
        except ConnectionError as exc:
            raise _refusal(address, exc) from None
        try:
            yield
        finally:
            ray.shutdown()


def _refusal(address: str, exc: ConnectionError) -> SearchError:
    """Why Ray could not connect to ``address``, in words."""
    if address == "auto":
        return SearchError("No Ray cluster runs on this machine to join (address auto): "
                           "start one with `ray start --head`, give its head's HOST:PORT, "
                           "or use local to start one for this search.")
    return SearchError(f"Cannot connect to the Ray cluster at {address} ({exc}). If it uses "
                       f"Ray's token authentication, give its token (the Search tab's Token, "
                       f"or RAY_AUTH_MODE=token with RAY_AUTH_TOKEN or ~/.ray/auth_token).")


@contextmanager
def _token(token: str) -> Iterator[None]:
    """With ``token``, Ray's token authentication on in this process for the block, where Ray
    reads it (its environment), and as it was after; without, the environment as it is.
    Ray caches the mode and the token once read: both are read again on the way in and out."""
    if not token:
        yield
        return
    from ray._raylet import AuthenticationTokenLoader, Config

    before = {name: os.environ.get(name) for name in AUTH_ENVIRONMENT}
    os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
    os.environ.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token})
    try:
        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        Config.initialize("")  # the mode before the cache, as Ray's own tests reset them
        AuthenticationTokenLoader.instance().reset_cache()


def _check_reachable(address: str) -> None:
    """SearchError unless something listens at ``address`` (HOST:PORT): Ray itself would
    retry for minutes."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise SearchError(f"{address!r} is not a Ray address: give HOST:PORT (the head node's "
                          f"address, port 6379 by default), auto or local.")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        raise SearchError(f"No Ray cluster answers at {address} ({exc.strerror or exc}). "
                          f"Start one with `ray start --head` there, or check the address."
                          ) from None


def _cpus_per_trial(ray: Any, workers: int) -> int:
    """Each trial's share of the cluster's CPUs, at most one node's worth."""
    nodes = [n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")]
    total = int(sum(nodes)) or 1
    return max(1, min(total // max(1, workers), int(max(nodes, default=1))))


def _portable(project: Project) -> Project:
    """``project`` with its data paths absolute, as trials run in other folders."""
    portable = project.copy()
    for name in DATA_PATH_FIELDS:
        setattr(portable.dataset, name, absolute_data_path(getattr(portable.dataset, name)))
    return portable


class _TrialThread:
    """One trial trained by ``run_trial`` in a thread of a Ray actor. After each epoch it
    waits for Tune's decision: ``next_message`` asked again (the trial goes on) or
    ``finish`` (it stops there, as a stopped run)."""

    def __init__(self, task: dict[str, Any]) -> None:
        self.messages: queue.Queue[WorkerMessage] = queue.Queue()
        self.halt = threading.Event()
        self.proceed = threading.Semaphore(0)
        self.paused = False
        self.thread = threading.Thread(target=self._run, args=(task,), daemon=True,
                                       name="studio-ray-trial")
        self.thread.start()

    def _run(self, task: dict[str, Any]) -> None:
        self.messages.put(run_trial(task, self._send, self.halt))

    def _send(self, message: WorkerMessage) -> None:
        if message["type"] == "begin":
            return
        self.messages.put(message)
        if message["type"] == "epoch":
            while not self.proceed.acquire(timeout=POLL_SECONDS) and not self.halt.is_set():
                pass

    def next_message(self, stopped: Callable[[], bool]) -> WorkerMessage:
        """The trial's next message (start, epoch or end), letting it train on past the epoch
        it reported last; ``stopped()``, asked while waiting, halts it."""
        if self.paused:
            self.paused = False
            self.proceed.release()
        while True:
            try:
                message = self.messages.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if stopped():
                    self.halt.set()
                continue
            self.paused = message["type"] == "epoch"
            return message

    def finish(self) -> None:
        """Stop the trial (if it still runs) and wait for its run to be recorded."""
        self.halt.set()
        self.thread.join()


_DRIVERS: dict[str, _RaySearch] = {}
"""The searches running Tune in this process, by key. Tune pickles its searcher, callbacks
and stopper (to restore a run, which searches do not use): they hold only a key."""


def _driver(key: str) -> _RaySearch:
    """The search of ``key`` (a module function, so Tune pickles a reference to it)."""
    return _DRIVERS[key]


@dataclass
class _TuneClasses:
    trainable: type
    searcher: Callable[..., Any]
    callback: Callable[..., Any]
    stopper: Callable[..., Any]


def _tune_classes() -> _TuneClasses:
    """The Ray Tune classes a search needs, defined here so this module imports without Ray."""
    import ray
    from ray import tune
    from ray.tune.search import Searcher
    from ray.tune.stopper import Stopper

    class TrialTrainable(tune.Trainable):
        """Trains trial after trial (Tune reuses the actor) in a thread; each ``step`` is
        the trial's next message: its start, an epoch or its end."""

        def setup(self, config: dict[str, Any], *, project: dict[str, Any], runs_root: str,
                  report_every: int, metric: str, threads: int, stop_flag: Any) -> None:
            os.environ[THREADS_ENV] = str(threads)
            start_tensorflow()
            self.base = {"project": Project.from_dict(project), "runs_root": runs_root,
                         "report_every": report_every}
            self.metric, self.stop_flag = metric, stop_flag
            self._begin(config)

        def _begin(self, config: dict[str, Any]) -> None:
            self.trial = _TrialThread({
                "number": config["number"], "runs_root": self.base["runs_root"],
                "report_every": self.base["report_every"],
                "project": apply_values(self.base["project"], config["params"]).to_dict()})
            self.last: dict[str, Any] = {"epoch": 0, SCORE: math.nan}

        def step(self) -> dict[str, Any]:
            message = self.trial.next_message(
                lambda: ray.get(self.stop_flag.is_set.remote()))
            if message["type"] == "start":
                return {**self.last, "event": "start", "run_dir": message["run_dir"]}
            if message["type"] == "epoch":
                metrics = message["metrics"]
                self.last = {"epoch": message["epoch"], SCORE: metrics.get(self.metric, math.nan)}
                return {**self.last, "event": "epoch", "metrics": metrics}
            return {**self.last, "event": "end", "done": True,
                    "measures": message.get("measures", {}),
                    **{k: message[k] for k in ("status", "reason", "run_dir")}}

        def reset_config(self, new_config: dict[str, Any]) -> bool:
            self.trial.finish()
            _release_memory()
            self._begin(new_config)
            return True

        def cleanup(self) -> None:
            self.trial.finish()

    class StudySearcher(Searcher):
        """Proposes the trials of the search's Optuna study."""

        def __init__(self, key: str, **kw: Any) -> None:
            super().__init__(**kw)
            self.key = key

        def suggest(self, trial_id: str) -> dict[str, Any] | None:
            config = _driver(self.key).suggest(trial_id)
            return Searcher.FINISHED if config is None else config

        def on_trial_complete(self, trial_id: str, result: dict | None = None,
                              error: bool = False) -> None:
            _driver(self.key).complete(trial_id, error)

        def save_to_dir(self, *args: Any, **kwargs: Any) -> None:
            """Nothing to save: ``search.json`` is the search's record."""

    class Events(tune.Callback):
        """Hands every trial result to the search."""

        def __init__(self, key: str) -> None:
            self.key = key

        def on_trial_result(self, iteration: int, trials: list, trial: Any,
                            result: dict[str, Any], **info: Any) -> None:
            _driver(self.key).result(trial.trial_id, result)

    class StopAll(Stopper):
        """Stops every trial once the search is stopped."""

        def __init__(self, key: str) -> None:
            self.key = key

        def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
            return False

        def stop_all(self) -> bool:
            return _driver(self.key).stop_requested()

    return _TuneClasses(TrialTrainable, StudySearcher, Events, StopAll)
