"""The project a command trains (``train``, ``lr-find``), checked before any work."""

from __future__ import annotations

from pathlib import Path

from studio.commands.errors import CliError


def _input_shape(project) -> tuple[int, ...] | None:
    """The shape of the model's first Input, if it has one."""
    shapes = [tuple(n.params.get("shape", ())) for n in project.graph.nodes if n.type == "Input"]
    return shapes[0] if shapes else None


def trainable_project(path: Path, data: Path | None = None):
    """The project at ``path``, on the image folder or CSV file ``data`` if given; CliError
    (one line) if it cannot be trained."""
    from studio.core.build.analysis import analyze, data_problem
    from studio.core.data.sources import choice_for_path, describe
    from studio.core.data.types import DataError
    from studio.core.project.document import ProjectFileError, load_project

    try:
        project = load_project(path)
        if data is not None:
            project.dataset = choice_for_path(data, project.dataset, _input_shape(project))
        info = describe(project.dataset)
    except (ProjectFileError, DataError) as exc:
        raise CliError(str(exc)) from None
    unusable = data_problem(info)
    if unusable:  # said as it is: no change to the model would fix it
        raise CliError(unusable)
    report = analyze(project.graph, info)
    if not report.ok:
        raise CliError(f"the model cannot be trained: {report.reason}")
    return project
