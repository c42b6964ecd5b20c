"""Inference speed of the core, without the window: a folder of PNG digits answered by the
demo CNN, and one dropped image answered on its own.

Writes ``--images`` MNIST-10k digits as PNG files into a temporary folder, trains the demo
CNN (``studio.core.project.templates.demo_project``) for one epoch into a temporary runs folder,
then loads the run with ``Predictor.load`` as the app does. Reports images per second of
``predict_folder`` over the whole folder (checks, reading, model; median of ``--rounds`` after
one warm-up pass) and the latency of ``predict_files`` for one image (median and 90th
percentile of ``--singles`` calls, after warm-up). Targets from the issue: at least 500
images per second, and a single image well under 100 ms.

    .venv/bin/python bench/batch_inference.py [--images 5000] [--rounds 3] [--singles 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.core.base.runtime import configure_environment  # noqa: E402

configure_environment()

from PIL import Image  # noqa: E402

from studio.core.data.sources import load_arrays  # noqa: E402
from studio.core.inference.batch import image_files, predict_folder  # noqa: E402
from studio.core.inference.predictor import Predictor  # noqa: E402
from studio.core.project.templates import demo_project  # noqa: E402
from studio.core.training.trainer import train  # noqa: E402


def demo_run(root: Path) -> Path:
    """A finished one-epoch run of the demo CNN under ``root``."""
    result = train(demo_project(), root, epochs=1)
    if result.status != "finished":
        raise SystemExit(f"The demo CNN's run did not finish: {result.status}")
    return result.run_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--singles", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="layer-studio-inference-") as temp:
        x, _ = load_arrays(demo_project().dataset)
        folder = Path(temp) / "digits"
        folder.mkdir()
        for index in range(args.images):
            Image.fromarray(x[index % len(x), ..., 0]).save(folder / f"{index:05d}.png")
        predictor = Predictor.load(demo_run(Path(temp) / "runs"))
        paths = image_files(folder)
        predict_folder(predictor, paths)  # warm-up: traces the reader and the model
        rates = []
        for _ in range(args.rounds):
            result = predict_folder(predictor, paths)
            rates.append(len(result.predictions) / result.seconds)
        single = [paths[0]]
        for _ in range(3):
            predictor.predict_files(single)
        seconds = []
        for index in range(args.singles):
            started = time.perf_counter()
            predictor.predict_files([paths[index % len(paths)]])
            seconds.append(time.perf_counter() - started)
    ms = sorted(s * 1000 for s in seconds)
    print(f"predict_folder, demo CNN, {len(paths):,} PNG digits: median "
          f"{statistics.median(rates):,.0f} images per second over {args.rounds} rounds "
          f"(each: {', '.join(f'{r:,.0f}' for r in rates)})")
    print(f"predict_files, one image, {len(ms)} calls: median {statistics.median(ms):.1f} ms, "
          f"90th percentile {ms[int(0.9 * (len(ms) - 1))]:.1f} ms")


if __name__ == "__main__":
    main()
