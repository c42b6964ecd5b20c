"""Each task's widgets, by task name: the one place a new task's views are registered."""

from __future__ import annotations

from studio.gui.tasks.classification import ClassificationViews
from studio.gui.tasks.detection import DetectionViews
from studio.gui.tasks.regression import RegressionViews
from studio.gui.tasks.segmentation import SegmentationViews
from studio.gui.tasks.views import TaskViews

VIEWS: dict[str, TaskViews] = {"classification": ClassificationViews(),
                               "regression": RegressionViews(),
                               "detection": DetectionViews(),
                               "segmentation": SegmentationViews()}


def views_for(task: str) -> TaskViews:
    """The widgets of ``task`` (a name from ``studio.core.tasks.registry``)."""
    return VIEWS[task]
