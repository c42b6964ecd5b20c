"""The details of the runs chosen in the run history: their curves overlaid, the settings
that differ between two, or how their image-folder dataset changed from one to the other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QWidget,
)

from studio.core.base.messages import count, plural
from studio.core.runs.folders import read_fingerprint
from studio.core.runs.history import RunSummary, config_diff, read_metrics
from studio.core.tasks.registry import TASKS
from studio.core.tasks.task import Curve
from studio.gui.widgets.plot_style import epoch_plot

MAX_OVERLAID = 12
"""Curves of at most this many runs are overlaid at once."""
LEGEND_COLUMNS = 4
SCORE_TITLE = "{} (validation)"


def scored_curve(rows: list[dict[str, float]]) -> Curve | None:
    """The score a task draws that a run's ``rows`` of metrics hold (accuracy, mean absolute
    error, mAP@0.5), or None."""
    for task in TASKS.values():
        curve = task.curve
        if curve and any(f"val_{curve.metric}" in row or curve.metric in row for row in rows):
            return curve
    return None


CURVE_COLORS = ("#1a73e8", "#e8710a", "#188038", "#d93025", "#9334e6", "#12b5cb",
                "#e52592", "#795548", "#5f6368", "#f9ab00")


def _value_text(value: Any) -> str:
    if value is None:
        return "—"
    return value if isinstance(value, str) else json.dumps(value)


NO_FINGERPRINT = ("{runs} recorded no fingerprint of {their} dataset (runs of data other "
                  "than an image folder, and runs of earlier versions, keep none): how the "
                  "dataset changed cannot be told.")
FINGERPRINT_SETTING = "dataset_fingerprint"
"""The run config's hash of the data it trained on: it differs whenever the data changed."""


