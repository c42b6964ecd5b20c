"""Find learning rate: the range test run in the background, its loss drawn against the rate
(on a log axis) batch by batch, then smoothed with the suggestion marked, and one click to
use it.

The curve has a plot of its own, beside the controls in the finder's tab: the schedule plots
the rate against the epoch, the finder the loss against the rate, and axes shared by both
would mislead.
The plot is built (and pyqtgraph imported) when the first points come; they are drawn from a
timer, as the training's curves are, not on every batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import Event
from studio.core.hardware.devices import DeviceDiscovery
from studio.core.runs.folders import runs_root
from studio.core.training.lr_finder import (
    EXPLODED,
    LrFinding,
    RangeTest,
    find_learning_rate,
)
from studio.gui.training.curves import REDRAW_MS, Series
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.jobs import JobSlot

if TYPE_CHECKING:
    import pyqtgraph as pg

PROGRESS_STEPS = 1000
_ERROR_STYLE = "color: #b3261e;"
_CURVE_PEN = {"color": "#1a73e8", "width": 2}  # pyqtgraph's mkPen arguments
_MARK_PEN = {"color": "#e8710a", "width": 1, "style": Qt.PenStyle.DotLine}
_PLOT_HEIGHT = 150
_CONTROLS_WIDTH = 230
TRYING = "One batch at each rate, growing; the suggestion comes when the test ends."
TRAINING = "A run is training: find the rate when it ends"
"""Why the test waits: a run and the test would share the devices, and slow each other."""
_ENDED = {"finished": "every batch ran", "diverged": "the loss exploded",
          "stopped": "cancelled"}


def rate_text(rate: float) -> str:
    """A rate as a person types it: two significant digits (``3.2e-3``, ``0.05``)."""
    mantissa, marker, exponent = f"{rate:.2g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if marker else mantissa


class LrFinderView(QWidget):
    """*Find learning rate*, its progress and Cancel, the loss against the rate, and *Use …*
    which sets the suggested rate as one undoable edit. ``trains`` says whether a run trains
    now: the test waits for it to end."""

    def __init__(self, doc: ProjectDocument, discovery: DeviceDiscovery,
                 trains: Callable[[], bool] = lambda: False) -> None:
        super().__init__()
        self.doc = doc
        self.discovery = discovery
        self.trains = trains
        self.finding: LrFinding | None = None
        """What the last test found (None before any)."""
        self.job = JobSlot(self)
        self.job.event.connect(self._on_event)
        self.job.succeeded.connect(self._on_found)
        self.job.failed.connect(self._on_failed)
        self.job.finished.connect(self._on_ended)
        self.find = QPushButton("Find learning rate")
        self.find.setObjectName("find-learning-rate")
        self.find.clicked.connect(self.start)
        self.cancel = QPushButton("Cancel")
        self.cancel.setObjectName("cancel-lr-finder")
        self.cancel.setToolTip("Stop after the current batch and show the curve so far")
        self.cancel.clicked.connect(self.job.stop)
        self.use = QPushButton()
        self.use.setObjectName("use-learning-rate")
        self.use.clicked.connect(self.use_suggestion)
        self.progress = QProgressBar()
        self.progress.setRange(0, PROGRESS_STEPS)
        self.progress.setTextVisible(True)
        self.status = QLabel()
        self.status.setObjectName("lr-finder-status")
        self.status.setWordWrap(True)
        self.plot: pg.PlotWidget | None = None
        """The loss against the rate, built with the first points."""
        self._curve: pg.PlotDataItem | None = None
        self.points = Series(self._build_plot)
        """Each batch's rate and loss as the test goes, then the smoothed loss once it ends."""
        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self._redraw)
        self.mark: pg.InfiniteLine | None = None
        """The suggested rate's line in the plot (at its log10)."""
        # the controls in a column beside the plot: under them, the plot had no room in the
        # Training dock's tab and scrolled out of view, even at 1600 × 1000
        buttons = QHBoxLayout()
        for button in (self.cancel, self.use):
            buttons.addWidget(button)
        buttons.addStretch(1)
        controls = QWidget()
        controls.setMaximumWidth(_CONTROLS_WIDTH)
        column = QVBoxLayout(controls)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.find)
        column.addLayout(buttons)
        column.addWidget(self.progress)
        column.addWidget(self.status)
        column.addStretch(1)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.addWidget(controls, 0, Qt.AlignmentFlag.AlignLeft)
        doc.changed.connect(self.refresh)
        self.refresh()

    @property
    def curve(self) -> pg.PlotDataItem | None:
        """The loss against the rate: each batch's while a test runs, smoothed once it ends."""
        return self._curve

    def is_running(self) -> bool:
        """True from Find until the test's last signal has been delivered."""
        return self.job.busy()

    def why_not(self) -> str:
        """Why a test cannot start now, in a sentence (the model cannot be trained, or a run
        trains); empty if it can, or runs already."""
        analysis = self.doc.analysis()
        if not analysis.ok:
            return f"Cannot find a rate: {analysis.reason}"
        return TRAINING if self.trains() else ""

    def refresh(self) -> None:
        """Offer Find while the model can be trained and neither a test nor a run goes on,
        Cancel while a test does, and Use once a suggestion differs from the project's
        rate."""
        running = self.is_running()
        reason = self.why_not()
        self.find.setEnabled(not reason and not running)
        test = RangeTest()
        self.find.setToolTip(
            reason or f"A short run with the learning rate growing each batch from "
            f"{test.start:g} to {test.end:g} (at most {test.batches} batches), the loss drawn "
            "against the rate and the rate where it falls fastest suggested. Nothing is "
            "saved: no run, no checkpoint")
        self.cancel.setVisible(running)
        self.progress.setVisible(running)
        suggestion = self.finding.suggestion if self.finding is not None else None
        self.use.setVisible(suggestion is not None and not running)
        if suggestion is not None:
            self.use.setText(f"Use {rate_text(suggestion)}")
            self.use.setToolTip(f"Set the learning rate to {rate_text(suggestion)} (Ctrl+Z "
                                "undoes it)")
            self.use.setEnabled(
                float(rate_text(suggestion)) != self.doc.project.training.learning_rate)

    def start(self) -> None:
        """Run the range test on a snapshot of the project."""
        if self.is_running() or self.why_not():
            return
        self.status.setStyleSheet("")
        self.status.setText("Loading the data…")
        self.progress.setValue(0)
        self.progress.setFormat("Starting…")
        self.points.clear()
        if self.mark is not None:
            self.mark.hide()
        self.timer.start()
        self.job.start(partial(find_learning_rate, self.doc.project.copy(),
                               runs_root(self.doc.place), discovery=self.discovery))
        self.refresh()

    def use_suggestion(self) -> None:
        """Set the learning rate to the suggestion, as it is shown: one undoable edit."""
        if self.finding is None or self.finding.suggestion is None:
            return
        rate = float(rate_text(self.finding.suggestion))
        self.doc.edit(f"Set learning rate to {rate_text(rate)}",
                      lambda p: setattr(p.training, "learning_rate", rate))

    @Slot(object)
    def _on_event(self, event: Event) -> None:
        if event["type"] != "progress":
            return
        if "loss" in event:  # a batch's point, drawn at the next tick
            self.points.append(event["learning_rate"], event["loss"])
            if len(self.points.x) == 1:
                self.status.setText(TRYING)
        if not self.job.stop_requested():
            self.progress.setFormat(f"{event['what']}: {event['done']:,} of {event['total']:,}")
            self.progress.setValue(round(event["done"] / max(event["total"], 1)
                                         * PROGRESS_STEPS))

    @Slot(object)
    def _on_found(self, finding: LrFinding) -> None:
        self.finding = finding
        how = f"{len(finding.rates)} batches, {_ENDED[finding.status]}"
        if finding.suggestion is not None:
            self.status.setText(f"The loss falls fastest at {rate_text(finding.suggestion)} "
                                f"({how}).")
        elif finding.status == "stopped":
            self.status.setText(f"No suggestion: {how} before the loss clearly fell.")
        else:
            self.status.setText(f"No suggestion: the loss did not clearly fall ({how}).")
        self.points.replace(finding.rates, finding.smoothed)
        self._redraw()
        if self.mark is not None:
            self.mark.setVisible(finding.suggestion is not None)
            if finding.suggestion is not None:
                self.mark.setValue(math.log10(finding.suggestion))  # a log axis places by log10

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.status.setStyleSheet(_ERROR_STYLE)
        self.status.setText(message)

    @Slot()
    def _on_ended(self) -> None:
        self.timer.stop()
        self._redraw()  # the points that came since the last tick, when the test failed
        self.refresh()

    def _redraw(self) -> None:
        """Draw the points that came since the last tick (called by the timer)."""
        if not self.points.dirty or not self.points.x:
            return
        if self.plot is None:
            self._build_plot()  # which draws the points so far
        self.points.draw()
        self.plot.autoRange()
        values = self.points.y
        low = min(values)
        if low > 0:
            # up to the loss it started at (or the test's own ceiling): the loss it exploded to
            # would flatten the fall that matters into the axis
            self.plot.setYRange(low, max(values[0], min(max(values), EXPLODED * low)),
                                padding=0.05)

    def _build_plot(self) -> None:
        """Build the plot, with the suggestion's line hidden, and draw the points so far."""
        import pyqtgraph as pg

        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("lr-finder-plot")
        self.plot.setTitle("Loss against the learning rate", color="#202124", size="9pt")
        self.plot.setLabel("bottom", "learning rate")
        self.plot.setLabel("left", "loss")
        self.plot.setLogMode(x=True, y=False)
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.setMenuEnabled(False)
        self.plot.setMinimumHeight(_PLOT_HEIGHT)
        # the tab's scroll area sizes a page with wrapped text by its parts' size hints, and
        # pyqtgraph hints 480 px: the plot takes the room there is, from its minimum up
        self.plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        self.plot.setToolTip("The loss at each batch's learning rate, smoothed once the test "
                             "ends; the dotted line marks the suggested rate")
        self._curve = self.plot.plot(pen=pg.mkPen(**_CURVE_PEN), antialias=True)
        self.mark = pg.InfiniteLine(angle=90, pen=pg.mkPen(**_MARK_PEN))
        self.mark.hide()
        self.plot.addItem(self.mark)
        self.row.addWidget(self.plot, 1)
        self.points.attach(self._curve)

