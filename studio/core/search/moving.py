"""Moving a project's runs and searches with it when it is saved under a new name (the first
save of an unsaved project, or Save As), so that none is left behind.

The move is journaled and can be interrupted at any point: ``plan_move`` writes a journal
beside the new project (``runs/.<name>.moving.json``) naming what moves where, before the
project file is written; ``finish_move`` then moves each run folder, then each search folder,
by a rename within the file system (a copy into a hidden folder, renamed into place, where the
two places are on different file systems). A run is thus always whole in its old place or in
its new one. ``finish_move`` can be called again at any time (the project's next opening
does): it goes on from where it stopped, and the journal is removed once everything moved.

A run that trains while the move is made stays where it is (its trainer writes there) and
moves with the next ``finish_move``; so does a search whose trials have not all ended.

The same move adopts the runs and searches that earlier versions kept for every unsaved
project in the workspace's shared ``runs`` and ``searches`` folders (``EARLIER`` as the old
place), which no project lists now.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.base.events import Progress
from studio.core.base.files import atomic_write_text
from studio.core.base.messages import count
from studio.core.project.document import (
    DATA_PATH_FIELDS,
    ProjectFileError,
    load_project,
    project_stem,
    save_project,
)
from studio.core.runs.folders import PROJECT_FILE, UNSAVED, runs_root
from studio.core.runs.history import iter_run_folders
from studio.core.runs.index import INDEX_FILE, RunIndex
from studio.core.runs.lock import RunLock
from studio.core.search.state import SEARCH_FILE, searches_root

JOURNAL_FORMAT = 1
INCOMING = ".incoming-"
"""The prefix of a folder being copied in from another file system."""
MOVING = "Moving the runs and searches"
"""What ``finish_move`` tells its progress callback it does."""
EARLIER = None
"""The old place of a move that adopts the runs and searches earlier versions kept for every
unsaved project in the workspace's shared folders (see ``runs_root(None)``)."""


@dataclass
class MoveReport:
    """What a ``finish_move`` did."""

    runs: int = 0
    """Run folders moved."""
    searches: int = 0
    """Search folders moved."""
    kept: list[str] = field(default_factory=list)
    """Runs and searches left in the old place because they are in use; they move with the
    next ``finish_move``."""
    done: bool = True
    """Nothing is left to move (the journal is gone)."""
    moved: dict[str, str] = field(default_factory=dict)
    """Each run folder moved: its old path to its new one."""

    def summary(self) -> str:
        """What moved and what waits, in a sentence or two."""
        searches = count(self.searches, "search", "searches")
        text = f"Moved {count(self.runs, 'run')} and {searches} into the project's folder."
        if self.kept:
            text += f" In use, {', '.join(self.kept[:3])} moves once it ends."
        return text


def not_moved(reason: str) -> str:
    """What a move that failed with ``reason`` (an OSError's text) left, and what happens
    next."""
    return (f"Some runs or searches could not be moved into the project's folder "
            f"({reason.rstrip('.')}). They are kept whole where they were, and move when the "
            "project is opened again.")


def journal_path(project_path: Path) -> Path:
    """The journal of a move into ``project_path``'s place."""
    project_path = Path(project_path)
    return runs_root(project_path).parent / f".{project_stem(project_path)}.moving.json"


def has_work(project_path: Path | None) -> bool:
    """True if the project at ``project_path`` (``EARLIER``: the workspace's shared folders)
    has runs or searches."""
    return (any(True for _ in iter_run_folders(runs_root(project_path)))
            or any(searches_root(project_path).glob(f"*/{SEARCH_FILE}")))


def plan_move(old: Path | None, new: Path) -> bool:
    """Record that the runs and searches of the project at ``old`` (a project file, an
    unsaved project's scratch file, or ``EARLIER``) move to ``new``'s place; call it before
    the project is written at ``new``, then ``finish_move(new)``. False (nothing recorded)
    if there is nothing to move. A move into ``new`` that was under way is finished first."""
    old = None if old is EARLIER else Path(os.path.abspath(old))
    new = Path(os.path.abspath(new))
    if journal_path(new).exists():
        finish_move(new)
    if old == new or not has_work(old):
        return False
    _write_journal(new, {"format": JOURNAL_FORMAT, "from": None if old is None else str(old),
                         "to": str(new), "runs": {}, "searches": {}, "copied": []})
    return True


