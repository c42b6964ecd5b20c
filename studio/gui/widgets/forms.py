"""Small pieces shared by the forms and pages: undoable dataset edits, choice boxes, hints,
buttons of one width, debouncing timers, and the scroll areas that let a page or a column
shrink with the window (scrolling up and down, never sideways for a column)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, QSize, Qt, QTimer
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFrame,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from studio.gui.widgets.document import ProjectDocument

BOX_CHARS = 10
Choices = Sequence[tuple[str, Any, str]]
"""Entries of a choice box: (text shown, value stored, tooltip)."""


def edit_dataset(doc: ProjectDocument, text: str, merge_key: str | None = None,
                 **changes: Any) -> None:
    """Set fields of the project's dataset choice as one undoable edit."""

    def change(project) -> None:
        for name, value in changes.items():
            setattr(project.dataset, name, value)

    doc.edit(text, change, merge_key)


def choice_box(choices: Choices, tip: str) -> QComboBox:
    """A combo box whose items carry the values to store, each with its own tooltip."""
    box = narrow_box()
    box.setToolTip(tip)
    for index, (text, value, item_tip) in enumerate(choices):
        box.addItem(text, value)
        box.setItemData(index, item_tip, Qt.ItemDataRole.ToolTipRole)
    return box


def narrow_box() -> QComboBox:
    """A combo box that does not widen its form to fit its longest item."""
    box = QComboBox()
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(BOX_CHARS)
    return box


def show_choice(box: QComboBox, value: Any) -> None:
    """Select the item storing ``value`` without emitting change signals."""
    index = box.findData(value)
    if index != box.currentIndex():
        with QSignalBlocker(box):
            box.setCurrentIndex(index)


def hint(text: str = "") -> QLabel:
    """A wrapped label in the muted colour for explanations under a form."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet("color: palette(placeholder-text);")
    return label


def same_width(widgets: Sequence[QWidget]) -> None:
    """Give a row of buttons (say) the width of the widest, so that they read as a set."""
    width = max(widget.sizeHint().width() for widget in widgets)
    for widget in widgets:
        widget.setMinimumWidth(width)


def delay(parent: QObject, ms: int, slot) -> QTimer:
    """A single-shot timer calling ``slot``; each ``start()`` restarts the wait (debouncing)."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(ms)
    timer.timeout.connect(slot)
    return timer


def scrolling(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area that resizes it: a short or narrow space scrolls
    it rather than squeezing its rows or widening the window."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    return area


class _PageBody(QWidget):
    """A page's content in its scroll area, which makes a body of wrapped text as tall as its
    preferred height for the width (heightForWidth): this one asks for its least height there
    instead, so the page scrolls only when the window is shorter than what it must show."""

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        layout = self.layout()
        least = layout.minimumHeightForWidth(width) if layout is not None else -1
        return least if least >= 0 else super().heightForWidth(width)


def scrolled_body(page: QWidget) -> QWidget:
    """A new widget to build ``page``'s content in, shown in a scroll area that fills ``page``:
    the page no longer holds the window at its content's minimum size, and a page squeezed
    below that size scrolls (the page itself stays the widget other code refers to)."""
    body = _PageBody()
    layout = QVBoxLayout(page)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(scrolling(body))
    return body


def unscrolled_height(page: QWidget) -> int:
    """The least height at which the body of ``page`` (see :func:`scrolled_body`) shows
    without scrolling, once the layout changes under way have reached it (a plot's least
    height, say, which follows its legend's rows)."""
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    area = page.findChild(QScrollArea, "", Qt.FindChildOption.FindDirectChildrenOnly)
    return area.widget().minimumSizeHint().height() + 2 * area.frameWidth()


class VerticalScrollArea(QScrollArea):
    """A frameless scroll area that scrolls only up and down: its widget always takes the
    viewport's width (its text wraps), and the area is never narrower than the widget's
    minimum width, so nothing is cut at the right edge and no sideways scrollbar appears."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.setWidget(widget)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        widget.installEventFilter(self)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """Wide enough for the widget's minimum width beside the vertical scrollbar."""
        hint = super().minimumSizeHint()
        widget = self.widget()
        content = max(widget.minimumSizeHint().width(), widget.minimumWidth())
        width = content + self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth()
        return QSize(max(hint.width(), width), hint.height())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """Pass a change of the widget's minimum width on to the dock or layout holding us."""
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return False
