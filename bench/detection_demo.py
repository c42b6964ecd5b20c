"""The detection demo set: seconds to draw it from MNIST-10k, to read it back from its cache,
and, per label format, to write it out and to read it back with its health report.

Runs in a temporary workspace, so the user's cache is neither used nor changed.

    .venv/bin/python bench/detection_demo.py [--train 4000] [--validation 500]
                                             [--formats yolo voc coco kitti]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=4_000)
    parser.add_argument("--validation", type=int, default=500)
    parser.add_argument("--formats", nargs="*", default=["yolo", "voc", "coco", "kitti"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["LAYER_STUDIO_HOME"] = folder
        from studio.core.data.detection import demo
        from studio.core.data.detection.formats import read_detection

        demo._mnist()  # MNIST-10k read once, as any caller reads it
        started = time.perf_counter()
        drawn = demo.demo_set(args.train, args.validation)
        drawing = time.perf_counter() - started
        started = time.perf_counter()
        demo.demo_set(args.train, args.validation)
        cached = time.perf_counter() - started
        size = demo.cache_path(args.train, args.validation).stat().st_size
        boxes = sum(len(labels) for labels in drawn.labels)
        print(f"{len(drawn):,} images, {boxes:,} boxes: drawn and cached in {drawing:.2f} s, "
              f"read from the cache ({size / 2**20:.0f} MB) in {cached:.2f} s")
        for name in args.formats:
            root = Path(folder, name)
            started = time.perf_counter()
            demo.write_demo(root, name, drawn)
            written = time.perf_counter() - started
            started = time.perf_counter()
            dataset = read_detection(root)
            read = time.perf_counter() - started
            print(f"{name}: written in {written:.2f} s, read back with its health report in "
                  f"{read:.2f} s ({len(dataset):,} images, "
                  f"{len(dataset.health.problems())} problems)")


if __name__ == "__main__":
    main()
