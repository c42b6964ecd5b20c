"""Drop-to-overlay latency of the demo segmentation model: from one image file dropped on the
window to its mask painted over it on the Try tab's card.

Opens the real window (offscreen) on a segmentation run's project with the run as its own,
warms TensorFlow up and lets the Try view load the model, as the app does. Then drops
``--images`` validation images of the demo set, one PNG at a time, on the canvas as file URLs,
at their own 64 × 64 and scaled up to 512 × 512 (so that reading resizes them and the mask
is taken back to 512 × 512), and times each drop until the new card's picture (the image with
its mask over it) has painted: checking and reading the file, the model, the mask in the
image's pixels, the coloured overlay and the painting. Prints the median and 95th
percentile after ``--warm`` drops left out; issue 24's target is a median under 150 ms.

``--run``: a segmentation run folder (e.g. one kept by ``bench/segmentation_accuracy.py
--keep``); without it, the demo model (the gallery's small U-Net segmentation template,
``from_template("small_unet_segmenter")``, on the segmentation demo set) is trained for
``--epochs`` into a temporary folder first.

    .venv/bin/python bench/segmentation_latency.py [--run RUN] [--images 100] [--warm 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from gui_session import PaintClock, close_discarding, open_try_view, time_drops  # noqa: E402
from PIL import Image  # noqa: E402

from studio.core.data.segmentation import demo  # noqa: E402
from studio.core.project.document import Project, load_project  # noqa: E402
from studio.core.runs import folders as runs  # noqa: E402
from studio.gui.tasks import segmentation  # noqa: E402

SCALED = 512


def demo_segmenter(epochs: int) -> Project:
    """The gallery's small U-Net segmentation template, on the segmentation demo set, trained
    for ``epochs``."""
    from studio.core.project.templates import from_template

    project = from_template("small_unet_segmenter")
    project.training.epochs = epochs
    return project


def trained_run(folder: Path, epochs: int) -> Path:
    """The demo model trained into ``folder`` (its runs' folder)."""
    from studio.core.training.trainer import train

    result = train(demo_segmenter(epochs), folder)
    if result.status != "finished":
        raise SystemExit(f"The demo segmentation model's run did not finish: {result.status}")
    return result.run_dir


def image_files(folder: Path, count: int, side: int | None) -> list[Path]:
    """``count`` validation images of the segmentation demo set as PNG files in ``folder``,
    at ``side`` × ``side`` pixels (None: their own size)."""
    demo_images = demo.demo_set()
    validation = [i for i, split in enumerate(demo_images.splits) if split == "validation"]
    folder.mkdir()
    paths = []
    for index in validation[:count]:
        image = Image.fromarray(demo_images.images[index])
        if side is not None:
            image = image.resize((side, side), Image.Resampling.BILINEAR)
        paths.append(folder / f"{index:05d}.png")
        image.save(paths[-1])
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a segmentation run folder (default: train "
                                                 "the demo model)")
    parser.add_argument("--epochs", type=int, default=1,
                        help="epochs to train the demo model for, without --run")
    parser.add_argument("--images", type=int, default=100)
    parser.add_argument("--warm", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="layer-studio-segmentation-latency-") as temp:
        os.environ["LAYER_STUDIO_HOME"] = temp
        trained = Path(temp) / "trained"
        if args.run is None:
            run = trained_run(trained, args.epochs)
        else:
            run = trained / args.run.name
            shutil.copytree(args.run, run)
        window = open_try_view(trained, project=load_project(run / runs.PROJECT_FILE))
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"run {args.run or run}; load average {load}")
        clock = PaintClock(segmentation.MaskPicture)  # a new card's picture with its mask
        for side in (None, SCALED):
            paths = image_files(Path(temp) / f"images-{side}", args.images + args.warm, side)
            ms = np.array(time_drops(window, paths, clock)[args.warm:]) * 1000
            size = f"{side} × {side}" if side else f"{demo.SIDE} × {demo.SIDE} (the model's size)"
            print(f"drop to overlay drawn, {size} PNG, {len(ms)} drops: "
                  f"p50 {statistics.median(ms):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms")
        close_discarding(window)


if __name__ == "__main__":
    main()
