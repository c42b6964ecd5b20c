"""The "Search…" button beside a value the search can vary, in the inspector and the training
settings: it opens the dimension dialog and shows whether, and over which values, the value is
searched."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QMenu, QToolButton, QWidget

from studio.core.search.space import SearchSpaceError, check_dimension, target_label
from studio.gui.widgets.dimension_dialog import (
    DimensionDialog,
    dimension_of,
    format_points,
    open_dimension_dialog,
    remove_dimension,
)
from studio.gui.widgets.document import ProjectDocument

SEARCHED_STYLE = ("QToolButton { background: #d2e3fc; border: 1px solid #8ab4f8; "
                  "border-radius: 3px; }")
ICON_SIZE = 14
IDLE_COLOR = "#5f6368"
SEARCHED_COLOR = "#1a73e8"


def magnifier_icon(color: str, size: int = ICON_SIZE) -> QIcon:
    """A magnifying glass drawn in ``color``: the Search… button's icon."""
    pixmap = QPixmap(size * 2, size * 2)  # drawn at twice the size, sharp on high-DPI screens
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pen = QPen(QColor(color), size / 8)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    radius = size * 0.28
    centre = QPointF(size * 0.42, size * 0.42)
    painter.drawEllipse(centre, radius, radius)
    pen.setWidthF(size / 6)
    painter.setPen(pen)
    painter.drawLine(QPointF(size * 0.63, size * 0.63), QPointF(size * 0.86, size * 0.86))
    painter.end()
    return QIcon(pixmap)


class SearchButton(QToolButton):
    """Opens the dimension dialog for ``target``; highlighted, with the searched values in its
    tooltip, while the value is a search dimension. Right-click offers to stop searching it."""

    def __init__(self, doc: ProjectDocument, target: str) -> None:
        super().__init__()
        self.doc = doc
        self.target = target
        self.dialog: DimensionDialog | None = None
        """The dialog opened last (for tests and keyboard users)."""
        self.setObjectName(f"search-{target}")
        self.setText("Search…")
        self.setIconSize(QSize(ICON_SIZE, ICON_SIZE))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.setAutoRaise(True)
        self.setFixedWidth(ICON_SIZE + 4)  # narrow: settings forms keep their width
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.clicked.connect(self.open_dialog)
        self.searched = False
        doc.changed.connect(self.refresh)
        self.refresh()

    def open_dialog(self) -> DimensionDialog:
        """Ask which values to search (pre-filled); OK makes them a dimension, one undo step."""
        self.dialog = open_dimension_dialog(self.window(), self.doc, self.target)
        return self.dialog

    def searched_text(self) -> str:
        """The values searched, in words; empty if the value is not searched."""
        dimension = dimension_of(self.doc.project, self.target)
        if dimension is None:
            return ""
        try:
            return format_points(check_dimension(self.doc.project, dimension))
        except SearchSpaceError as exc:
            return f"cannot be searched: {exc}"

    def refresh(self) -> None:
        """Show whether the value is searched."""
        searched = self.searched_text()
        label = target_label(self.target)
        self.searched = bool(searched)
        self.setStyleSheet(SEARCHED_STYLE if searched else "")
        self.setIcon(magnifier_icon(SEARCHED_COLOR if searched else IDLE_COLOR))
        if searched:
            self.setToolTip(f"{label} is searched: {searched}. Click to change the values; "
                            "right-click to stop searching it.")
        else:
            self.setToolTip(f"Search…: try several values of {label.lower()} in a "
                            "hyperparameter search (the Search tab runs it)")

    def contextMenuEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Offer to change the values or to stop searching the value."""
        menu = QMenu(self)
        menu.addAction("Search…", self.open_dialog)
        menu.addAction("Don't search", lambda: remove_dimension(self.doc, self.target)
                       ).setEnabled(self.searched)
        menu.exec(event.globalPos())


def with_search_button(widget: QWidget, doc: ProjectDocument, target: str) -> QWidget:
    """``widget`` with a Search… button after it, in one row widget (``.search_button``)."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(1)
    layout.addWidget(widget, 1)
    row.search_button = SearchButton(doc, target)
    layout.addWidget(row.search_button)
    return row
