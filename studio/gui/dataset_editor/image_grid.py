"""The images of one class as a grid of cards: every image (thumbnails decoded in the
background as they scroll into view), flagged ones marked, several selectable and dragged
onto a class to move them; files dropped on it are added to the class."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QPainter, QPalette, QPolygon
from PySide6.QtWidgets import QAbstractItemView, QListView, QStyledItemDelegate

from studio.gui.dataset_editor.thumbnails import Thumbnails
from studio.gui.dataset_editor.transfer import IMAGES_MIME, images_mime, local_files

SIDE = 88
"""A card's picture, in pixels across."""
CELL = QSize(SIDE + 12, SIDE + 12)
FLAG_SIDE = 18
FLAG_COLOR = QColor("#e8710a")
FLAGGED_ROLE = Qt.ItemDataRole.UserRole + 1
EMPTY = ("No images in this class yet: drop image files or folders here, paste them "
         "(Ctrl+V), or use Add images….")


class ImagesModel(QAbstractListModel):
    """The images of a class, as paths relative to the dataset's root."""

    def __init__(self, thumbnails: Thumbnails) -> None:
        super().__init__()
        self.root = Path()
        self.paths: list[str] = []
        self.flagged: set[str] = set()
        self.thumbnails = thumbnails
        self._rows: dict[str, int] = {}
        thumbnails.ready.connect(self._thumbnail_ready)

    def show(self, root: Path, paths: list[str], flagged: set[str]) -> None:
        """Show ``paths`` (of the dataset at ``root``); ``flagged``: flagged file names."""
        if root != self.root or paths != self.paths:
            self.beginResetModel()
            self.root, self.paths = root, paths
            self._rows = {str(root / path): row for row, path in enumerate(paths)}
            self.thumbnails.forget()
            self.flagged = flagged
            self.endResetModel()
        elif flagged != self.flagged:
            self.flagged = flagged
            if paths:
                self.dataChanged.emit(self.index(0), self.index(len(paths) - 1),
                                      [FLAGGED_ROLE, Qt.ItemDataRole.ToolTipRole])

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's
        return 0 if parent.isValid() else len(self.paths)

    def data(self, index, role: int = Qt.ItemDataRole.DisplayRole):
        path = self.paths[index.row()]
        name = Path(path).name
        if role == Qt.ItemDataRole.DecorationRole:
            return self.thumbnails.get(str(self.root / path))
        if role == FLAGGED_ROLE:
            return name in self.flagged
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{path}" + ("\nFlagged (F to unflag)" if name in self.flagged else "")
        return None

    def flags(self, index) -> Qt.ItemFlag:
        return (Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                | Qt.ItemFlag.ItemIsDragEnabled)

    def mimeTypes(self) -> list[str]:  # noqa: N802 - Qt's name
        return [IMAGES_MIME, "text/uri-list"]

    def mimeData(self, indexes):  # noqa: N802 - Qt's name
        rows = sorted({index.row() for index in indexes})
        return images_mime(self.root, [self.paths[row] for row in rows])

    def supportedDragActions(self) -> Qt.DropAction:  # noqa: N802 - Qt's name
        return Qt.DropAction.MoveAction | Qt.DropAction.CopyAction

    def _thumbnail_ready(self, path: str) -> None:
        row = self._rows.get(path)
        if row is not None:
            index = self.index(row)
            self.dataChanged.emit(index, index, [Qt.ItemDataRole.DecorationRole])


