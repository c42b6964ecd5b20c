"""The training panel: settings, Start, Stop and Resume, progress, resource use and live
curves."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStyle,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import Event
from studio.core.base.messages import format_duration
from studio.core.base.runtime import loading, start_tensorflow
from studio.core.build.estimate import format_bytes
from studio.core.build.optimizers import schedule_curve
from studio.core.hardware.devices import DeviceDiscovery
from studio.core.runs.folders import answer_choices, checkpoints, runs_root
from studio.core.runs.history import iter_run_folders
from studio.core.search.space import training_target
from studio.core.tasks.registry import DEFAULT_TASK, task_for
from studio.core.training.imported_model import imported_model_run
from studio.core.training.trainer import resume, train
from studio.gui.training.curves import LiveCurves
from studio.gui.training.device_form import DeviceForm
from studio.gui.training.estimate_view import EstimateView
from studio.gui.training.lr_finder_view import LrFinderView
from studio.gui.training.optimizer_form import NOMINAL_STEPS_PER_EPOCH, OptimizerForm
from studio.gui.training.stopping_form import StoppingForm
from studio.gui.widgets.desktop import open_folder
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.forms import VerticalScrollArea, scrolled_body, unscrolled_height
from studio.gui.widgets.jobs import JobSlot
from studio.gui.widgets.search_button import SearchButton
from studio.gui.widgets.sync import show_value

PROGRESS_STEPS = 1000
FINDER_TAB = 1
"""The training settings' tab of the learning-rate finder."""
FINDING = "The learning-rate finder is running: train when it ends (or cancel it)"
"""Why no run starts: it and the finder would share the devices, and slow each other."""
FIND_TIP = ("Find a good learning rate: a short run with the rate growing each batch (on the "
            "Rate finder tab)")
RESUME_TIP = "Continue the last run from its last checkpoint"
STARTS = {"random": "Random weights", "imported": "Imported weights",
          "run": "A run's model"}
"""The Start from choices: what training starts from, in words."""


def _train_task(project, root, discovery):
    def task(on_event, stop):
        return train(project, root, on_event, stop, discovery=discovery)

    return task


def _imported_task(project, root, discovery):
    def task(on_event, stop):
        return imported_model_run(project, root, on_event, stop, discovery=discovery)

    return task


def _resume_task(run_dir, discovery):
    def task(on_event, stop):
        return resume(run_dir, on_event, stop, discovery=discovery)

    return task


def _warm_up(on_event, stop) -> None:
    start_tensorflow()  # device settings TensorFlow takes only before it starts
    with loading():
        import keras  # noqa: F401 - loading it early makes Start respond at once


def usage_text(event: dict) -> str:
    """Resource use from a batch event: CPU, memory and, where read, each GPU."""
    parts = [f"CPU {event['cpu_percent']:.0f}%"] if "cpu_percent" in event else []
    if "memory_bytes" in event:
        parts.append(f"memory {format_bytes(event['memory_bytes'])}")
    index = 0
    while f"gpu{index}_percent" in event or f"gpu{index}_memory_bytes" in event:
        gpu = [f"{event[f'gpu{index}_percent']:.0f}%"] if f"gpu{index}_percent" in event else []
        if f"gpu{index}_memory_bytes" in event:
            gpu.append(format_bytes(event[f"gpu{index}_memory_bytes"]))
        parts.append(f"GPU {index} " + " ".join(gpu))
        index += 1
    return " · ".join(parts)


