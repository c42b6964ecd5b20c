"""The Data view: pick a source and its options on the left; see samples, classes, the health
report and the augmentation preview on the right. Reading the data never blocks the window."""

from __future__ import annotations

import copy
from dataclasses import asdict
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import ProgressEvent, progress_events
from studio.core.base.messages import count
from studio.core.data import sources as data
from studio.core.data.splits import layout_sizes
from studio.core.data.types import SPLITS, DataError, DataPending, DatasetInfo, LoadedData
from studio.core.project.document import DatasetChoice
from studio.gui.data.augmentation import AugmentationView
from studio.gui.data.charts import ClassesView
from studio.gui.data.health import HealthView
from studio.gui.data.options import OptionsForm, estimated_counts
from studio.gui.data.registry import data_views_for
from studio.gui.data.samples import SamplesView
from studio.gui.data.sorting import SampleSorting
from studio.gui.data.source import ERROR_STYLE, SourceForm
from studio.gui.dataset_editor.editor import DatasetEditor
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.forms import VerticalScrollArea, delay, scrolled_body
from studio.gui.widgets.jobs import JobSlot

LOAD_DELAY_MS = 250
"""Wait this long after the last edit before reading the data again (typing a percentage)."""
DROPPABLE = (".csv", ".tsv", ".txt")
NOT_READ = ("image_size", "color", "resize", "normalization", "cache", "class_weights",
            "max_tokens", "sequence_length", "augmentation")
"""Fields of the choice that change how samples are streamed, not which are read."""
CANCELLED = "Reading the data was cancelled: press “Read again” on the Data tab."
"""What the document says while data it waits for stays unread after a cancel."""
NOTES_SHOWN = 3
PROGRESS_STEPS = 1000
FORM_WIDTH = 370
GROUP_MARGINS = (8, 4, 8, 6)
GROUP_SPACING = 3


SPLIT_FIELDS = ("validation_split", "test_split", "seed")


def read_key(choice: DatasetChoice, ignored: tuple[str, ...] = NOT_READ) -> tuple:
    """What decides the samples read and their split: a change means reading again."""
    return tuple(v for k, v in asdict(choice).items() if k not in ignored)


def _load_task(choice: DatasetChoice):
    def task(on_event, stop):
        return data.load(choice, progress_events(on_event), stop)

    return task


def progress_text(what: str, done: int, total: int) -> str:
    """``Checking images: 200 of 1,000``; downloads count megabytes."""
    if total <= 1:
        return f"{what}…"
    if what.startswith("Downloading"):
        return f"{what}: {done / 1e6:,.1f} of {total / 1e6:,.1f} MB"
    return f"{what}: {done:,} of {total:,}"


def dropped_path(mime) -> Path | None:
    """The one local folder or CSV file a drag carries, if it carries exactly that."""
    urls = mime.urls() if mime.hasUrls() else []
    if len(urls) != 1 or not urls[0].isLocalFile():
        return None
    path = Path(urls[0].toLocalFile())
    return path if path.is_dir() or path.suffix.lower() in DROPPABLE else None


