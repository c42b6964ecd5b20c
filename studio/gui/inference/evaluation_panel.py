"""The Evaluate view: score a run's model on its validation or test split; a confusion matrix
as a heat map to click through, per-class precision, recall and F1, and the wrong answers the
model was surest of."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QModelIndex,
    QSize,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import (
    QAction,
    QIcon,
    QPixmap,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QButtonGroup,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import ProgressEvent, progress_events
from studio.core.base.messages import count, plural
from studio.core.data.display import sample_images
from studio.core.data.types import FileSamples
from studio.core.inference.evaluation import evaluate_run
from studio.core.project.document import ProjectFileError, load_project
from studio.core.runs.folders import PROJECT_FILE, answer_choices
from studio.core.runs.history import RunSummary
from studio.core.tasks.class_scores import Evaluation
from studio.core.tasks.registry import DEFAULT_TASK, task_for
from studio.gui.inference.corrections import PATH_ROLE, EvaluationCorrections
from studio.gui.runs.run_picker import IMPORTED_CHOICE, imported_run, offer_imported, offer_runs
from studio.gui.tasks.registry import views_for
from studio.gui.widgets.confusion import ConfusionView
from studio.gui.widgets.dataset_edits import ProjectDataset
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.forms import hint, narrow_box, scrolled_body
from studio.gui.widgets.images import array_pixmap
from studio.gui.widgets.jobs import JobSlot
from studio.gui.widgets.score_table import score_cell, score_table
from studio.gui.widgets.thumbnail_grid import ThumbnailGrid
from studio.gui.widgets.vertical_label import VerticalLabel

POSITION_ROLE = Qt.ItemDataRole.UserRole + 2
"""An image grid item's position in the split."""
THUMBNAIL = 64
MAX_CELL_IMAGES = 500
"""Images shown for one cell of the matrix (a big diagonal cell shows its first ones)."""
MISTAKES = 24
CHUNK = 32
"""Thumbnails added per turn of the event loop, so a big cell never freezes the window."""
ERROR_STYLE = "color: #b3261e;"
NO_RUNS = ("No trained runs yet. Train a model (Training ▸ Start, F5): its runs appear here "
           "to be evaluated.")
MAKING_IMPORTED = "The imported model is being kept as a run (see the Training dock)…"
READY = "Pick a run, a model and a split, then press Evaluate (F6)."
CELL_PLACEHOLDER = "Click a cell of the confusion matrix to see the images in it."
STALE = ("The dataset changed since this evaluation: {images} {were} relabelled or deleted "
         "(its scores still count them as they were).")
PER_CLASS = (("Class", "The true class"),
             ("Precision", "Of the samples the model answered as this class, the share that "
                           "truly are"),
             ("Recall", "Of the samples of this class, the share the model answered right"),
             ("F1", "The harmonic mean of precision and recall"),
             ("Support", "Samples of this class in the split"),
             ("Most often taken for", "The wrong answer the model gave most for this class, "
                                      "and how often"))


def percent(value: float) -> str:
    """``value`` (a fraction) as a percentage with one decimal."""
    return f"{value:.1%}"


def run_problems(run_dir: Path) -> tuple[str | None, str | None]:
    """From the run's project snapshot: why it cannot be evaluated at all (a task it cannot
    score, such as regression; an unreadable snapshot) and why it has no test split; None
    where there is no problem."""
    try:
        dataset = load_project(Path(run_dir) / PROJECT_FILE).dataset
    except ProjectFileError as exc:
        unreadable = f"This run's project snapshot cannot be read: {exc}"
        return unreadable, unreadable
    no_test = ("This run kept no test split (its test fraction was 0). To have one, set a test "
               "fraction in the Data view before training.")
    return (task_for(dataset.task).evaluation_refusal,
            None if dataset.test_split > 0 else no_test)