class CardDelegate(QStyledItemDelegate):
    """A card: the picture fitted into the cell (small ones enlarged crisply), a frame when
    selected, and an orange corner when flagged."""

    def paint(self, painter: QPainter, option, index) -> None:
        selected = bool(option.state & option.state.State_Selected)
        rect = option.rect.adjusted(2, 2, -2, -2)
        painter.save()
        palette = option.palette
        painter.fillRect(rect, palette.color(QPalette.ColorRole.Highlight) if selected
                         else palette.color(QPalette.ColorRole.AlternateBase))
        picture = index.data(Qt.ItemDataRole.DecorationRole)
        inner = rect.adjusted(4, 4, -4, -4)
        if picture is not None:
            zoom = min(inner.width() / picture.width(), inner.height() / picture.height())
            if zoom >= 2:
                zoom = float(int(zoom))
            size = QSize(round(picture.width() * zoom), round(picture.height() * zoom))
            target = QRect(QPoint(0, 0), size)
            target.moveCenter(inner.center())
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, zoom < 1)
            painter.drawPixmap(target, picture)
        if index.data(FLAGGED_ROLE):
            corner = rect.topRight()
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(FLAG_COLOR)
            painter.drawPolygon(QPolygon([corner, corner - QPoint(FLAG_SIDE, 0),
                                          corner + QPoint(0, FLAG_SIDE)]))
        painter.restore()

    def sizeHint(self, option, index) -> QSize:  # noqa: N802 - Qt's name
        return CELL


class ImageGrid(QListView):
    """The selected class's images; emits ``files_dropped`` for files dropped on it."""

    files_dropped = Signal(list)
    """Local files or folders dropped on the grid (a list of Path)."""

    def __init__(self, model: ImagesModel) -> None:
        super().__init__()
        self.setObjectName("dataset-images")
        self.setModel(model)
        self.setItemDelegate(CardDelegate(self))
        self.setViewMode(QListView.ViewMode.IconMode)
        self.setMovement(QListView.Movement.Static)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setUniformItemSizes(True)
        self.setGridSize(CELL)
        self.setSpacing(0)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragDrop)
        self.viewport().setAcceptDrops(True)  # a static list view turns drops off
        self.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.setToolTip("The class's images. Select several with Ctrl or Shift; drag them onto "
                        "a class to move them, or press its number (1–9). F flags, Delete "
                        "moves to the trash. Drop or paste (Ctrl+V) files to add them.")

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """The cards; with none, how to add some."""
        super().paintEvent(event)
        if self.model().rowCount() == 0 and self.isEnabled():
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(self.viewport().rect().adjusted(12, 12, -12, -12),
                             Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, EMPTY)
            painter.end()

    def selected_paths(self) -> list[str]:
        """The selected images, in grid order."""
        rows = sorted(index.row() for index in self.selectionModel().selectedIndexes())
        return [self.model().paths[row] for row in rows]

    def show_images(self, root: Path, paths: list[str], flagged: set[str],
                    again: bool) -> None:
        """Show ``paths`` (flagged: the file names ``flagged``). Shown ``again`` (the same
        class after an edit), the scroll position and the selection stay, and if the
        selected images left (moved or deleted), the one now in the place of the first is
        selected, to go on sorting."""
        kept = self.selected_paths() if again else []
        rows = [index.row() for index in self.selectionModel().selectedIndexes()]
        scroll = self.verticalScrollBar().value()
        self.model().show(root, paths, flagged)
        if not again:
            return
        wanted = set(kept)
        chosen = [row for row, path in enumerate(paths) if path in wanted]
        if not chosen and rows and paths:
            chosen = [min(min(rows), len(paths) - 1)]
        selection = self.selectionModel()
        for row in chosen:
            selection.select(self.model().index(row), selection.SelectionFlag.Select)
        if chosen:
            selection.setCurrentIndex(self.model().index(chosen[0]),
                                      selection.SelectionFlag.NoUpdate)
        self.verticalScrollBar().setValue(scroll)

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Take files from outside; the grid's own images are dropped on a class."""
        if not event.mimeData().hasFormat(IMAGES_MIME) and local_files(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Add the dropped files to the class shown."""
        files = local_files(event.mimeData())
        if event.mimeData().hasFormat(IMAGES_MIME) or not files:
            event.ignore()
            return
        event.setDropAction(Qt.DropAction.CopyAction)
        event.accept()
        self.files_dropped.emit(files)
