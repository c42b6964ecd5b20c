"""Answering many inputs at once: find the images in a folder, check them, read the good
ones in batches into the model, answer the rows of a CSV file with a table or text model, and
write the answers as CSV."""

from __future__ import annotations

import csv
import io
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from studio.core.base.events import Progress
from studio.core.base.files import atomic_write_text
from studio.core.data import tables as table_data
from studio.core.data.image_folder import is_image_name
from studio.core.data.types import DataError
from studio.core.inference.predictor import (
    DEFAULT_TOP_K,
    Prediction,
    Predictor,
    image_problem,
    thumbnail_of,
)
from studio.core.project.document import ProjectFileError, load_project
from studio.core.runs import folders as runs
from studio.core.tasks.registry import DEFAULT_TASK, task_for

BATCH = 128
"""Images read and answered at once."""
CHECK_CHUNK = 512
"""Files checked between looks at the stop signal."""
CHECKERS = 2
"""Threads checking files: checking is mostly Python, and more threads than this starve the
GUI thread of the interpreter lock (bench/inference_latency.py)."""


@dataclass
class BatchResult:
    """The answers for a folder, in file order; ``stopped`` when cancelled part way."""

    predictions: list[Prediction] = field(default_factory=list)
    stopped: bool = False
    seconds: float = 0.0


def image_files(folder: Path, stop: threading.Event | None = None) -> list[Path]:
    """The image files under ``folder`` (by extension, any depth), sorted; links to folders
    are not followed, so a link loop cannot trap the search."""
    found = []
    for root, dirs, files in os.walk(folder):
        if stop is not None and stop.is_set():
            break
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(root) / f for f in files if is_image_name(Path(f))]
    return sorted(found)


def _check(paths: list[Path], on_progress: Progress, stop: threading.Event | None
           ) -> list[str | None]:
    """Each file's problem (None for a usable image), checked by CHECKERS threads; a prefix
    of ``paths`` when stopped."""
    problems: list[str | None] = []
    with ThreadPoolExecutor(CHECKERS) as pool:
        for begin in range(0, len(paths), CHECK_CHUNK):
            if stop is not None and stop.is_set():
                break
            problems += pool.map(image_problem, paths[begin:begin + CHECK_CHUNK])
            on_progress("Checking images", len(problems), len(paths))
    return problems


def predict_folder(predictor: Predictor, paths: Sequence[Path], top_k: int = DEFAULT_TOP_K,
                   on_progress: Progress | None = None, stop: threading.Event | None = None,
                   batch_size: int = BATCH, thumbnails: bool = False,
                   on_answers: Callable[[list[Prediction]], None] | None = None
                   ) -> BatchResult:
    """Answer image files in batches, in file order: all are checked first (two threads), then
    the usable ones are read in batches by the predictor's traced reader (a new ``tf.data``
    pipeline would be traced anew, holding the interpreter lock for a quarter second) and
    answered. Unusable files get their reason and the rest go on. Stopping keeps the
    answers so far (the files not reached are left out). Thumbnails are kept only if asked
    (they take memory); ``on_answers`` sees each batch's answers as they come (to write
    a segmentation's masks and let them go)."""
    started = time.perf_counter()
    on_progress = on_progress or (lambda what, done, total: None)
    paths = [Path(p) for p in paths]
    problems = dict(enumerate(_check(paths, on_progress, stop)))
    good = [i for i, problem in problems.items() if problem is None]
    answers: dict[int, Prediction] = {}
    reached = 0
    for reached in range(0, len(good), batch_size):
        if stop is not None and stop.is_set():
            break
        batch = good[reached:reached + batch_size]
        read, images, errors = predictor.read_checked([paths[i] for i in batch])
        problems.update({batch[j]: error for j, error in errors.items()})
        outputs = predictor.outputs(predictor.normalised(images))
        sizes = predictor.image_sizes([paths[batch[j]] for j in read])
        answered = [Prediction(str(paths[batch[j]]), **answer,
                               thumbnail=thumbnail_of(image) if thumbnails else None)
                    for j, image, answer in zip(read, images,
                                                predictor.answers(outputs, top_k, sizes),
                                                strict=True)]
        if on_answers is not None:
            on_answers(answered)
        answers.update(zip((batch[j] for j in read), answered, strict=True))
        on_progress("Answering images", reached + len(batch), len(good))
    else:
        reached = len(good)
    end = good[reached] if reached < len(good) else len(problems)
    share = (time.perf_counter() - started) / max(1, end)
    result = BatchResult(stopped=end < len(paths))
    for index in range(end):
        prediction = answers.get(index) or Prediction(str(paths[index]), error=problems[index])
        prediction.seconds = share
        result.predictions.append(prediction)
    result.seconds = time.perf_counter() - started
    return result


