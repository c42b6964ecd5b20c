"""The RUN argument of the commands that work on a run."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_run_arguments(parser: argparse.ArgumentParser, dest: str = "run",
                      project_file: bool = False) -> None:
    """RUN (stored as ``dest``) and ``--project``, where to look for it; with
    ``project_file``, RUN may also be a project imported with its weights."""
    more = (", or a project file imported with its weights (its imported model)"
            if project_file else "")
    parser.add_argument(dest, metavar="RUN", help="a run folder, or a run's id (or the start "
                        f"of it) among the workspace's runs (or --project's){more}")
    parser.add_argument("--project", type=Path, help="look for RUN among this project's runs")