def finish_move(project_path: Path, on_progress: Progress | None = None,
                stop: threading.Event | None = None) -> MoveReport:
    """Move what the journal of ``project_path`` says has still to move (nothing if there is
    no journal); stopping (``stop``) between two folders leaves the rest for the next call.
    Raises OSError if a folder cannot be moved: what moved stays moved, the rest stays whole
    in its old place, and the journal remains for a retry."""
    project_path = Path(os.path.abspath(project_path))
    try:
        plan = json.loads(journal_path(project_path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return MoveReport()
    except (OSError, ValueError):
        return MoveReport(done=False)
    if (not isinstance(plan, dict) or plan.get("format") != JOURNAL_FORMAT
            or plan.get("to") != str(project_path)):
        return MoveReport(done=False)
    move = _Move(plan, project_path, on_progress, stop)
    return move.run()


class _Move:
    """One pass over a journaled move."""

    def __init__(self, plan: dict[str, Any], project_path: Path, on_progress: Progress | None,
                 stop: threading.Event | None) -> None:
        self.plan = plan
        self.project_path = project_path
        old = None if plan["from"] is None else Path(plan["from"])
        self.runs_from, self.runs_to = runs_root(old), runs_root(project_path)
        self.searches_from, self.searches_to = searches_root(old), searches_root(project_path)
        self.on_progress = on_progress
        self.stop = stop
        self.report = MoveReport()
        self.moved = 0

    def run(self) -> MoveReport:
        runs = self._extend("runs", self.runs_from, self.runs_to,
                            [p.name for p, _ in iter_run_folders(self.runs_from)])
        searches = self._extend("searches", self.searches_from, self.searches_to,
                                [p.parent.name for p in
                                 self.searches_from.glob(f"*/{SEARCH_FILE}")])
        total = len(runs) + len(searches)
        try:
            for name in runs:
                if self._stopped():
                    break
                self._move_run(name)
                self._tell(total)
            for name in searches:
                if self._stopped():
                    break
                self._move_search(name)
                self._tell(total)
        finally:
            for root in (self.runs_to, self.runs_from):
                if root.is_dir():
                    RunIndex(root).sync()
        left = (any(True for _ in iter_run_folders(self.runs_from))
                or any(self.searches_from.glob(f"*/{SEARCH_FILE}")))
        self.report.done = not left
        if not left:
            journal_path(self.project_path).unlink(missing_ok=True)
            self._tidy()
        return self.report

    def _stopped(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def _tell(self, total: int) -> None:
        self.moved += 1
        if self.on_progress is not None:
            self.on_progress(MOVING, self.moved, total)

    def _extend(self, kind: str, source: Path, target: Path, found: list[str]) -> list[str]:
        """The names of ``kind`` to move: those planned, with ``found`` ones not yet planned
        given a free name in ``target`` (recorded before anything moves)."""
        mapping: dict[str, str] = self.plan[kind]
        taken = set(mapping.values())
        added = False
        for name in sorted(found):
            if name in mapping:
                continue
            new, suffix = name, 1
            while new in taken or (target / new).exists():
                suffix += 1
                new = f"{name}-{suffix}"
            mapping[name] = new
            taken.add(new)
            added = True
        if added:
            _write_journal(self.project_path, self.plan)
        return [name for name in mapping if (source / name).exists()]

    def _move_run(self, name: str) -> None:
        source, target = self.runs_from / name, self.runs_to / self.plan["runs"][name]
        lock = RunLock(source)
        if not lock.acquire():  # a trainer writes there: it moves next time
            self.report.kept.append(name)
            return
        with lock:
            _pin_data_paths(source)
            self._move_folder(source, target)
        self.report.runs += 1
        self.report.moved[str(source)] = str(target)

    def _move_search(self, name: str) -> None:
        source = self.searches_from / name
        target = self.searches_to / self.plan["searches"][name]
        record = source / SEARCH_FILE
        try:
            document = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            document = None  # a damaged record moves as it is
        trials = document.get("trials") if isinstance(document, dict) else None
        changed = False
        for trial in trials if isinstance(trials, list) else []:
            if not isinstance(trial, dict) or not isinstance(trial.get("run_dir"), str) \
                    or not trial["run_dir"]:
                continue
            run_dir = Path(os.path.abspath(trial["run_dir"]))
            if run_dir.parent != self.runs_from:
                continue
            if run_dir.exists():  # a trial's run that could not move yet
                self.report.kept.append(name)
                return
            new = self.plan["runs"].get(run_dir.name)
            if new is not None:
                trial["run_dir"] = str(self.runs_to / new)
                changed = True
        if changed:
            atomic_write_text(record, json.dumps(document, indent=1))
        self._move_folder(source, target)
        self.report.searches += 1

    def _move_folder(self, source: Path, target: Path) -> None:
        """Rename ``source`` to ``target``; across file systems, copy it into a hidden folder
        beside ``target``, rename that into place, then remove ``source``."""
        if str(target) in self.plan["copied"] and target.exists():
            shutil.rmtree(source)  # copied before an interruption: only the removal was left
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(source, target)
            return
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        incoming = target.with_name(INCOMING + target.name)
        shutil.rmtree(incoming, ignore_errors=True)
        shutil.copytree(source, incoming, ignore=shutil.ignore_patterns(".training.lock"))
        os.rename(incoming, target)
        self.plan["copied"].append(str(target))
        _write_journal(self.project_path, self.plan)
        shutil.rmtree(source)

    def _tidy(self) -> None:
        """Remove the old place's emptied folders and run index (an unsaved project's scratch
        folder as a whole, once empty; never the workspace)."""
        earlier = self.plan["from"] is None
        for root in (self.runs_from, self.searches_from):
            for suffix in ("", "-wal", "-shm", "-journal"):
                (root / (INDEX_FILE + suffix)).unlink(missing_ok=True)
            for folder in (root,) if earlier else (root, root.parent):
                try:
                    folder.rmdir()
                except OSError:
                    break
        scratch = None if earlier else Path(self.plan["from"]).parent
        if scratch is not None and scratch.parent.name == UNSAVED:
            try:
                scratch.rmdir()
            except OSError:
                pass


def _pin_data_paths(run_dir: Path) -> None:
    """Store the run's project snapshot with its data paths absolute if they are stored
    relative to the run (data in the old place), so they still lead to the data once the run
    has moved."""
    snapshot = run_dir / PROJECT_FILE
    try:
        dataset = json.loads(snapshot.read_text(encoding="utf-8")).get("dataset", {})
    except (OSError, ValueError, AttributeError):
        return
    relative = [dataset.get(name) for name in DATA_PATH_FIELDS
                if isinstance(dataset.get(name), str) and dataset.get(name)
                and not os.path.isabs(os.path.expanduser(dataset[name]))]
    if not relative:
        return
    try:
        save_project(load_project(snapshot), snapshot, home=run_dir)
    except ProjectFileError:
        pass  # a damaged snapshot moves as it is


def _write_journal(project_path: Path, plan: dict[str, Any]) -> None:
    atomic_write_text(journal_path(project_path), json.dumps(plan, indent=1))