def csv_records(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV file as {column: cell}, decoded, split and named as training reads
    CSV files (empty rows skipped); DataError in plain words if it cannot be read."""

    path = Path(path)
    text, _ = table_data._decode(path)
    reader = csv.reader(io.StringIO(text, newline=""),
                        delimiter=table_data._sniff_delimiter(text))
    try:
        rows = [[cell.strip() for cell in row] for row in reader
                if any(cell.strip() for cell in row)]
    except csv.Error as exc:
        raise DataError(f"{path.name} cannot be read as CSV near line {reader.line_num} "
                        f"({exc}).") from None
    names = table_data.csv_columns(path)
    return [dict(zip(names, row, strict=False)) for row in rows[1:]]


def _trained_text_column(model_path: Path) -> str:
    """The text column of the run a model file belongs to, or "" if it is not in a run."""

    for folder in (model_path.parent, model_path.parent.parent):
        if (folder / runs.PROJECT_FILE).is_file():
            try:
                return load_project(folder / runs.PROJECT_FILE).dataset.text_column
            except ProjectFileError:
                return ""
    return ""


def _text_column(predictor: Predictor, path: Path, names: list[str], wanted: str | None
                 ) -> str:
    if wanted is None:
        trained = _trained_text_column(predictor.path)
        wanted = names[0] if len(names) == 1 else (trained if trained in names else None)
    if wanted is None or wanted not in names:
        asked = f"has no column {wanted!r}" if wanted else "has several columns"
        raise DataError(f"{path.name} {asked} ({', '.join(names)}): say which one holds the "
                        f"texts.")
    return wanted


def predict_csv(predictor: Predictor, path: Path, top_k: int = DEFAULT_TOP_K,
                text_column: str | None = None) -> list[Prediction]:
    """Answer each row of a CSV file with a table model (by column name; a missing or empty
    cell takes the training mean) or a text model (its ``text_column``, by default the
    run's own text column or the file's only one). Sources read ``file.csv row N``.
    DataError if the file cannot be read or does not hold what the model needs."""
    path = Path(path)
    records = csv_records(path)
    names = list(records[0]) if records else []
    if not records:
        raise DataError(f"{path.name} holds no rows to answer, only a header or nothing.")
    if predictor.kind == "text":
        column = _text_column(predictor, path, names, text_column)
        predictions = predictor.predict_texts([r[column] for r in records], top_k)
    elif predictor.kind == "table":
        wanted = predictor.prep["columns"]
        if not set(wanted) & set(names):
            raise DataError(f"{path.name} has none of the columns the model was trained on "
                            f"({', '.join(wanted)}).")
        predictions = predictor.predict_rows(records, top_k)
    else:
        raise DataError(f"{path.name}: this model answers images, not CSV rows.")
    for row, prediction in enumerate(predictions, 1):
        prediction.source = f"{path} row {row}"
    return predictions


def write_predictions_csv(predictions: Sequence[Prediction], path: Path) -> None:
    """Save answers as CSV (atomically): file, the answer's columns as its task writes them
    (the top class, its probability and the next classes; a detector's boxes one row each),
    seconds and any problem."""
    answered = next((p.task for p in predictions if p.task), DEFAULT_TASK)
    task = task_for(answered)
    blank = [""] * len(task.csv_columns)
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["file", *task.csv_columns, "seconds", "problem"])
    for p in predictions:
        for cells in ([blank] if p.error is not None else task.csv_rows(p)):
            writer.writerow([p.source, *cells, f"{p.seconds:.6f}", p.error or ""])
    atomic_write_text(Path(path), text.getvalue())
