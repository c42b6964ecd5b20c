"""``studio lr-find PROJECT``: the learning-rate range test (Smith, 2015) on a project, its
suggested rate and the loss against the rate, as a short table or JSON. Nothing is written."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from studio.commands.ctrl_c import ctrl_c_stops
from studio.commands.errors import CliError, UsageError
from studio.commands.trainable import trainable_project

TABLE_ROWS = 12
"""About how many of the test's batches the table shows."""


def add_parser(sub) -> None:
    """The ``lr-find`` command's arguments."""
    from studio.core.training.lr_finder import RangeTest

    default = RangeTest()
    find = sub.add_parser(
        "lr-find", help="find a learning rate: a short run with the rate growing each batch, "
        "and the rate where the loss falls fastest",
        description="Run the learning-rate range test (Smith, 2015) on a project's data, "
        "model and optimizer: the rate grows exponentially each batch, from --start to "
        "--end over at most --batches batches, until the loss explodes. Print the rate "
        "where the smoothed loss falls fastest (before its lowest point) and the loss "
        "against the rate. Nothing is written: no run, no checkpoint, no change to the "
        "project. Exit code 0 when done, 1 when it cannot run, 2 for a project or "
        "arguments that cannot be used, 130 when stopped by Ctrl+C.")
    find.add_argument("project", type=Path)
    find.add_argument("--start", type=float, default=default.start,
                      help=f"the first rate (default {default.start:g})")
    find.add_argument("--end", type=float, default=default.end,
                      help=f"the last rate (default {default.end:g})")
    find.add_argument("--batches", type=int, default=default.batches,
                      help=f"at most this many batches, one per rate (default "
                      f"{default.batches})")
    find.add_argument("--json", action="store_true",
                      help="print the suggestion, the rates and the losses as JSON")


def cmd_lr_find(args: argparse.Namespace) -> int:
    """Run the range test and print what it found."""
    from studio.core.runs.folders import runs_root
    from studio.core.training.lr_finder import RangeTest, find_learning_rate
    from studio.core.training.trainer import TrainingError

    test = RangeTest(args.start, args.end, args.batches)
    if problem := test.problem():
        raise UsageError(problem)
    if not args.project.is_file():
        raise UsageError(f"{args.project} is not a project file.")
    project = trainable_project(args.project)
    with ctrl_c_stops() as stop:
        try:
            found = find_learning_rate(project, runs_root(args.project), stop=stop, test=test)
        except TrainingError as exc:
            raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps(found.to_dict(), indent=1))
    else:
        print(_text(found))
    if stop.is_set():
        print("studio: stopped before the test ended.", file=sys.stderr)
        return 130
    return 0


def _text(found) -> str:
    """The suggestion in a line, then the rate and smoothed loss of about ``TABLE_ROWS``
    batches spread over the test."""
    how = {"finished": "every batch ran", "diverged": "the loss exploded",
           "stopped": "stopped"}[found.status]
    head = (f"Suggested learning rate: {found.suggestion:.2g}" if found.suggestion is not None
            else "No suggestion: the loss did not clearly fall.")
    lines = [f"{head} ({len(found.rates)} batches, {how})", "     rate  loss"]
    every = max(1, len(found.rates) // TABLE_ROWS)
    rows = list(range(0, len(found.rates), every))
    lines += [f"{found.rates[i]:9.2e}  {found.smoothed[i]:.4g}" for i in rows]
    return "\n".join(lines)
