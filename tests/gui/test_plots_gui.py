"""Plots: legends under the data, never over it, with every entry shown; ranges that hold all
the data; a least height with labelled axes."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import QRectF

from studio.core.runs import folders as runs
from studio.core.runs.history import read_run
from studio.core.tasks.registry import task_for
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
    assert set(curves.plots) == {"loss", "score", "learning_rate"}  # a classifier's
    for metric, plot in curves.plots.items():
        _title, left, kinds = PLOTS[metric]
        assert len(plot.getPlotItem().legend.items) == len(kinds)
        assert plot.getPlotItem().getAxis("left").labelText == (
            "accuracy" if metric == "score" else left)
        found += [f"{metric}: {p}" for p in legend_problems(plot) + range_problems(plot)]
        assert max(plotted(plot)[0]) >= 2.9  # the last epoch's points are drawn
    assert not found, "\n".join(found)


def test_a_detectors_live_curves_draw_its_validation_map_and_loss_parts(qtbot):
    """A detection run's score is its validation mAP@0.5 (Keras logs no training form) and
    its loss's parts get a plot of their own, solid for training, dashed for validation;
    a classifier's run after it draws accuracy and no parts again."""
    curves = LiveCurves()
    curves.show_task(task_for("detection"))
    parts = [metric for metric, _ in task_for("detection").loss_parts]
    for epoch in range(1, 4):
        curves.add_batch(epoch - 0.5, {"loss": 2 / epoch})
        curves.add_epoch(epoch, {"loss": 2 / epoch, "val_loss": 2.5 / epoch,
                                 "val_map50": 0.3 * epoch, "val_map": 0.1 * epoch,
                                 **{m: i + 1 / epoch for i, m in enumerate(parts)},
                                 **{f"val_{m}": i + 2 / epoch for i, m in enumerate(parts)}})
    curves.redraw()
    _shown(qtbot, curves, 1200, 260)
    assert set(curves.plots) == {"loss", "score", "parts", "learning_rate"}
    score = curves.plots["score"].getPlotItem()
    assert score.titleLabel.text == "mAP@0.5" and score.getAxis("left").labelText == "mAP"
    # Keras logs no training mAP: only the validation curve is drawn and listed
    assert [label.text for _, label in score.legend.items] == ["validation"]
    assert curves.series["val_score"].y == pytest.approx([0.3, 0.6, 0.9])
    assert curves.series["train_score"].x == curves.series["batch_score"].x == []
    for i, metric in enumerate(parts):
        assert curves.series[f"part_train_{metric}"].y == pytest.approx(
            [i + 1 / e for e in (1, 2, 3)])
        assert curves.series[f"part_val_{metric}"].x == [1, 2, 3]
    legend = [label.text for _, label in curves.plots["parts"].getPlotItem().legend.items]
    assert legend == [words for _, words in task_for("detection").loss_parts]
    assert not legend_problems(curves.plots["parts"])

    curves.clear()
    curves.show_task(task_for("classification"))
    assert set(curves.plots) == {"loss", "score", "learning_rate"}
    assert curves.plots["score"].isVisible()
    assert score.titleLabel.text == "Accuracy" and not curves._plots["parts"].isVisible()
    assert [label.text for _, label in score.legend.items] == ["batches", "train", "validation"]
    assert not any(name.startswith("part_") for name in curves.series)


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


def test_the_runs_overlay_draws_a_detectors_validation_map(qtbot, tmp_path, four_runs):
    """A detection run's score curve is its mAP@0.5, titled so; a classifier's run overlaid
    after it, which logs no mAP, draws no score curve."""
    detector = write_run(tmp_path / "detection", epochs=3)
    rows = [{"epoch": e, "loss": 3 / e, "val_loss": 3.5 / e, "val_map50": 0.25 * e,
             "val_map": 0.1 * e} for e in (1, 2, 3)]
    with (detector / runs.METRICS_FILE).open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    details = RunDetails()
    _shown(qtbot, details, 1100, 300)
    details.overlay([read_run(detector), four_runs[0]])
    item = details.accuracy_plot.getPlotItem()
    assert item.titleLabel.text == "mAP@0.5 (validation)"
    assert [list(y) for _x, y in (c.getData() for c in item.listDataItems())] == [
        pytest.approx([0.25, 0.5, 0.75])]
    details.overlay(four_runs[:1])
    assert item.titleLabel.text == "Accuracy (validation)"


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
