"""The RUN argument of the commands that work on a run."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_run_arguments(parser: argparse.ArgumentParser, dest: str = "run") -> None:
    """RUN (stored as ``dest``) and ``--project``, where to look for it."""
    parser.add_argument(dest, metavar="RUN", help="a run folder, or a run's id (or the start "
                        "of it) among the workspace's runs (or --project's)")
    parser.add_argument("--project", type=Path, help="look for RUN among this project's runs")
