"""The tasks a project can train, by name: the one place a new task is registered."""

from __future__ import annotations

from studio.core.tasks.classification import Classification
from studio.core.tasks.detection.task import Detection
from studio.core.tasks.regression import Regression
from studio.core.tasks.segmentation.task import Segmentation
from studio.core.tasks.task import Task

TASKS: dict[str, Task] = {task.name: task for task in (Classification(), Regression(), Detection(),
                                                       Segmentation())}
DEFAULT_TASK = Classification.name
"""The task a newly chosen dataset starts with."""


def task_for(name: str) -> Task:
    """The task called ``name``; KeyError with a readable message for an unknown one."""
    try:
        return TASKS[name]
    except KeyError:
        raise KeyError(f"Unknown task {name!r}: choose one of {', '.join(TASKS)}.") from None
