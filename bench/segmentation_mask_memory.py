"""Memory of streaming a segmentation folder's masks: building the pipelines and drawing one
epoch of every split, beside the bytes the masks would take held whole (N × H × W, uint8).

Writes a folder of random grey images with index masks (``--images`` of ``--side`` pixels
square, a classes.txt of four classes, 80/20 training and validation), reads it as a project
does and draws one batch (TensorFlow's imports and start-up are not what is measured), then
measures, from just before building the pipelines again to the end of the epoch:

- the peak of NumPy's and Python's own allocations (``tracemalloc``, which NumPy reports its
  arrays to): where masks decoded and fitted in Python, or an array of a split's masks, are
  held; the pipelines once gathered their masks from such an array;
- the growth of the process's peak resident memory (``VmHWM``, reset through
  ``/proc/self/clear_refs`` before building): everything, TensorFlow's buffers and shuffle
  buffers included, so noisier, and above the masks by what the image side holds.

Each is printed with its ratio to the masks' bytes. ``--cache none`` (the default) leaves the
masks with no place to be held but the pipeline itself; ``memory`` keeps them with the images
by the project's choice, ``disk`` writes them to the workspace (a temporary one here) and
shuffles from a buffer of at most ``DISK_SHUFFLE_BYTES``.

    .venv/bin/python bench/segmentation_mask_memory.py [--images 2000] [--side 128]
        [--cache none]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.core.base.runtime import configure_environment  # noqa: E402

configure_environment()

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from studio.core.data import sources  # noqa: E402
from studio.core.data.pipelines import make_pipelines  # noqa: E402
from studio.core.project.document import DatasetChoice  # noqa: E402

CLASSES = 4
BATCH = 32


def write_folder(root: Path, images: int, side: int) -> None:
    """``images`` random grey PNGs in images/{train,val}/ with their index masks in masks/."""
    rng = np.random.default_rng(0)
    for index in range(images):
        split = "train" if index < images * 0.8 else "val"
        mask = rng.integers(0, CLASSES, (side, side), dtype=np.uint8)
        for kind, pixels in (("images", mask * 60), ("masks", mask)):
            folder = root / kind / split
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(pixels).save(folder / f"{index:05d}.png")
    (root / "classes.txt").write_text("".join(f"c{k}\n" for k in range(CLASSES)))


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise KeyError(field)


def one_epoch(pipes) -> int:
    """Draw one epoch of every split; the masks drawn."""
    drawn = 0
    for dataset, steps in ((pipes.train, pipes.steps),
                           (pipes.validation, pipes.validation_steps)):
        for _, masks in dataset.take(steps):
            drawn += int(masks.shape[0])
    return drawn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--side", type=int, default=128)
    parser.add_argument("--cache", choices=["none", "memory", "disk"], default="none")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["LAYER_STUDIO_HOME"] = str(Path(folder) / "workspace")
        root = Path(folder) / "data"
        write_folder(root, args.images, args.side)
        choice = DatasetChoice(source="segmentation", path=str(root), task="segmentation",
                               color="grayscale", cache=args.cache)
        loaded = sources.load(choice)
        held = args.images * args.side * args.side
        # A first batch drawn before measuring: TensorFlow and Keras imported and started.
        next(iter(make_pipelines(loaded, choice, BATCH, 0).validation))
        Path("/proc/self/clear_refs").write_text("5")  # the peak RSS starts again from here
        start_kb = _status_kb("VmRSS")
        tracemalloc.start()
        started = time.perf_counter()
        drawn = one_epoch(make_pipelines(loaded, choice, BATCH, 0))
        seconds = time.perf_counter() - started
        _, numpy_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss_growth = (_status_kb("VmHWM") - start_kb) * 1024
    mb = 2**20
    print(f"{args.images} images of {args.side} x {args.side}, cache {args.cache}: "
          f"{drawn} masks drawn in one epoch ({seconds:.1f} s)")
    print(f"masks held whole (N x H x W): {held / mb:7.1f} MB")
    print(f"tracemalloc peak:             {numpy_peak / mb:7.1f} MB "
          f"({numpy_peak / held:.3f} of the masks)")
    print(f"peak RSS growth:              {rss_growth / mb:7.1f} MB "
          f"({rss_growth / held:.3f} of the masks)")


if __name__ == "__main__":
    main()