def _spin(low: int, high: int, tip: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setToolTip(tip)
    return spin


class TrainingPanel(QWidget):
    """Runs training on a worker thread and shows its progress; never blocks the window."""

    run_started = Signal()
    """A run has started (or resumed)."""
    run_finished = Signal(str)
    """A run ended: ``finished``, ``stopped`` or ``failed``."""
    message = Signal(str)
    """A short note for the status bar."""

    def __init__(self, doc: ProjectDocument, discovery: DeviceDiscovery) -> None:
        super().__init__()
        self.doc = doc
        self.discovery = discovery
        self.job = JobSlot(self)
        self.job.event.connect(self._on_event)
        self.job.succeeded.connect(self._on_succeeded)
        self.job.failed.connect(self._on_failed)
        self.job.finished.connect(self._on_done)
        self.warmup = JobSlot(self)
        self.run_dir = ""
        self.last_error = ""
        self.outcome = ""
        """How the last run ended: finished, stopped or failed (empty before any run)."""
        self.notes: list[str] = []
        """What loading the data skipped or changed in the current run."""
        self.test_scores: dict[str, float] = {}
        """The last run's scores on the held-out test split, if it had one."""
        self.end_note = ""
        """Why the last run ended before its last epoch, when it did so by itself."""
        self.result = ""
        """The last run's outcome in one line: how it ended, how long it took, its scores."""
        self._task = task_for(DEFAULT_TASK)
        """The task of the last run (its start event says), which words its scores."""
        self._started_at = 0.0

        self.batch_size = _spin(1, 65536, "Samples per weight update")
        self.batch_size.valueChanged.connect(lambda v: self._edit("batch size", "batch_size", v))
        self.epochs = _spin(1, 100000, "Passes over the training data")
        self.epochs.valueChanged.connect(lambda v: self._edit("epochs", "epochs", v))
        self.seed = _spin(0, 2**31 - 1, "Seeds the initial weights, the shuffling and the "
                          "augmentation: the same seed repeats a run")
        self.seed.valueChanged.connect(lambda v: self._edit("seed", "seed", v))
        self.start_from = QComboBox()
        self.start_from.setObjectName("start-from")
        for value, text in STARTS.items():
            self.start_from.addItem(text, value)
        self.start_from.activated.connect(self._start_from_picked)
        self.start_model = QComboBox()
        self.start_model.setObjectName("start-model")
        self.start_model.setToolTip("The run's final model or checkpoint whose weights the "
                                    "model starts from (layers of the same name and shapes)")
        self.start_model.activated.connect(
            lambda: self._edit("start model", "start_model", self.start_model.currentData()))
        self._run_models: list[tuple[str, str]] | None = None
        """Each run's final model and checkpoints as (text, start_model value), newest run
        first; listed again once a run ends or another project shows."""

        style = self.style()
        self.start_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay),
                                        "Start")
        self.start_button.setObjectName("start")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_MediaStop),
                                       "Stop")
        self.stop_button.setObjectName("stop")
        self.stop_button.setToolTip("Stop after the current batch and keep the run (Shift+F5)")
        self.stop_button.clicked.connect(self.stop)
        self.resume_button = QPushButton(
            style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward), "Resume")
        self.resume_button.setObjectName("resume")
        self.resume_button.clicked.connect(lambda: self.resume(Path(self.run_dir)))
        self.imported_button = QPushButton("Imported Model")
        self.imported_button.setObjectName("imported-model")
        self.imported_button.setToolTip(
            "Keep the imported model with its weights as a run, untrained, so Try, Evaluate "
            "and export answer with it (its data is read for the preprocessing)")
        self.imported_button.clicked.connect(self.keep_imported_model)
        self.progress = QProgressBar()
        self.progress.setRange(0, PROGRESS_STEPS)
        self.progress.setValue(0)
        self.progress.setFormat("Ready")
        self.progress.setTextVisible(True)
        self.status = QLabel()
        self.status.setObjectName("training-status")
        self.status.setWordWrap(True)
        self.open_button = QPushButton(
            style.standardIcon(QStyle.StandardPixmap.SP_DirOpenIcon), "Open Folder")
        self.open_button.setObjectName("open-run-folder")
        self.open_button.clicked.connect(self._open_folder)
        self.open_button.hide()  # until there is a run
        self.usage = QLabel()
        """Resource use while training, for the window's status bar."""
        self.usage.setObjectName("resource-use")
        self.usage.setToolTip("This process's share of all CPU cores, its memory, and each "
                              "GPU's use and memory where they can be read")
        self.curves = LiveCurves()

        self.optimizer_form = OptimizerForm(doc)
        self.lr_finder = LrFinderView(doc, discovery, trains=self.is_running)
        # a run and the finder train on the same devices: each waits for the other to end
        for slot, view in ((self.job, self.lr_finder), (self.lr_finder.job, self)):
            slot.started.connect(view.refresh)
            slot.finished.connect(view.refresh)
        # Find… beside the rate it finds opens the finder's tab and starts it: the finder in a
        # tab of its own, as its plot under the form stretched the schedule's beside it
        self.find_rate_button = QToolButton()
        self.find_rate_button.setText("Find…")
        self.find_rate_button.setObjectName("find-learning-rate")
        self.find_rate_button.clicked.connect(self._find_learning_rate)
        self.optimizer_form.learning_rate.parentWidget().layout().addWidget(
            self.find_rate_button)
        self.stopping_form = StoppingForm(doc)
        self.device_form = DeviceForm(doc, discovery)
        self.estimate_view = EstimateView(doc, discovery)
        self.device_form.devices_found.connect(self.estimate_view.set_devices)
        self.settings = QTabWidget()
        self.settings.setObjectName("training-settings")
        for widget, title, tip in (
                (self.optimizer_form, "Optimizer", "Optimizer, learning rate and schedule"),
                (self.lr_finder, "Rate finder", "A short run with the rate growing each batch, "
                 "which suggests a learning rate"),
                (self.stopping_form, "Stopping", "Early stopping and checkpoints"),
                (self.device_form, "Device", "CPU or GPUs, precision and determinism"),
                (self.estimate_view, "Estimate", "Memory and time before training")):
            self.settings.addTab(VerticalScrollArea(widget), title)  # never sideways
            self.settings.setTabToolTip(self.settings.count() - 1, tip)

        self.search_buttons = {path: SearchButton(doc, training_target(path))
                               for path in ("batch_size", "epochs")}
        """The Search… buttons of the batch size and the epochs."""
        basics = QHBoxLayout()
        for label, widget, path in (("Batch size", self.batch_size, "batch_size"),
                                    ("Epochs", self.epochs, "epochs"), ("Seed", self.seed, "")):
            basics.addWidget(QLabel(label))
            basics.addWidget(widget)
            if path:
                basics.addWidget(self.search_buttons[path])
        basics.addWidget(QLabel("Start from"))
        basics.addWidget(self.start_from)
        basics.addWidget(self.start_model)
        basics.addWidget(self.progress, 1)  # beside Start: a short dock leaves the curves room
        for button in (self.start_button, self.stop_button, self.resume_button,
                       self.imported_button, self.open_button):
            basics.addWidget(button)
        live = QWidget()
        live_layout = QVBoxLayout(live)
        live_layout.setContentsMargins(0, 0, 0, 0)
        live_layout.addWidget(self.status)  # the whole width: one line for an epoch's scores
        live_layout.addWidget(self.curves, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.settings)
        self.splitter.addWidget(live)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([560, 900])
        layout = QVBoxLayout(scrolled_body(self))  # a small window scrolls the page
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(basics)
        layout.addWidget(self.splitter, 1)
        doc.changed.connect(self.refresh)
        for signal in (doc.replaced, doc.path_changed, self.run_finished):
            signal.connect(self._forget_run_models)
        self.refresh()

    def _find_learning_rate(self) -> None:
        """Show the learning-rate finder's tab and start it."""
        self.settings.setCurrentIndex(FINDER_TAB)
        self.lr_finder.start()

    def unscrolled_height(self) -> int:
        """The least height that shows the panel without scrolling, with room for a second
        line of status (a run's notes, or why it cannot start)."""
        return unscrolled_height(self) + self.status.fontMetrics().lineSpacing()

    def is_running(self) -> bool:
        """True from Start until the run's last signal has been delivered."""
        return self.job.busy()

    def _busy(self) -> bool:
        """True while a run trains or the learning-rate finder runs: no other run starts."""
        return self.is_running() or self.lr_finder.is_running()

    def warm_up(self) -> None:
        """Load TensorFlow and look for devices in the background, so the first Start is
        quick (called once the window shows)."""
        self.device_form.look_for_devices()
        self.estimate_view.look_for_devices()
        self.warmup.start(_warm_up)

    def _edit(self, label: str, field: str, value) -> None:
        self.doc.edit(f"Set {label}", lambda p: setattr(p.training, field, value),
                      merge_key=f"training.{field}")

    def refresh(self) -> None:
        """Sync editors and the Start and Resume buttons with the document."""
        training = self.doc.project.training
        for widget, value in ((self.batch_size, training.batch_size),
                              (self.epochs, training.epochs), (self.seed, training.seed)):
            show_value(widget, value)
        self._show_start_from()
        analysis = self.doc.analysis()
        running = self.is_running()
        finding = FINDING if self.lr_finder.is_running() else ""
        self.start_button.setEnabled(analysis.ok and not self._busy())
        self.stop_button.setEnabled(running)
        self.resume_button.setEnabled(not self._busy() and self._resumable())
        self.resume_button.setToolTip(finding or RESUME_TIP)
        self.imported_button.setVisible(self.doc.project.weights is not None)
        self.imported_button.setEnabled(analysis.ok and not self._busy())
        cannot_find = self.lr_finder.why_not()
        self.find_rate_button.setEnabled(not cannot_find)  # while it runs, shows its tab
        self.find_rate_button.setToolTip(cannot_find or FIND_TIP)
        if not running and not self.curves.point_count():
            self.curves.show_task(task_for(self.doc.project.dataset.task))
            self._show_plan(training.epochs, self.optimizer_form.steps_per_epoch())
        if analysis.ok:
            self.start_button.setToolTip(finding or "Train the model in the background (F5)")
            if not running and not self.last_error:
                self.status.setStyleSheet("")
                self._say(self._idle_text())
        else:
            self.start_button.setToolTip(f"Cannot start: {analysis.reason}")
            self.status.setStyleSheet("color: #b3261e;")
            self._say(f"Cannot start: {analysis.reason}")

    def _show_start_from(self) -> None:
        """Show what training starts from; imported weights are offered only to a project
        that has them, a run's model once there is one (or while the project still says it
        starts from them, so the problem shows)."""
        training, weights = self.doc.project.training, self.doc.project.weights
        index = self.start_from.findData(training.start_from)
        if self.start_from.currentIndex() != index:
            self.start_from.setCurrentIndex(index)
        models = self._listed_run_models()
        for value, offered in (("imported", weights is not None), ("run", bool(models))):
            item = self.start_from.model().item(self.start_from.findData(value))
            item.setEnabled(offered or training.start_from == value)
        self.start_from.setToolTip(
            f"Fine-tune the imported model: start from its weights ({weights.path.name})"
            if weights is not None else "What the weights start from: random, or a run's "
            "final model or checkpoint. Import a Keras model (File > Import Keras Model) to "
            "start from its weights.")
        self.start_model.setVisible(training.start_from == "run")
        if training.start_from == "run":
            self.start_model.clear()
            for text, value in models:
                self.start_model.addItem(text, value)
            if self.start_model.findData(training.start_model) < 0:
                self.start_model.insertItem(0, f"{training.start_model} (not found)",
                                            training.start_model)
            self.start_model.setCurrentIndex(self.start_model.findData(training.start_model))

    def _listed_run_models(self) -> list[tuple[str, str]]:
        if self._run_models is None:
            root = runs_root(self.doc.place)
            self._run_models = [
                (f"{folder.name} · {text}", path.relative_to(root).as_posix())
                for folder in sorted((p for p, _ in iter_run_folders(root)), reverse=True)
                for text, path in answer_choices(folder)]
        return self._run_models

    def _forget_run_models(self) -> None:
        self._run_models = None
        self._show_start_from()

    def _start_from_picked(self) -> None:
        """Start from the choice picked; a run's model starts from the newest one listed
        until another is picked (one undoable edit)."""
        start = self.start_from.currentData()
        models = self._listed_run_models()

        def change(project) -> None:
            project.training.start_from = start
            if start == "run" and not project.training.start_model and models:
                project.training.start_model = models[0][1]

        self.doc.edit("Set start from", change)

    def _idle_text(self) -> str:
        if self.run_dir and self.result:
            return self.result
        return "Ready. Press Start (F5) to train."

    def _open_folder(self) -> None:
        problem = open_folder(self.run_dir)
        if problem:
            self.message.emit(problem)

    def _resumable(self) -> bool:
        """True if the last run ended before its last epoch and has a checkpoint."""

        return (bool(self.run_dir) and self.outcome in ("stopped", "failed")
                and bool(checkpoints(Path(self.run_dir))))

    def start(self) -> None:
        """Start training a snapshot of the current project."""
        if self._busy() or not self.doc.analysis().ok:
            return
        self._launch(_train_task(self.doc.project.copy(), runs_root(self.doc.place),
                                 self.discovery), "Preparing the run…")

    def train_again(self) -> str:
        """Start training the project as it is now (after corrections to its data, say);
        why it cannot start, or an empty string once it has."""
        if self.is_running():
            return "A run is under way: train again once it ends (or stop it)."
        if self.lr_finder.is_running():
            return f"{FINDING}."
        analysis = self.doc.analysis()
        if not analysis.ok:
            return f"Cannot train again: {analysis.reason}"
        self.start()
        return ""

    def keep_imported_model(self) -> bool:
        """Save the project's imported model, untrained, as a run (or find the one made
        earlier): Try, Evaluate and export then list it. False if it cannot start now (a
        run or the learning-rate finder is going on, or the model has problems)."""
        if self._busy() or not self.doc.analysis().ok:
            return False
        self._launch(_imported_task(self.doc.project.copy(), runs_root(self.doc.place),
                                    self.discovery), "Preparing the imported model…")
        return True

    def resume(self, run_dir: Path) -> None:
        """Continue ``run_dir`` from its last checkpoint (its curves go on from there)."""
        if self._busy():
            return
        self.run_dir = str(run_dir)
        self._launch(_resume_task(Path(run_dir), self.discovery),
                     f"Resuming {Path(run_dir).name}…")

    def _launch(self, task, text: str) -> None:
        self.last_error = ""
        self.end_note = ""
        self.result = ""
        self._started_at = time.monotonic()
        self.notes = []
        self.test_scores = {}
        self.curves.clear()
        self.usage.clear()
        self.progress.setValue(0)
        self.progress.setFormat("Starting: loading TensorFlow and data…")
        self.status.setStyleSheet("")
        self._say(text)
        self.job.start(task)
        self.refresh()
        self.run_started.emit()

    def stop(self) -> None:
        """Ask the run to stop after the current batch."""
        if self.job.busy():
            self.job.stop()
            self.stop_button.setEnabled(False)
            self.progress.setFormat("Stopping…")

    @Slot(object)
    def _on_event(self, event: Event) -> None:
        kind = event["type"]
        if kind == "progress" and not self.job.stop_requested():
            total = max(event["total"], 1)
            self.progress.setFormat(f"{event['what']}: {event['done']:,} of {event['total']:,}")
            self.progress.setValue(round(event["done"] / total * PROGRESS_STEPS))
        elif kind == "note":
            self.notes.append(event["text"])
        elif kind == "test":
            self.test_scores = {k: v for k, v in event.items() if k != "type"}
        elif kind == "start":
            self._show_run_dir(event["run_dir"])
            self._task = task_for(event["task"])
            self.curves.show_task(self._task)
            self.open_button.show()
            self.epochs_total = event["epochs"]
            self._show_start(event)
        elif kind == "batch":
            x = event["epoch"] - 1 + event["step"] / event["steps"]
            self.curves.add_batch(x, event)
            self.curves.add_rate(x, event["learning_rate"])
            self.usage.setText(usage_text(event))
            self.progress.setValue(round(event["progress"] * PROGRESS_STEPS))
            if not self.job.stop_requested():
                self.progress.setFormat(
                    f"Epoch {event['epoch']}/{self.epochs_total} · batch {event['step']}/"
                    f"{event['steps']} · {event['samples_per_sec']:,.0f} samples/s · "
                    f"ETA {format_duration(event['eta_sec'], 'clock')}"
                )
        elif kind == "epoch":
            self.curves.add_epoch(event["epoch"], event)
            logged = {k: v for k, v in event.items() if k not in ("type", "epoch", "seconds")}
            # the task's few telling scores on the line (a narrow dock keeps it to one), every
            # logged score in the tooltip
            summary = self._task.summary(logged) or ", ".join(
                self._task.score_text(k, v) for k, v in logged.items())
            self._say(f"Epoch {event['epoch']} of {self.epochs_total}: {summary}",
                      "\n".join(f"{k.replace('_', ' ')}: {v:.4f}" for k, v in logged.items()))

    def _say(self, text: str, details: str = "") -> None:
        """Show ``text`` on the status line, with ``details`` in its tooltip."""
        self.status.setText(text)
        self.status.setToolTip(details)

    def _show_run_dir(self, run_dir: str) -> None:
        self.run_dir = run_dir
        self.open_button.setToolTip(f"Show the run's folder: {run_dir}")

    def follow_moved(self, moved: Mapping[str, str]) -> None:
        """Show the last run where it is now if it moved (``moved``: old folder to new one),
        as a run does with its project when that is saved under a new name."""
        new = moved.get(os.path.abspath(self.run_dir)) if self.run_dir else None
        if new is not None:
            self._show_run_dir(new)

    def _show_plan(self, epochs: int, steps: int | None) -> None:
        plan = schedule_curve(self.doc.project.training, epochs,
                              steps or NOMINAL_STEPS_PER_EPOCH)
        self.curves.show_plan(plan.x, plan.rate)

    def _show_start(self, event: dict) -> None:
        self.curves.show_history(json.loads(event["history"]))
        self._show_plan(event["epochs"], event["steps"])
        where = event["devices"] + (f" ({event['replicas']} replicas)"
                                    if event["replicas"] > 1 else "")
        lines = [f"Training {event['params']:,} parameters on {event['samples']:,} samples "
                 f"on {where}…"]
        if event["initial_epoch"]:
            lines.append(f"Resumed after epoch {event['initial_epoch']}.")
        self._say("\n".join([*lines, *self.notes]))

    @Slot(object)
    def _on_succeeded(self, result) -> None:
        self._show_run_dir(str(result.run_dir))  # an imported model's run may be found, not made
        self.open_button.show()
        self.outcome = result.status
        self.end_note = result.note
        self.progress.setFormat("Done" if result.status == "finished" else "Stopped")
        if result.status == "finished":
            self.progress.setValue(PROGRESS_STEPS)
        self.result = self._result_line(result)
        scores = ", ".join(f"test {k.replace('_', ' ')} {v:.4f}"
                           for k, v in self.test_scores.items())
        self.message.emit(f"Run {result.status}: saved in {result.run_dir}"
                          + (f" ({scores})" if scores else ""))

    def _result_line(self, result) -> str:
        """``Finished in 42 s · val accuracy 97.1% · val loss 0.093``, with the test split's
        scores and why the run ended early, if it did."""
        parts = [f"{result.status.capitalize()} in "
                 f"{format_duration(time.monotonic() - self._started_at)}"]
        scores = self._task.summary(result.epochs[-1]) if result.epochs else ""
        parts += [scores] if scores else []
        parts += [self._task.score_text(f"test_{k}", v) for k, v in self.test_scores.items()]
        return " · ".join(parts) + (f". {self.end_note}" if self.end_note else "")

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.outcome = "failed"
        self.last_error = message
        note_error("Training failed", message)
        self.progress.setFormat("Failed")
        self.status.setStyleSheet("color: #b3261e;")
        self._say(message)
        self.message.emit("Training failed")

    @Slot()
    def _on_done(self) -> None:
        self.curves.redraw()
        self.refresh()
        self.run_finished.emit(self.outcome)
