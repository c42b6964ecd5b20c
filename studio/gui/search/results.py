"""The trials of the search the Search tab shows: the trial table, the overlaid curves, the
parallel coordinates and, for several objectives, the Pareto front; and "Apply to project",
which copies the values of the trial picked in the table or on the front (else the best) into
the design."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QPushButton, QSplitter, QVBoxLayout, QWidget

from studio.core.base.events import Event
from studio.core.model.layout import complete_positions, place_new_nodes
from studio.core.project.document import Project, SearchSettings
from studio.core.search.space import (
    SearchSpaceError,
    apply_values,
    metric_choices,
    param_for,
    target_label,
)
from studio.gui.search.parallel_coordinates import ParallelCoordinates
from studio.gui.search.pareto import ParetoPlot
from studio.gui.search.plots import TrialCurves
from studio.gui.search.trial_table import TrialTable, metric_title
from studio.gui.widgets.dimension_dialog import format_value
from studio.gui.widgets.document import ProjectDocument


class SearchResults(QWidget):
    """Shows a search's trials as its events arrive, and applies the picked (else the best)
    one's values."""

    message = Signal(str)
    """A short note for the status bar."""
    run_requested = Signal(str)
    """The person asked to see a trial's run (its folder) in the run history."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.table = TrialTable()
        self.table.setToolTip("Double-click a trial (or press Enter) to see its run in the Runs "
                              "dock; click a header to sort")
        self.table.activated.connect(self._trial_activated)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._picked())
        self.curves = TrialCurves()
        self.parallel = ParallelCoordinates()
        self.pareto = ParetoPlot()
        self.pareto.trial_clicked.connect(self.select_trial)
        self.pareto.hide()
        self.apply_button = QPushButton("Apply best to project")
        self.apply_button.setObjectName("apply-best")
        self.apply_button.clicked.connect(self.apply_chosen)
        plots = QSplitter(Qt.Orientation.Horizontal)
        plots.addWidget(self.curves)
        plots.addWidget(self.parallel)
        plots.addWidget(self.pareto)
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.addWidget(self.table)
        vertical.addWidget(plots)
        vertical.setSizes([200, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(vertical)

    def begin(self, project: Project, records: list[dict[str, Any]] | None = None) -> None:
        """Show the trials of a search of ``project`` (as searched): ``records`` of its ended
        trials, or none yet."""
        search = project.search
        self.table.trials.start([d.target for d in search.dimensions], search.metric,
                                search.minimize, records or [], search.objectives)
        self.pareto.clear()
        self.pareto.setVisible(bool(search.objectives))
        self.curves.clear()
        self.curves.show_metric(search.metric, metric_choices(project))
        for record in records or []:
            self.curves.set_epochs(record["number"], _numbered(record["epochs"]))

    def handle(self, event: Event) -> str:
        """Show a search event in the table and curves; its kind, which says what changed."""
        kind = event["type"]
        trials = self.table.trials
        if kind == "search_start":
            trials.start(trials.targets, trials.metric, trials.minimize, event.get("done", []),
                         trials.objectives)
            for record in event.get("done", []):
                self.curves.set_epochs(record["number"], _numbered(record.get("epochs", [])))
        elif kind == "trial_start":
            trials.update({"number": event["number"], "params": event["params"],
                           "run_dir": event.get("run_dir", ""), "status": "running",
                           "pid": event.get("pid"), "started": time.monotonic()})
            self.curves.set_epochs(event["number"], [])
        elif kind == "trial_epoch":
            number = event["number"]
            trial = trials.trial(number)
            elapsed = time.monotonic() - trial["started"] if trial and "started" in trial else None
            trials.add_epoch(number, event["epoch"], event["metrics"], elapsed)
            self.curves.add_epoch(number, {"epoch": event["epoch"], **event["metrics"]})
        elif kind == "trial_end":
            record = {k: v for k, v in event.items() if k != "type"}
            trials.update(record)
            self.curves.set_epochs(record["number"], _numbered(record.get("epochs", [])))
        return kind

    def trial_ended(self, search: SearchSettings) -> None:
        """Mark the best trial and draw the trials of a search with ``search``'s settings
        (and their Pareto front, for several objectives)."""
        model = self.table.trials
        self.curves.set_best(model.best)
        self.draw_parallel(search)
        if search.objectives:
            self.pareto.show_trials(search.metric, search.objectives, model.trials, model.front)
        self.show_apply()

    def draw_parallel(self, search: SearchSettings) -> None:
        """Draw every trial across the parallel coordinates of ``search``'s dimensions."""
        model = self.table.trials
        self.parallel.show_trials([(target_label(d.target), d) for d in search.dimensions],
                                  metric_title(search.metric), model.trials,
                                  search.minimize, model.best)

    def ended_and_running(self) -> tuple[int, int]:
        """How many trials have ended, and how many run."""
        trials = self.table.trials.trials
        ended = sum(t["status"] != "running" for t in trials)
        return ended, len(trials) - ended

    def values_text(self, trial: dict[str, Any]) -> str:
        """A trial's values: ``learning rate 0.01, units 8``."""
        return ", ".join(f"{target_label(t).lower()} {format_value(v)}"
                         for t, v in trial.get("params", {}).items())

    def _trial_activated(self, index) -> None:
        run_dir = self.table.trial_at(index).get("run_dir")
        if run_dir:
            self.run_requested.emit(run_dir)

    def best_trial(self) -> dict[str, Any] | None:
        """The best finished trial's record, or None."""
        model = self.table.trials
        return model.trial(model.best) if model.best is not None else None

    def select_trial(self, number: int) -> None:
        """Select trial ``number``'s row in the table, and show it."""
        model = self.table.trials
        row = model.row_of(number)
        if row < 0:
            return
        index = self.table.proxy.mapFromSource(model.index(row, 0))
        self.table.selectRow(index.row())
        self.table.scrollTo(index)

    def chosen_trial(self) -> dict[str, Any] | None:
        """The trial "Apply" copies: the finished trial selected (in the table or on the
        front), else the best."""
        picked = self.table.selected()
        if picked is not None and picked["status"] == "finished":
            return picked
        return self.best_trial()

    def _picked(self) -> None:
        """A row was picked (or none): ring its point on the front, offer to apply it."""
        picked = self.table.selected()
        self.pareto.mark(picked["number"] if picked is not None else None)
        self.show_apply()

    def show_apply(self) -> None:
        """Offer to apply the picked or best trial, once there is one."""
        chosen = self.chosen_trial()
        self.apply_button.setEnabled(chosen is not None)
        self.apply_button.setText(
            "Apply best to project" if chosen is None or chosen == self.best_trial()
            else f"Apply trial {chosen['number']} to project")
        self.apply_button.setToolTip(
            f"Set {self.values_text(chosen)} in the design (trial {chosen['number']}), in one "
            "step (Ctrl+Z undoes it); select another finished trial, in the table or on the "
            "front, to apply it instead" if chosen is not None else
            "Once a trial has finished, copies its values into the design: the best, or the "
            "one selected in the table or on the front")

    def apply_chosen(self) -> None:
        """Copy the chosen trial's values into the project as one undo step."""
        chosen = self.chosen_trial()
        if chosen is None:
            return
        values = chosen["params"]
        try:
            for target in values:
                param_for(self.doc.project, target)
        except SearchSpaceError as exc:
            self.message.emit(f"Cannot apply trial {chosen['number']}: {exc}")
            return

        def change(project: Project) -> None:
            applied = apply_values(project, values)
            project.positions = complete_positions(project.graph, project.positions)
            project.graph = applied.graph
            project.training = applied.training
            place_new_nodes(project.graph, project.positions)  # a repeated block's copies
            project.prune_positions()

        self.doc.edit(f"Apply search trial {chosen['number']}", change)
        self.message.emit(f"Applied trial {chosen['number']}: {self.values_text(chosen)}")


def _numbered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Epoch rows, numbered from 1 where they lack an ``epoch``."""
    return [{"epoch": i, **row} for i, row in enumerate(rows, start=1)]
