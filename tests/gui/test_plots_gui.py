"""Plots: legends under the data, never over it, with every entry shown; ranges that hold all
the data; a least height with labelled axes."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRectF

from studio.core.runs.history import read_run
from studio.gui.runs.run_details import RunDetails
from studio.gui.shell.app import create_application
from studio.gui.training.curves import PLOTS, LiveCurves
from studio.gui.widgets.deferred import Deferred
from studio.gui.widgets.plot_style import MIN_DATA_HEIGHT
from tests.run_folders import write_run


def _shown(qtbot, widget, width: int, height: int) -> None:
    create_application()
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.waitUntil(lambda: all(place.is_built() for place in widget.findChildren(Deferred)))
    qtbot.wait(1)


def legend_problems(plot) -> list[str]:
    """What is wrong with ``plot``'s legend: over the data, or an entry cut or hidden."""
    item = plot.getPlotItem()
    legend, data = item.legend, item.vb.sceneBoundingRect()
    found = []
    if legend.sceneBoundingRect().intersects(data):
        found.append(f"the legend {legend.sceneBoundingRect()} covers the data {data}")
    view = QRectF(plot.rect())
    for sample, label in legend.items:
        for part in (sample, label):
            if not part.isVisible() or not view.contains(part.sceneBoundingRect()):
                found.append(f"{label.text} is cut: {part.sceneBoundingRect()} in {view}")
    return found


def plotted(plot) -> tuple[np.ndarray, np.ndarray]:
    """Every point the plot's curves hold."""
    data = [item.getData() for item in plot.getPlotItem().listDataItems()]
    return (np.concatenate([x for x, _y in data if x is not None]),
            np.concatenate([y for _x, y in data if y is not None]))


def range_problems(plot) -> list[str]:
    """What of the plotted data lies outside the plot's view."""
    xs, ys = plotted(plot)
    (left, right), (bottom, top) = plot.getPlotItem().vb.viewRange()
    if left <= min(xs) and max(xs) <= right and bottom <= min(ys) and max(ys) <= top:
        return []
    return [f"{(left, right, bottom, top)} does not hold x {min(xs)}..{max(xs)} "
            f"and y {min(ys)}..{max(ys)}"]


def test_live_curves_keep_their_legends_under_the_data_even_when_short(qtbot):
    curves = LiveCurves()
    for epoch in range(1, 4):
        for batch in range(10):
            x = epoch - 1 + batch / 10
            curves.add_batch(x, {"loss": 1 / (x + 1), "accuracy": 1 - 0.5 / (x + 1)})
            curves.add_rate(x, 0.001)
        curves.add_epoch(epoch, {"loss": 1 / epoch, "accuracy": 1 - 0.4 / epoch,
                                 "val_loss": 1.1 / epoch, "val_accuracy": 1 - 0.45 / epoch})
    curves.show_plan([0, 1, 2, 3], [0.001] * 4)
    curves.redraw()
    _shown(qtbot, curves, 840, 220)  # a short Training dock on a laptop
    found = []
    for metric, (_title, left, kinds) in PLOTS.items():
        plot = curves.plots[metric]
        assert len(plot.getPlotItem().legend.items) == len(kinds)
        assert plot.getPlotItem().getAxis("left").labelText == left
        found += [f"{metric}: {p}" for p in legend_problems(plot) + range_problems(plot)]
        assert max(plotted(plot)[0]) >= 2.9  # the last epoch's points are drawn
    assert not found, "\n".join(found)


def test_the_live_curves_place_keeps_the_room_the_plots_take_once_built(qtbot):
    curves = LiveCurves()
    waiting = curves.place.minimumSizeHint().expandedTo(curves.place.minimumSize()).height()
    _shown(qtbot, curves, 840, 220)
    built = curves.place.built_widget().minimumSizeHint().height()
    assert waiting >= built, (waiting, built)  # the dock does not grow when they arrive


@pytest.fixture
def four_runs(tmp_path):
    return [read_run(write_run(tmp_path / "runs", i, epochs=3)) for i in range(4)]


def test_the_runs_overlay_lists_every_run_and_its_range_follows_the_data(qtbot, four_runs):
    details = RunDetails()
    _shown(qtbot, details, 1100, 300)
    assert details.overlay(four_runs) == "Curves of 4 runs."
    qtbot.wait(1)
    found = []
    for plot in (details.accuracy_plot, details.loss_plot):
        legend = plot.getPlotItem().legend
        assert sorted(label.text for _sample, label in legend.items) == sorted(
            run.id for run in four_runs)
        found += legend_problems(plot) + range_problems(plot)
        values = plotted(plot)[1]
        (bottom, top) = plot.getPlotItem().vb.viewRange()[1]
        assert top - bottom < 1.3 * np.ptp(values)  # follows the data, not a fixed 0 to 1
    assert not found, "\n".join(found)


def test_plots_keep_a_readable_height_with_labelled_axes(qtbot, four_runs):
    details = RunDetails()
    _shown(qtbot, details, 900, 60)  # squeezed: the plots keep their least height
    details.overlay(four_runs)
    qtbot.wait(1)
    for plot in (details.accuracy_plot, details.loss_plot):
        item = plot.getPlotItem()
        assert item.getAxis("bottom").labelText == "epoch" and item.getAxis("left").labelText
        assert item.vb.sceneBoundingRect().height() >= MIN_DATA_HEIGHT  # under 4 runs' legend
        assert not legend_problems(plot)
    assert np.isfinite(details.loss_plot.getPlotItem().vb.viewRange()).all()
