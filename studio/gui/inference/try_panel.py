"""The Try view: pick a run (and checkpoint) or a model file, then drop, paste or pick images
and see what the model answers; a folder runs as a batch into a sortable table."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtGui import QAction, QGuiApplication, QImage, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.data.image_folder import IMAGE_EXTENSIONS
from studio.core.inference.batch import (
    BatchResult,
    image_files,
    predict_folder,
    write_predictions_csv,
)
from studio.core.inference.predictor import (
    Prediction,
    Predictor,
    PreprocessingMissing,
    answer_choices,
)
from studio.core.runs.history import RunSummary
from studio.gui.data.preprocessing_dialog import PreprocessingDialog
from studio.gui.inference.explain_view import ExplainView
from studio.gui.inference.prediction_table import SORT_ROLE, PredictionTableModel
from studio.gui.inference.result_card import ResultCard
from studio.gui.runs.run_picker import offer_runs
from studio.gui.widgets.forms import hint, narrow_box, scrolling
from studio.gui.widgets.jobs import JobSlot

MAX_CARDS = 200
"""Cards kept on screen; older ones make way (a folder belongs in the table instead)."""
ERROR_STYLE = "color: #b3261e;"
MODEL_FILTER = "Keras models (*.keras *.h5)"
IMAGE_FILTER = "Images (" + " ".join(f"*{s}" for s in sorted(IMAGE_EXTENSIONS)) + ")"
EMPTY_TEXT = ("Drop images or a folder anywhere on the window, paste an image (Ctrl+V) or "
              "pick files with “Add images…” to see what the model answers.")
Request = Callable[[Predictor], list[Prediction]]


def local_paths(mime) -> list[Path]:
    """The local files and folders a drag or the clipboard carries."""
    urls = mime.urls() if mime.hasUrls() else []
    return [Path(url.toLocalFile()) for url in urls if url.isLocalFile()]


def wants_answer(path: Path) -> bool:
    """Whether ``path`` is something to show the model: a folder or a file that is not a
    project or a table (any other file is tried, and says so if it is not an image)."""
    return path.is_dir() or path.suffix.lower() not in {".json", ".csv", ".keras", ".h5"}


def _image_array(image: QImage) -> np.ndarray:
    """A pasted QImage as uint8 H × W × 3 (or × 1 for a grey image)."""
    grey = image.isGrayscale()
    image = image.convertToFormat(QImage.Format.Format_Grayscale8 if grey
                                  else QImage.Format.Format_RGB888)
    width, height, line = image.width(), image.height(), image.bytesPerLine()
    channels = 1 if grey else 3
    rows = np.frombuffer(image.constBits(), np.uint8, height * line).reshape(height, line)
    return rows[:, : width * channels].reshape(height, width, channels).copy()


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
        self.runs: list[RunSummary] = []
        self.cards: list[ResultCard] = []
        self._chosen: Path | None = None
        self._preprocessing: dict[str, Any] | None = None
        self._picked_by_hand = False
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
        self.batch.event.connect(self._folder_progress)
        self.batch.succeeded.connect(self._folder_answered)
        self.batch.failed.connect(self._folder_failed)

        self.run_box = narrow_box()
        self.run_box.setObjectName("try-run")
        self.run_box.setToolTip("The run whose model answers")
        self.run_box.activated.connect(self._run_picked)
        self.model_box = narrow_box()
        self.model_box.setObjectName("try-model")
        self.model_box.setToolTip("The run's final model, or one of its checkpoints")
        self.model_box.activated.connect(self._model_picked)
        self.open_button = QPushButton("Open model file…")
        self.open_button.setToolTip("Answer with a .keras or .h5 model file instead of a run")
        self.open_button.clicked.connect(self.open_model_dialog)
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
        top.addWidget(QLabel("Answer with"))
        top.addWidget(self.run_box, 2)
        top.addWidget(self.model_box, 1)
        top.addWidget(self.open_button)
        top.addSpacing(12)
        top.addWidget(self.top_k)
        top.addWidget(self.add_button)
        top.addWidget(self.folder_button)
        top.addWidget(self.clear_button)
        self.status = QLabel()
        self.status.setObjectName("try-status")
        self.status.setWordWrap(True)

        self.empty = hint(EMPTY_TEXT)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.card_list = QWidget()
        self.card_layout = QVBoxLayout(self.card_list)
        self.card_layout.addWidget(self.empty)
        self.card_layout.addStretch(1)
        cards = QScrollArea()
        cards.setObjectName("try-cards")
        cards.setWidgetResizable(True)
        cards.setWidget(self.card_list)

        self.table_model = PredictionTableModel()
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(self.table_model)
        proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setObjectName("try-table")
        self.table.setModel(proxy)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)  # in file order until a header is clicked
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        for column, width in enumerate((200, 110, 90, 200, 80)):
            self.table.setColumnWidth(column, width)
        self.progress = QProgressBar()
        self.progress.setObjectName("try-progress")
        self.progress.setTextVisible(True)
        self.progress.setFormat("No folder yet")
        self.progress.setValue(0)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop answering the folder; the answers so far are kept")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_folder)
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setToolTip("Save the table as a CSV file")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export_dialog)
        batch_bar = QHBoxLayout()
        batch_bar.addWidget(self.progress, 1)
        batch_bar.addWidget(self.cancel_button)
        batch_bar.addWidget(self.export_button)
        folder = QWidget()
        folder_layout = QVBoxLayout(folder)
        folder_layout.addLayout(batch_bar)
        folder_layout.addWidget(self.table, 1)

        self.form = QWidget()
        self.form_box = QVBoxLayout(self.form)
        self.form_page: QWidget | None = None
        self.form_fields: dict[str, QLineEdit] = {}
        self.text_box: QPlainTextEdit | None = None

        self.explain = ExplainView()
        answers = QSplitter()
        answers.addWidget(cards)
        answers.addWidget(scrolling(self.explain))
        answers.setStretchFactor(0, 3)
        answers.setStretchFactor(1, 2)
        answers.setChildrenCollapsible(False)

        self.tabs = QTabWidget()
        self.tabs.addTab(answers, "Images")
        self.tabs.addTab(folder, "Folder")
        self.tabs.setTabToolTip(1, "A folder's images answered as a batch, in a table")
        self.tabs.addTab(self.form, "Example")
        self.tabs.setTabToolTip(2, "Type one example for a model trained on a table or texts")
        layout = QVBoxLayout(self)
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
        self._show_form(None)
        self._set_status("No model yet: train one, or open a model file.")

    # choosing what answers

    def set_runs(self, runs: Sequence[RunSummary]) -> None:
        """Offer the runs that have a model or a checkpoint (newest first); the newest
        answers until the person picks a run, a checkpoint or a model file."""
        self.runs = [r for r in runs if r.has_model() or r.has_checkpoint()]
        run = self._run_of(self._chosen)
        index = offer_runs(self.run_box, self.runs, str(run.path) if run else None)
        if self._chosen is not None and run is None and self._picked_by_hand:
            self.run_box.insertItem(0, f"File: {self._chosen.name}", str(self._chosen))
            self.run_box.setCurrentIndex(0)
            index = 0
        self.run_box.setEnabled(bool(self.runs) or index == 0)
        if self.runs and (not self._picked_by_hand or index < 0):
            self._picked_by_hand = False
            self._fill_models(Path(self.runs[0].path))
        elif self._chosen is None and (self._pending or self._pending_folders):
            self._pending.clear()
            self._pending_folders = []
            self._set_status("Nothing can answer yet: train a model, or open a model file.",
                             error=True)

    def _run_of(self, path: Path | None) -> RunSummary | None:
        """The listed run ``path`` (a model or checkpoint) belongs to, if any."""
        if path is None:
            return None
        return next((r for r in self.runs if Path(r.path) in path.parents), None)

    @Slot(int)
    def _run_picked(self, index: int) -> None:
        data = self.run_box.itemData(index)
        if data and Path(data).is_dir():
            self._picked_by_hand = True
            self._fill_models(Path(data))

    def _fill_models(self, run_dir: Path) -> None:
        self.model_box.clear()
        for text, path in answer_choices(run_dir):
            self.model_box.addItem(text, str(path))
        self.model_box.setEnabled(self.model_box.count() > 0)
        if self.model_box.count():
            self.choose(Path(self.model_box.itemData(0)))

    @Slot(int)
    def _model_picked(self, index: int) -> None:
        data = self.model_box.itemData(index)
        if data:
            self._picked_by_hand = True
            self.choose(Path(data))

    def open_model_dialog(self) -> None:
        """Pick a model file to answer with."""
        name, _ = QFileDialog.getOpenFileName(self, "Open a model to answer with", "",
                                              MODEL_FILTER)
        if name:
            self._picked_by_hand = True
            self.choose(Path(name))
            self.model_box.clear()
            self.model_box.setEnabled(False)
            self.set_runs(self.runs)

    def choose(self, path: Path, preprocessing: dict[str, Any] | None = None) -> None:
        """Answer with the model at ``path`` (a run's model or checkpoint, or a model file).
        It loads in the background once the view shows or something is asked; requests made
        meanwhile wait for it."""
        if path == self._chosen and preprocessing is None:
            return
        self._chosen, self._preprocessing = path, preprocessing
        self.predictor = None
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
        where = self._describe(path)
        self._set_status(f"Answering with {where}.")
        self._show_form(result)
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
            self.add_images([_image_array(image)], [f"Pasted image {time.strftime('%H:%M:%S')}"])
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
        predictor = self.predictor
        if predictor is None:
            return
        if self.text_box is not None:
            text = self.text_box.toPlainText()
            self._ask(lambda p: p.predict_texts([text], self.top_k.value()))
        else:
            row = {name: box.text() for name, box in self.form_fields.items()}
            self._ask(lambda p: p.predict_rows([row], self.top_k.value()))

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
        self.empty.hide()
        for prediction in predictions:
            card = ResultCard(prediction)
            card.clicked.connect(self._card_clicked)
            self.card_layout.insertWidget(0, card)
            self.cards.insert(0, card)
        for card in self.cards[MAX_CARDS:]:
            card.deleteLater()
        del self.cards[MAX_CARDS:]
        failed = sum(1 for p in predictions if p.error)
        if failed:
            self.message.emit(f"{failed} of {len(predictions)} could not be answered: "
                              "see the cards for why.")
        if predictions and not predictions[0].error:
            self._card_clicked(self.cards[len(predictions) - 1])
        self.answered.emit(predictions)

    @Slot(object)
    def _card_clicked(self, card: ResultCard) -> None:
        for other in self.cards:
            other.set_selected(other is card)
        if self.predictor is not None and card.prediction.error is None:
            self.explain.show_prediction(self.predictor, card.prediction)
        self.selected.emit(card.prediction)

    def clear(self) -> None:
        """Remove every card and the table."""
        for card in self.cards:
            card.deleteLater()
        self.cards.clear()
        self.empty.show()
        self.table_model.set_rows([])
        self.export_button.setEnabled(False)

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
        self.table_model.set_rows([])
        self.export_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setRange(0, 0)
        self.progress.setFormat("Looking for images…")
        top_k, predictor = self.top_k.value(), self.predictor

        def task(on_event, stop) -> BatchResult:
            paths = [p for folder in folders for p in image_files(folder, stop)]
            if stop.is_set():
                return BatchResult(stopped=True)
            return predict_folder(predictor, paths, top_k,
                                  lambda what, done, total: on_event(
                                      {"what": what, "done": done, "total": total}), stop)

        self.batch.start(task)

    @Slot(object)
    def _folder_progress(self, event: dict) -> None:
        total = max(event["total"], 1)
        self.progress.setRange(0, total)
        self.progress.setValue(event["done"])
        self.progress.setFormat(f"{event['what']}: {event['done']:,} of {event['total']:,}")

    @Slot(object)
    def _folder_answered(self, result: BatchResult) -> None:
        self._batch_ended()
        self.table_model.set_rows(result.predictions)
        self.export_button.setEnabled(bool(result.predictions))
        count = len(result.predictions)
        failed = sum(1 for p in result.predictions if p.error)
        rate = count / result.seconds if result.seconds > 0 else 0.0
        done = "Stopped after" if result.stopped else "Answered"
        text = f"{done} {count:,} images in {result.seconds:.1f} s ({rate:,.0f} per second)"
        if failed:
            text += f"; {failed:,} could not be read (see Problem)"
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress.setFormat(text)
        self.message.emit(text)
        self.folder_done.emit(result)

    @Slot(str)
    def _folder_failed(self, text: str) -> None:
        self._batch_ended()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("The folder was not answered")
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
        name, _ = QFileDialog.getSaveFileName(self, "Save the answers", "answers.csv",
                                              "CSV files (*.csv)")
        if name:
            try:
                write_predictions_csv(self.table_model.rows, Path(name))
            except OSError as exc:
                self._set_status(f"Could not save {name}: {exc.strerror or exc}", error=True)
            else:
                self.message.emit(f"Saved {len(self.table_model.rows):,} answers in {name}")

    # showing

    def _show_form(self, predictor: Predictor | None) -> None:
        """The Example tab for table and text models; hidden for image models."""
        kind = predictor.kind if predictor is not None else "image"
        if self.form_page is not None:
            self.form_page.deleteLater()
        self.form_page, self.form_fields, self.text_box = QWidget(), {}, None
        form = QFormLayout(self.form_page)
        if kind == "table":
            for column in predictor.prep["columns"]:
                box = QLineEdit()
                box.setPlaceholderText("empty: the training mean")
                self.form_fields[column] = box
                form.addRow(column, box)
        elif kind == "text":
            self.text_box = QPlainTextEdit()
            self.text_box.setPlaceholderText("Type a text to classify")
            form.addRow(self.text_box)
        predict = QPushButton("Predict")
        predict.setObjectName("try-predict")
        predict.setToolTip("Answer the example typed above (Ctrl+Return)")
        predict.setShortcut("Ctrl+Return")
        predict.clicked.connect(self.predict_form)
        form.addRow(predict)
        self.form_box.addWidget(self.form_page)
        self.tabs.setTabVisible(2, kind != "image")
        self.tabs.setTabVisible(1, kind == "image")
        if kind != "image":
            self.tabs.setCurrentIndex(2)

    def _describe(self, path: Path) -> str:
        run = self._run_of(path)
        if run is None:
            return str(path)
        return f"{run.id}, {self.model_box.currentText().lower() or path.name}"

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status.setStyleSheet(ERROR_STYLE if error else "")
        self.status.setText(text)

    def busy(self) -> bool:
        """True while a model loads or answers."""
        return any(job.busy() for job in (self.loading, self.answering, self.batch))


def _load(path: Path, preprocessing: dict[str, Any] | None) -> Predictor | PreprocessingMissing:
    """Load on the worker thread; a missing preprocessing is a result (the GUI asks for it)."""
    try:
        return Predictor.load(path, preprocessing)
    except PreprocessingMissing as missing:
        return missing
