"""Answering a folder of images as a batch: find the images, check them, stream the good
ones through ``tf.data`` into the model, and write the answers as CSV."""

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

from studio.core.files import atomic_write_text
from studio.core.image_check import UnusableImage, inspect_image
from studio.core.image_folder import is_image_name
from studio.core.predictor import DEFAULT_TOP_K, Prediction, Predictor, thumbnail_of

BATCH = 128
"""Images read and answered at once."""
CHECK_CHUNK = 512
"""Files checked between looks at the stop signal."""
CHECKERS = 2
"""Threads checking files: checking is mostly Python, and more threads than this starve the
GUI thread of the interpreter lock (bench/inference_latency.py)."""
Progress = Callable[[str, int, int], None]


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


def _problem(path: Path) -> str | None:
    try:
        inspect_image(path)
    except UnusableImage as exc:
        return exc.reason
    return None


def predict_folder(predictor: Predictor, paths: Sequence[Path], top_k: int = DEFAULT_TOP_K,
                   on_progress: Progress | None = None, stop: threading.Event | None = None,
                   batch_size: int = BATCH, thumbnails: bool = False) -> BatchResult:
    """Answer image files in batches, read by the predictor's traced reader (a new
    ``tf.data`` pipeline would be traced anew, holding the interpreter lock for a quarter
    second); unusable files get their reason and the rest go on.
    Stopping keeps the answers so far (in file order, the unanswered left out). Thumbnails
    are kept only if asked (they take memory)."""
    started = time.perf_counter()
    on_progress = on_progress or (lambda what, done, total: None)
    paths = [Path(p) for p in paths]
    total, result = len(paths), BatchResult()
    problems: list[str | None] = []
    with ThreadPoolExecutor(CHECKERS) as pool:
        for begin in range(0, total, CHECK_CHUNK):
            if stop is not None and stop.is_set():
                break
            problems += pool.map(_problem, paths[begin:begin + CHECK_CHUNK])
            on_progress("Checking images", len(problems), total)
    good = [p for p, problem in zip(paths, problems, strict=False) if problem is None]
    answers: list[Prediction] = []
    for begin in range(0, len(good), batch_size):
        if stop is not None and stop.is_set():
            break
        images = predictor.standard_files(good[begin:begin + batch_size])
        outputs = predictor.outputs(predictor.normalised(images))
        for image, answer in zip(images, predictor.answers(outputs, top_k), strict=True):
            answers.append(Prediction(str(good[len(answers)]),
                                      thumbnail=thumbnail_of(image) if thumbnails else None,
                                      **answer))
        on_progress("Answering images", len(answers), len(good))
    result.stopped = len(problems) < total or len(answers) < len(good)
    read = len(answers) + sum(problem is not None for problem in problems)
    share = (time.perf_counter() - started) / max(1, read)
    answered = iter(answers)
    for path, problem in zip(paths, problems, strict=False):
        if problem is not None:
            result.predictions.append(Prediction(str(path), error=problem, seconds=share))
            continue
        prediction = next(answered, None)
        if prediction is None:
            break
        prediction.seconds = share
        result.predictions.append(prediction)
    result.seconds = time.perf_counter() - started
    return result


def write_predictions_csv(predictions: Sequence[Prediction], path: Path) -> None:
    """Save answers as CSV (atomically): file, answer, probability, the next classes,
    seconds and any problem."""
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["file", "answer", "probability", "next", "seconds", "problem"])
    for p in predictions:
        answer = (";".join(f"{v:.6g}" for v in p.value) if p.value is not None
                  else (p.labels[0] if p.labels else ""))
        probability = f"{p.probabilities[0]:.6f}" if p.probabilities else ""
        rest = ";".join(f"{label}:{q:.6f}" for label, q in
                        zip(p.labels[1:], p.probabilities[1:], strict=True))
        writer.writerow([p.source, answer, probability, rest, f"{p.seconds:.6f}",
                         p.error or ""])
    atomic_write_text(Path(path), text.getvalue())
