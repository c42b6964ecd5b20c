"""pycocotools' COCOeval as an oracle for our average precision, and seeded fixtures to put
to both (the detection metric tests and bench/detection_metrics.py use them)."""

import contextlib
import io
from collections.abc import Sequence

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from studio.core.tasks.detection.boxes import Detections, ImageBoxes


def jittered_fixture(seed: int, images: int = 10, most: int = 6, spurious: int = 3
                     ) -> tuple[list[ImageBoxes], list[Detections]]:
    """Images with up to ``most`` true boxes each, of 3 classes (the last rarer), and
    predictions: none, one or two jittered copies of each (sometimes of the wrong class), up
    to ``spurious`` boxes anywhere, and scores on a coarse grid so that many tie."""
    rng, classes = np.random.default_rng(seed), 3
    truths, predictions = [], []
    for _ in range(images):
        count = rng.integers(0, most + 1)
        corner = rng.uniform(0, 200, (count, 2))
        boxes = np.c_[corner, corner + rng.uniform(8, 60, (count, 2))]
        labels = rng.choice(classes, count, p=[0.45, 0.45, 0.1])
        found, found_labels = [], []
        for box, label in zip(boxes, labels, strict=True):
            size = np.tile(box[2:] - box[:2], 2)
            for _ in range(rng.choice(3, p=[0.2, 0.6, 0.2])):
                found.append(box + rng.normal(0, 0.12, 4) * size)
                found_labels.append(label if rng.random() < 0.85 else rng.integers(classes))
        for _ in range(rng.integers(0, spurious + 1)):
            corner = rng.uniform(0, 200, 2)
            found.append(np.r_[corner, corner + rng.uniform(8, 60, 2)])
            found_labels.append(rng.integers(classes))
        truths.append(ImageBoxes(boxes, labels))
        predictions.append(Detections(np.reshape(found, (-1, 4)), found_labels,
                                      np.round(rng.random(len(found)), 1)))
    return truths, predictions


def coco_scores(truths: Sequence[ImageBoxes], predictions: Sequence[Detections], classes: int
                ) -> tuple:
    """pycocotools' COCOeval for boxes on the same data (ids from 1, boxes as x, y, w, h):
    mAP@[.5:.95], mAP@.5, per class AP and AP@.5 (None for COCO's -1), and per class the
    counts of false positives and missed boxes at IoU 0.5."""
    def xywh(box):
        x, y, right, bottom = box.astype(np.float64).tolist()
        return [x, y, right - x, bottom - y]

    labelled = [(i, box, label) for i, truth in enumerate(truths)
                for box, label in zip(truth.boxes, truth.classes, strict=True)]
    annotations = [{"id": n + 1, "image_id": i + 1, "category_id": int(label) + 1, "iscrowd": 0,
                    "bbox": xywh(box), "area": xywh(box)[2] * xywh(box)[3]}
                   for n, (i, box, label) in enumerate(labelled)]
    results = [{"image_id": i + 1, "category_id": int(label) + 1, "bbox": xywh(box),
                "score": float(score)}
               for i, found in enumerate(predictions)
               for box, label, score in zip(found.boxes, found.classes, found.scores, strict=True)]
    with contextlib.redirect_stdout(io.StringIO()):
        truth = COCO()
        truth.dataset = {"images": [{"id": i + 1} for i in range(len(truths))],
                         "annotations": annotations,
                         "categories": [{"id": k + 1} for k in range(classes)]}
        truth.createIndex()
        evaluation = COCOeval(truth, truth.loadRes(results), "bbox")
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    precision = evaluation.eval["precision"][:, :, :, 0, -1]  # area "all", 100 detections
    per_class = [precision[:, :, k] if (precision[:, :, k] > -1).any() else None
                 for k in range(classes)]
    everywhere = [e for e in evaluation.evalImgs if e is not None and e["aRng"] == [0, 1e10]]
    wrong = [sum(int((e["dtMatches"][0] == 0).sum()) for e in everywhere
                 if e["category_id"] == k + 1) for k in range(classes)]
    missed = [sum(int((e["gtMatches"][0] == 0).sum()) for e in everywhere
                  if e["category_id"] == k + 1) for k in range(classes)]
    return (evaluation.stats[0], evaluation.stats[1],
            [None if p is None else p.mean() for p in per_class],
            [None if p is None else p[0].mean() for p in per_class], wrong, missed)
