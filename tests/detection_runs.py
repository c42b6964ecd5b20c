"""A tiny detector trained for one epoch on a few demo images, in seconds, for tests of
answering with a detection run."""

from __future__ import annotations

from pathlib import Path

from studio.core.data.detection import demo
from studio.core.project.document import Project
from tests.core.test_detection_training import detector

SCORE_THRESHOLD = 0.05
"""Low enough that a detector trained for one epoch finds boxes at all."""


def detection_project(folder: Path) -> Project:
    """The demo set's first 8 training and 4 validation images as a YOLO dataset in
    ``folder``, with ``test_detection_training``'s detector (stride 8, 64 × 64 inputs)
    decoding at SCORE_THRESHOLD."""
    root = folder / "digits"
    demo.write_demo(root, "yolo", demo.generate(train=8, validation=4))
    project = detector(root)
    project.graph.node("head").params["score_threshold"] = SCORE_THRESHOLD
    return project


def trained_detection_run(folder: Path) -> Path:
    """The folder of a finished one-epoch run of ``detection_project`` under ``folder``."""
    from studio.core.training.trainer import train

    result = train(detection_project(folder), folder / "runs")
    assert result.status == "finished", result
    return result.run_dir
