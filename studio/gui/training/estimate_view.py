"""Before training: what the model costs, memory against the device, and a measured epoch time."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Slot
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import Event, ProgressEvent
from studio.core.base.messages import count, format_duration, plural
from studio.core.build.estimate import (
    Estimate,
    MicroRun,
    device_label,
    estimate,
    format_bytes,
    measure_epoch_time,
    recommend_device,
)
from studio.core.hardware.devices import (
    DeviceDiscovery,
    Devices,
    choice_label,
    cpu_info,
    training_devices,
)
from studio.core.model.flops import format_flops
from studio.core.project.document import DeviceChoice, Project
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.jobs import JobSlot

WARNING_STYLE = "color: #b3261e;"
PARTS = (
    ("weights", "Weights", "#1f77b4", "Every parameter, in float32"),
    ("gradients", "Gradients", "#ff7f0e", "One float32 gradient per learning parameter"),
    ("optimizer", "Optimizer state", "#2ca02c",
     "What the optimizer keeps per learning parameter (Adam: two moving averages)"),
    ("activations", "Activations", "#9467bd",
     "Layer outputs kept for the backward pass, for the whole batch"),
    ("overhead", "Framework", "#8c8c8c", "TensorFlow's own working memory, a flat allowance"),
)
"""The memory breakdown: key, label, colour and what it is."""
PROGRESS_STEPS = 1000


def _label(name: str, tip: str = "") -> QLabel:
    """An empty, word-wrapping label named ``estimate-<name>``."""
    label = QLabel()
    label.setObjectName(f"estimate-{name}")
    label.setWordWrap(True)
    label.setToolTip(tip)
    return label


def _parts(est: Estimate) -> dict[str, int]:
    return {"weights": est.weights_bytes, "gradients": est.gradients_bytes,
            "optimizer": est.optimizer_bytes, "activations": est.activations_bytes,
            "overhead": est.overhead_bytes}


def _measured(project: Project) -> tuple:
    """What a measured time depends on: the model, the data and the training settings."""
    return project.graph, project.dataset, project.training


class MemoryBar(QWidget):
    """A horizontal bar: the memory parts stacked in their colours against the device's
    memory; a red mark shows where the memory ends when they exceed it."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[tuple[int, str]] = []
        self.capacity: int | None = None
        self.setMinimumHeight(18)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(240, 18)

    def show_parts(self, parts: list[tuple[int, str]], capacity: int | None) -> None:
        """Draw ``parts`` (bytes, colour) against ``capacity`` bytes (None: unknown)."""
        self.parts = parts
        self.capacity = capacity
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        frame = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.setPen(QPen(self.palette().mid().color()))
        painter.setBrush(self.palette().base())
        painter.drawRoundedRect(frame, 3, 3)
        total = sum(size for size, _ in self.parts)
        scale = max(total, self.capacity or 0, 1)
        inner = frame.adjusted(1, 1, -1, -1)
        x = inner.left()
        painter.setPen(Qt.PenStyle.NoPen)
        for size, colour in self.parts:
            width = inner.width() * size / scale
            painter.setBrush(QColor(colour))
            painter.drawRect(QRectF(x, inner.top(), width, inner.height()))
            x += width
        if self.capacity is not None and total > self.capacity:
            edge = inner.left() + inner.width() * self.capacity / scale
            painter.setPen(QPen(QColor("#b3261e"), 2))
            painter.drawLine(int(edge), int(frame.top()), int(edge), int(frame.bottom()))
        painter.end()


def _measure_task(project: Project, info, batch_size: int, targets: dict[str, list[str]]):
    """Measure on each target in turn (label -> TensorFlow device names)."""
    def task(on_event, stop) -> dict[str, MicroRun]:
        runs = {}
        for label, names in targets.items():
            if stop.is_set():
                break
            def labelled(event: ProgressEvent, label: str = label) -> None:
                on_event({**event, "label": label})

            runs[label] = measure_epoch_time(project, info, batch_size, names, labelled, stop)
        return runs

    return task


