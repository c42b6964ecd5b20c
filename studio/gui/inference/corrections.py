"""Correcting the project's dataset from what a model answered: in Try, an answered image is
added to the class it belongs to, and a folder's answers (those the model was least sure of)
are sent to a class in one step; in Evaluate, images are relabelled (moved to the class the
person picks) or flagged. Each correction is one undoable step and says what it did in a
line that offers to train again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QToolButton,
    QWidget,
)

from studio.core.base.messages import count, quoted
from studio.core.data.types import FileSamples
from studio.core.inference.predictor import Prediction
from studio.core.tasks.class_scores import Evaluation
from studio.gui.inference.folder_batch import FolderBatch
from studio.gui.inference.image_cards import ImageCards
from studio.gui.inference.result_card import ResultCard
from studio.gui.widgets.dataset_edits import FLAG_MARK, ProjectDataset
from studio.gui.widgets.thumbnail_grid import ThumbnailGrid

ERROR_STYLE = "color: #b3261e;"
NO_FILE = ("This image has no file to add (it was pasted or drawn): save it, then drop the "
           "file here.")
NOT_FILES = ("These samples are not image files (the run trained on in-memory data): only an "
             "image folder's images can be relabelled.")
SELECT = "Select images in the grid first (Ctrl or Shift selects several)."
PATH_ROLE = Qt.ItemDataRole.UserRole + 3
"""An Evaluate grid item's image file (None for an in-memory sample), set by the grid."""
CAPTION_ROLE = Qt.ItemDataRole.UserRole + 4
"""An Evaluate grid item's caption as the grid wrote it, before any mark."""


class ClassMenu(QMenu):
    """The dataset's classes, listed afresh each time the menu opens; choosing one emits
    ``picked`` with its name."""

    picked = Signal(str)

    def __init__(self, title: str, dataset: ProjectDataset, parent: QWidget) -> None:
        super().__init__(title, parent)
        self.dataset = dataset
        self.aboutToShow.connect(self._fill)

    @Slot()
    def _fill(self) -> None:
        self.clear()
        names = self.dataset.classes()
        for name in names:
            action = self.addAction(name.replace("&", "&&"))
            action.triggered.connect(lambda _=False, name=name: self.picked.emit(name))
        if not names:
            self.addAction(self.dataset.why_not() or "The dataset has no classes yet.") \
                .setEnabled(False)


def class_button(text: str, menu: ClassMenu) -> QToolButton:
    """A button opening ``menu`` of classes."""
    button = QToolButton()
    button.setText(text)
    button.setMenu(menu)
    button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button


def offer(widget: QWidget | QAction, why_not: str | None, tip: str) -> None:
    """Enable ``widget`` with ``tip``, or disable it with the reason ``why_not``."""
    widget.setEnabled(why_not is None)
    widget.setToolTip(why_not or tip)


class CorrectionNote(QWidget):
    """A correction's result in one line, with Train again; while images are being added,
    how far they have got and Cancel."""

    def __init__(self, dataset: ProjectDataset, train_again: Callable[[], None]) -> None:
        super().__init__()
        self.setObjectName("correction-note")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.train_button = QPushButton("Train again")
        self.train_button.setObjectName("train-again")
        self.train_button.setToolTip("Train the project again, as it is now, on the corrected "
                                     "dataset (the Runs dock then shows how the data changed)")
        self.train_button.clicked.connect(train_again)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop adding images; those added so far stay (undo "
                                      "removes them)")
        self.cancel_button.clicked.connect(dataset.cancel)
        self.cancel_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.cancel_button)
        layout.addWidget(self.train_button)
        self.corrected = False
        """The dataset changed here: Train again is offered from then on."""
        dataset.changed.connect(lambda: setattr(self, "corrected", True))
        dataset.said.connect(self.show_result)
        dataset.progressed.connect(self._progressed)
        dataset.adding.connect(self._adding)
        self.hide()

    @Slot(str, bool)
    def show_result(self, text: str, error: bool = False) -> None:
        """Say ``text`` (an ``error`` in red), with Train again once the dataset has been
        corrected."""
        self.label.setStyleSheet(ERROR_STYLE if error else "")
        self.label.setText(text)
        self.train_button.setVisible(self.corrected)
        self.show()

    @Slot(str)
    def _progressed(self, text: str) -> None:
        self.label.setStyleSheet("")
        self.label.setText(text)

    @Slot(bool)
    def _adding(self, busy: bool) -> None:
        self.cancel_button.setVisible(busy)
        if busy:
            self.train_button.hide()
            self._progressed("Adding images…")
            self.show()