def evaluated_files(evaluation: Any) -> list[Path]:
    """The image files an evaluation scored (none for in-memory samples)."""
    samples = getattr(evaluation, "samples", None)
    indices = getattr(evaluation, "indices", None)
    if not isinstance(samples, FileSamples) or indices is None:
        return []
    return [Path(samples.paths[int(index)]) for index in indices]


def run_task(run_dir: Path) -> str:
    """The task the run learnt (classification if its snapshot cannot be read)."""
    try:
        return load_project(Path(run_dir) / PROJECT_FILE).dataset.task
    except ProjectFileError:
        return DEFAULT_TASK


def thumbnail(image: np.ndarray) -> QPixmap:
    """``image`` (uint8) enlarged without blurring or shrunk smoothly to fit THUMBNAIL."""
    side = max(image.shape[:2])
    pixmap = array_pixmap(image, max(1, THUMBNAIL // side))
    if side > THUMBNAIL:
        pixmap = pixmap.scaled(THUMBNAIL, THUMBNAIL, Qt.AspectRatioMode.KeepAspectRatio,
                               Qt.TransformationMode.SmoothTransformation)
    return pixmap


class ImageGrid(ThumbnailGrid):
    """Thumbnails of samples with captions "true → answer, confidence", added a chunk per
    turn of the event loop; says ``placeholder`` when empty."""

    def __init__(self, placeholder: str) -> None:
        super().__init__(placeholder, THUMBNAIL, QSize(THUMBNAIL + 56, THUMBNAIL + 40), CHUNK)
        self._evaluation: Evaluation | None = None

    def show_samples(self, evaluation: Evaluation | None, positions: Sequence[int],
                     placeholder: str | None = None) -> None:
        """Show the samples at ``positions`` of ``evaluation``'s split; ``placeholder`` is
        what to say if there are none."""
        self._evaluation = evaluation
        self.show_entries([int(p) for p in positions] if evaluation is not None else [],
                          placeholder)

    def items(self, chunk: list[int]) -> list[QListWidgetItem]:
        evaluation = self._evaluation
        names = evaluation.class_names
        indices = evaluation.sample_indices(chunk)
        images = sample_images(evaluation.samples, indices)
        files = (evaluation.samples.paths if isinstance(evaluation.samples, FileSamples)
                 else None)
        items = []
        for position, index, image in zip(chunk, indices, images, strict=True):
            true, answer = int(evaluation.true[position]), int(evaluation.predicted[position])
            confidence = percent(float(evaluation.confidence[position]))
            item = QListWidgetItem(QIcon(thumbnail(image)),
                                   f"{names[true]} → {names[answer]}, {confidence}")
            item.setToolTip(f"Sample {position + 1:,} of the {evaluation.split} split\n"
                            f"True class: {names[true]}\n"
                            f"The model answered: {names[answer]} ({confidence} sure)")
            item.setData(POSITION_ROLE, position)
            item.setData(PATH_ROLE, Path(files[index]) if files is not None else None)
            items.append(item)
        return items


def per_class_model(evaluation: Evaluation) -> QStandardItemModel:
    """One row per class: precision, recall, F1, support and the most frequent wrong answer;
    numbers sort as numbers (``SORT_ROLE``)."""
    model = QStandardItemModel(0, len(PER_CLASS))
    for column, (title, tip) in enumerate(PER_CLASS):
        header = QStandardItem(title)
        header.setToolTip(tip)
        model.setHorizontalHeaderItem(column, header)
    names = [str(n) for n in evaluation.class_names]
    confusion = np.asarray(evaluation.confusion)
    answered = confusion.sum(axis=0)
    for index, name in enumerate(names):
        precision, recall, f1 = (float(evaluation.precision[index]),
                                 float(evaluation.recall[index]), float(evaluation.f1[index]))
        support = int(evaluation.support[index])
        wrong = confusion[index].copy()
        wrong[index] = 0
        worst = int(np.argmax(wrong))
        never = (f"The model never answered “{name}” on this split, so its precision (right "
                 "answers among its answers of this class) counts as 0.")
        absent = f"No sample of “{name}” is in this split, so its recall counts as 0."
        model.appendRow([
            score_cell(name, index),
            score_cell(percent(precision), precision, "" if answered[index] else never, True),
            score_cell(percent(recall), recall, "" if support else absent, True),
            score_cell(percent(f1), f1, number=True),
            score_cell(f"{support:,}", support, number=True),
            score_cell(f"{names[worst]} ({int(wrong[worst]):,})" if wrong[worst] else "—",
                  int(wrong[worst])),
        ])
    return model


class EvaluationPanel(QWidget):
    """Evaluates a chosen run's model on its validation or test split in the background and
    shows where it goes wrong."""

    evaluated = Signal(object)
    """An evaluation is on screen (its Evaluation)."""
    message = Signal(str)
    """A short note for the status bar."""
    imported_wanted = Signal()
    """The person chose "Imported model": its run is to be made (it is chosen once listed)."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("evaluation-panel")
        self.imported_missing: Callable[[], bool] = lambda: False
        """Whether to offer "Imported model" (weights imported, no run of them yet)."""
        self.awaiting_imported = False
        """"Imported model" was chosen: its run is chosen once it is listed."""
        self.runs: list[RunSummary] = []
        self.evaluation: Evaluation | None = None
        self._picked_by_hand = False
        self.job = JobSlot(self)
        """The evaluation whose results will show; a new one drops it."""
        self.job.event.connect(self._progressed)
        self.job.succeeded.connect(lambda evaluated: self._succeeded(*evaluated))
        self.task_views: dict[str, QWidget] = {}
        """Each task's own evaluation view (``TaskViews.evaluation_view``), made when first
        shown; a task without one shows its class scores in ``results``."""
        self.job.failed.connect(self._failed)
        self.job.finished.connect(self._ended)
        self.corrections: EvaluationCorrections | None = None
        """Relabelling and flagging images, once offered (``offer_corrections``)."""
        self.shown_request: tuple[Path, Path | None, str, str] | None = None
        """The run, model, split and description of the evaluation shown (to evaluate it
        again)."""

        bar = self._make_bar()
        self.status = QLabel()
        self.status.setObjectName("evaluation-status")
        self.status.setWordWrap(True)
        stale = self._make_stale()
        results = self._make_results()
        self.empty = hint(NO_RUNS)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self._layout = layout = QVBoxLayout(scrolled_body(self))  # a small window scrolls
        layout.addLayout(bar)
        layout.addWidget(self.status)
        layout.addWidget(stale)
        layout.addWidget(results, 1)
        layout.addWidget(self.empty, 1)
        start = QAction("Evaluate", self)
        start.setShortcut("F6")
        start.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        start.triggered.connect(self.evaluate)
        self.addAction(start)
        self.set_runs([])

    def _make_bar(self) -> QHBoxLayout:
        """The run, model and split pickers, Evaluate, the progress bar and Cancel."""
        self.run_box = narrow_box()
        self.run_box.setObjectName("evaluation-run")
        self.run_box.setToolTip("The run whose model is evaluated on its own data")
        self.run_box.activated.connect(self._run_picked)
        self.model_box = narrow_box()
        self.model_box.setObjectName("evaluation-model")
        self.model_box.setToolTip("The run's final model, or one of its checkpoints")
        self.validation_button = QRadioButton("Validation")
        self.validation_button.setToolTip("Evaluate on the validation split the run watched "
                                          "while training")
        self.validation_button.setChecked(True)
        self.test_button = QRadioButton("Test")
        self.splits = QButtonGroup(self)
        self.splits.addButton(self.validation_button)
        self.splits.addButton(self.test_button)
        self.evaluate_button = QPushButton("Evaluate")
        self.evaluate_button.setObjectName("evaluation-start")
        self.evaluate_button.setToolTip("Score the model on the chosen split in the "
                                        "background (F6)")
        self.evaluate_button.clicked.connect(self.evaluate)
        self.progress = QProgressBar()
        self.progress.setObjectName("evaluation-progress")
        self.progress.setToolTip("How far the evaluation has got")
        self.progress.setMinimumWidth(220)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("Not evaluated yet")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the evaluation; the results shown stay")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Evaluate"))
        bar.addWidget(self.run_box, 2)
        bar.addWidget(self.model_box, 1)
        bar.addSpacing(12)
        bar.addWidget(QLabel("on"))
        bar.addWidget(self.validation_button)
        bar.addWidget(self.test_button)
        bar.addSpacing(12)
        bar.addWidget(self.evaluate_button)
        bar.addWidget(self.progress, 1)
        bar.addWidget(self.cancel_button)
        return bar

    def _make_stale(self) -> QWidget:
        """The line saying the dataset changed under the results shown, with Evaluate
        again (hidden while it has not)."""
        self.stale = QLabel()
        self.stale.setObjectName("evaluation-stale")
        self.stale.setWordWrap(True)
        self.again_button = QPushButton("Evaluate again")
        self.again_button.setObjectName("evaluation-again")
        self.again_button.setToolTip("Evaluate the same model on the same split of the "
                                     "dataset as it is now")
        self.again_button.clicked.connect(self.evaluate_again)
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.stale, 1)
        line.addWidget(self.again_button)
        row.hide()
        return row

    def _make_results(self) -> QWidget:
        """The headline over the confusion matrix and the tabs of images and scores."""
        self.headline = QLabel()
        self.headline.setObjectName("evaluation-headline")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)
        self.headline.setToolTip("How the model did on the whole split")
        self.notes = hint()
        self.notes.setObjectName("evaluation-notes")
        self.notes.setToolTip("What to keep in mind about these scores")
        self.confusion = ConfusionView()
        self.confusion.clicked.connect(self._cell_clicked)
        matrix = QWidget()
        matrix_layout = QGridLayout(matrix)
        matrix_layout.setContentsMargins(0, 0, 0, 0)
        matrix_layout.addWidget(hint("Confusion matrix: rows are the true classes, columns the "
                                     "model's answers. Click a cell to see its images."),
                                0, 0, 1, 2)
        self.axis_titles = (VerticalLabel("true class"), QLabel("predicted class"))
        self.axis_titles[1].setAlignment(Qt.AlignmentFlag.AlignCenter)
        matrix_layout.addWidget(self.axis_titles[1], 1, 1)
        matrix_layout.addWidget(self.axis_titles[0], 2, 0)
        matrix_layout.addWidget(self.confusion, 2, 1)
        matrix_layout.setRowStretch(2, 1)

        self.cell_caption = hint()
        self.cell_grid = ImageGrid(CELL_PLACEHOLDER)
        self.cell_grid.setObjectName("evaluation-cell-images")
        self.cell_grid.setToolTip("The images in the chosen cell: true class → the model's "
                                  "answer, and how sure it was")
        cell = QWidget()
        cell_layout = QVBoxLayout(cell)
        cell_layout.addWidget(self.cell_caption)
        self.cell_tools = QHBoxLayout()
        """What acts on the images chosen in the cell (see ``offer_corrections``)."""
        cell_layout.addLayout(self.cell_tools)
        cell_layout.addWidget(self.cell_grid, 1)
        self.class_table, self.class_proxy = score_table(self)
        self.class_table.setObjectName("evaluation-per-class")
        self.class_table.setToolTip("Precision, recall and F1 of each class; click a heading "
                                    "to sort")
        self.mistakes = ImageGrid("No mistakes on this split.")
        self.mistakes.setObjectName("evaluation-mistakes")
        self.mistakes.setToolTip(f"The {MISTAKES} wrong answers the model was surest of: true "
                                 "class → its answer, and how sure it was")
        self.tabs = QTabWidget()
        self.tabs.addTab(self.mistakes, "Most confident mistakes")
        self.tabs.setTabToolTip(0, f"The {MISTAKES} wrong answers the model was surest of")
        self.tabs.addTab(self.class_table, "Per class")
        self.tabs.setTabToolTip(1, "Precision, recall and F1 of each class")
        self.tabs.addTab(cell, "Cell")
        self.tabs.setTabToolTip(2, "The images in the cell clicked in the confusion matrix")
        self.split_view = QSplitter()
        self.split_view.addWidget(matrix)
        self.split_view.addWidget(self.tabs)
        self.split_view.setChildrenCollapsible(False)
        self.results = QWidget()
        self.results_layout = results_layout = QVBoxLayout(self.results)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.addWidget(self.headline)
        results_layout.addWidget(self.notes)
        results_layout.addWidget(self.split_view, 1)
        self.results.hide()
        return self.results

    def offer_corrections(self, doc: ProjectDocument, train_again: Callable[[], None]
                          ) -> None:
        """Offer to relabel (move) or flag the images in the cell and mistake grids, in
        the project's dataset if it is an image folder, each one step on ``doc``'s undo
        stack; ``train_again`` trains again after a correction."""
        self.corrections = EvaluationCorrections(
            [self.cell_grid, self.mistakes], self.cell_tools, lambda: self.evaluation,
            ProjectDataset(doc, self), train_again)
        self.results_layout.insertWidget(self.results_layout.indexOf(self.notes) + 1,
                                         self.corrections.note)
        doc.dataset_files_changed.connect(self.check_data)

    # choosing what to evaluate

    def set_runs(self, runs: Sequence[RunSummary]) -> None:
        """Offer the runs that have a model or a checkpoint (given newest first), and
        "Imported model" if it is missing; the newest is chosen until the person picks one
        (the imported model's run once listed, if they chose "Imported model")."""
        self.runs = [r for r in runs if r.has_model() or r.has_checkpoint()]
        before = self.run_box.currentData()
        picked = Path(before) if before and self._picked_by_hand else None
        wanted = imported_run(self.runs) if self.awaiting_imported else None
        if wanted is not None:
            self.awaiting_imported, self._picked_by_hand = False, True
            picked = Path(wanted.path)
        index = offer_runs(self.run_box, self.runs,  # the same run, also once it has moved
                           next((str(r.path) for r in self.runs
                                 if picked is not None and r.id == picked.name), None))
        for widget in (self.run_box, self.model_box):
            widget.setEnabled(bool(self.runs))
        if offer_imported(self.run_box, self.imported_missing()):
            self.run_box.setEnabled(True)
        if index < 0 or not self.runs or self.run_box.currentData() != before:
            self._fill_models()

    @Slot(int)
    def _run_picked(self, index: int) -> None:
        if self.run_box.itemData(index) == IMPORTED_CHOICE:
            self.awaiting_imported = True
            self._fill_models()  # nothing to evaluate until its run is listed
            self.imported_wanted.emit()
        elif self.run_box.itemData(index):
            self._picked_by_hand = True
            self._fill_models()

    def _fill_models(self) -> None:
        """The chosen run's models, and whether it has a test split."""
        self.model_box.clear()
        run_dir = self.run_box.currentData()
        unusable, no_test = NO_RUNS, NO_RUNS
        if run_dir == IMPORTED_CHOICE:
            unusable = no_test = MAKING_IMPORTED
        elif run_dir:
            for text, path in answer_choices(Path(run_dir)):
                self.model_box.addItem(text, str(path))
            unusable, no_test = run_problems(Path(run_dir))
        self.test_button.setEnabled(no_test is None)
        self.test_button.setToolTip(no_test or "Evaluate on the test split the run held out: "
                                               "samples it never trained or tuned on")
        if no_test is not None and self.test_button.isChecked():
            self.validation_button.setChecked(True)
        self.evaluate_button.setEnabled(unusable is None)
        self._guide(unusable or READY)

    def split(self) -> str:
        """The split chosen: "validation" or "test"."""
        return "test" if self.test_button.isChecked() else "validation"

    # evaluating

    def evaluate(self) -> None:
        """Evaluate the chosen model on the chosen split in the background; an evaluation
        still running is dropped."""
        if not self.evaluate_button.isEnabled():  # F6 with nothing to evaluate
            return
        run_dir, model = self.run_box.currentData(), self.model_box.currentData()
        self._start(Path(run_dir), Path(model) if model else None, self.split(),
                    self._describe())

    def evaluate_again(self) -> None:
        """Evaluate the model shown on its split again (the dataset changed under it)."""
        if self.shown_request is not None:
            self._start(*self.shown_request)

    def _start(self, run_path: Path, model_path: Path | None, split: str, what: str) -> None:
        learnt = run_task(run_path)
        request = (run_path, model_path, split, what)

        def task(on_event, stop) -> tuple[Any, tuple[Path, Path | None, str, str], str]:
            return evaluate_run(run_path, split, model_path,
                                on_progress=progress_events(on_event),
                                stop=stop), request, learnt

        self.job.start(task)
        self.cancel_button.setEnabled(True)
        self.progress.setRange(0, 0)
        self.progress.setFormat("Starting…")
        self._set_status(f"Evaluating {what}…")

    def cancel(self) -> None:
        """Stop the evaluation running; the results shown before stay."""
        if self.job.busy():
            self.job.stop()
            self.cancel_button.setEnabled(False)
            self.progress.setFormat("Stopping…")

    @Slot(object)
    def _progressed(self, event: ProgressEvent) -> None:
        total = max(int(event["total"]), 1)
        self.progress.setRange(0, total)
        self.progress.setValue(min(int(event["done"]), total))
        self.progress.setFormat(f"{event['what']}: {event['done']:,} of {event['total']:,}")

    def _stopped(self) -> bool:
        """True (and says so) when the running evaluation was cancelled."""
        if not self.job.stop_requested():
            return False
        self._finish_progress("Cancelled")
        self._set_status("The evaluation was cancelled."
                         + (" The results below are from before." if self.evaluation else ""))
        return True

    def _succeeded(self, evaluation: Any, request: tuple[Path, Path | None, str, str],
                   task: str) -> None:
        if not self._stopped():
            self.shown_request = request
            self.show_evaluation(evaluation, request[3], task)

    def show_evaluation(self, evaluation: Any, what: str, task: str = DEFAULT_TASK) -> None:
        """Show ``evaluation`` (of the model ``what`` describes, a run of ``task``) in place
        of any before: in the task's own evaluation view, else as class scores."""
        view = self._task_view(task)
        for other in self.task_views.values():
            other.setVisible(other is view)
        if view is not None:
            self.evaluation = evaluation
            summary = view.show_evaluation(evaluation, what)
            self.empty.hide()
            self.results.hide()
            self._finish_progress("Evaluated")
            self._set_status("")
            self.message.emit(f"{what}: {summary}")
            self.check_data()
            self.evaluated.emit(evaluation)
            return
        self._show_class_scores(evaluation, what)

    def _task_view(self, task: str) -> QWidget | None:
        """``task``'s evaluation view, made and laid out in place of the results at first."""
        if task not in self.task_views:
            view = views_for(task).evaluation_view()
            if view is None:
                return None
            view.hide()
            self._layout.insertWidget(self._layout.indexOf(self.results), view, 1)
            self.task_views[task] = view
        return self.task_views[task]

    def _show_class_scores(self, evaluation: Evaluation, what: str) -> None:
        """Show a classifier's ``evaluation``: its accuracy, confusion matrix, per-class
        scores and most confident mistakes."""
        self.evaluation = evaluation
        mistakes = int(np.sum(evaluation.true != evaluation.predicted))
        samples = len(evaluation.true)
        self.headline.setText(
            f"<span style='font-size: 20pt; font-weight: 600;'>{percent(evaluation.accuracy)}"
            "</span>&nbsp; accuracy &nbsp;&nbsp; loss <b>"
            f"{evaluation.loss:.4f}</b> &nbsp;·&nbsp; <b>{samples:,}</b> {evaluation.split} "
            f"samples &nbsp;·&nbsp; <b>{mistakes:,}</b> wrong &nbsp;·&nbsp; {escape(what)}")
        self.notes.setText(" ".join(evaluation.notes))
        self.notes.setVisible(bool(evaluation.notes))
        self.confusion.set_evaluation(evaluation)
        self.class_proxy.setSourceModel(per_class_model(evaluation))
        self.class_table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.mistakes.show_samples(evaluation, evaluation.confident_mistakes(MISTAKES))
        self.cell_grid.show_samples(None, [], CELL_PLACEHOLDER)
        self.cell_caption.setText("")
        self.empty.hide()
        self.results.show()
        total = sum(self.split_view.sizes())
        matrix = min(self.confusion.full_width(), total * 3 // 5)
        self.split_view.setSizes([matrix, total - matrix])
        self._finish_progress(f"Evaluated {samples:,} samples")
        self._set_status("")
        self.message.emit(f"{what}: {percent(evaluation.accuracy)} accuracy on "
                          f"{samples:,} {evaluation.split} samples")
        self.check_data()
        self.evaluated.emit(evaluation)

    @Slot()
    def check_data(self) -> None:
        """Say, with Evaluate again, whether images the results scored have left their
        place (relabelled or deleted) since; undoing that takes the notice away. The scores
        are not patched: the loss needs every answer's probabilities, which are not kept,
        and a moved file's new name does not always tell its new class."""
        gone = sum(not path.exists() for path in evaluated_files(self.evaluation))
        self.stale.setText(STALE.format(images=count(gone, "evaluated image"),
                                        were=plural(gone, "was", "were")))
        self.stale.parentWidget().setVisible(gone > 0 and self.shown_request is not None)

    @Slot(str)
    def _failed(self, text: str) -> None:
        if self._stopped():
            return
        self._finish_progress("Not evaluated")
        note_error("Evaluation failed", text)
        self._set_status(f"The evaluation failed: {text}", error=True)

    @Slot()
    def _ended(self) -> None:
        self.cancel_button.setEnabled(False)

    def _finish_progress(self, text: str) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress.setFormat(text)

    # showing

    @Slot(QModelIndex)
    def _cell_clicked(self, index: QModelIndex) -> None:
        evaluation = self.evaluation
        if evaluation is None:
            return
        true, answer = index.row(), index.column()
        positions = evaluation.cell(true, answer)
        names = evaluation.class_names
        verdict = "answered right" if true == answer else f"answered “{names[answer]}”"
        text = f"{len(positions):,} images of “{names[true]}” {verdict}"
        if len(positions) > MAX_CELL_IMAGES:
            text += f" (the first {MAX_CELL_IMAGES:,} shown)"
        self.cell_caption.setText(text + ".")
        self.cell_grid.show_samples(evaluation, positions[:MAX_CELL_IMAGES],
                                    f"No image of “{names[true]}” was {verdict} on this split.")
        self.tabs.setCurrentIndex(2)

    def _describe(self) -> str:
        run_dir = self.run_box.currentData()
        run = next((r for r in self.runs if str(r.path) == run_dir), None)
        model = self.model_box.currentText().lower() or "its model"
        return f"{run.id if run else run_dir}, {model}"

    def _guide(self, text: str) -> None:
        """Say what can be done next: mid-view while no results show, else above them
        (without READY); an evaluation running keeps its own status."""
        if self.evaluation is None:
            self.empty.setText(text)
        if not self.job.busy():
            self._set_status("" if self.evaluation is None or text == READY else text)

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status.setStyleSheet(ERROR_STYLE if error else "")
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def busy(self) -> bool:
        """True from Evaluate until the evaluation's last signal has been delivered."""
        return self.job.busy()
