"""Command line: ``studio`` opens the app; the other commands work headless.

Each command imports the core modules it uses when it runs, not when this module loads: so
``studio --help``, a usage error and the app's own start pay for none of them."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from studio.commands import data, evaluate, lr_find
from studio.commands.ctrl_c import ctrl_c_stops
from studio.commands.errors import CliError, OneLineParser, UsageError
from studio.commands.project_moves import finish_interrupted_move
from studio.commands.run_args import add_run_arguments
from studio.commands.trainable import trainable_project
from studio.core.base.events import DoneEvent, Event
from studio.core.base.messages import count, quoted, unwritable
from studio.core.base.runtime import configure_environment

COMMANDS = ("new", "train", "lr-find", "export-code", "import", "data", "runs", "infer",
            "evaluate", "search", "export")


def _parser() -> argparse.ArgumentParser:
    from studio.core.project.templates import TEMPLATES

    parser = OneLineParser(
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
    run.add_argument("project", type=Path, nargs="?",
                     help="the project file (with --resume: where to look for RUN's id)")
    run.add_argument("--resume", metavar="RUN", help="continue a stopped, failed or "
                     "interrupted run from its last checkpoint: its folder, or its id (or "
                     "the start of it) among PROJECT's runs")
    run.add_argument("--init-from", metavar="RUN", help="start from a run's weights: its "
                     "folder or id (its final model), or one of its checkpoint files (the "
                     "project file is not changed)")
    run.add_argument("--epochs", type=int, help="override the project's epochs")
    run.add_argument("--batch-size", type=int, help="override the project's batch size")
    run.add_argument("--data", type=Path, help="train on this image folder or CSV file "
                     "instead of the project's dataset (the project file is not changed)")
    run.add_argument("--json", action="store_true", help="print one JSON object per line")
    lr_find.add_parser(sub)
    code = sub.add_parser("export-code", help="write a Python script that builds and trains a "
                          "project with Keras")
    code.add_argument("project", type=Path)
    code.add_argument("-o", "--output", required=True, type=Path, help="Python file to write")
    code.add_argument("--force", action="store_true", help="overwrite an existing file")
    imp = sub.add_parser("import", help="make a project from a Keras model (.keras or .h5)")
    imp.add_argument("model", type=Path)
    imp.add_argument("-o", "--output", required=True, type=Path, help="project file to write")
    imp.add_argument("--trust", action="store_true",
                     help="accept Lambda layers, which hold Python code: only for files you trust")
    imp.add_argument("--force", action="store_true", help="overwrite an existing file")
    data.add_parser(sub)
    history = sub.add_parser("runs", help="list a project's runs: status, start, duration, "
                             "epochs and best validation scores")
    history.add_argument("project", type=Path)
    history.add_argument("--json", action="store_true", help="print the runs as a JSON list")
    _infer_parser(sub)
    evaluate.add_parser(sub)
    _search_parser(sub)
    _export_parser(sub)
    return parser


def _infer_parser(sub) -> None:
    infer = sub.add_parser(
        "infer", help="answer image files, folders or CSV rows with a trained model",
        description="Answer inputs with a run's model or a Keras file, one line each. Exit "
        "code 0 when every input was answered, 1 when some could not be (the others are "
        "still printed), 2 for a model or arguments that cannot be used.")
    infer.add_argument("model", metavar="RUN_OR_MODEL",
                       help="a run folder, a run's id (or the start of it) among the "
                       "workspace's runs (or --project's), a .keras/.h5 file, or a project "
                       "file imported with its weights (its imported model answers)")
    infer.add_argument("inputs", metavar="INPUT", nargs="+", type=Path,
                       help="image files and folders (searched at any depth); for table "
                       "and text models, CSV files whose rows are answered")
    infer.add_argument("--top-k", type=int, default=5, metavar="K",
                       help="how many classes to show for each input (default 5)")
    infer.add_argument("--json", action="store_true", help="print the answers as a JSON list")
    infer.add_argument("--project", type=Path, help="look for RUN among this project's runs")
    infer.add_argument("--column", help="text models: the CSV column holding the texts "
                       "(default: the run's text column, or the file's only one)")
    infer.add_argument("--masks", type=Path, metavar="DIR",
                       help="segmentation models: write each image's mask in DIR as a PNG "
                       "(class indices, with a colour per class) and their class areas as "
                       "areas.csv")
    described = infer.add_argument_group(
        "a model file without preprocessing.json beside it: how its images were prepared")
    described.add_argument("--size", nargs=2, type=int, metavar=("H", "W"))
    described.add_argument("--color", choices=("grayscale", "rgb"))
    described.add_argument("--normalization", choices=("unit", "symmetric"),
                           help="pixels scaled to 0..1 (unit) or -1..1 (symmetric)")
    described.add_argument("--resize", choices=("squash", "crop", "pad"), default="squash",
                           help="how images of another shape are fitted (default squash)")


def _search_parser(sub) -> None:
    from studio.commands.search_space import add_arguments
    from studio.core.project.document import STRATEGIES

    search = sub.add_parser("search", help="search hyperparameters: train one run per trial "
                            "and report the best values")
    search.add_argument("project", type=Path, help="project file whose search space to use")
    search.add_argument("--strategy", choices=STRATEGIES, help="override the project's strategy")
    search.add_argument("--trials", type=int, help="how many trials (random, bayes, hyperband)")
    search.add_argument("--startup-trials", type=int, metavar="N",
                        help="trials bayes and hyperband draw at random before their model "
                        "proposes (default: the project's, automatically a fifth of the "
                        "trials, 2 to 10)")
    search.add_argument("--workers", type=int, help="trials run at once, each in its own process")
    search.add_argument("--objective", action="append", metavar="NAME", default=[],
                        help="also minimise latency (ms per sample), params (parameter count) "
                        "or size (model file bytes), and report the Pareto front with the "
                        "metric (repeat, or list them with commas)")
    add_arguments(search)
    search.add_argument("--ray", metavar="ADDRESS",
                        help="run the trials on the Ray cluster at ADDRESS (HOST:PORT of its "
                        "head, auto for the one this machine belongs to, local to start one "
                        "here); needs pip install \".[ray]\"")
    search.add_argument("--resume", metavar="SEARCH_DIR", type=Path,
                        help="continue a stopped search, keeping its finished trials")
    search.add_argument("--json", action="store_true",
                        help="print the search's trials and best as one JSON document")


def _export_parser(sub) -> None:
    from studio.core.export.formats import FORMATS

    export = sub.add_parser(
        "export", help="export a run's model (Keras, SavedModel, ONNX, TensorFlow Lite) and "
        "check it answers as the run's model does",
        description="Export a run's final model with labels.txt, preprocessing.json, a README "
        "and verification.json, after loading it again with its own runtime and comparing "
        "its answers on validation images with the Keras model's. Exit code 0 when done, 1 "
        "when the export failed (the folder is left as it was) or its agreement is under "
        "the format's threshold (flagged; the files are kept), 2 for a run that cannot be "
        "used.")
    add_run_arguments(export, "model", project_file=True)
    export.add_argument("--format", required=True, choices=list(FORMATS))
    export.add_argument("-o", "--output", required=True, type=Path, metavar="DIR",
                        help="folder to export into (made if missing; files of the same "
                        "names are replaced, others kept)")
    export.add_argument("--json", action="store_true", help="print the report as JSON")


def _positive(value: int | None, name: str) -> None:
    if value is not None and value < 1:
        raise CliError(f"{name} must be at least 1, not {value}.")


def _check_output(path: Path, force: bool) -> None:
    """Refuse, before any work, an output path no file can be written to: a folder, a path
    under a file, or (without ``force``) an existing file."""
    try:
        if path.is_dir():
            raise CliError(f"{path} is a folder; give the name of a file to write.")
        blocker = next((p for p in path.parents if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            raise CliError(f"{blocker} is a file, not a folder, so {path} cannot be written.")
        exists = path.exists()
    except OSError as exc:
        raise CliError(f"{path} cannot be written: {exc.strerror or exc}.") from None
    if exists and not force:
        raise CliError(f"{path} already exists; pass --force to overwrite it.")


def _write_output(path: Path, write: Callable[[Path], None]) -> None:
    """Make the folders ``path`` needs, then ``write(path)`` (an atomic writer, which leaves
    nothing behind when it fails). An OSError (a full disk, a read-only folder) becomes one
    line, and so does a project the loader would refuse; the folders made for it are removed
    again."""
    from studio.core.project.document import ProjectFileError

    missing = [p for p in path.parents if not p.exists()]
    try:
        for folder in reversed(missing):
            folder.mkdir()
        write(path)
    except OSError as exc:
        message = unwritable(path.parent, exc)
    except ProjectFileError as exc:  # a project that would not open again is not written
        message = str(exc)
    else:
        return
    for folder in missing:
        with suppress(OSError):
            folder.rmdir()
    raise CliError(message) from None


def cmd_new(args: argparse.Namespace) -> int:
    """Write a project from a template."""
    from studio.core.project.document import save_project
    from studio.core.project.templates import from_template

    _check_output(args.output, args.force)
    project = from_template(args.template)
    _write_output(args.output, lambda path: save_project(project, path))
    print(f"Wrote {args.output} ({args.template}).")
    return 0


def _epoch_line(event: dict, total: int) -> str:
    parts = [f"epoch {event['epoch']}/{total}"]
    parts += [f"{k} {v:.4f}" for k, v in event.items() if k not in ("type", "epoch", "seconds")]
    parts.append(f"{event['seconds']:.1f}s")
    return "  ".join(parts)


def cmd_train(args: argparse.Namespace) -> int:
    """Train a project headless (or resume a run), one line per epoch."""
    from studio.core.training.trainer import TrainingError, resume, train

    _positive(args.epochs, "--epochs")
    _positive(args.batch_size, "--batch-size")
    if args.resume is not None:
        if args.batch_size is not None or args.data is not None or args.init_from:
            raise CliError("--resume continues a run with its own data, batch size and "
                           "weights; --batch-size, --data and --init-from do not apply.")
        run_dir = _run_to_resume(args)
        epochs = args.epochs

        def start(on_event, stop):
            return resume(run_dir, on_event, stop, epochs=args.epochs)
    else:
        if args.project is None:
            raise CliError("give a project file to train, or --resume RUN.")
        project = trainable_project(args.project, args.data)
        epochs = args.epochs or project.training.epochs
        if args.init_from:
            _start_from_run(args, project)

        def start(on_event, stop):
            from studio.core.runs.folders import runs_root

            return train(project, runs_root(args.project), on_event, stop,
                         epochs=args.epochs, batch_size=args.batch_size)

    def on_event(event: Event) -> None:
        nonlocal epochs
        if event["type"] in ("batch", "progress"):
            return
        if event["type"] == "start":
            epochs = event["epochs"]
        if args.json:
            print(json.dumps(event), flush=True)
        elif event["type"] == "epoch":
            print(_epoch_line(event, epochs), flush=True)
        elif event["type"] == "note":
            print(f"Note: {event['text']}", flush=True)
        elif event["type"] == "test":
            print("test  " + "  ".join(f"{k} {v:.4f}" for k, v in event.items()
                                       if k != "type"), flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        result = start(on_event, stop)
    except TrainingError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        done: DoneEvent = {"type": "done", "status": result.status, "note": result.note,
                           "run_dir": str(result.run_dir)}
        print(json.dumps(done), flush=True)
    else:
        print(f"Run {result.status}: {result.run_dir}")
        if result.note:
            print(result.note)
    if not stop.is_set():
        return 0
    print(f"studio: {_stopped_line(result)}", file=sys.stderr)
    return 130  # the convention for a command ended by Ctrl+C


def _stopped_line(result) -> str:
    """What a run stopped by Ctrl+C left: how to resume it, or why it cannot be."""
    from studio.core.runs.folders import checkpoints

    if result.status != "stopped":
        return f"stopped by Ctrl+C after the run {result.status}."
    if not checkpoints(result.run_dir):
        return ("stopped by Ctrl+C before the run's first checkpoint, so it cannot be "
                "resumed; start it again.")
    return f"stopped by Ctrl+C; resume the run with: studio train --resume {result.run_dir}"


def _start_from_run(args: argparse.Namespace, project) -> None:
    """Have ``project`` start from the run or checkpoint ``--init-from`` names."""
    from studio.core.runs.folders import CHECKPOINTS, MODEL_FILE, checkpoints, runs_root
    from studio.core.runs.history import RunNotFoundError, find_run
    from studio.core.training.trainer import start_from_run

    given = Path(args.init_from)
    if given.is_file() and given.suffix == ".keras" and given.parent.name == CHECKPOINTS:
        model_file = given
    else:
        try:
            run_dir = find_run(args.project, args.init_from)
        except RunNotFoundError as exc:
            raise CliError(f"--init-from: {exc}") from None
        model_file = run_dir / MODEL_FILE
        if not model_file.is_file():
            kept = checkpoints(run_dir)
            example = f" (e.g. {kept[-1][1]})" if kept else ""
            raise CliError(f"--init-from: {run_dir.name} has no final model; give one of its "
                           f"checkpoint files instead{example}.")
    start_from_run(project, model_file, runs_root(args.project))


def _run_to_resume(args: argparse.Namespace) -> Path:
    """The run folder ``--resume`` names (a folder, or an id among the project's runs)."""
    from studio.core.runs.history import RunNotFoundError, find_run

    where = args.project if args.project is not None else Path.cwd()
    try:
        return find_run(where, args.resume)
    except RunNotFoundError as exc:
        raise CliError(str(exc)) from None


def cmd_export_code(args: argparse.Namespace) -> int:
    """Write a project as a Python script using Keras."""
    from studio.core.base.files import atomic_write_text
    from studio.core.build.keras_model import ModelError
    from studio.core.data.types import DataError
    from studio.core.export.python_code import export_code
    from studio.core.project.document import ProjectFileError, load_project
    from studio.core.runs.folders import runs_root

    _check_output(args.output, args.force)
    try:
        text = export_code(load_project(args.project), args.output, runs_root(args.project))
    except (ProjectFileError, ModelError, DataError) as exc:
        raise CliError(str(exc)) from None
    _write_output(args.output, lambda path: atomic_write_text(path, text))
    print(f"Wrote {args.output}; run it with: python {args.output}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Make a project from a Keras model file, its weights kept beside it."""
    from studio.core.build.imported_weights import save_imported
    from studio.core.build.keras_import import ImportFailure, import_model_with_weights
    from studio.core.model.layers import OPAQUE_TYPE
    from studio.core.project.document import weights_path_for

    weights_path = weights_path_for(args.output)
    _check_output(args.output, args.force)
    _check_output(weights_path, args.force)
    try:
        project, weights = import_model_with_weights(args.model, trust=args.trust)
    except ImportFailure as exc:
        raise CliError(str(exc)) from None
    _write_output(args.output, lambda path: save_imported(project, weights, path))
    nodes = project.graph.nodes
    kept = sum(n.type == OPAQUE_TYPE for n in nodes)
    held = (f"Its weights are in {weights_path.name}." if project.weights is not None
            else "The model has no weights.")
    whole = ("all editable" if not kept else "1 kept as an imported Keras layer" if kept == 1
             else f"{kept} kept as imported Keras layers")
    print(f"Wrote {args.output}: {len(nodes)} layers, {whole}. {held}")
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    """List a project's runs, oldest first, from the run index (rebuilt if need be)."""
    from studio.core.runs.folders import runs_root
    from studio.core.runs.history import runs_table
    from studio.core.runs.index import RunIndex

    root = runs_root(args.project)
    if not args.project.exists() and not root.is_dir():
        raise CliError(f"{args.project} does not exist.")
    index = RunIndex(root)
    index.sync()
    found = index.runs(order_by="started", descending=False)
    for note in index.notes:
        print(f"Note: {note}", file=sys.stderr)
    if args.json:
        print(json.dumps([run.to_dict() for run in found], indent=2))
    elif found:
        print(runs_table(found))
        print(f"{count(len(found), 'run')} in {root}")
    else:
        print(f"No runs yet in {root}.")
    return 0


def _model_to_answer(args: argparse.Namespace) -> Path:
    """RUN_OR_MODEL as a path: as given if it exists (a project file: the run of its imported
    model), else a run id among the runs."""
    from studio.core.project.document import SUFFIX
    from studio.core.runs.folders import runs_root
    from studio.core.runs.history import RunNotFoundError, find_run

    if str(args.model).endswith(SUFFIX) and Path(args.model).is_file():
        return _imported_model(Path(args.model))
    if Path(args.model).exists():
        return Path(args.model)
    try:
        return find_run(runs_root(args.project), args.model)
    except RunNotFoundError as exc:
        raise UsageError(f"{args.model} is not a file or folder, nor a run: {exc}") from None


def _imported_model(project_path: Path) -> Path:
    """The run holding the imported model of the project at ``project_path``, made (without
    training) if there is none yet for its layers, weights and data."""
    from studio.core.data.types import DataError
    from studio.core.project.document import ProjectFileError, load_project
    from studio.core.runs.folders import runs_root
    from studio.core.training.imported_model import find_imported_run, imported_model_run
    from studio.core.training.trainer import TrainingError

    try:
        project = load_project(project_path)
        root = runs_root(project_path)
        if project.weights is not None and find_imported_run(project, root) is None:
            print(f"Preparing the imported model of {project_path.name} (reading its data)…",
                  file=sys.stderr)
        return imported_model_run(project, root).run_dir
    except (ProjectFileError, TrainingError, DataError) as exc:
        raise CliError(str(exc)) from None


def _described(args: argparse.Namespace) -> dict | None:
    """The preprocessing --size, --color and --normalization describe, if given."""
    from studio.core.inference.predictor import image_preprocessing

    given = (args.size, args.color, args.normalization)
    if not any(given):
        return None
    if not all(given):
        raise UsageError("describe the model's images with all three of --size H W, "
                         "--color and --normalization.")
    if min(args.size) < 1:
        raise UsageError(f"--size must be at least 1 pixel, not {args.size[0]} {args.size[1]}.")
    return image_preprocessing(args.size, args.color, args.normalization, args.resize)


def _load_predictor(args: argparse.Namespace):
    from studio.core.inference.predictor import ModelFileError, Predictor, PreprocessingMissing

    try:
        return Predictor.load(_model_to_answer(args), _described(args))
    except PreprocessingMissing as missing:
        shape = missing.input_shape
        if len(shape) != 3:
            raise UsageError(str(missing)) from None
        height, width = (d or "H" for d in shape[:2])
        color = {1: "grayscale", 3: "rgb"}.get(shape[2], "grayscale|rgb")
        raise UsageError(f"{missing} Give: --size {height} {width} --color {color} "
                         "--normalization unit|symmetric (0..1 or -1..1).") from None
    except ModelFileError as exc:
        raise UsageError(str(exc)) from None


def _answer_line(prediction) -> str:
    """One line: the input, its top classes with probabilities (or its value) and time, or
    why it could not be answered."""
    from studio.core.tasks.registry import task_for

    if prediction.error is not None:
        return f"{prediction.source}: error: {prediction.error}"
    answer = task_for(prediction.task).answer_text(prediction)
    return f"{prediction.source}: {answer}  ({prediction.seconds * 1000:.1f} ms)"


def _answer_inputs(args: argparse.Namespace, predictor, stop: threading.Event) -> list:
    """Each input's predictions, in the order given: folders expanded to their images,
    CSV files to their rows."""
    from studio.core.data.types import DataError
    from studio.core.inference.batch import image_files, predict_csv, predict_folder
    from studio.core.inference.predictor import Prediction

    if predictor.kind != "image":
        predictions = []
        for path in args.inputs:
            try:
                predictions += predict_csv(predictor, path, args.top_k, args.column)
            except DataError as exc:
                predictions.append(Prediction(str(path), error=str(exc)))
        return predictions
    items: list = []
    for path in args.inputs:
        found = image_files(path, stop) if path.is_dir() else [path]
        items += found or [Prediction(str(path), error="a folder with no image files")]
    paths = [item for item in items if isinstance(item, Path)]
    writer = None
    if args.masks is not None:
        from studio.core.inference.mask_files import MaskWriter

        writer = MaskWriter([str(p) for p in paths], args.masks, predictor.class_names)
    try:
        answers = iter(predict_folder(predictor, paths, args.top_k, stop=stop,
                                      on_answers=writer and writer.write).predictions)
        predictions = [item if isinstance(item, Prediction) else next(answers, None)
                       for item in items]
        predictions = [p for p in predictions if p is not None]
        if writer is not None:
            written = writer.finish(predictions)
            print(f"Wrote {count(len(written), 'mask')} in {args.masks}.", file=sys.stderr)
    except OSError as exc:
        if writer is None:
            raise
        raise CliError(unwritable(args.masks, exc)) from None
    return predictions


def cmd_infer(args: argparse.Namespace) -> int:
    """Answer images, folders or CSV rows; one line (or JSON object) per answer; exit 1 if
    some input could not be answered."""
    if args.top_k < 1:
        raise UsageError(f"--top-k must be at least 1, not {args.top_k}.")
    if args.masks is not None and args.masks.exists() and not args.masks.is_dir():
        raise UsageError(f"--masks must name a folder, and {quoted(str(args.masks))} is a "
                         "file.")
    predictor = _load_predictor(args)
    if args.masks is not None and predictor.task != "segmentation":
        raise UsageError(f"--masks writes a segmentation model's masks, and this model "
                         f"answers {predictor.task}.")
    for note in predictor.notes:
        print(f"Note: {note}", file=sys.stderr)
    with ctrl_c_stops() as stop:
        predictions = _answer_inputs(args, predictor, stop)
    if args.json:
        print(json.dumps([p.to_dict() for p in predictions], ensure_ascii=False, indent=2))
    elif predictions:
        print("\n".join(_answer_line(p) for p in predictions))
    if stop.is_set():
        print("studio: stopped before every input was answered.", file=sys.stderr)
    return 1 if stop.is_set() or any(p.error is not None for p in predictions) else 0


def _export_lines(report) -> list[str]:
    agreement = ("" if report.agreement is None else
                 f"{report.agreement_name} {report.agreement:.1f}% "
                 f"(threshold {report.threshold:g}%), ")
    agreement += "".join(f"{name} {value:.3f}, " for name, value in report.scores.items()
                         if value is not None)
    return [f"Exported {report.format} to {report.directory}: {', '.join(report.files)} "
            f"(model {report.size / 1024:,.0f} KiB)",
            f"Checked on {report.samples} validation samples: {agreement}largest difference "
            f"{report.max_abs_diff:.3g}, {report.latency_ms:.3f} ms per image."]


def cmd_export(args: argparse.Namespace) -> int:
    """Export a run's model in one format, verified; exit 1 if it failed or is flagged."""
    from studio.core.export.exporter import ExportError, export_run

    run_dir = _model_to_answer(args)
    with ctrl_c_stops() as stop:
        try:
            report = export_run(run_dir, args.format, args.output, stop=stop)
        except ExportError as exc:
            raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        print("\n".join(_export_lines(report)))
    if report.flagged:
        print(f"studio: warning: {report.note}", file=sys.stderr)
    return 1 if report.flagged else 0


def _search_runner(args: argparse.Namespace):
    """``start(on_event, stop)`` running the search the options ask for: here, or on the
    Ray cluster ``--ray``."""
    from functools import partial

    from studio.core.runs.folders import runs_root

    if args.ray is None:
        from studio.core.search.runner import resume_search, run_search
    else:
        from studio.core.search.on_ray import resume_search_on_ray, run_search_on_ray

        run_search = partial(run_search_on_ray, address=args.ray)
        resume_search = partial(resume_search_on_ray, address=args.ray)
    from studio.core.search.runner import search_folder

    root = runs_root(args.project)
    if args.resume is not None:
        return lambda on_event, stop: resume_search(args.resume, root, on_event, stop,
                                                    workers=args.workers)
    project = _searched_project(args)
    return lambda on_event, stop: run_search(project, root, search_folder(args.project),
                                             on_event, stop, workers=args.workers)


def _searched_project(args: argparse.Namespace):
    """The project with its search settings overridden by the options."""
    from studio.commands.search_space import apply_space
    from studio.core.project.document import ProjectFileError, load_project

    try:
        project = load_project(args.project)
    except ProjectFileError as exc:
        raise CliError(str(exc)) from None
    if args.strategy is not None:
        project.search.strategy = args.strategy
    if args.trials is not None:
        project.search.trials = args.trials
    if args.startup_trials is not None:
        project.search.startup_trials = args.startup_trials
    if args.objective:
        project.search.objectives = [name.strip() for typed in args.objective
                                     for name in typed.split(",") if name.strip()]
    apply_space(project, args.dim, args.epochs)
    return project


def _value_text(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


MEASURE_UNITS = {"latency": " ms", "params": "", "size": " B"}


def _trial_line(trial, metric: str) -> str:
    from studio.core.search.space import target_label

    params = ", ".join(f"{target_label(k)} {_value_text(v)}" for k, v in trial.params.items())
    score = f"{metric} {trial.value:.4f}" if trial.value is not None else ""
    measures = ", ".join(f"{name} {_value_text(value)}{MEASURE_UNITS[name]}"
                         for name, value in trial.measures.items())
    parts = [f"trial {trial.number}", trial.status, score, measures, params,
             f"{trial.seconds:.1f}s", trial.reason]
    return "  ".join(p for p in parts if p)


def cmd_search(args: argparse.Namespace) -> int:
    """Search hyperparameters: one line per trial as it ends, then the best."""
    from studio.core.search.runner import SearchError, TrialRecord

    _positive(args.trials, "--trials")
    _positive(args.startup_trials, "--startup-trials")
    _positive(args.workers, "--workers")
    if args.resume is not None and (args.strategy is not None or args.trials is not None
                                    or args.startup_trials is not None or args.objective
                                    or args.dim or args.epochs is not None):
        raise CliError("--resume continues a search with its own space, strategy, trials and "
                       "objectives; --dim, --epochs, --strategy, --trials, --startup-trials "
                       "and --objective do not apply.")
    start = _search_runner(args)
    metric = ""

    def on_event(event: Event) -> None:
        nonlocal metric
        if event["type"] == "search_start":
            from studio.core.search.state import read_state

            metric = read_state(event["search_dir"]).project.search.metric
            if not args.json:
                print(f"Search of {event['planned']} trials in {event['search_dir']}"
                      + (f" ({len(event['done'])} kept)" if event["done"] else ""), flush=True)
        elif event["type"] == "trial_end" and not args.json:
            print(_trial_line(TrialRecord.from_dict(event), metric), flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        result = start(on_event, stop)
    except SearchError as exc:
        raise UsageError("the search cannot run: " + " ".join(exc.reasons)) from None
    if args.json:
        print(json.dumps({"search_dir": str(result.search_dir), "stopped": result.stopped,
                          "metric": metric,
                          "best": result.best.number if result.best else None,
                          "front": result.front,
                          "trials": [t.to_dict() for t in result.trials]}, indent=1))
        return 0
    if result.best is None:
        print("No trial finished.")
    elif any(t.measures for t in result.trials):
        print(f"Pareto front ({len(result.front)} trials: none is better in every objective):")
        for trial in result.trials:
            if trial.number in result.front:
                print(f"  {_trial_line(trial, metric)}  ({trial.run_dir})")
    else:
        print(f"Best: {_trial_line(result.best, metric)}  ({result.best.run_dir})")
    if result.stopped:
        on_ray = f" --ray {args.ray}" if args.ray is not None else ""
        print(f"Search stopped. Resume it with: studio search {args.project} "
              f"--resume {result.search_dir}{on_ray}")
    return 0


def _open_app(path: str | None) -> int:
    """Open the window on ``path``, after checking that it names a file and that the window
    can open here."""
    from studio.commands.start import check_window, unknown_command

    if path is not None and not Path(path).exists():
        raise unknown_command(path, COMMANDS)
    check_window()
    from studio.gui.shell.app import run_app

    return run_app(Path(path) if path is not None else None)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``studio`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    configure_environment()
    try:
        if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
            raise UsageError(f"unknown option {quoted(argv[0])} (see studio --help)")
        if not argv or argv[0] not in (*COMMANDS, "-h", "--help"):
            return _open_app(argv[0] if argv else None)
        args = _parser().parse_args(argv)
        finish_interrupted_move(getattr(args, "project", None))
        commands = {"new": cmd_new, "train": cmd_train, "lr-find": lr_find.cmd_lr_find,
                    "export-code": cmd_export_code,
                    "import": cmd_import, "data": data.cmd_data, "runs": cmd_runs,
                    "infer": cmd_infer, "evaluate": evaluate.cmd_evaluate,
                    "search": cmd_search, "export": cmd_export}
        return commands[args.command](args)
    except CliError as exc:
        print(f"studio: error: {exc}", file=sys.stderr)
        return exc.code
