"""A command on a project first finishes a move of its runs and searches that was interrupted
(as the window does when it opens the project), so the command finds them in their place."""

from __future__ import annotations

import sys
from pathlib import Path


def finish_interrupted_move(project: Path | None) -> None:
    """Finish the move into ``project``'s place left by an interrupted save, saying so in one
    line on stderr; a move that fails again is said, left for later, and the command goes
    on (every run is whole in one of its two places)."""
    from studio.core.search.moving import finish_move, journal_path, not_moved

    if project is None or not journal_path(project).exists():
        return
    try:
        report = finish_move(project)
    except OSError as exc:
        print(f"studio: warning: {not_moved(exc.strerror or str(exc))}", file=sys.stderr)
        return
    print(f"Note: an interrupted move went on. {report.summary()}", file=sys.stderr)
