"""A search's record: its trials and ``search.json``, the state a stopped search resumes from.

``search.json`` is versioned JSON holding the project document (with its search settings),
the number of workers, the planned trial count, every trial as a ``TrialRecord`` and the
Pareto front of the search's objectives (``SearchState.front``; for other programs, as it is
computed again from the trials when read); it is written atomically after every trial ends, so
a crash loses at most the trials running.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from studio.core.base.files import atomic_write_text
from studio.core.base.paths import workspace
from studio.core.project.document import Project, project_stem

SEARCH_FILE = "search.json"
FORMAT = 1
TRIAL_STATUSES = ("running", "finished", "failed", "pruned", "stopped")
KEPT_ON_RESUME = ("finished", "failed", "pruned")
"""Trials a resumed search keeps; stopped (and running, after a crash) trials run again."""


def searches_root(project_path: str | Path | None) -> Path:
    """The folder of the searches of the project saved at ``project_path`` (each search a
    folder in it), or the workspace's for no project."""
    if project_path is None:
        return workspace() / "searches"
    return Path(project_path).parent / "searches" / project_stem(project_path)


class SearchError(ValueError):
    """A search that cannot run or resume (an invalid space, a missing or damaged
    ``search.json``); ``reasons`` says why in plain words, one reason a line."""

    def __init__(self, reasons: list[str] | str) -> None:
        self.reasons = [reasons] if isinstance(reasons, str) else list(reasons)
        super().__init__("\n".join(self.reasons))


@dataclass
class TrialRecord:
    """One trial: its ``params`` ({target: value}), how it ended (``status``, ``reason`` for a
    failure), its ``value`` of the search metric (the best epoch's), its duration in seconds,
    its run folder, its epochs' metrics and, in a search of several objectives, the trained
    model's ``measures`` ({objective: value}: ``latency`` in ms per sample, ``params``,
    ``size`` in bytes)."""

    number: int
    params: dict[str, Any]
    status: str = "running"
    value: float | None = None
    reason: str = ""
    seconds: float = 0.0
    run_dir: str = ""
    epochs: list[dict[str, float]] = field(default_factory=list)
    measures: dict[str, float] = field(default_factory=dict)

    def values(self, objectives: Sequence[str]) -> list[float] | None:
        """The trial's value of each objective (the metric's, then each of ``objectives``),
        or None unless it finished with all of them."""
        if self.status != "finished" or self.value is None \
                or any(name not in self.measures for name in objectives):
            return None
        return [self.value, *(self.measures[name] for name in objectives)]

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON-ready data."""
        return asdict(self)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> TrialRecord:
        """The record ``to_dict`` gave (other keys, such as an event's ``type``, ignored)."""
        names = TrialRecord.__dataclass_fields__
        return TrialRecord(**{k: v for k, v in data.items() if k in names})


@dataclass
class SearchResult:
    """How a search ended: its folder, its trials, whether it was stopped, the best
    finished trial by the metric's direction (None if no trial has a value) and the numbers
    of the trials on the Pareto front of its objectives (the best alone for one objective)."""

    search_dir: Path
    trials: list[TrialRecord]
    stopped: bool
    best: TrialRecord | None
    front: list[int] = field(default_factory=list)


def dominates(a: Sequence[float], b: Sequence[float], minimize: Sequence[bool]) -> bool:
    """Whether point ``a`` is at least as good as ``b`` in every objective and better in one
    (``minimize``: each objective's direction)."""
    signed = [(x, y) if low else (-x, -y) for x, y, low in zip(a, b, minimize, strict=True)]
    return all(x <= y for x, y in signed) and any(x < y for x, y in signed)


def best_of(trials: Sequence[TrialRecord], minimize: bool) -> TrialRecord | None:
    """The finished trial with the best value (lowest if ``minimize``), if any has one."""
    scored = [t for t in trials if t.value is not None and t.status == "finished"]
    if not scored:
        return None
    pick = min if minimize else max
    return pick(scored, key=lambda t: t.value)


def front_of(trials: Sequence[TrialRecord], minimize: bool,
             objectives: Sequence[str]) -> list[int]:
    """The numbers of the finished ``trials`` on the Pareto front of the metric (lowest
    best if ``minimize``) and the extra ``objectives`` (all lowest best), in order; for the
    metric alone, the best trial's."""
    if not objectives:
        best = best_of(trials, minimize)
        return [best.number] if best is not None else []
    scored = [(t.number, v) for t in trials if (v := t.values(objectives)) is not None]
    lowest = [minimize, *(True for _ in objectives)]
    return [scored[i][0] for i in pareto_front([v for _, v in scored], lowest)]


def pareto_front(points: Sequence[Sequence[float]], minimize: Sequence[bool]) -> list[int]:
    """The indices of the ``points`` no other point dominates, in order (equal points are all
    kept: neither dominates the other)."""
    return [i for i, point in enumerate(points)
            if not any(dominates(other, point, minimize) for other in points)]


@dataclass
class SearchState:
    """Everything ``search.json`` holds."""

    project: Project
    workers: int
    planned: int
    trials: list[TrialRecord] = field(default_factory=list)
    stopped: bool = False

    def best(self) -> TrialRecord | None:
        """The trial with the best value by the project's search metric, if any has one."""
        return best_of(self.trials, self.project.search.minimize)

    def front(self) -> list[int]:
        """The numbers of the trials on the Pareto front of the search's objectives
        (``front_of``)."""
        search = self.project.search
        return front_of(self.trials, search.minimize, search.objectives)

    def result(self, search_dir: Path) -> SearchResult:
        """The search's outcome as ``run_search`` returns it."""
        return SearchResult(Path(search_dir), list(self.trials), self.stopped, self.best(),
                            self.front())


def write_state(search_dir: Path, state: SearchState) -> None:
    """Save ``state`` as ``search_dir/search.json``, atomically."""
    document = {
        "format": FORMAT,
        "project": state.project.to_dict(),
        "workers": state.workers,
        "planned": state.planned,
        "stopped": state.stopped,
        "trials": [t.to_dict() for t in state.trials],
        "front": state.front(),
    }
    Path(search_dir).mkdir(parents=True, exist_ok=True)
    atomic_write_text(Path(search_dir) / SEARCH_FILE, json.dumps(document, indent=1))


def read_state(search_dir: Path) -> SearchState:
    """The state saved in ``search_dir/search.json``; SearchError if it cannot be read."""
    path = Path(search_dir) / SEARCH_FILE
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SearchError(f"{search_dir} holds no search ({SEARCH_FILE} is missing).") \
            from None
    except (OSError, ValueError) as exc:
        raise SearchError(f"{path} cannot be read: {exc}.") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise SearchError(f"{path} is damaged or was written by a newer Layer Studio; "
                          "open it with the version that wrote it.")
    try:
        return SearchState(
            project=Project.from_dict(document["project"]),
            workers=int(document["workers"]),
            planned=int(document["planned"]),
            trials=[TrialRecord.from_dict(t) for t in document["trials"]],
            stopped=bool(document.get("stopped", False)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SearchError(f"{path} is damaged ({exc}).") from None
