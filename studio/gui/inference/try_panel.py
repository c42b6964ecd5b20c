"""The Try view: pick a run (and checkpoint) or a model file, then drop, paste or pick images
and see what the model answers; a folder runs as a batch into a sortable table. The view
runs the model in the background; the model chooser, the image cards, the folder batch and
the typed example are parts of their own."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import progress_events
from studio.core.data.image_folder import IMAGE_EXTENSIONS
from studio.core.inference.batch import BatchResult, image_files, predict_folder
from studio.core.inference.predictor import Prediction, Predictor, PreprocessingMissing
from studio.core.runs.history import RunSummary
from studio.gui.data.preprocessing_dialog import PreprocessingDialog
from studio.gui.inference.camera_try import CameraTry
from studio.gui.inference.corrections import TryCorrections
from studio.gui.inference.drawing_pad import DrawingPad
from studio.gui.inference.example_form import ExampleForm, Request
from studio.gui.inference.folder_batch import FolderBatch
from studio.gui.inference.image_cards import ImageCards
from studio.gui.inference.model_chooser import ModelChooser
from studio.gui.widgets.dataset_edits import ProjectDataset
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.forms import scrolled_body
from studio.gui.widgets.images import image_array
from studio.gui.widgets.jobs import JobSlot

ERROR_STYLE = "color: #b3261e;"
IMAGE_FILTER = "Images (" + " ".join(f"*{s}" for s in sorted(IMAGE_EXTENSIONS)) + ")"
NO_MODEL = "No model yet: train one, or open a model file."


def local_paths(mime) -> list[Path]:
    """The local files and folders a drag or the clipboard carries."""
    urls = mime.urls() if mime.hasUrls() else []
    return [Path(url.toLocalFile()) for url in urls if url.isLocalFile()]


def wants_answer(path: Path) -> bool:
    """Whether ``path`` is something to show the model: a folder or a file that is not a
    project or a table (any other file is tried, and says so if it is not an image)."""
    return path.is_dir() or path.suffix.lower() not in {".json", ".csv", ".keras", ".h5"}


class TryPanel(QWidget):
    """Answers images (or, for table and text models, typed examples) with a chosen model."""

    answered = Signal(list)
    """New predictions are on screen (a list of Prediction)."""
    folder_done = Signal(object)
    """A folder's batch ended (its BatchResult)."""
    model_ready = Signal(str)
    """A model was loaded and answers from now on; its description."""
    selected = Signal(object)
    """The person picked an answered image (its Prediction) to see why."""
    message = Signal(str)
    """A short note for the status bar."""
    runs_wanted = Signal()
    """Something was asked with no model chosen: list the runs (``set_runs``) to pick one."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("try-panel")
        self.predictor: Predictor | None = None
        self._chosen: Path | None = None
        self._preprocessing: dict[str, Any] | None = None
        self._pending: list[Request] = []
        self._pending_folders: list[Path] = []
        self.loading = JobSlot(self)
        self.loading.succeeded.connect(lambda loaded: self._loaded(*loaded))
        self.loading.failed.connect(lambda text: self._load_failed(self._chosen, text))
        self.answering = JobSlot(self)
        self.answering.succeeded.connect(self._show_answers)
        self.answering.failed.connect(lambda text: self._set_status(text, error=True))
        self.answering.finished.connect(self._next)
        self.batch = JobSlot(self)
        self.batch.succeeded.connect(self._folder_answered)
        self.batch.failed.connect(self._folder_failed)

        self.chooser = ModelChooser()
        self.chooser.picked.connect(self.choose)
        self.run_box, self.model_box = self.chooser.run_box, self.chooser.model_box
        self.open_button = self.chooser.open_button
        self.top_k = QSpinBox()
        self.top_k.setRange(1, 20)
        self.top_k.setValue(5)
        self.top_k.setPrefix("Top ")
        self.top_k.setToolTip("How many of the most likely classes to show for each image")
        self.add_button = QPushButton("Add images…")
        self.add_button.setToolTip("Pick image files to answer (Ctrl+Shift+O)")
        self.add_button.clicked.connect(self.add_dialog)
        self.folder_button = QPushButton("Folder…")
        self.folder_button.setToolTip("Answer every image in a folder, as a batch in a table")
        self.folder_button.clicked.connect(self.folder_dialog)
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Remove the answers shown")
        self.clear_button.clicked.connect(self.clear)
        top = QHBoxLayout()
        top.addWidget(self.chooser, 3)
        top.addSpacing(12)
        top.addWidget(self.top_k)
        top.addWidget(self.add_button)
        top.addWidget(self.folder_button)
        top.addWidget(self.clear_button)
        self.status = QLabel()
        self.status.setObjectName("try-status")
        self.status.setWordWrap(True)

        self.images = ImageCards(lambda: self.predictor)
        self.images.selected.connect(self.selected)
        self.cards, self.explain = self.images.cards, self.images.explain
        self.folder = FolderBatch()
        self.batch.event.connect(self.folder.show_progress)
        self.folder.message.connect(self.message)
        self.folder.problem.connect(lambda text: self._set_status(text, error=True))
        self.folder.cancel_button.clicked.connect(self.cancel_folder)
        self.table_model, self.table = self.folder.table_model, self.folder.table
        self.progress, self.cancel_button = self.folder.progress, self.folder.cancel_button
        self.export_button = self.folder.export_button
        self.form = ExampleForm()
        self.form.asked.connect(self.predict_form)
        self.pad = DrawingPad(lambda: self.predictor, self.top_k.value)
        self.pad.model_wanted.connect(self._wait_for_model)
        self.top_k.valueChanged.connect(self.pad.ask)
        self.camera = CameraTry(lambda: self.predictor, self.top_k.value)
        self.camera.model_wanted.connect(self._wait_for_model)

        self.tabs = QTabWidget()
        self.tabs.addTab(self.images, "Images")
        self.tabs.addTab(self.folder, "Folder")
        self.tabs.setTabToolTip(1, "A folder's images answered as a batch, in a table")
        self.tabs.addTab(self.form, "Example")
        self.tabs.setTabToolTip(2, "Type one example for a model trained on a table or texts")
        self.tabs.addTab(self.pad, "Draw")
        self.tabs.setTabToolTip(3, "Draw an image and see the model answer it as you draw")
        self.tabs.addTab(self.camera, "Camera")
        self.tabs.setTabToolTip(4, "Show the model what the camera sees, live")
        layout = QVBoxLayout(scrolled_body(self))  # a small window scrolls the page
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.tabs, 1)

        paste = QAction("Paste Image", self)
        paste.setShortcut(QKeySequence.StandardKey.Paste)
        paste.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        paste.triggered.connect(self.paste)
        self.addAction(paste)
        add = QAction("Add Images…", self)
        add.setShortcut("Ctrl+Shift+O")
        add.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        add.triggered.connect(self.add_dialog)
        self.addAction(add)
        self.corrections: TryCorrections | None = None
        """Adding answered images to the dataset, once offered (``offer_corrections``)."""
        self._show_form(None)
        self._set_status(NO_MODEL)

    def offer_corrections(self, doc: ProjectDocument, train_again: Callable[[], None]
                          ) -> None:
        """Offer to put answered images in the project's dataset if it is an image folder
        (each card, and the folder answers shown), each one step on ``doc``'s undo stack;
        ``train_again`` trains again after a correction."""
        self.corrections = TryCorrections(self.images, self.folder, ProjectDataset(doc, self),
                                          train_again)
        layout = self.status.parentWidget().layout()
        layout.insertWidget(layout.indexOf(self.status) + 1, self.corrections.note)

    # choosing what answers

    def set_runs(self, runs: Sequence[RunSummary]) -> None:
        """Offer the runs that have a model or a checkpoint (newest first); the newest
        answers until the person picks a run, a checkpoint or a model file."""
        if self.chooser.set_runs(runs, self._chosen):
            return
        if self.chooser.gone(self._chosen):  # its run was deleted, or is another project's
            self._chosen = self.predictor = None
            self.loading.cancel()
            self._set_status(NO_MODEL)
        if self._chosen is None and (self._pending or self._pending_folders):
            self._pending.clear()
            self._pending_folders = []
            self._set_status("Nothing can answer yet: train a model, or open a model file.",
                             error=True)

    @property
    def runs(self) -> list[RunSummary]:
        """The runs offered: those with a model or a checkpoint."""
        return self.chooser.runs

    @property
    def form_fields(self) -> dict[str, QLineEdit]:
        """The typed example's field per column (a table model's)."""
        return self.form.form_fields

    @property
    def text_box(self) -> QPlainTextEdit | None:
        """The typed example's text (a text model's)."""
        return self.form.text_box

    def choose(self, path: Path, preprocessing: dict[str, Any] | None = None) -> None:
        """Answer with the model at ``path`` (a run's model or checkpoint, or a model file).
        It loads in the background once the view shows or something is asked; requests made
        meanwhile wait for it."""
        if path == self._chosen and preprocessing is None:
            return
        self._chosen, self._preprocessing = path, preprocessing
        self.predictor = None
        self.pad.set_predictor(None)
        self.loading.cancel()
        self._set_status(f"{path.name} answers once it is loaded.")
        if self.isVisible() or self._pending or self._pending_folders:
            self._load_chosen()

    def _load_chosen(self) -> None:
        path, preprocessing = self._chosen, self._preprocessing
        if path is None or self.predictor is not None or self.loading.busy():
            return
        self._set_status(f"Loading {path.name}…")
        self.loading.start(lambda on_event, stop: (path, _load(path, preprocessing)))

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Load the chosen model when the view first shows."""
        super().showEvent(event)
        self._load_chosen()

    def _loaded(self, path: Path, result: Predictor | PreprocessingMissing) -> None:
        if path != self._chosen:
            return
        if isinstance(result, PreprocessingMissing):
            dialog = PreprocessingDialog(path.name, result.input_shape, self)
            if dialog.exec():
                self.choose(path, dialog.preprocessing())
            else:
                self._load_failed(path, f"{path.name} was not loaded: how its images were "
                                        "prepared is needed to answer correctly.")
            return
        self.predictor = result
        where = self.chooser.describe(path)
        self._set_status(f"Answering with {where}.")
        self._show_form(result)
        self.pad.set_predictor(result)
        self.images.expect(result.task)
        self.model_ready.emit(where)
        self._next()
        if self._pending_folders:
            self.answer_folders(self._pending_folders)

    def _load_failed(self, path: Path, text: str) -> None:
        if path != self._chosen:
            return
        self._chosen = None
        self._pending.clear()
        self._pending_folders = []
        self._set_status(text, error=True)
        self.message.emit(text)

    # asking

    def add_paths(self, paths: Sequence[Path]) -> None:
        """Answer dropped or picked ``paths``: files become cards, folders a batch."""
        folders = [p for p in paths if p.is_dir()]
        files = [p for p in paths if not p.is_dir()]
        if files:
            self.tabs.setCurrentIndex(0)
            self._ask(lambda predictor: predictor.predict_files(files, self.top_k.value()))
        if folders:
            self.answer_folders(folders)

    def add_images(self, images: Sequence[np.ndarray], names: Sequence[str]) -> None:
        """Answer in-memory images (pasted ones)."""
        self.tabs.setCurrentIndex(0)
        self._ask(lambda predictor: predictor.predict_images(images, names, self.top_k.value()))

    def paste(self) -> None:
        """Answer the image or the image files on the clipboard."""
        mime = QGuiApplication.clipboard().mimeData()
        paths = local_paths(mime)
        if paths:
            self.add_paths(paths)
        elif mime.hasImage():
            image = QGuiApplication.clipboard().image()
            self.add_images([image_array(image, image.isGrayscale())],
                            [f"Pasted image {time.strftime('%H:%M:%S')}"])
        else:
            self.message.emit("The clipboard holds no image.")

    def add_dialog(self) -> None:
        """Pick image files to answer."""
        names, _ = QFileDialog.getOpenFileNames(self, "Images to answer", "",
                                                f"{IMAGE_FILTER};;All files (*)")
        if names:
            self.add_paths([Path(n) for n in names])

    def folder_dialog(self) -> None:
        """Pick a folder to answer as a batch."""
        name = QFileDialog.getExistingDirectory(self, "A folder of images to answer")
        if name:
            self.answer_folders([Path(name)])

    def predict_form(self) -> None:
        """Answer the example typed in the Example tab."""
        if self.predictor is not None:
            self._ask(self.form.request(self.top_k.value()))

    def _ask(self, request: Request) -> None:
        self._pending.append(request)
        self._wait_for_model()
        self._next()

    def _wait_for_model(self) -> None:
        """Load the chosen model, or, with none chosen, ask for the runs to choose from."""
        if self._chosen is None:
            self._set_status("Looking for a trained run to answer…")
            self.runs_wanted.emit()
        else:
            self._load_chosen()

    def _next(self) -> None:
        """Answer the oldest request waiting, once the one before has been answered."""
        if self.predictor is None or self.answering.busy() or not self._pending:
            return
        request, predictor = self._pending.pop(0), self.predictor
        self.answering.start(lambda on_event, stop: request(predictor))

    @Slot(object)
    def _show_answers(self, predictions: list[Prediction]) -> None:
        self.images.add(predictions)
        failed = _note_unanswered(predictions)
        if failed:
            self.message.emit(f"{failed} of {len(predictions)} could not be answered: "
                              "see the cards for why.")
        self.answered.emit(predictions)

    def clear(self) -> None:
        """Remove every card and the table."""
        self.images.clear()
        self.folder.clear()

    # folders

    def answer_folders(self, folders: Sequence[Path]) -> None:
        """Answer every image under ``folders`` in the background, into the table."""
        self.tabs.setCurrentIndex(1)
        if self.predictor is None:
            self._pending_folders = list(folders)
            self.progress.setFormat("Waiting for the model to load…")
            self._wait_for_model()
            return
        self._pending_folders = []
        self.folder.begin()
        top_k, predictor = self.top_k.value(), self.predictor

        def task(on_event, stop) -> BatchResult:
            paths = [p for folder in folders for p in image_files(folder, stop)]
            if stop.is_set():
                return BatchResult(stopped=True)
            return predict_folder(predictor, paths, top_k, progress_events(on_event), stop)

        self.batch.start(task)

    @Slot(object)
    def _folder_answered(self, result: BatchResult) -> None:
        self._batch_ended()
        _note_unanswered(result.predictions)
        text = self.folder.show_result(result)
        self.message.emit(text)
        self.folder_done.emit(result)

    @Slot(str)
    def _folder_failed(self, text: str) -> None:
        self._batch_ended()
        self.folder.show_failure()
        self._set_status(text, error=True)

    def _batch_ended(self) -> None:
        self.cancel_button.setEnabled(False)

    def cancel_folder(self) -> None:
        """Stop the folder being answered; what was answered so far is shown."""
        if self.batch.busy():
            self.batch.stop()
            self.progress.setFormat("Stopping…")

    def export_dialog(self) -> None:
        """Save the table as CSV."""
        self.folder.export_dialog()

    # showing

    def _show_form(self, predictor: Predictor | None) -> None:
        """The Example tab for table and text models; hidden for image models."""
        kind = self.form.show_for(predictor)
        self.tabs.setTabVisible(2, kind != "image")
        self.tabs.setTabVisible(1, kind == "image")
        self.tabs.setTabVisible(self.tabs.indexOf(self.pad), kind == "image")
        self.tabs.setTabVisible(self.tabs.indexOf(self.camera), kind == "image")
        if kind != "image":
            self.tabs.setCurrentIndex(2)

    def _set_status(self, text: str, error: bool = False) -> None:
        """Say ``text`` above the answers; an ``error`` in red, remembered for Help > Copy
        Diagnostics."""
        if error:
            note_error("Try", text)
        self.status.setStyleSheet(ERROR_STYLE if error else "")
        self.status.setText(text)

    def busy(self) -> bool:
        """True while a model loads or answers."""
        return any(job.busy() for job in (self.loading, self.answering, self.batch,
                                          self.pad.job, self.camera.job))


def _note_unanswered(predictions: Sequence[Prediction]) -> int:
    """Remember why the first of ``predictions`` that could not be answered was not (an
    image that cannot be read, say) for Copy Diagnostics; how many were not."""
    failed = [p for p in predictions if p.error]
    if failed:
        note_error("Try", f"{failed[0].source}: {failed[0].error}")
    return len(failed)


def _load(path: Path, preprocessing: dict[str, Any] | None) -> Predictor | PreprocessingMissing:
    """Load on the worker thread, ready to answer at once; a missing preprocessing is a
    result (the GUI asks for it)."""
    try:
        predictor = Predictor.load(path, preprocessing)
    except PreprocessingMissing as missing:
        return missing
    predictor.warm_up()
    return predictor
