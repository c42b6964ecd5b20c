"""Seconds per training epoch of the small U-Net segmenter (``templates.small_unet_segmenter``
of the gallery template's ``SEGMENTER_WIDTHS``) on 64 × 64 grey images with 11 classes, with
one convolution per level (the template) and with two (as in the original U-Net), side by
side in one run.

Each model is built by the core builder from its graph and trained by Keras with Adam on a
per-pixel sparse categorical cross-entropy (the segmentation task's own loss comes with its
registration), in batches of 32, on random images and masks: the time depends on the shapes
only. The variants' epochs alternate, after one warm-up epoch each (tracing), so a change in
the machine's load touches both; the figure is each variant's median epoch and their ratio.
The issue's bar: an epoch of a few thousand 64 × 64 images in well under a minute on 2 cores.

    .venv/bin/python bench/segmenter_epoch.py [--images 3000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.core.base.runtime import configure_environment, start_tensorflow  # noqa: E402

configure_environment()

from studio.core.build.analysis import analyze  # noqa: E402
from studio.core.build.keras_model import build_keras_model  # noqa: E402
from studio.core.project.templates import (  # noqa: E402
    SEGMENTER_WIDTHS,
    small_unet_segmenter,
)

SHAPE = (64, 64, 1)
CLASSES = 11
BATCH = 32


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=3000, help="images per epoch")
    parser.add_argument("--rounds", type=int, default=3, help="timed epochs per variant")
    args = parser.parse_args()
    start_tensorflow()
    import keras
    import numpy as np

    rng = np.random.default_rng(0)
    images = rng.random((args.images, *SHAPE), dtype="float32")
    masks = rng.integers(0, CLASSES, (args.images, *SHAPE[:2]), dtype="uint8")
    models = {}
    for convolutions in (1, 2):
        graph = small_unet_segmenter(SHAPE, CLASSES, convolutions, SEGMENTER_WIDTHS)
        model = build_keras_model(graph, f"unet{convolutions}")
        model.compile(optimizer=keras.optimizers.Adam(0.004),
                      loss=keras.losses.SparseCategoricalCrossentropy())
        model.fit(images[:BATCH * 4], masks[:BATCH * 4], batch_size=BATCH, verbose=0)
        models[convolutions] = (model, analyze(graph).total_flops / 2e9)
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.rounds):
        for convolutions, (model, _macs) in models.items():
            started = time.perf_counter()
            model.fit(images, masks, batch_size=BATCH, epochs=1, verbose=0)
            times[convolutions].append(time.perf_counter() - started)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    median = {n: statistics.median(seconds) for n, seconds in times.items()}
    for convolutions, (_model, macs) in models.items():
        print(f"{convolutions} convolution(s) per level ({macs:.3f} G multiply-adds per "
              f"image): epoch of {args.images} images "
              f"{', '.join(f'{s:.1f}' for s in times[convolutions])} s, "
              f"median {median[convolutions]:.1f} s "
              f"({1000 * median[convolutions] / args.images:.1f} ms per image)")
    print(f"the template (1 per level) takes {median[1] / median[2]:.2f} of the time of 2 per "
          f"level; {os.cpu_count()} cores, load average {load}")


if __name__ == "__main__":
    main()