class TryCorrections(QObject):
    """Try's corrections: "Add to dataset as…" on each answered image's card, and "Add
    shown to dataset as…" for the folder answers the table shows."""

    def __init__(self, images: ImageCards, folder: FolderBatch, dataset: ProjectDataset,
                 train_again: Callable[[], None]) -> None:
        super().__init__(folder)
        self.dataset = dataset
        self.note = CorrectionNote(dataset, train_again)
        self.card_buttons: dict[ResultCard, QToolButton] = {}
        images.card_made.connect(self._card_made)
        self.folder = folder
        self.folder_menu = ClassMenu("Add shown to dataset as", dataset, folder)
        self.folder_menu.picked.connect(self.add_shown)
        self.folder_button = class_button("Add shown to dataset as…", self.folder_menu)
        self.folder_button.setObjectName("try-add-shown")
        folder.add_tool(self.folder_button)
        proxy = folder.proxy
        for signal in (proxy.modelReset, proxy.rowsInserted, proxy.rowsRemoved,
                       proxy.layoutChanged):
            signal.connect(self._update_folder)
        dataset.doc.changed.connect(self.update)
        self.update()

    @Slot(object)
    def _card_made(self, card: ResultCard) -> None:
        if card.prediction.error:
            return
        menu = ClassMenu("Add to dataset as", self.dataset, card)
        menu.picked.connect(lambda name: self.add_card(card, name))
        button = class_button("Add to dataset as…", menu)
        button.setObjectName("try-add-card")
        card.add_tool(button)
        action = QAction("Add to dataset as", card)
        action.setMenu(menu)
        card.addAction(action)
        card.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.card_buttons[card] = button
        button.destroyed.connect(lambda: self.card_buttons.pop(card, None))
        self._update_card(card, button, self.dataset.why_not())

    def add_card(self, card: ResultCard, class_name: str) -> None:
        """Put the card's image in ``class_name`` (copied in, or moved if it is one of the
        dataset's own)."""
        self.dataset.add([Path(card.prediction.source)], class_name)

    def add_shown(self, class_name: str) -> None:
        """Put every image the folder's table shows (answered ones) in ``class_name``, in
        one step."""
        rows = _answered(self.folder.shown_rows())
        if rows:
            self.dataset.add([Path(row.source) for row in rows], class_name)

    @Slot()
    def update(self) -> None:
        """Offer the corrections where the project's dataset takes them, else say why."""
        why_not = self.dataset.why_not()
        for card, button in self.card_buttons.items():
            self._update_card(card, button, why_not)
        self._update_folder()

    @staticmethod
    def _update_card(card: ResultCard, button: QToolButton, why_not: str | None) -> None:
        has_file = Path(card.prediction.source).is_file()
        reason = why_not or (None if has_file else NO_FILE)
        offer(button, reason, "Put this image in a class of the project's dataset (copied "
                              "in; one of the dataset's own is moved): one undoable step")
        for action in card.actions():
            action.setEnabled(reason is None)

    @Slot()
    def _update_folder(self) -> None:
        shown = len(_answered(self.folder.shown_rows()))
        why_not = self.dataset.why_not() or (
            None if shown else "No answered image is shown: answer a folder, or show more.")
        offer(self.folder_button, why_not,
              f"Put the {count(shown, 'image')} shown in a class of the project's dataset "
              "(copied in; the dataset's own are moved), in one undoable step")


def _answered(rows: list[Prediction]) -> list[Prediction]:
    return [row for row in rows if not row.error]


