"""The Data tab draws a dataset as its task's data views say: every task has them, and a new
kind of label plugs in with one registration, its samples, chart, health report and
augmentation preview drawn its own way."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QLabel

from studio.core.data.types import ArraySamples, DatasetInfo, LoadedData
from studio.core.project.document import DatasetChoice
from studio.core.project.templates import demo_project
from studio.core.tasks.registry import TASKS
from studio.gui.data.augmentation import AugmentationView
from studio.gui.data.charts import ClassesView
from studio.gui.data.health import HealthView
from studio.gui.data.images import ImageGrid
from studio.gui.data.registry import DATA_VIEWS, data_views_for
from studio.gui.data.sample_views import SampleViews
from studio.gui.data.samples import SamplesView
from studio.gui.widgets.document import ProjectDocument
from tests.core.test_tasks import Tally

PREVIEW_MS = 20_000


def test_every_task_has_data_views():
    for task in TASKS.values():
        assert data_views_for(task.name) is DATA_VIEWS[task.label_kind], task.name


class TallyCharts(QLabel):
    def show_data(self, loaded: LoadedData) -> bool:
        self.setText(f"{int(loaded.labels.sum())} marks in all")
        return True


class TallyGrid(ImageGrid):
    overlays: list[list[int]] | None = None


class TallyViews(SampleViews):
    """Views of a made-up kind of label, as segmentation's masks will have theirs."""

    card_side = 60
    counted = "tallies"

    def label_text(self, loaded, index):
        return f"{int(loaded.labels[index])} marks"

    def summary(self, loaded):
        return f" with {int(loaded.labels.sum())} marks"

    def health_html(self, loaded):
        return "<p>Every tally was counted twice.</p>"

    def health_charts(self):
        return TallyCharts()

    def preview_grid(self, first_gap):
        return TallyGrid(first_gap=first_gap)

    def overlays(self, loaded, kept, choice, shape):
        return [int(loaded.labels[i]) for i in kept]

    def show_preview(self, grid, preview, class_names):
        grid.set_images(preview[0])
        grid.overlays = preview[1]


def tallies() -> LoadedData:
    info = DatasetInfo("tallies", "Tallies", (4, 4, 1), 0, (), 6, task=Tally.name)
    splits = {"train": np.arange(4), "validation": np.arange(4, 6), "test": np.arange(0)}
    images = np.arange(6 * 16, dtype=np.uint8).reshape(6, 4, 4, 1)
    return LoadedData(info, ArraySamples(images), np.arange(6.0), splits)


def test_a_new_kind_of_label_is_drawn_by_its_own_data_views(qtbot, monkeypatch):
    monkeypatch.setitem(TASKS, Tally.name, Tally())
    monkeypatch.setitem(DATA_VIEWS, Tally.label_kind, TallyViews())
    loaded = tallies()
    samples, classes, health = SamplesView(), ClassesView(), HealthView()
    preview = AugmentationView(ProjectDocument(demo_project()))
    for view in (samples, classes, health, preview):
        qtbot.addWidget(view)
        view.show()
    preview.refresh(DatasetChoice(task=Tally.name), (4, 4, 1))
    with qtbot.waitSignal(preview.preview_shown, timeout=PREVIEW_MS):
        for view in (samples, classes, health, preview):
            view.show_data(loaded)

    assert samples.icon_size().width() == 60
    texts = {samples.grid.item(row).text() for row in range(samples.grid.count())}
    assert texts == {f"{int(loaded.labels[i])} marks" for i in samples.indices}
    assert classes.chart.getAxis("left").labelText == "tallies"
    assert "Every tally was counted twice." in health.text.toPlainText()
    charts = health.charts_of(Tally.label_kind)
    assert charts.isVisible() and charts.text() == "15 marks in all"
    assert not health.charts.isVisible() and not health.box_charts.isVisible()
    assert isinstance(preview.picture, TallyGrid)
    assert preview.picture.overlays is preview.overlays
    assert sorted(preview.overlays[0]) == [0, 1, 2, 3]  # the training samples' labels
    assert preview.preview.shape == (1, 4, 4, 4, 1)
