"""Upgrading project documents saved in older formats to the current one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Document = dict[str, Any]


def _v1_to_v2(document: Document) -> Document:
    """Format 2 adds optional node positions for the canvas; v1 files have none."""
    return {**document, "format_version": 2}


def _v2_to_v3(document: Document) -> Document:
    """Format 3 names the dataset's source; every v2 project used a bundled dataset."""
    dataset = document.get("dataset")
    if isinstance(dataset, dict):
        dataset = {"source": "bundled", **dataset}
    return {**document, "format_version": 3, "dataset": dataset}


def _v3_to_v4(document: Document) -> Document:
    """Format 4 adds optimizer parameters, a schedule, early stopping, checkpoints and the
    device to the training settings, and the ``auto`` cache. Format 3 trained SGD without
    momentum, so a v3 file keeps doing so; the other defaults match what format 3 did."""
    training = document.get("training")
    if isinstance(training, dict):
        training = {**training, "momentum": 0.0}
    return {**document, "format_version": 4, "training": training}


def _v4_to_v5(document: Document) -> Document:
    """Format 5 adds an optional hyperparameter search; a v4 project has none."""
    return {**document, "format_version": 5}


def _v5_to_v6(document: Document) -> Document:
    """Format 6 names how rotation, zoom and shift fill the corners they uncover, ``constant``
    by default; format 5 mirrored the edges, so a v5 file that rotates, zooms or shifts keeps
    doing so."""
    dataset = document.get("dataset")
    augmentation = dataset.get("augmentation") if isinstance(dataset, dict) else None
    if isinstance(augmentation, dict) and any(
            augmentation.get(name) for name in ("rotation", "zoom", "translation")):
        dataset = {**dataset, "augmentation": {**augmentation, "fill_mode": "reflect"}}
    return {**document, "format_version": 6, "dataset": dataset}


def _v6_to_v7(document: Document) -> Document:
    """Format 7 adds a model's imported weights and what training starts from (random
    weights, the imported ones or a run's model); a v6 project has no weights and starts
    from random ones, the default."""
    return {**document, "format_version": 7}


def _v7_to_v8(document: Document) -> Document:
    """Format 8 adds detection datasets (source ``detection``, with a ``label_format``) and
    their scores (``val_map50``, ``val_map``) to what early stopping, checkpoints and search
    watch; a v7 project has none."""
    return {**document, "format_version": 8}


def _v8_to_v9(document: Document) -> Document:
    """Format 9 adds segmentation datasets (source ``segmentation``, with an optional
    ``mask_path``), their losses (``cross_entropy``, ``dice``, ``cross_entropy_dice``) and
    scores (``val_mean_iou``, ``val_pixel_accuracy``); a v8 project has none."""
    return {**document, "format_version": 9}


def _v9_to_v10(document: Document) -> Document:
    """Format 10 adds the random start-up trials of a Bayesian or Hyperband search; a v9
    project has none and gets the automatic count. Format 9 always drew 10 (Optuna's
    default, never a person's choice), which made a search of 10 trials or fewer random.
    Format 10 also adds a search's optional extra objectives; a v9 project has none."""
    return {**document, "format_version": 10}


def _v10_to_v11(document: Document) -> Document:
    """Format 11 adds marked blocks to the model (a search can repeat them); a v10 project
    has none."""
    return {**document, "format_version": 11}


STEPS: dict[int, Callable[[Document], Document]] = {
    1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5, 5: _v5_to_v6, 6: _v6_to_v7,
    7: _v7_to_v8, 8: _v8_to_v9, 9: _v9_to_v10, 10: _v10_to_v11}
"""Format version -> the step that turns such a document into the next version."""


def migrate(document: Any) -> Any:
    """``document`` upgraded to the current format; anything else is returned unchanged.

    The input is not modified. Documents that are not objects or carry an unknown version
    pass through untouched so that validation can explain what is wrong with them.
    """
    while isinstance(document, dict):
        version = document.get("format_version")
        step = STEPS.get(version) if type(version) is int else None
        if step is None:
            break
        document = step(document)
    return document