class RunDetails(QTabWidget):
    """Three tabs: the curves of several runs, the differences between two, and how the
    dataset changed between two."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("history-details")
        self.accuracy_plot = epoch_plot(SCORE_TITLE.format("Accuracy"), left="score",
                                         legend_columns=LEGEND_COLUMNS)
        self.loss_plot = epoch_plot("Loss (solid: validation, dashed: training)", left="loss",
                                     legend_columns=LEGEND_COLUMNS)
        curves = QWidget()
        curves_layout = QHBoxLayout(curves)
        curves_layout.setContentsMargins(0, 0, 0, 0)
        curves_layout.addWidget(self.accuracy_plot)
        curves_layout.addWidget(self.loss_plot)
        self.differences = QTableWidget(0, 3)
        self.differences.setObjectName("history-differences")
        self.differences.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.differences.verticalHeader().hide()
        self.differences.horizontalHeader().setStretchLastSection(True)
        self.differences.setHorizontalHeaderLabels(["Setting", "", ""])
        self.differences.setColumnWidth(0, 220)
        self.differences.setColumnWidth(1, 240)
        self.changes = QPlainTextEdit()
        self.changes.setObjectName("history-dataset-changes")
        self.changes.setReadOnly(True)
        self.changes.setPlaceholderText("Select two runs, or one (compared with the run before "
                                        "it), then Dataset changes.")
        self.addTab(curves, "Curves")
        self.addTab(self.differences, "Differences")
        self.addTab(self.changes, "Dataset")
        self.setTabToolTip(2, "Images added, moved and removed per class between two runs "
                              "of an image folder")
        self.overlaid: list[Path] = []
        """The folders of the runs whose curves are drawn."""
        self.compared: list[Path] = []
        """The folders of the two runs whose differences are listed."""
        self.changed: list[Path] = []
        """The folders of the two runs whose dataset changes are shown."""

    def keep_listed(self, listed: set[Path]) -> bool:
        """Clear the curves and the differences drawn for runs that are not ``listed``
        (deleted, moved, or another project's); True if anything was cleared."""
        cleared = False
        if any(path not in listed for path in self.overlaid):
            for plot in (self.accuracy_plot, self.loss_plot):
                plot.clear()
            self.overlaid, cleared = [], True
        if any(path not in listed for path in self.compared):
            self.differences.setRowCount(0)
            self.differences.setHorizontalHeaderLabels(["Setting", "", ""])
            self.compared, cleared = [], True
        if any(path not in listed for path in self.changed):
            self.changes.clear()
            self.changed, cleared = [], True
        return cleared

    def overlay(self, chosen: list[RunSummary]) -> str:
        """Draw the curves of ``chosen`` (at most ``MAX_OVERLAID``) together, one colour per
        run; what was drawn, in words."""
        shown = chosen[:MAX_OVERLAID]
        for plot in (self.accuracy_plot, self.loss_plot):
            plot.clear()
        self.overlaid = [run.path for run in shown]
        empty, titled = 0, None
        for i, run in enumerate(shown):
            rows = read_metrics(run.path)
            empty += not rows
            color = CURVE_COLORS[i % len(CURVE_COLORS)]
            epochs = [row["epoch"] for row in rows]
            curve = titled or scored_curve(rows)
            if curve is not None:  # the first run's score, which runs of other tasks lack
                titled = curve
                score = curve.metric
                score = f"val_{score}" if any(f"val_{score}" in r for r in rows) else score
                self._curve(self.accuracy_plot, rows, epochs, score, run.id, color)
            self._curve(self.loss_plot, rows, epochs, "val_loss", run.id, color)
            self._curve(self.loss_plot, rows, epochs, "loss", None, color, dashed=True)
        self.accuracy_plot.setTitle(SCORE_TITLE.format(titled.title if titled else "Score"))
        self.setCurrentIndex(0)
        drawn, more = len(shown) - empty, len(chosen) - len(shown)
        notes = [f"Curves of {count(drawn, 'run')}."]
        if empty:
            notes.append(f"{empty} ended before {plural(empty, 'its', 'their')} first epoch.")
        if more:
            notes.append(f"{more} more selected are left out (at most {MAX_OVERLAID}).")
        return " ".join(notes)

    @staticmethod
    def _curve(plot: pg.PlotWidget, rows: list[dict[str, float]], epochs: list[int],
               key: str, name: str | None, color: str, dashed: bool = False) -> None:
        points = [(x, row[key]) for x, row in zip(epochs, rows, strict=True) if key in row]
        if not points:
            return
        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
        xs, ys = zip(*points, strict=True)
        plot.plot(list(xs), list(ys), name=name, pen=pg.mkPen(color, width=2, style=style),
                  symbol=None if dashed else "o", symbolSize=5, symbolBrush=color,
                  symbolPen=None)

    def compare(self, a: RunSummary, b: RunSummary, dataset_shown: bool = False) -> str:
        """List the settings that differ between runs ``a`` and ``b``; how many, in words.
        ``dataset_shown``: the Dataset tab lists how their dataset changed, so the hash of
        their dataset is left out (else every change of the data would be a setting too)."""
        found = [row for row in config_diff(a.path, b.path)
                 if not (dataset_shown and row[0] == FINGERPRINT_SETTING)]
        self.compared = [a.path, b.path]
        self.differences.setHorizontalHeaderLabels(["Setting", a.id, b.id])
        self.differences.setRowCount(len(found))
        for row, values in enumerate(found):
            for column, value in enumerate(values):
                item = QTableWidgetItem(value if column == 0 else _value_text(value))
                item.setToolTip(item.text())
                self.differences.setItem(row, column, item)
        self.setCurrentIndex(1)
        return (f"{count(len(found), 'setting')} {plural(len(found), 'differs', 'differ')}."
                if found else
                "The two runs have the same settings.")

    def dataset_changes(self, before: RunSummary, after: RunSummary) -> str | None:
        """List how the dataset changed from run ``before`` to run ``after`` in the Dataset
        tab: images added, moved and removed per class, from the fingerprints the runs
        recorded. What changed, in short; None if a run recorded none (the tab says so)."""
        # Imported here: it reads images, which the window's first paint must not load
        from studio.core.data.editable.fingerprint import dataset_changes

        self.changed = [before.path, after.path]
        prints = [read_fingerprint(run.path) for run in (before, after)]
        missing = [run.id for run, found in zip((before, after), prints, strict=True)
                   if found is None]
        if missing:
            self.changes.setPlainText(NO_FINGERPRINT.format(
                runs=" and ".join(missing), their=plural(len(missing), "its", "their")))
            return None
        changes = dataset_changes(*prints)
        self.changes.setPlainText(f"From {before.id} to {after.id}:\n\n{changes.text()}")
        if not changes.classes:
            return "The dataset did not change between them."
        return (f"Dataset: {count(changes.added, 'image')} added, {changes.removed:,} "
                f"removed, {len(changes.moves):,} moved between classes (see Dataset).")
