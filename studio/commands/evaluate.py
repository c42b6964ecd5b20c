"""``studio evaluate RUN``: a run's model scored on its own validation or test split, as the
Evaluate tab scores it (accuracy, loss, per-class precision, recall and F1, the confusion
matrix; a detector's mAP@0.5, mAP@[0.5:0.95] and per-class AP; a segmentation's mean IoU,
pixel accuracy, per-class IoU and Dice and the pixel confusion matrix), or, for a task that cannot
be scored that way (regression), the metrics the run recorded."""

from __future__ import annotations

import argparse
import json
import signal
import threading
from pathlib import Path
from typing import Any

from studio.commands.errors import CliError, UsageError
from studio.commands.run_args import add_run_arguments
from studio.core.base.messages import quoted

FINAL = "final"
SPLITS = ("validation", "test")


class Stopped(CliError):
    """The person pressed Ctrl+C: the convention's exit code."""

    code = 130


def add_parser(sub) -> None:
    """The ``evaluate`` command's arguments."""
    evaluate = sub.add_parser(
        "evaluate", help="score a run's model on its validation or test split: accuracy, "
        "loss, per-class precision/recall/F1 and the confusion matrix (a detector: mAP@0.5, "
        "mAP@[0.5:0.95] and per-class AP)",
        description="Score a run's final model, or one of its checkpoints, on the run's own "
        "validation or test split, read and split as in training, as the Evaluate tab does. "
        "A run that predicts numbers (regression) has no classes to score: its recorded "
        "metrics are printed. Exit code 0 when done, 2 for a run, model or split that "
        "cannot be evaluated, 130 when stopped by Ctrl+C.")
    add_run_arguments(evaluate)
    evaluate.add_argument("--model", default=FINAL, metavar="final|CHECKPOINT",
                          help="the run's final model (default), or a checkpoint: its epoch "
                          "(3) or its file")
    evaluate.add_argument("--split", default="validation", metavar="validation|test",
                          help="the split to score on (default validation)")
    evaluate.add_argument("--json", action="store_true", help="print the scores as JSON")


def _run_dir(run: str, project: Path | None) -> Path:
    """The run folder RUN names."""
    from studio.core.runs.folders import runs_root
    from studio.core.runs.history import RunNotFoundError, find_run, run_signature

    if Path(run).exists() and run_signature(Path(run)) is None:
        raise UsageError(f"{quoted(run)} is not a run folder (it has no run.json nor "
                         "project snapshot).")
    try:
        return find_run(runs_root(project), run)
    except RunNotFoundError as exc:
        raise UsageError(str(exc)) from None


def _model(run_dir: Path, model: str) -> tuple[Path | None, str]:
    """The model file ``--model`` names (None: the run's final model) and how to call it."""
    from studio.core.runs import folders as runs

    found = runs.checkpoints(run_dir)
    epochs = ", ".join(str(epoch) for epoch, _ in found) or "none"
    if model == FINAL:
        if not (run_dir / runs.MODEL_FILE).is_file():
            raise UsageError(f"{run_dir.name} has no final model (it ended before saving "
                             f"one): give a checkpoint's epoch with --model (checkpoints: "
                             f"{epochs}).")
        return None, "final model"
    if model.isdigit():
        path = dict(found).get(int(model))
        if path is None:
            raise UsageError(f"{run_dir.name} has no checkpoint of epoch {int(model)} "
                             f"(checkpoints: {epochs}).")
        return path, f"checkpoint of epoch {int(model)}"
    for path in (Path(model), run_dir / runs.CHECKPOINTS / model):
        if path.is_file():
            final = path.resolve() == (run_dir / runs.MODEL_FILE).resolve()
            return (None, "final model") if final else (path, path.name)
    raise UsageError(f"--model {quoted(model)} is neither final, a checkpoint's epoch "
                     f"(checkpoints of {run_dir.name}: {epochs}) nor a model file.")


def _recorded(run_dir: Path, split: str, model: Path | None) -> dict[str, Any]:
    """The metrics the run recorded for ``split`` with ``model``: the validation metrics of
    the model's epoch, or the test scores of the final model."""
    from studio.core.runs import folders as runs
    from studio.core.runs.history import read_run

    if split == "test":
        if model is not None:
            raise UsageError("a run records its test scores for its final model only: "
                             "evaluate a checkpoint on the validation split.")
        test = read_run(run_dir).test
        if not test:
            raise UsageError(f"{run_dir.name} recorded no test scores (it kept no test "
                             "split, or did not finish).")
        return dict(test)
    rows = runs.read_metrics(run_dir)
    if model is None:
        row = rows[-1] if rows else None
    else:
        epoch = next((e for e, path in runs.checkpoints(run_dir)
                      if path.resolve() == model.resolve()), None)
        row = next((r for r in rows if r["epoch"] == epoch), None)
    if row is None:
        raise UsageError(f"{run_dir.name} recorded no metrics for {model or 'its model'}: "
                         "they are recorded for its checkpoints and final model.")
    return {"epoch": int(row["epoch"]),
            **{name: value for name, value in row.items() if name.startswith("val_")}}


def _check_split(split: str) -> None:
    from studio.core.base.messages import unknown_choice

    if split not in SPLITS:
        raise UsageError(unknown_choice("split", split, SPLITS))


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score a run's model on a split and print the scores as the run's task shows them."""
    from studio.core.project.document import ProjectFileError, load_project
    from studio.core.runs import folders as runs
    from studio.core.tasks.registry import task_for

    _check_split(args.split)
    run_dir = _run_dir(args.run, args.project)
    model, what = _model(run_dir, args.model)
    try:
        task = task_for(load_project(run_dir / runs.PROJECT_FILE).dataset.task)
    except ProjectFileError as exc:
        raise UsageError(f"{run_dir.name} cannot be evaluated: {exc}") from None
    heading = {"run": str(run_dir), "model": str(model or run_dir / runs.MODEL_FILE)}
    if task.evaluation_refusal:
        recorded = _recorded(run_dir, args.split, model)
        if args.json:
            print(json.dumps({**heading, "split": args.split, "recorded": recorded,
                              "note": task.evaluation_refusal}, indent=2))
        else:
            print(f"{run_dir.name}, {what}, {args.split} split, as recorded in training:")
            print("  ".join(f"{k} {v:.4f}" for k, v in recorded.items() if k != "epoch"))
            print(f"Note: {task.evaluation_refusal}")
        return 0
    evaluation = _evaluate(run_dir, args.split, model)
    if args.json:
        print(json.dumps({**heading, **evaluation.to_dict()}, ensure_ascii=False, indent=2))
    else:
        print(f"{run_dir.name}, {what}, {args.split} split")
        print(task.evaluation_text(evaluation))
    return 0


def _evaluate(run_dir: Path, split: str, model: Path | None) -> Any:
    """``evaluate_run``, with its refusals as one-line errors; Ctrl+C stops it."""
    from studio.core.data.types import DataError
    from studio.core.inference.evaluation import EvaluationCancelled, evaluate_run

    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        return evaluate_run(run_dir, split, model, stop=stop)
    except EvaluationCancelled:
        raise Stopped("stopped before the evaluation ended.") from None
    except (DataError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        signal.signal(signal.SIGINT, previous)
