"""An index of a project's runs in SQLite (``<runs root>/index.sqlite``), so the history of
a thousand runs opens at once. It is only a cache of the run folders, which stay the truth:
``sync`` re-reads just the folders whose ``run.json`` changed, and a missing, damaged,
outdated or unwritable index file is set aside and rebuilt from the folders (or, if the file
cannot be written at all, kept in memory), so a bad index never loses a run."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from studio.core.runs.history import (
    RunSummary,
    Signature,
    delete_run,
    effective_status,
    iter_run_folders,
    read_run,
)

INDEX_FILE = "index.sqlite"
SET_ASIDE_SUFFIX = ".bad"
SCHEMA_VERSION = 2
"""Kept in ``PRAGMA user_version``; an index of another version is rebuilt."""
BEST_COLUMNS = ("val_loss", "val_accuracy", "loss", "accuracy")
SORT_KEYS = ("id", "name", "status", "started", "seconds", "epochs", *BEST_COLUMNS,
             "optimizer", "learning_rate", "batch_size")
_COLUMNS = ("id", "name", "task", "status", "started", "updated", "seconds", "epochs",
            "epochs_planned", *BEST_COLUMNS, "other_best", "test", "error", "optimizer",
            "learning_rate", "batch_size", "pid", "host", "mtime_ns", "size", "inode")
_SCHEMA = (f"""
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, name TEXT, task TEXT, status TEXT, started TEXT, updated TEXT,
    seconds REAL, epochs INTEGER, epochs_planned INTEGER,
    {", ".join(f"{c} REAL" for c in BEST_COLUMNS)},
    other_best TEXT, test TEXT, error TEXT, optimizer TEXT, learning_rate REAL,
    batch_size INTEGER, pid INTEGER, host TEXT, mtime_ns INTEGER, size INTEGER, inode INTEGER
)""", f"PRAGMA user_version = {SCHEMA_VERSION}")
_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")
T = TypeVar("T")


@dataclass
class SyncReport:
    """What a sync did."""

    read: int
    """Run folders (re-)read because they are new or their ``run.json`` changed."""
    removed: int
    """Rows dropped because their folder is gone."""
    total: int
    """Runs in the index afterwards."""


def _row(run: RunSummary, signature: Signature) -> tuple[Any, ...]:
    others = {k: v for k, v in run.best.items() if k not in BEST_COLUMNS}
    return (run.id, run.name, run.task, run.recorded_status, run.started, run.updated,
            run.seconds, run.epochs, run.epochs_planned, *(run.best.get(c) for c in BEST_COLUMNS),
            json.dumps(others), json.dumps(run.test), run.error, run.optimizer,
            run.learning_rate, run.batch_size, run.pid, run.host, *signature)


def _summary(root: Path, row: sqlite3.Row) -> RunSummary:
    best = {c: row[c] for c in BEST_COLUMNS if row[c] is not None}
    best.update(json.loads(row["other_best"] or "{}"))
    info = {"status": row["status"], "pid": row["pid"], "host": row["host"],
            "updated": row["updated"], "started": row["started"]}
    path = root / row["id"]
    return RunSummary(
        id=row["id"], path=path, name=row["name"], task=row["task"],
        status=effective_status(info, path), recorded_status=row["status"],
        started=row["started"], updated=row["updated"], seconds=row["seconds"],
        epochs=row["epochs"], epochs_planned=row["epochs_planned"],
        best=best, test=json.loads(row["test"] or "null"), error=row["error"],
        optimizer=row["optimizer"], learning_rate=row["learning_rate"],
        batch_size=row["batch_size"], pid=row["pid"], host=row["host"])


class RunIndex:
    """The runs under one runs root. Safe to share between threads; other processes (a
    trainer, another window, the command line) may use the same index file at once."""

    def __init__(self, root: Path, timeout: float = 5.0) -> None:
        self.root = Path(root)
        self.path = self.root / INDEX_FILE
        self.timeout = timeout
        """Seconds to wait for another process's write before using a private index."""
        self.notes: list[str] = []
        """What was wrong with the index file and how it was dealt with, oldest first."""
        self._lock = threading.RLock()
        self._memory: sqlite3.Connection | None = None
        self._memory_in_use = False
        """The last sync could not use the file: list from memory until one can."""

    def sync(self) -> SyncReport:
        """Bring the index up to date with the run folders: read new and changed folders
        (those whose ``run.json`` changed), drop the rows of deleted ones."""
        return self._call(self._sync, syncs=True)

    def runs(self, order_by: str = "started", descending: bool = True,
             status: str | None = None, text: str | None = None) -> list[RunSummary]:
        """The indexed runs (as of the last sync) sorted by ``order_by`` (one of SORT_KEYS;
        runs without that value last), keeping those with effective ``status`` and those
        whose id, name, optimizer or error contains ``text`` (any case)."""
        if order_by not in SORT_KEYS:
            raise ValueError(f"Cannot sort runs by {order_by!r}; use one of {SORT_KEYS}.")
        column = "id" if order_by == "status" else order_by
        where, params = "", []
        if text:
            pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern += "%"
            where = " WHERE " + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in
                                             ("id", "name", "optimizer", "error"))
            params = [pattern] * 4
        direction = "DESC" if descending else "ASC"
        query = (f"SELECT {', '.join(_COLUMNS)} FROM runs{where} "
                 f"ORDER BY {column} IS NULL, {column} {direction}, id {direction}")
        rows = self._call(lambda db: db.execute(query, params).fetchall())
        found = [_summary(self.root, row) for row in rows]
        if order_by == "status":
            found.sort(key=lambda run: run.status, reverse=descending)
        return [run for run in found if status is None or run.status == status]

    def delete(self, run_id: str) -> None:
        """Delete a run's folder and its row. Raises RunInUseError while it runs in a live
        process, OSError if its files cannot be removed."""
        path = self.root / run_id
        if path.exists():
            delete_run(path)
        self._call(lambda db: db.execute("DELETE FROM runs WHERE id = ?", (run_id,)))

    def _sync(self, db: sqlite3.Connection) -> SyncReport:
        known = {row[0]: tuple(row[1:]) for row in
                 db.execute("SELECT id, mtime_ns, size, inode FROM runs")}
        found = {path.name: (path, signature) for path, signature in
                 iter_run_folders(self.root)}
        fresh = [_row(read_run(path), signature) for name, (path, signature) in found.items()
                 if known.get(name) != signature]
        gone = [(name,) for name in known.keys() - found.keys()]
        if fresh or gone:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(f"INSERT OR REPLACE INTO runs VALUES "
                               f"({', '.join('?' * len(_COLUMNS))})", fresh)
                db.executemany("DELETE FROM runs WHERE id = ?", gone)
                db.execute("COMMIT")
            except BaseException:
                db.rollback()
                raise
        return SyncReport(len(fresh), len(gone), len(found))

    def _call(self, operation: Callable[[sqlite3.Connection], T], syncs: bool = False) -> T:
        """Run ``operation`` on the index file, first filled from the folders if it is new
        (unless the operation ``syncs`` itself);
        a damaged file is set aside and rebuilt once; if the file stays unusable (busy,
        unwritable), on a private index in memory."""
        with self._lock:
            if not self.root.is_dir() or (self._memory_in_use and not syncs):
                return self._in_memory(operation, syncs)
            for attempt in range(2):
                try:
                    db, created = self._connect()
                except (sqlite3.Error, OSError) as exc:
                    problem: Exception = exc
                else:
                    try:
                        if created and not syncs:
                            self._sync(db)
                        result = operation(db)
                        if syncs:
                            self._memory_in_use = False
                        return result
                    except sqlite3.Error as exc:
                        problem = exc
                    finally:
                        db.close()
                busy = getattr(problem, "sqlite_errorname", "") in _BUSY
                if attempt or busy or not self._set_aside(problem):
                    break
            return self._in_memory(operation, syncs, problem)

    def _connect(self) -> tuple[sqlite3.Connection, bool]:
        """A connection to the index file with its schema, and whether it was just made."""
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                             check_same_thread=False)
        try:
            db.row_factory = sqlite3.Row
            if db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
                return db, False
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("BEGIN IMMEDIATE")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if version != SCHEMA_VERSION and (version or tables):
                raise sqlite3.DatabaseError(f"it has schema version {version}, not "
                                            f"{SCHEMA_VERSION}")
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute("COMMIT")
            return db, version != SCHEMA_VERSION
        except BaseException:
            db.close()
            raise

    def _set_aside(self, problem: Exception) -> bool:
        """Move a damaged index file (and its journal) out of the way; False if it cannot."""
        if not self.path.exists():
            return False
        try:
            os.replace(self.path, self.path.with_name(INDEX_FILE + SET_ASIDE_SUFFIX))
            for suffix in ("-wal", "-shm", "-journal"):
                self.path.with_name(INDEX_FILE + suffix).unlink(missing_ok=True)
        except OSError as exc:
            self._note(f"The run index could not be used ({problem}) nor moved aside "
                       f"({exc.strerror or exc}).")
            return False
        self._note(f"The run index could not be used ({problem}); it was moved to "
                   f"{INDEX_FILE + SET_ASIDE_SUFFIX} and rebuilt from the run folders.")
        return True

    def _in_memory(self, operation: Callable[[sqlite3.Connection], T], syncs: bool,
                   problem: Exception | None = None) -> T:
        """``operation`` on a private index in memory, filled from the folders (used while
        the file cannot be, and when there is no runs folder yet)."""
        if problem is not None:
            self._memory_in_use = True
            self._note(f"The run index file cannot be used ({problem}); the runs are listed "
                       "from their folders.")
        if self._memory is None:
            self._memory = sqlite3.connect(":memory:", isolation_level=None,
                                           check_same_thread=False)
            self._memory.row_factory = sqlite3.Row
            for statement in _SCHEMA:
                self._memory.execute(statement)
        if not syncs:
            self._sync(self._memory)
        return operation(self._memory)

    def _note(self, text: str) -> None:
        if not self.notes or self.notes[-1] != text:
            self.notes.append(text)
