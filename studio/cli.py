"""Command line: ``studio`` opens the app; ``studio new`` and ``studio train`` work headless."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from studio.core.runtime import configure_environment

COMMANDS = ("new", "train")


class CliError(Exception):
    """A one-line reason to exit non-zero."""


def _parser() -> argparse.ArgumentParser:
    from studio.core.templates import TEMPLATES

    parser = argparse.ArgumentParser(
        prog="studio",
        description="Layer Studio: design, train and try neural networks. "
        "Run 'studio [PROJECT]' to open the app.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    new = sub.add_parser("new", help="write a new project from a template")
    new.add_argument("--template", default="cnn", choices=sorted(TEMPLATES))
    new.add_argument("-o", "--output", required=True, type=Path, help="project file to write")
    new.add_argument("--force", action="store_true", help="overwrite an existing file")
    run = sub.add_parser("train", help="train a project headless and write a run folder")
    run.add_argument("project", type=Path)
    run.add_argument("--epochs", type=int, help="override the project's epochs")
    run.add_argument("--batch-size", type=int, help="override the project's batch size")
    run.add_argument("--json", action="store_true", help="print one JSON object per line")
    return parser


def _positive(value: int | None, name: str) -> None:
    if value is not None and value < 1:
        raise CliError(f"{name} must be at least 1, not {value}.")


def cmd_new(args: argparse.Namespace) -> int:
    """Write a project from a template."""
    from studio.core.project import save_project
    from studio.core.templates import from_template

    if args.output.exists() and not args.force:
        raise CliError(f"{args.output} already exists; pass --force to overwrite it.")
    save_project(from_template(args.template), args.output)
    print(f"Wrote {args.output} ({args.template}).")
    return 0


def _epoch_line(event: dict, total: int) -> str:
    parts = [f"epoch {event['epoch']}/{total}"]
    parts += [f"{k} {v:.4f}" for k, v in event.items() if k not in ("type", "epoch", "seconds")]
    parts.append(f"{event['seconds']:.1f}s")
    return "  ".join(parts)


def cmd_train(args: argparse.Namespace) -> int:
    """Train a project headless, one line per epoch."""
    from studio.core.analysis import analyze
    from studio.core.data import DataError, dataset_info
    from studio.core.project import ProjectFileError, load_project
    from studio.core.runs import runs_root
    from studio.core.training import TrainingError, train

    _positive(args.epochs, "--epochs")
    _positive(args.batch_size, "--batch-size")
    try:
        project = load_project(args.project)
        report = analyze(project.graph, dataset_info(project.dataset))
    except (ProjectFileError, DataError) as exc:
        raise CliError(str(exc)) from None
    if not report.ok:
        raise CliError(f"the model cannot be trained: {report.reason}")
    epochs = args.epochs or project.training.epochs

    def on_event(event: dict) -> None:
        if event["type"] == "batch":
            return
        if args.json:
            print(json.dumps(event), flush=True)
        elif event["type"] == "epoch":
            print(_epoch_line(event, epochs), flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        result = train(project, runs_root(args.project), on_event, stop,
                       epochs=args.epochs, batch_size=args.batch_size)
    except TrainingError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps({"type": "done", "status": result.status,
                          "run_dir": str(result.run_dir)}), flush=True)
    else:
        print(f"Run {result.status}: {result.run_dir}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``studio`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    configure_environment()
    if not argv or argv[0] not in (*COMMANDS, "-h", "--help"):
        from studio.gui.app import run_app

        return run_app(Path(argv[0]) if argv else None)
    args = _parser().parse_args(argv)
    try:
        return {"new": cmd_new, "train": cmd_train}[args.command](args)
    except CliError as exc:
        print(f"studio: error: {exc}", file=sys.stderr)
        return 1