class DataPanel(QWidget):
    """Shows and edits the project's dataset; every edit is undoable."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.setAcceptDrops(True)
        self.source = SourceForm(doc)
        self.options = OptionsForm(doc)
        form = QWidget()
        column = QVBoxLayout(form)
        column.setContentsMargins(0, 0, 4, 0)
        column.addWidget(self.source)
        column.addWidget(self.options)
        column.addStretch(1)
        for group in form.findChildren(QGroupBox):  # tight: every row shows at 1400 × 900
            group.layout().setContentsMargins(*GROUP_MARGINS)
            group.layout().setSpacing(GROUP_SPACING)
        scroll = VerticalScrollArea(form)

        self.status = QLabel()
        self.status.setObjectName("data-status")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.cancel = QPushButton("Cancel")
        self.cancel.setObjectName("data-cancel")
        self.cancel.setToolTip("Stop reading the data")
        self.cancel.clicked.connect(self.cancel_load)
        self.retry = QPushButton("Read again")
        self.retry.setToolTip("Read the data again (after fixing the files, or a cancel)")
        self.retry.clicked.connect(self.load_now)
        bar = QHBoxLayout()
        bar.addWidget(self.progress, 1)
        bar.addWidget(self.cancel)
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.retry, 0, Qt.AlignmentFlag.AlignTop)

        self.samples = SamplesView()
        self.sorting = SampleSorting(self.samples, doc)
        self.classes = ClassesView()
        self.health = HealthView()
        self.augmentation = AugmentationView(doc)
        self.editor = DatasetEditor(doc)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for widget, title, tip in (
            (self.samples, "Samples", "Sample images (or rows) with their labels, per split; "
             "an image folder's are sorted here too: select cards, then 1–9 moves them to "
             "that class, F flags, Delete trashes (or right-click)"),
            (self.classes, "Classes", "How many samples each class has in each split"),
            (self.health, "Health", "Problems found while reading: skipped files, "
             "duplicates, imbalance, image sizes and modes"),
            (self.augmentation, "Augmentation", "Random changes to training images, previewed"),
            (self.editor, "Edit", "Change the image folder: add, rename, merge and delete "
             "classes; add, move, flag and delete images (each step undoable)"),
        ):
            self.tabs.setTabToolTip(self.tabs.addTab(widget, title), tip)
        right = QWidget()
        side = QVBoxLayout(right)
        side.addLayout(top)
        side.addLayout(bar)
        side.addWidget(self.tabs, 1)
        splitter = QSplitter()
        splitter.addWidget(scroll)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        width = max(FORM_WIDTH, scroll.minimumSizeHint().width())
        splitter.setSizes([width, 3 * width])
        splitter.setChildrenCollapsible(False)
        inner = QVBoxLayout(scrolled_body(self))  # scrolls rather than widen the window
        inner.setContentsMargins(4, 4, 4, 4)
        inner.addWidget(splitter)

        self.loaded: LoadedData | None = None
        """The data on screen, read for the choice whose read_key is ``self._read``."""
        self._read: tuple | None = None
        self._samples_read: tuple | None = None
        self._samples_shown: tuple | None = None
        self._shown: DatasetChoice | None = None
        self._waiting = False
        """Whether the choice shown waits to be read to be known (a CSV not read yet)."""
        self._pending = False
        self.loader = JobSlot(self)
        self.loader.event.connect(self._progress)
        self.loader.succeeded.connect(self._loaded)
        self.loader.succeeded.connect(lambda _loaded: self._read_ended())
        self.loader.failed.connect(self._failed)
        self.loader.finished.connect(self._load_ended)
        self.timer = delay(self, LOAD_DELAY_MS, self.load_now)
        self._show_busy(False)
        self.retry.hide()
        doc.changed.connect(self.refresh)
        doc.data_wanted.connect(self._read_wanted)
        doc.dataset_files_changed.connect(self._files_changed)
        self.source.dataset_created.connect(lambda: self.tabs.setCurrentWidget(self.editor))
        self.refresh()

    def refresh(self) -> None:
        """Show the document's dataset choice; read the data again if that changed."""
        choice = self.doc.project.dataset
        if choice == self._shown:
            return
        self._shown = copy.deepcopy(choice)
        info, error = self._show_choice()
        if error and not self._waiting:
            self._forget("", "Nothing to show: choose usable data on the left.")
        elif self._only_split_changed(choice):
            self._read = read_key(choice)
            self._loaded(data.resplit(self.loaded, self._shown))
        elif read_key(choice) != self._read:
            self._show_estimate(info)
            self._pending = True
            if self.isVisible() or self._waiting:  # until it is read, training cannot start
                self.timer.start()

    def _show_choice(self) -> tuple[DatasetInfo | None, str]:
        """Show the choice in the forms, as the document describes it (it reads no CSV)."""
        info, error, self._waiting = None, "", False
        try:
            info = self.doc.describe()
        except DataPending as exc:
            error, self._waiting = str(exc), True
        except DataError as exc:
            error = str(exc)
        self.source.refresh(self._shown, info, error, pending=self._waiting)
        if read_key(self._shown, NOT_READ + SPLIT_FIELDS) != self._samples_shown:
            self.options.show_layout_splits({})  # other data: its layout is not known yet
        self.options.refresh(self._shown, info)
        images = info.kind == "image" if info is not None else self._shown.source != "csv"
        self.augmentation.refresh(self._shown, info.sample_shape
                                  if info is not None and images else None)
        self.tabs.setTabVisible(self.tabs.indexOf(self.augmentation), images)
        folder = self._shown.source == "folder" and bool(self._shown.path)
        self.editor.show_folder(self._shown.path if folder else "")
        self.tabs.setTabVisible(self.tabs.indexOf(self.editor), folder)
        return info, error

    def _files_changed(self) -> None:
        """The dataset editor changed the folder: show what it holds now, and read it again
        once the edits pause (a key held down moves image after image)."""
        self._show_choice()
        self.timer.start()

    def _read_wanted(self) -> None:
        """The document waits for the chosen data (say, a CSV changed on disk): read it soon,
        unless that is under way."""
        if not (self.loader.busy() or self.timer.isActive()):
            self.timer.start()

    def _only_split_changed(self, choice: DatasetChoice) -> bool:
        """Whether the samples on show stay and only their split changes: no reading needed."""
        return (self.loaded is not None and not self.loader.busy()
                and read_key(choice, NOT_READ + SPLIT_FIELDS) == self._samples_shown
                and read_key(choice) != self._read)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Read the data the first time the view shows (not at start-up)."""
        super().showEvent(event)
        if self._pending:
            self.load_now()

    def load_now(self) -> None:
        """Read the chosen data in the background, replacing any reading under way."""
        self.timer.stop()
        self._pending = False
        choice = copy.deepcopy(self.doc.project.dataset)
        self._read = read_key(choice)
        self._samples_read = read_key(choice, NOT_READ + SPLIT_FIELDS)
        if self._samples_read != self._samples_shown:  # other data: keep none of the old
            self._clear_views("Reading the data…")
        self.retry.hide()
        self.source.show_found_format("")
        self.status.setStyleSheet("")
        self.status.setText("Reading the data…")
        self.progress.setRange(0, 0)
        self.progress.setFormat("Starting…")
        self._show_busy(True)
        self.loader.start(_load_task(choice))
        self.doc.reading_started()
        if self._waiting:  # no longer why a reading stopped
            self._show_choice()

    def cancel_load(self) -> None:
        """Stop reading; what was shown before stays on screen."""
        self.loader.cancel()
        self._read = None
        if self.loaded is None:
            self._clear_views("Nothing to show: reading was cancelled.")
        self._show_busy(False)
        self.status.setStyleSheet("")
        self.status.setText("Reading the data was cancelled. Press “Read again” to start over.")
        self.retry.show()
        self._read_ended(CANCELLED)

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Accept a dragged folder or CSV file."""
        if dropped_path(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dragMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Keep accepting the drag while it moves over the view."""
        if dropped_path(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Use the dropped folder or CSV file as the data."""
        path = dropped_path(event.mimeData())
        if path is not None:
            event.acceptProposedAction()
            self.source.pick(path)

    def _forget(self, message: str, placeholder: str) -> None:
        """Nothing can be read: cancel any reading, say why and show ``placeholder``."""
        self.timer.stop()
        self.loader.cancel()
        self._show_busy(False)
        self._pending, self._read = False, None
        self.status.setStyleSheet(ERROR_STYLE)
        self.status.setText(message)
        self.retry.hide()
        self.options.show_counts(None, exact=False)
        self._clear_views(placeholder)

    def _clear_views(self, placeholder: str) -> None:
        self.loaded, self._samples_shown = None, None
        self.options.show_layout_splits({})
        for view in (self.samples, self.classes, self.health, self.augmentation):
            view.clear(placeholder)

    def _show_estimate(self, info: DatasetInfo | None) -> None:
        if info is None or info.num_samples is None:
            self.options.show_counts(None, exact=False)
        else:
            self.options.show_counts(estimated_counts(info.num_samples, self._shown),
                                     exact=False)

    def _show_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel.setVisible(busy)

    def _progress(self, event: ProgressEvent) -> None:
        self.progress.setRange(0, PROGRESS_STEPS if event["total"] > 1 else 0)
        self.progress.setValue(round(PROGRESS_STEPS * event["done"] / max(event["total"], 1)))
        self.progress.setFormat(progress_text(event["what"], event["done"], event["total"]))

    def _loaded(self, loaded: LoadedData) -> None:
        self.loaded, self._samples_shown = loaded, self._samples_read
        info = loaded.info
        what = {"image": "image", "table": "row", "text": "text"}[info.kind]
        text = f"Read {count(len(loaded.labels), what)}"
        views = data_views_for(info.task)
        self.source.show_found_format(views.found_format(loaded))
        text += views.summary(loaded)
        notes = loaded.notes + loaded.split_notes()
        if notes:
            listed = "".join(f"\n• {note}" for note in notes[:NOTES_SHOWN])
            more = len(notes) - NOTES_SHOWN
            text += (f". Please note:{listed}" + (f"\n• … {more} more on the Health tab"
                                                   if more > 0 else ""))
        self.status.setStyleSheet("")
        self.status.setText(text + ("" if notes else "."))
        self.options.show_counts({s: loaded.size(s) for s in SPLITS}, exact=True)
        self.options.show_layout_splits(layout_sizes(loaded))
        for view in (self.samples, self.classes, self.health, self.augmentation):
            view.show_data(loaded)

    def _failed(self, message: str) -> None:
        note_error("Cannot read the data", message)
        self._forget(message, "Nothing to show: the data could not be read.")
        self.retry.show()
        self._read_ended(message)

    def _read_ended(self, stopped: str = "") -> None:
        """Tell the document, which may wait for this data; show the choice as now known."""
        self.doc.reading_ended(stopped)
        if self._waiting:
            self._show_choice()

    def _load_ended(self) -> None:
        self._show_busy(False)
