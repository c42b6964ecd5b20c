"""The detection metrics' speed: one validation pass through ``average_precision`` (the call
made at the end of each training epoch) against pycocotools' COCOeval on the same data, and
class-wise NMS on a few hundred candidates (re-run on each move of the Try tab's sliders).

Validation passes of 500 images: a trained detector's answers (about 5 true boxes and 6
detections an image) and a low score threshold's (about 35 detections an image). The two
evaluators alternate, median of ``--runs``; they must agree on mAP@[.5:.95] (checked).
Targets (ms): a pass under 100; NMS under 5.

    .venv/bin/python bench/detection_metrics.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' oracle

from studio.core.tasks.detection.average_precision import average_precision  # noqa: E402
from studio.core.tasks.detection.boxes import nms_by_class  # noqa: E402
from tests.coco_oracle import coco_scores, jittered_fixture  # noqa: E402

PASS_TARGET_MS = 100.0
NMS_TARGET_MS = 5.0


def verdict(value: float, target: float) -> str:
    return f"target < {target:g}: {'met' if value < target else 'MISSED'}"


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    answer = call()
    return time.perf_counter() - start, answer


def bench_pass(name: str, spurious: int, runs: int) -> None:
    truths, predictions = jittered_fixture(0, images=500, most=9, spurious=spurious)
    boxes = sum(len(t) for t in truths) / len(truths)
    found = sum(len(p) for p in predictions) / len(predictions)
    average_precision(truths, predictions, 3)  # warm-up: NumPy's first calls
    ours, theirs = [], []
    for _ in range(runs):
        seconds, scores = timed(lambda: average_precision(truths, predictions, 3))
        ours.append(seconds)
        seconds, coco = timed(lambda: coco_scores(truths, predictions, 3))
        theirs.append(seconds)
        assert abs(scores.map - coco[0]) < 1e-9, (scores.map, coco[0])
    mine, baseline = statistics.median(ours), statistics.median(theirs)
    print(f"{name}: 500 images, {boxes:.1f} true boxes and {found:.1f} detections an image: "
          f"average_precision {mine * 1000:.1f} ms, pycocotools {baseline * 1000:.0f} ms "
          f"({baseline / mine:.0f}x), median of {runs}; {verdict(mine * 1000, PASS_TARGET_MS)}")


def bench_nms(candidates: int = 300, calls: int = 200) -> None:
    rng = np.random.default_rng(0)
    corners = rng.uniform(0, 100, (candidates, 2))
    boxes = np.c_[corners, corners + rng.uniform(5, 40, (candidates, 2))].astype(np.float32)
    scores, classes = rng.random(candidates), rng.integers(0, 10, candidates)
    times = []
    for threshold in np.linspace(0.3, 0.8, calls):  # a slider dragged across its range
        seconds, _ = timed(lambda t=threshold: nms_by_class(boxes, scores, classes, t))
        times.append(seconds * 1000)
    median = statistics.median(times)
    print(f"nms_by_class on {candidates} boxes of 10 classes, {calls} thresholds: {median:.2f} ms "
          f"median, {max(times):.2f} ms worst; {verdict(median, NMS_TARGET_MS)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    bench_pass("trained detector", spurious=3, runs=runs)
    bench_pass("low score threshold", spurious=60, runs=runs)
    bench_nms()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