class EstimateView(QWidget):
    """Parameters, FLOPs per sample and memory at the project's batch size on its device,
    following every edit (no TensorFlow), with the largest batch size that fits; "Measure time
    per epoch" trains a few steps on a worker thread, on the CPU and a GPU where both exist."""

    def __init__(self, doc: ProjectDocument, discovery: DeviceDiscovery) -> None:
        super().__init__()
        self.doc = doc
        self.devices: Devices | None = None
        """The devices once discovery has found them."""
        self.estimate: Estimate | None = None
        """The estimate shown."""
        self.runs: dict[str, MicroRun] = {}
        """The last measurement, by device label."""
        self._measured_for: tuple | None = None
        self._times_text = ""
        self._times_failed = False
        self._cpu_only = Devices(cpu_info())
        self.measuring = JobSlot(self)
        self.measuring.event.connect(self._on_event)
        self.measuring.succeeded.connect(self._on_measured)
        self.measuring.failed.connect(self._on_failed)
        self.measuring.finished.connect(self.refresh)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self._model_box())
        layout.addWidget(self._memory_box())
        layout.addWidget(self._time_box())
        layout.addStretch(1)

        for widget in (self.progress, self.cancel, self.times, self.recommendation):
            widget.hide()
        self.discovering = JobSlot(self)
        self.discovering.succeeded.connect(self.set_devices)
        self.discovering.failed.connect(lambda message: self.set_devices(self._cpu_only))
        self.discovering.finished.connect(self.refresh)
        self._discover = lambda on_event, stop: discovery.discover()
        """Looking for devices, until it has started (it runs once)."""
        doc.changed.connect(self.refresh)
        self.refresh()

    def look_for_devices(self) -> None:
        """Start looking for devices on a worker thread (it loads TensorFlow, so the window
        calls this once it shows); until then the estimate is for the CPU."""
        task, self._discover = self._discover, None
        if task is not None:
            self.discovering.start(task)

    def _model_box(self) -> QGroupBox:
        self.params = _label("params", "Weights and biases; those of frozen layers do not learn")
        self.flops = _label("flops", "Floating-point operations per sample; a training step "
                            "costs about three forward passes")
        box = QGroupBox("Model")
        grid = QGridLayout(box)
        grid.addWidget(QLabel("Parameters"), 0, 0)
        grid.addWidget(self.params, 0, 1)
        grid.addWidget(QLabel("FLOPs per sample"), 1, 0)
        grid.addWidget(self.flops, 1, 1)
        grid.setColumnStretch(1, 1)
        return box

    def _memory_box(self) -> QGroupBox:
        self.memory_box = QGroupBox("Memory")
        grid = QGridLayout(self.memory_box)
        self.part_values: dict[str, QLabel] = {}
        for row, (key, label, colour, tip) in enumerate(PARTS):
            swatch = QLabel()
            swatch.setFixedSize(10, 10)
            swatch.setStyleSheet(f"background: {colour}; border-radius: 2px;")
            name = QLabel(label)
            value = _label(key, tip)
            value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            for widget in (swatch, name):
                widget.setToolTip(tip)
            grid.addWidget(swatch, row, 0)
            grid.addWidget(name, row, 1)
            grid.addWidget(value, row, 2)
            self.part_values[key] = value
        self.total = _label("total", "Everything above, on one device")
        self.total.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        grid.addWidget(QLabel("<b>Total</b>"), len(PARTS), 1)
        grid.addWidget(self.total, len(PARTS), 2)
        self.bar = MemoryBar()
        self.bar.setToolTip("The memory needed, in the colours above, against the device's "
                            "memory (a red mark where it ends)")
        self.capacity = _label("capacity", "The memory needed, against the device's memory")
        self.largest = _label("largest", "The largest batch size whose memory fits the device, "
                              "by the estimate")
        self.use_batch = QPushButton()
        self.use_batch.setObjectName("use-batch-size")
        self.use_batch.setToolTip("Set the batch size to the largest that fits this device")
        self.use_batch.clicked.connect(self.use_largest_batch)
        self.note = _label("note")
        self.note.setStyleSheet("color: palette(placeholder-text);")
        below = len(PARTS) + 1
        for row, widget in enumerate((self.bar, self.capacity, self.largest)):
            grid.addWidget(widget, below + row, 0, 1, 3)
        grid.addWidget(self.use_batch, below + 3, 0, 1, 3, Qt.AlignmentFlag.AlignLeft)
        grid.addWidget(self.note, below + 4, 0, 1, 3)
        grid.setColumnStretch(1, 1)
        return self.memory_box

    def _time_box(self) -> QGroupBox:
        self.measure = QPushButton("Measure time per epoch")
        self.measure.setObjectName("measure")
        self.measure.clicked.connect(self.start_measuring)
        self.cancel = QPushButton("Cancel")
        self.cancel.setObjectName("cancel-measure")
        self.cancel.setToolTip("Stop measuring after the current step")
        self.cancel.clicked.connect(self.cancel_measuring)
        self.progress = QProgressBar()
        self.progress.setRange(0, PROGRESS_STEPS)
        self.progress.setTextVisible(True)
        self.times = _label("times", "Seconds per epoch from a few measured training steps, "
                            "validation included")
        self.recommendation = _label("recommendation", "Which device trains this model faster "
                                     "at this batch size")
        box = QGroupBox("Time")
        column = QVBoxLayout(box)
        buttons = QHBoxLayout()
        buttons.addWidget(self.measure)
        buttons.addWidget(self.cancel)
        buttons.addStretch(1)
        column.addLayout(buttons)
        for widget in (self.progress, self.times, self.recommendation):
            column.addWidget(widget)
        return box

    def set_devices(self, devices: Devices) -> None:
        """Estimate against ``devices`` from now on (discovery calls this when it is done)."""
        self.devices = devices
        self.refresh()

    def refresh(self) -> None:
        """Estimate again from the document (cheap: the analysis and arithmetic only)."""
        project = self.doc.project
        training = project.training
        analysis = self.doc.analysis()
        est = estimate(project, training.batch_size, self.devices or self._cpu_only,
                       self._choice(training.device), analysis)
        self.estimate = est
        self.params.setText(f"{est.params:,}" + (
            f" ({est.trainable_params:,} learn)" if est.trainable_params != est.params else ""))
        self.flops.setText(f"{format_flops(est.flops_per_sample)} forward · "
                           f"{format_flops(est.training_flops_per_sample)} per training step")
        self.memory_box.setTitle(f"Memory at batch size {training.batch_size:,} on "
                                 f"{self._where(est)}")
        sizes = _parts(est)
        for key, value in sizes.items():
            self.part_values[key].setText(format_bytes(value))
        self.total.setText(f"<b>{format_bytes(est.total_bytes)}</b>")
        self.bar.show_parts([(sizes[key], colour) for key, _, colour, _ in PARTS],
                            est.device_memory)
        self._show_capacity(est)
        self._show_notes(est, project, analysis)
        self._show_times()
        self._show_measure_state(analysis.ok)

    def _choice(self, choice: DeviceChoice) -> DeviceChoice:
        """The device to estimate for: the CPU until the GPUs are known."""
        return choice if self.devices is not None else DeviceChoice(precision=choice.precision)

    def _where(self, est: Estimate) -> str:
        if est.replicas > 1:
            return f"each of {est.replicas} GPUs"
        return "the CPU" if est.device == "CPU" else est.device

    def _show_capacity(self, est: Estimate) -> None:
        if est.device_memory is None:
            self.capacity.setText(f"The memory of {est.device} is not known.")
            self.capacity.setStyleSheet("")
        else:
            have = "RAM available" if est.device == "CPU" else f"on {est.device}"
            share = est.total_bytes / max(est.device_memory, 1)
            self.capacity.setText(f"{format_bytes(est.total_bytes)} of "
                                  f"{format_bytes(est.device_memory)} {have} ({share:.0%})")
            self.capacity.setStyleSheet("" if est.fits else WARNING_STYLE)
        largest = est.largest_batch_size
        if est.device_memory is None:
            self.largest.setText("")
        elif largest is None:
            self.largest.setText("Even batch size 1 does not fit: make the model smaller or "
                                 "pick a device with more memory.")
        else:
            self.largest.setText(f"Largest batch size that fits: {largest:,}")
        self.largest.setStyleSheet(WARNING_STYLE if est.fits is False else "")
        offer = est.fits is False and largest is not None
        self.use_batch.setVisible(offer)
        if offer:
            self.use_batch.setText(f"Use batch size {largest:,}")

    def _show_notes(self, est: Estimate, project: Project, analysis) -> None:
        notes = []
        if self.devices is None and project.training.device.kind != "cpu":
            notes.append("Looking for GPUs; estimated for the CPU meanwhile.")
        elif est.note:
            notes.append(est.note)
        unknown = len(project.graph.nodes) - len(analysis.nodes)
        if unknown:
            notes.append(f"{count(unknown, 'layer')} with an unknown shape "
                         f"{plural(unknown, 'is', 'are')} not counted.")
        self.note.setText(" ".join(notes))
        self.note.setVisible(bool(notes))

    def _show_times(self) -> None:
        """The measured times, greyed with a note once the project changed since."""
        stale = bool(self.runs) and self._measured_for != _measured(self.doc.project)
        self.times.setText(self._times_text + ("\n(measured before the last change)"
                                               if stale else ""))
        self.times.setVisible(bool(self._times_text))
        self.times.setStyleSheet(WARNING_STYLE if self._times_failed else
                                 "color: palette(placeholder-text);" if stale else "")

    def _show_measure_state(self, model_ok: bool) -> None:
        running = self.measuring.busy()
        info = self.doc.dataset() if model_ok else None
        self.measure.setEnabled(not running and info is not None)
        if not model_ok:
            self.measure.setToolTip(f"Cannot measure: {self.doc.analysis().reason}")
        elif info is None:
            self.measure.setToolTip("Cannot measure until the data is known")
        else:
            self.measure.setToolTip("Train a few steps on synthetic data of the right shape "
                                    "and extrapolate to one epoch (on the CPU and a GPU "
                                    "where both exist)")
        self.cancel.setVisible(running)
        self.progress.setVisible(running)

    def use_largest_batch(self) -> None:
        """Set the project's batch size to the largest that fits, as one undoable edit."""
        largest = self.estimate.largest_batch_size if self.estimate else None
        if largest is not None:
            self.doc.edit(f"Set batch size to {largest:,}",
                          lambda p: setattr(p.training, "batch_size", largest))

    def _targets(self) -> dict[str, list[str]]:
        """What to measure on: the CPU, and the chosen GPUs (else the first) if there are any."""
        devices = self.devices or self._cpu_only
        targets = {"CPU": training_devices(DeviceChoice(), devices)}
        if devices.gpus:
            choice = self.doc.project.training.device
            if choice.kind == "cpu":
                choice = DeviceChoice(kind="gpu", gpus=[devices.gpus[0].index])
            names = training_devices(choice, devices)
            label = (device_label(int(names[0].rpartition(":")[2])) if len(names) == 1
                     else choice_label(choice))
            targets[label] = names
        return targets

    def start_measuring(self) -> None:
        """Measure the time per epoch on a worker thread."""
        info = self.doc.dataset()
        if self.measuring.busy() or info is None:
            return
        project = self.doc.project.copy()
        self._measured_for = _measured(project)
        self.runs = {}
        self._times_text = "Loading TensorFlow and building the model…"
        self._times_failed = False
        self.recommendation.hide()
        self.progress.setValue(0)
        self.progress.setFormat("Starting…")
        task = _measure_task(project, info, project.training.batch_size, self._targets())
        self.measuring.start(task)
        self.refresh()

    def cancel_measuring(self) -> None:
        """Stop measuring after the current step."""
        if self.measuring.busy():
            self.measuring.stop()
            self.progress.setFormat("Cancelling…")

    @Slot(object)
    def _on_event(self, event: Event) -> None:
        if event["type"] == "progress" and not self.measuring.stop_requested():
            self.progress.setValue(round(event["done"] / max(event["total"], 1)
                                         * PROGRESS_STEPS))
            self.progress.setFormat(f"Measuring on {event['label']}: step {event['done']} of "
                                    f"{event['total']}")

    @Slot(object)
    def _on_measured(self, runs: dict[str, MicroRun]) -> None:
        self.runs = runs
        lines = [f"{label}: {self._run_text(run)}" for label, run in runs.items()]
        self._times_text = "\n".join(lines) or "Cancelled."
        advice = recommend_device(runs, self.estimate) if self.estimate else None
        self.recommendation.setText(advice or "")
        self.recommendation.setVisible(bool(advice))

    @staticmethod
    def _run_text(run: MicroRun) -> str:
        if run.out_of_memory:
            return f"out of memory at batch size {run.batch_size:,}"
        if run.seconds_per_step is None:
            return "cancelled before a step was timed"
        speed = f"{run.samples_per_second:,.0f} samples/s"
        if run.seconds_per_epoch is None:
            return f"{run.seconds_per_step * 1000:.1f} ms per step ({speed})"
        return f"{format_duration(run.seconds_per_epoch, 'fine')} per epoch ({speed})"

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._times_text = f"Measuring failed: {message}"
        self._times_failed = True