class EvaluationCorrections(QObject):
    """Evaluate's corrections of the images in the cell and mistake grids: relabel them
    (move them to the class picked) or flag them; moved images show where they went until
    the move is undone."""

    def __init__(self, grids: list[ThumbnailGrid], tools: QHBoxLayout,
                 evaluation: Callable[[], Evaluation | None], dataset: ProjectDataset,
                 train_again: Callable[[], None]) -> None:
        super().__init__(tools)
        self.grids = grids
        self.evaluation = evaluation
        self.dataset = dataset
        self.note = CorrectionNote(dataset, train_again)
        self.moved_to: dict[str, str] = {}
        """Where the images relabelled here went (file: class), to say so in the grid."""
        self.relabel_menu = ClassMenu("Relabel as", dataset, tools.parentWidget())
        self.relabel_menu.picked.connect(self.relabel)
        self.relabel_button = class_button("Relabel as…", self.relabel_menu)
        self.relabel_button.setObjectName("evaluation-relabel")
        self.relabel_action = QAction("Relabel as", self)
        self.relabel_action.setMenu(self.relabel_menu)
        self.flag_action = QAction("Flag", self)
        self.flag_action.setShortcut("F")
        self.flag_action.triggered.connect(lambda: self.flag(True))
        self.unflag_action = QAction("Unflag", self)
        self.unflag_action.triggered.connect(lambda: self.flag(False))
        self.flag_button, self.unflag_button = QToolButton(), QToolButton()
        for button, action in ((self.flag_button, self.flag_action),
                               (self.unflag_button, self.unflag_action)):
            button.setDefaultAction(action)
            tools.addWidget(button)
        tools.insertWidget(0, self.relabel_button)
        tools.addStretch(1)
        for grid in grids:
            grid.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
            grid.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
            for action in (self.relabel_action, self.flag_action, self.unflag_action):
                grid.addAction(action)
            self.flag_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            grid.itemSelectionChanged.connect(lambda grid=grid: self._chosen(grid))
            for number in range(1, 10):  # as in the dataset editor's grid
                key = QShortcut(QKeySequence(str(number)), grid)
                key.setContext(Qt.ShortcutContext.WidgetShortcut)
                key.activated.connect(lambda number=number: self.relabel_by_key(number))
            grid.filled.connect(lambda grid=grid: self._mark(grid))
        self.current = grids[0]
        """The grid whose selection the actions act on (the last one chosen in)."""
        dataset.doc.changed.connect(self.update)
        dataset.doc.undo_stack.indexChanged.connect(self.refresh)
        self.update()

    def path(self, item: QListWidgetItem) -> Path | None:
        """The image file the grid ``item`` shows (None for an in-memory sample)."""
        return item.data(PATH_ROLE)

    def selected_paths(self) -> list[Path]:
        """The image files of the items selected in the current grid."""
        return [path for item in self.current.selectedItems()
                if (path := self.path(item)) is not None]

    def relabel(self, class_name: str) -> None:
        """Move the selected images to ``class_name`` (one undoable step)."""
        paths = self.selected_paths()
        if paths and self.dataset.move(paths, class_name):
            self.moved_to.update({str(path): class_name for path in paths})
            self.refresh()

    def relabel_by_key(self, number: int) -> None:
        """Move the selected images to the ``number``-th class (as the menu lists them)."""
        names = self.dataset.classes()
        if not self.relabel_button.isEnabled():
            self.dataset.tell(self.relabel_button.toolTip(), True)
        elif number > len(names):
            self.dataset.tell(f"The dataset has {count(len(names), 'class', 'classes')}: "
                              f"there is no class {number}.", True)
        else:
            self.relabel(names[number - 1])

    def flag(self, flagged: bool) -> None:
        """Flag (or unflag) the selected images (one undoable step)."""
        paths = self.selected_paths()
        if paths and self.dataset.flag(paths, flagged):
            self.refresh()

    def _chosen(self, grid: ThumbnailGrid) -> None:
        if grid.selectedItems():
            self.current = grid
        self.update()

    @Slot()
    def refresh(self) -> None:
        """Mark every grid's items as the dataset now is, and offer the actions again."""
        for grid in self.grids:
            self._mark(grid)
        self.update()

    def _mark(self, grid: ThumbnailGrid) -> None:
        """Write each item's caption as the dataset now is: flagged ones with a flag; those
        whose file has gone say where (and cannot be chosen) until the move is undone."""
        flagged = self.dataset.flagged()
        for row in range(grid.count()):
            item = grid.item(row)
            if item.data(CAPTION_ROLE) is None:
                item.setData(CAPTION_ROLE, item.text())
            caption, path = item.data(CAPTION_ROLE), item.data(PATH_ROLE)
            gone = path is not None and not path.exists()
            if gone:
                where = self.moved_to.get(str(path))
                caption += f"\nnow in {quoted(where)}" if where else "\nmoved or deleted"
            elif path is not None and path.name in flagged:
                caption = FLAG_MARK + caption
            item.setText(caption)
            chosen = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
            item.setFlags(item.flags() & ~chosen if gone else item.flags() | chosen)

    @Slot()
    def update(self) -> None:
        """Offer relabelling and flagging for the selected images, or say why not."""
        paths = self.selected_paths()
        why_not = self.dataset.why_not()
        if why_not is None:
            why_not = self._why_not_selected(paths)
        offer(self.relabel_button, why_not,
              "Move the selected images to the class you pick (one undoable step); keys 1 "
              "to 9 move them to the menu's first to ninth class")
        self.relabel_action.setEnabled(why_not is None)
        flagged = self.dataset.flagged()
        marked = [path.name in flagged for path in paths]
        offer(self.flag_action, why_not or (None if not all(marked) else "Flagged already."),
              "Flag the selected images to look at later (F; one undoable step)")
        offer(self.unflag_action, why_not or (None if any(marked) else "None is flagged."),
              "Take the flag off the selected images")

    def _why_not_selected(self, paths: list[Path]) -> str | None:
        evaluation = self.evaluation()
        if evaluation is None or not isinstance(evaluation.samples, FileSamples):
            return NOT_FILES if evaluation is not None else SELECT
        if not paths:
            return SELECT
        if None in self.dataset.inside(paths):
            return (f"The selected images are not in the project's image folder "
                    f"({self.dataset.doc.project.dataset.path}): the run learnt other data.")
        return None
