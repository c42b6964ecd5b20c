"""Writing an export all or nothing: everything goes to a hidden staging folder first and
moves into the target folder only once complete, so a failure leaves the target as it was."""

from __future__ import annotations

import errno
import os
import shutil
import uuid
from pathlib import Path

_ASIDE = ".replaced"


class Staging:
    """A hidden folder beside (or, for an existing target, inside) ``target`` to write an
    export into. ``commit`` moves its entries into ``target`` (replacing those of the same
    names); ``discard`` removes it and any folder made for it."""

    def __init__(self, target: Path) -> None:
        self.target = Path(target)
        if self.target.exists() and not self.target.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(self.target))
        self.fresh = not self.target.exists()
        self._made: list[Path] = []
        missing = [p for p in (self.target, *self.target.parents) if not p.exists()][1:]
        for folder in reversed(missing):
            folder.mkdir()
            self._made.append(folder)
        home = self.target.parent if self.fresh else self.target
        hidden = f".{self.target.name}.export-" if self.fresh else ".export-"
        self.path = home / f"{hidden}{uuid.uuid4().hex[:8]}"
        try:
            self.path.mkdir()
        except OSError:
            self._remove_made()
            raise

    def _remove_made(self) -> None:
        for folder in reversed(self._made):
            try:
                folder.rmdir()
            except OSError:
                break

    def discard(self) -> None:
        """Remove the staging folder and the folders made for it: the target is as before."""
        shutil.rmtree(self.path, ignore_errors=True)
        self._remove_made()

    def commit(self) -> list[str]:
        """Move the staged entries into the target; the names moved. If a move fails, those
        already moved go back (and the replaced ones return) before the error is raised."""
        names = sorted(p.name for p in self.path.iterdir())
        if self.fresh:
            os.replace(self.path, self.target)
            return names
        aside = self.path / _ASIDE
        aside.mkdir()
        moved: list[str] = []
        try:
            for name in names:
                if (self.target / name).exists():
                    os.replace(self.target / name, aside / name)
                os.replace(self.path / name, self.target / name)
                moved.append(name)
        except OSError:
            for name in reversed(moved):
                os.replace(self.target / name, self.path / name)
            for old in aside.iterdir():
                os.replace(old, self.target / old.name)
            raise
        shutil.rmtree(self.path)
        return names
