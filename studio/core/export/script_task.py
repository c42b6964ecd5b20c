"""The task part of an exported script: the loss and metrics it compiles the model with.

A task whose loss and metrics are Keras's own names them (``keras.losses.X(...)`` and metric
names). A task with its own (a segmentation's loss and metrics leave IGNORE pixels out) has
their code carried into the script, which must run without Layer Studio: the very functions
Layer Studio computes them with, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from studio.core.export.script_data import carried_source


@dataclass(frozen=True)
class TaskCode:
    """What the script defines before its constants (``functions``, with the standard
    library's ``imports`` they need), and how it writes one loss (from one of the task's
    ``loss_specs``) and its METRICS; None: as Keras's own (``keras.losses.X(...)``, the
    task's metrics' names)."""

    functions: str = ""
    loss: Callable[[str, dict[str, Any]], str] | None = None
    metrics: str | None = None
    imports: tuple[str, ...] = ()


_SEGMENTATION = '''
# The segmentation loss and metrics, as Layer Studio computes them: pixels of a value beyond
# the classes (IGNORE, 255) count in neither.
EPSILON = {epsilon!r}
PACKAGE = {package!r}
MAX_CLASSES = {max_classes!r}


{functions}

LOSS_PARTS = {{"cross_entropy": cross_entropy_part, "dice": dice_part}}


def segmentation_loss(kind={default!r}, from_logits=False, class_weights=None):
    """Pixel cross-entropy, Dice, or their sum ("cross_entropy_dice"), per image."""
    parts = [part for name, part in LOSS_PARTS.items() if kind in (name, "cross_entropy_dice")]

    def loss(y_true, y_pred):
        losses = [part(y_true, y_pred, from_logits, class_weights) for part in parts]
        return sum(losses[1:], losses[0])

    return loss

'''


def _segmentation_code() -> TaskCode:
    from studio.core.tasks.detection.loss import PACKAGE
    from studio.core.tasks.segmentation import loss, metrics
    from studio.core.tasks.segmentation.masks import MAX_CLASSES

    carried = (loss._labels_and_valid, loss._image_axes, loss.cross_entropy_part,
               loss.dice_part, metrics.metric_classes)
    functions = _SEGMENTATION.format(
        epsilon=loss.EPSILON, package=PACKAGE, max_classes=MAX_CLASSES,
        default=loss.DEFAULT_KIND, functions="\n\n".join(carried_source(f) for f in carried))

    def loss_code(name: str, kwargs: dict[str, Any]) -> str:
        return f"segmentation_loss({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"

    return TaskCode(functions, loss_code, "[metric() for metric in metric_classes()]",
                    ("import functools",))


TASK_CODE: dict[str, Callable[[], TaskCode]] = {"segmentation": _segmentation_code}
"""The code of each task with a loss or metrics of its own; the others use Keras's."""


def task_code(task: str) -> TaskCode:
    """How the script of a project of ``task`` compiles its model."""
    made = TASK_CODE.get(task)
    return made() if made is not None else TaskCode()
