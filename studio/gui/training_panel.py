"""The training panel: settings, Start and Stop, progress and live curves."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from studio.core.project import OPTIMIZERS
from studio.core.runs import runs_root
from studio.gui.curves import LiveCurves
from studio.gui.document import ProjectDocument
from studio.gui.sync import show_value
from studio.gui.worker import Worker

PROGRESS_STEPS = 1000


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _train_task(project, root):
    def task(on_event, stop):
        from studio.core.training import train

        return train(project, root, on_event, stop)

    return task


def _warm_up(on_event, stop) -> None:
    import keras  # noqa: F401 - loading TensorFlow early makes Start respond at once


class TrainingPanel(QWidget):
    """Runs training on a worker thread and shows its progress; never blocks the window."""

    run_started = Signal()
    """A run has started."""
    run_finished = Signal(str)
    """A run ended: ``finished``, ``stopped`` or ``failed``."""
    message = Signal(str)
    """A short note for the status bar."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.worker: Worker | None = None
        self.warmup: Worker | None = None
        self.run_dir = ""
        self.last_error = ""
        self.outcome = ""
        """How the last run ended: finished, stopped or failed (empty before any run)."""
        self.notes: list[str] = []
        """What loading the data skipped or changed in the current run."""
        self.test_scores: dict[str, float] = {}
        """The last run's scores on the held-out test split, if it had one."""

        self.optimizer = QComboBox()
        self.optimizer.addItems(list(OPTIMIZERS))
        self.optimizer.setToolTip("The rule that updates the weights")
        self.optimizer.currentTextChanged.connect(
            lambda v: self._edit("optimizer", "optimizer", v))
        self.learning_rate = QDoubleSpinBox()
        self.learning_rate.setDecimals(5)
        self.learning_rate.setRange(0.00001, 1.0)
        self.learning_rate.setSingleStep(0.0005)
        self.learning_rate.setToolTip("How big each weight update is")
        self.learning_rate.valueChanged.connect(
            lambda v: self._edit("learning rate", "learning_rate", round(v, 6)))
        self.batch_size = QSpinBox()
        self.batch_size.setRange(1, 4096)
        self.batch_size.setToolTip("Samples per weight update")
        self.batch_size.valueChanged.connect(lambda v: self._edit("batch size", "batch_size", v))
        self.epochs = QSpinBox()
        self.epochs.setRange(1, 1000)
        self.epochs.setToolTip("Passes over the training data")
        self.epochs.valueChanged.connect(lambda v: self._edit("epochs", "epochs", v))

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
        self.progress = QProgressBar()
        self.progress.setRange(0, PROGRESS_STEPS)
        self.progress.setValue(0)
        self.progress.setFormat("Ready")
        self.progress.setTextVisible(True)
        self.status = QLabel()
        self.status.setObjectName("training-status")
        self.status.setWordWrap(True)
        self.curves = LiveCurves()

        settings = QHBoxLayout()
        for label, widget in (("Optimizer", self.optimizer), ("Learning rate", self.learning_rate),
                              ("Batch size", self.batch_size), ("Epochs", self.epochs)):
            settings.addWidget(QLabel(label))
            settings.addWidget(widget)
        settings.addStretch(1)
        settings.addWidget(self.start_button)
        settings.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(settings)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.curves, 1)
        doc.changed.connect(self.refresh)
        self.refresh()

    def is_running(self) -> bool:
        """True while a run's thread is alive."""
        return self.worker is not None

    def warm_up(self) -> None:
        """Load TensorFlow in the background so the first Start is quick."""
        self.warmup = Worker(_warm_up)
        self.warmup.done.connect(self._warmed_up)
        self.warmup.start()

    def _warmed_up(self) -> None:
        if self.warmup is not None:
            self.warmup.wait()
            self.warmup = None

    def _edit(self, label: str, field: str, value) -> None:
        self.doc.edit(f"Set {label}", lambda p: setattr(p.training, field, value),
                      merge_key=f"training.{field}")

    def refresh(self) -> None:
        """Sync editors and the Start button with the document."""
        training = self.doc.project.training
        for widget, value in ((self.optimizer, training.optimizer),
                              (self.learning_rate, training.learning_rate),
                              (self.batch_size, training.batch_size),
                              (self.epochs, training.epochs)):
            show_value(widget, value)
        analysis = self.doc.analysis()
        running = self.is_running()
        self.start_button.setEnabled(analysis.ok and not running)
        self.stop_button.setEnabled(running)
        if analysis.ok:
            self.start_button.setToolTip("Train the model in the background (F5)")
            if not running and not self.last_error:
                self.status.setStyleSheet("")
                self.status.setText(self._idle_text())
        else:
            self.start_button.setToolTip(f"Cannot start: {analysis.reason}")
            self.status.setStyleSheet("color: #b3261e;")
            self.status.setText(f"Cannot start: {analysis.reason}")

    def _idle_text(self) -> str:
        if self.run_dir:
            return f"Run {self.outcome}. Saved in {self.run_dir}"
        return "Ready. Press Start (F5) to train."

    def start(self) -> None:
        """Start training a snapshot of the current project."""
        if self.is_running() or not self.doc.analysis().ok:
            return
        self.last_error = ""
        self.notes = []
        self.test_scores = {}
        self.curves.clear()
        self.progress.setValue(0)
        self.progress.setFormat("Starting: loading TensorFlow and data…")
        self.status.setStyleSheet("")
        self.status.setText("Preparing the run…")
        task = _train_task(self.doc.project.copy(), runs_root(self.doc.path))
        self.worker = Worker(task)
        self.worker.event.connect(self._on_event)
        self.worker.succeeded.connect(self._on_succeeded)
        self.worker.failed.connect(self._on_failed)
        self.worker.done.connect(self._on_done)
        self.worker.start()
        self.refresh()
        self.run_started.emit()

    def stop(self) -> None:
        """Ask the run to stop after the current batch."""
        if self.worker is not None:
            self.worker.stop()
            self.stop_button.setEnabled(False)
            self.progress.setFormat("Stopping…")

    def shutdown(self) -> None:
        """Stop any run and wait for every thread; called when the window closes."""
        for worker in (self.worker, self.warmup):
            if worker is not None:
                worker.discard()
                worker.wait()
        self.curves.timer.stop()

    @Slot(object)
    def _on_event(self, event: dict) -> None:
        kind = event["type"]
        if kind == "progress" and not self.worker.stop_requested():
            total = max(event["total"], 1)
            self.progress.setFormat(f"{event['what']}: {event['done']:,} of {event['total']:,}")
            self.progress.setValue(round(event["done"] / total * PROGRESS_STEPS))
        elif kind == "note":
            self.notes.append(event["text"])
        elif kind == "test":
            self.test_scores = {k: v for k, v in event.items() if k != "type"}
        elif kind == "start":
            self.run_dir = event["run_dir"]
            self.epochs_total = event["epochs"]
            self.status.setText("\n".join([f"Training {event['params']:,} parameters on "
                                            f"{event['samples']:,} samples…", *self.notes]))
        elif kind == "batch":
            x = event["epoch"] - 1 + event["step"] / event["steps"]
            self.curves.add_batch(x, event)
            self.progress.setValue(round(event["progress"] * PROGRESS_STEPS))
            if not self.worker.stop_requested():
                self.progress.setFormat(
                    f"Epoch {event['epoch']}/{self.epochs_total} · batch {event['step']}/"
                    f"{event['steps']} · {event['samples_per_sec']:,.0f} samples/s · "
                    f"ETA {_clock(event['eta_sec'])}"
                )
        elif kind == "epoch":
            self.curves.add_epoch(event["epoch"], event)
            shown = [f"{k.replace('_', ' ')} {v:.4f}" for k, v in event.items()
                     if k not in ("type", "epoch", "seconds")]
            self.status.setText(f"Epoch {event['epoch']}: " + ", ".join(shown))

    @Slot(object)
    def _on_succeeded(self, result) -> None:
        self.outcome = result.status
        self.progress.setFormat("Done" if result.status == "finished" else "Stopped")
        if result.status == "finished":
            self.progress.setValue(PROGRESS_STEPS)
        scores = ", ".join(f"test {k.replace('_', ' ')} {v:.4f}"
                           for k, v in self.test_scores.items())
        self.message.emit(f"Run {result.status}: saved in {result.run_dir}"
                          + (f" ({scores})" if scores else ""))

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.outcome = "failed"
        self.last_error = message
        self.progress.setFormat("Failed")
        self.status.setStyleSheet("color: #b3261e;")
        self.status.setText(message)
        self.message.emit("Training failed")

    @Slot()
    def _on_done(self) -> None:
        if self.worker is not None:
            self.worker.wait()
            self.worker = None
        self.curves.redraw()
        self.refresh()
        self.run_finished.emit(self.outcome)
