"""Each kind of label's data views: the one place a new task's Data tab views are registered."""

from __future__ import annotations

from studio.core.tasks.registry import task_for
from studio.gui.data.detection_views import DetectionViews
from studio.gui.data.sample_views import SampleViews
from studio.gui.data.segmentation_views import SegmentationViews
from studio.gui.data.views import DataViews

_SAMPLE_VIEWS = SampleViews()

DATA_VIEWS: dict[str, DataViews] = {"classes": _SAMPLE_VIEWS,
                                    "numbers": _SAMPLE_VIEWS,
                                    "boxes": DetectionViews(),
                                    "masks": SegmentationViews()}
"""The data views of each task's ``label_kind`` (as ``data.pipelines.PIPELINE_BUILDERS``)."""


def data_views_for(task: str) -> DataViews:
    """The data views of ``task``'s datasets (a name from ``studio.core.tasks.registry``)."""
    return DATA_VIEWS[task_for(task).label_kind]
