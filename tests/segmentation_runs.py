"""Small segmentation datasets and a tiny segmentation model for tests of the integration.

``registered`` registers the Segmentation task for a test until helper H-B's registration
(tasks/registry.py) is merged; the lead removes it then."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from studio.core.data.segmentation import demo
from studio.core.model.graph import Graph, Node
from studio.core.project import document
from studio.core.project.document import DatasetChoice, Project
from studio.core.tasks.registry import TASKS
from studio.core.tasks.segmentation.task import Segmentation

SIDE = 16
"""The tiny model's input side: the demo's 64 × 64 images squashed."""


def _forget_schema() -> None:
    """The project schema names the registered tasks: made again after a change."""
    for cached in (document.project_schema, document._validator):
        cached.cache_clear()


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """The Segmentation task registered while the block runs."""
    import pytest

    if "segmentation" in TASKS:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(TASKS, "segmentation", Segmentation())
        _forget_schema()
        try:
            yield
        finally:
            patch.undo()
            _forget_schema()


def demo_folder(root: Path) -> Path:
    """The demo set's first 8 training and 4 validation images written in ``root`` as
    images/ and masks/ folders with a classes.txt."""
    demo.write_demo(root, demo.generate(train=8, validation=4))
    return root


def segmenter(root: Path | str) -> Project:
    """Two convolutions ending in a softmax map of the demo's 11 classes, on the folder
    ``root`` (empty: the demo set) squashed to SIDE × SIDE grey."""
    graph = Graph.from_chain([
        Node("input_1", "Input", {"shape": [SIDE, SIDE, 1]}),
        Node("conv2d_1", "Conv2D", {"filters": 8, "kernel_size": 3, "padding": "same",
                                    "activation": "relu"}),
        Node("conv2d_2", "Conv2D", {"filters": len(demo.CLASS_NAMES), "kernel_size": 1,
                                    "activation": "softmax"})])
    project = Project(name="Digit pixels", graph=graph)
    project.dataset = DatasetChoice(source="segmentation", path=str(root), task="segmentation",
                                    image_size=[SIDE, SIDE], color="grayscale",
                                    cache="memory")
    project.training.epochs = 1
    project.training.batch_size = 4
    return project
