"""Segmentation for tests: a small folder of the demo set and a tiny segmentation project to
train on it (``demo_folder``, ``segmenter``), and a hand-made model saved as a run, to test
answering with masks without training: a 1 × 1 convolution over 16 × 16 grey inputs whose
classes follow the pixels' brightness (``segmentation_run``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from studio.core.data.segmentation import demo
from studio.core.inference.predictor import image_preprocessing
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project
from studio.core.runs import folders as runs

SIDE = 16
"""The tiny models' input side (the demo's 64 × 64 images squashed)."""
CLASSES = ("background", "cat", "dog")
"""The hand-made run's classes: dark pixels are background, mid-grey ones cat, bright ones
dog."""


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


def expected_mask(image: np.ndarray) -> np.ndarray:
    """The class the model answers for each pixel of a grey uint8 ``image`` of its input's
    size: background below 64, cat up to 191, dog above."""
    return np.digitize(image, [64, 192]).astype(np.uint8)


def segmentation_run(folder: Path, resize: str = "squash", task: str = "segmentation"
                     ) -> Path:
    """A run folder under ``folder`` holding the model and its preprocessing (``resize``),
    recorded as a model of ``task``."""
    import json

    import keras

    inputs = keras.Input((SIDE, SIDE, 1))
    conv = keras.layers.Conv2D(len(CLASSES), 1, activation="softmax")
    model = keras.Model(inputs, conv(inputs))
    # logits 0, 40x - 10 and 80x - 40 for pixels x in 0..1: the largest changes at 1/4, 3/4
    conv.set_weights([np.array([0.0, 40.0, 80.0], np.float32).reshape(1, 1, 1, 3),
                      np.array([0.0, -10.0, -40.0], np.float32)])
    run = Path(folder) / f"{task}-{resize}"
    run.mkdir(parents=True)
    model.save(run / runs.MODEL_FILE)
    prep = image_preprocessing((SIDE, SIDE, 1), "grayscale", "unit", resize, CLASSES)
    prep["task"] = task
    (run / runs.PREPROCESSING_FILE).write_text(json.dumps(prep), encoding="utf-8")
    return run


def stripes(height: int, width: int) -> np.ndarray:
    """A grey image of three vertical bands: dark, mid-grey and bright (left to right)."""
    image = np.zeros((height, width), np.uint8)
    image[:, width // 3:] = 128
    image[:, 2 * width // 3:] = 255
    return image


def trained_segmentation_run(folder: Path) -> Path:
    """The folder of a finished one-epoch run of ``segmenter`` on ``demo_folder`` under
    ``folder``."""
    from studio.core.training.trainer import train

    result = train(segmenter(demo_folder(folder / "digits")), folder / "runs")
    assert result.status == "finished", result
    return result.run_dir
