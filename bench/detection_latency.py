"""Drop-to-boxes latency of the demo detector: one image file answered with its boxes, through
the call the Try tab makes for a dropped image.

Loads a detection run with ``Predictor.load`` and ``warm_up`` as the Try tab does (``--run``: a
run folder, e.g. one kept by ``bench/detection_accuracy.py --keep``; without it, the small
detector template is trained on the demo set for one epoch into a temporary folder). Writes
``--images`` validation images of the demo set as PNG files, at their own 128 × 128 and scaled
up to 512 × 512 (so that reading resizes them), and times ``predict_files([path])`` for each
after ``--warm`` calls: checking the file, reading and resizing it, the model, then decoding the
head's output with NMS into boxes in the image's pixels. Prints the median and 95th
percentile; issue 23's target is a median under 100 ms.

    .venv/bin/python bench/detection_latency.py [--run RUN] [--images 200] [--warm 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.core.base.runtime import configure_environment  # noqa: E402

configure_environment()

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from studio.core.data.detection.demo import demo_set  # noqa: E402
from studio.core.inference.predictor import Predictor  # noqa: E402

SCALED = 512


def demo_detector_run(root: Path) -> Path:
    """A run of the small detector template trained on the demo set for one epoch."""
    from studio.core.project.templates import from_template
    from studio.core.training.trainer import train

    result = train(from_template("small_detector"), root, epochs=1)
    if result.status != "finished":
        raise SystemExit(f"The demo detector's run did not finish: {result.status}")
    return result.run_dir


def image_files(folder: Path, count: int, side: int | None) -> list[Path]:
    """``count`` validation images of the demo set as PNG files in ``folder``, at ``side`` ×
    ``side`` pixels (None: their own size)."""
    demo = demo_set()
    validation = [i for i, split in enumerate(demo.splits) if split == "validation"]
    folder.mkdir()
    paths = []
    for index in validation[:count]:
        image = Image.fromarray(demo.images[index])
        if side is not None:
            image = image.resize((side, side), Image.Resampling.BILINEAR)
        paths.append(folder / f"{index:05d}.png")
        image.save(paths[-1])
    return paths


def timed(predictor: Predictor, paths: list[Path], warm: int) -> tuple[list[float], float]:
    """Milliseconds of each dropped file's answer, after ``warm`` answers left out, and the
    mean number of boxes an answer holds."""
    for path in paths[:warm]:
        predictor.predict_files([path])
    ms, boxes = [], []
    for path in paths:
        started = time.perf_counter()
        (answer,) = predictor.predict_files([path])
        ms.append((time.perf_counter() - started) * 1000)
        if answer.error is not None:
            raise SystemExit(f"{path.name}: {answer.error}")
        boxes.append(len(answer.boxes or []))
    return ms, float(np.mean(boxes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a detection run folder (default: train one)")
    parser.add_argument("--images", type=int, default=200)
    parser.add_argument("--warm", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="layer-studio-detection-latency-") as temp:
        run = args.run or demo_detector_run(Path(temp) / "runs")
        predictor = Predictor.load(run)
        predictor.warm_up()
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"run {run}; load average {load}")
        for side in (None, SCALED):
            paths = image_files(Path(temp) / f"images-{side}", args.images, side)
            ms, boxes = timed(predictor, paths, args.warm)
            size = f"{side} × {side}" if side else "128 × 128 (the model's size)"
            print(f"drop to boxes, {size} PNG, {len(ms)} images, {boxes:.1f} boxes each: "
                  f"p50 {statistics.median(ms):.1f} ms, "
                  f"p95 {np.percentile(ms, 95):.1f} ms")


if __name__ == "__main__":
    main()
