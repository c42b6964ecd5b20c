"""A search's record: its trials and ``search.json``, the state a stopped search resumes from.

``search.json`` is versioned JSON holding the project document (with its search settings),
the number of workers, the planned trial count and every trial as a ``TrialRecord``; it is
written atomically after every trial ends, so a crash loses at most the trials running.
"""

from __future__ import annotations

import json
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
    its run folder and its epochs' metrics."""

    number: int
    params: dict[str, Any]
    status: str = "running"
    value: float | None = None
    reason: str = ""
    seconds: float = 0.0
    run_dir: str = ""
    epochs: list[dict[str, float]] = field(default_factory=list)

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
    """How a search ended: its folder, its trials, whether it was stopped, and the best
    finished trial by the metric's direction (None if no trial has a value)."""

    search_dir: Path
    trials: list[TrialRecord]
    stopped: bool
    best: TrialRecord | None


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
        scored = [t for t in self.trials if t.value is not None and t.status == "finished"]
        if not scored:
            return None
        pick = min if self.project.search.minimize else max
        return pick(scored, key=lambda t: t.value)

    def result(self, search_dir: Path) -> SearchResult:
        """The search's outcome as ``run_search`` returns it."""
        return SearchResult(Path(search_dir), list(self.trials), self.stopped, self.best())


def write_state(search_dir: Path, state: SearchState) -> None:
    """Save ``state`` as ``search_dir/search.json``, atomically."""
    document = {
        "format": FORMAT,
        "project": state.project.to_dict(),
        "workers": state.workers,
        "planned": state.planned,
        "stopped": state.stopped,
        "trials": [t.to_dict() for t in state.trials],
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
