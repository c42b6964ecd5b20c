"""The user's preferences: a small versioned JSON file in the platform's config folder.

It holds what the app remembers between sessions apart from the window's layout (which Qt
keeps): whether the welcome page has been shown, the recently used projects, where the
Search tab runs searches (the engine and the Ray cluster's address: they belong to this machine,
not to a project; a cluster's token, a secret, is never written) and how the dataset editor
adds images (the largest side they are shrunk to, whether originals are kept). A file that
cannot be read, or that a newer Layer Studio wrote, is never fatal: the defaults are used and
``Preferences.note`` says why; a newer file is also left as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from studio.core.base.files import atomic_write_text

VERSION = 1
FILE_NAME = "preferences.json"
MAX_RECENT = 10
ENGINES = ("workers", "local", "cluster")
"""Where a search runs: worker processes here, a Ray instance started for it, a Ray cluster."""
MAX_SIDE = 1024
"""Images added to a dataset larger than this on their longer side are shrunk, by default."""
MAX_SIDE_LIMIT = 16384
"""The largest "largest side" that can be chosen (0 means any size)."""


@dataclass
class Preferences:
    """What is remembered, and where it is kept."""

    path: Path
    welcome_seen: bool = False
    """The welcome page has been shown once (so the next start opens straight on a project)."""
    recent_projects: list[str] = field(default_factory=list)
    """Project files, most recently opened or saved first."""
    search_engine: str = ENGINES[0]
    """Where the Search tab runs searches: one of ``ENGINES``."""
    ray_address: str = ""
    """The HOST:PORT of the Ray cluster searched on last."""
    max_side: int = MAX_SIDE
    """The dataset editor shrinks images added that are larger on their longer side (0: it
    does not)."""
    keep_originals: bool = False
    """The dataset editor keeps the original of each image it shrinks."""
    note: str = ""
    """Why the file on disk was not used, in plain words; empty when it was (or is absent)."""
    writable: bool = True
    """False when a newer Layer Studio wrote the file: saving would lose its settings."""

    @classmethod
    def load(cls, path: Path) -> Preferences:
        """The preferences in ``path``; the defaults (with a note) if it is missing, broken
        or from a newer version."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            return cls(path, note=f"Your preferences in {path} could not be read ({exc}); "
                                  "Layer Studio starts with its defaults and rewrites them.")
        if not isinstance(data, dict) or not isinstance(data.get("version"), int):
            return cls(path, note=f"Your preferences in {path} are not a Layer Studio "
                                  "preferences file; Layer Studio starts with its defaults.")
        if data["version"] > VERSION:
            return cls(path, writable=False,
                       note=f"Your preferences in {path} were written by a newer Layer Studio; "
                            "this version uses its defaults and leaves that file unchanged.")
        recent = data.get("recent_projects", [])
        engine, address = data.get("search_engine"), data.get("ray_address")
        side, keep = data.get("max_side"), data.get("keep_originals")
        return cls(path, welcome_seen=bool(data.get("welcome_seen", False)),
                   recent_projects=[p for p in recent if isinstance(p, str)][:MAX_RECENT]
                   if isinstance(recent, list) else [],
                   search_engine=engine if engine in ENGINES else ENGINES[0],
                   ray_address=address if isinstance(address, str) else "",
                   max_side=side if type(side) is int and 0 <= side <= MAX_SIDE_LIMIT
                   else MAX_SIDE,
                   keep_originals=keep if isinstance(keep, bool) else False)

    def save(self) -> None:
        """Write the preferences atomically (not when a newer version owns the file)."""
        if not self.writable:
            return
        data = {"version": VERSION, "welcome_seen": self.welcome_seen,
                "recent_projects": self.recent_projects, "search_engine": self.search_engine,
                "ray_address": self.ray_address, "max_side": self.max_side,
                "keep_originals": self.keep_originals}
        atomic_write_text(self.path, json.dumps(data, indent=2) + "\n")

    def add_recent(self, project: Path) -> None:
        """Put ``project`` first in the recent projects (once, at most ``MAX_RECENT``)."""
        name = str(Path(project).resolve())
        self.recent_projects = [name, *(p for p in self.recent_projects if p != name)]
        del self.recent_projects[MAX_RECENT:]

    def existing_recent(self) -> list[Path]:
        """The recent projects whose files still exist, most recent first."""
        return [Path(p) for p in self.recent_projects if Path(p).is_file()]
