"""Scanning an image folder: seconds and files per second for ``scan_folder``.

Without ``--folder`` it first writes 10 classes of tiny PNGs (8×8 to 28×28, distinct random
pixels) into a temporary folder, so the files are in the operating system's cache when they
are scanned (a warm cache); with ``--cold`` each file's cached data is dropped before each
run (``posix_fadvise``; the folder listing stays cached). Target: 100,000 files in under
10 seconds.

    .venv/bin/python bench/folder_scan.py [--files 100000] [--runs 3] [--cold] [--folder PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from studio.core.data.image_folder import scan_folder

CLASSES = 10


def write_folder(root: Path, files: int, seed: int = 0) -> None:
    """``files`` tiny grayscale or RGB PNGs of distinct random pixels, spread over the classes."""
    rng = np.random.default_rng(seed)
    for c in range(CLASSES):
        (root / f"class {c}").mkdir(parents=True)
    for i in range(files):
        height, width = rng.integers(8, 29, size=2)
        channels = (1, 3)[i % 2]
        pixels = rng.integers(0, 256, size=(height, width, channels), dtype=np.uint8)
        Image.fromarray(pixels.squeeze(2) if channels == 1 else pixels).save(
            root / f"class {i % CLASSES}" / f"{i:06}.png")


def drop_cached_data(root: Path) -> None:
    """Ask the kernel to forget the cached contents of every file under ``root``."""
    os.sync()
    for folder, _, names in os.walk(root):
        for name in names:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def time_scans(root: Path, runs: int, cold: bool) -> list[float]:
    """Seconds of each of ``runs`` scans of ``root``."""
    seconds: list[float] = []
    for run in range(runs):
        if cold:
            drop_cached_data(root)
        started = time.perf_counter()
        scan = scan_folder(root)
        seconds.append(time.perf_counter() - started)
        total = len(scan.images) + len(scan.skipped)
        print(f"run {run + 1}: {seconds[-1]:.2f} s, {total / seconds[-1]:,.0f} files/s "
              f"({len(scan.images):,} images, {len(scan.skipped):,} skipped, "
              f"{len(scan.duplicates):,} duplicate groups)", flush=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="drop cached file data each run")
    parser.add_argument("--folder", type=Path, help="scan this folder instead of writing one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = args.folder
        if root is None:
            root = Path(temp)
            started = time.perf_counter()
            write_folder(root, args.files)
            print(f"wrote {args.files:,} PNGs in {time.perf_counter() - started:.1f} s",
                  flush=True)
        seconds = time_scans(root, args.runs, args.cold)
    cache = "cold" if args.cold else "warm"
    print(f"median {statistics.median(seconds):.2f} s over {args.runs} {cache}-cache runs "
          f"(target for 100,000 files: < 10 s)")


if __name__ == "__main__":
    main()
