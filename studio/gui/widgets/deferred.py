"""Parts of the window built when they are first needed, so that start-up imports and builds
only what the first paint shows: a tab or a dock's panel when it first shows, a plot just after
the window has first painted (pyqtgraph alone takes about a quarter second to import)."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget


class When(Enum):
    """When a :class:`Deferred` builds its widget, unless asked for it earlier."""

    SHOWN = "shown"
    """As its place first shows (a tab the person opens), so that it shows built."""
    PAINTED = "painted"
    """Just after its place first paints: the window shows first, and the widget follows."""
    ASKED = "asked"
    """Only when asked for: a dock's widget, say, which Qt shows for a moment as the window
    shows even when its tab is behind another (the dock's ``visibilityChanged`` tells)."""


class Deferred(QWidget):
    """The place of a widget that is costly to build: it builds the widget (``build()``) when
    :attr:`when` says, or at once when asked for it (:meth:`widget`), and holds it from then on.

    Give the place the size limits the widget will have, so that the layout does not move when
    it arrives."""

    built = Signal(QWidget)
    """The widget has been built and put in its place."""

    def __init__(self, build: Callable[[], QWidget], when: When = When.SHOWN) -> None:
        super().__init__()
        self._build = build
        self._widget: QWidget | None = None
        self._scheduled = False
        self.when = when
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    def is_built(self) -> bool:
        """Whether the widget has been built."""
        return self._widget is not None

    def widget(self) -> QWidget:
        """The widget, built now if it was not yet."""
        if self._widget is None:
            self._widget = widget = self._build()
            self.layout().addWidget(widget)
            if self.isVisible():
                widget.show()  # at once: a widget added to a shown layout shows only later
            self.built.emit(widget)
        return self._widget

    def built_widget(self) -> QWidget | None:
        """The widget if it has been built, without building it."""
        return self._widget

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Build the widget as the place shows, if it waits for that."""
        if self.when is When.SHOWN:
            self.widget()
        super().showEvent(event)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Once painted, build the widget as soon as the event loop is free, if it waits for
        that."""
        super().paintEvent(event)
        if self.when is When.PAINTED and self._widget is None and not self._scheduled:
            self._scheduled = True
            QTimer.singleShot(0, self, self.widget)


def build_all(root: QWidget) -> None:
    """Build every deferred part under ``root``, and those they hold in turn (to list all the
    window's actions, say)."""
    while waiting := [place for place in root.findChildren(Deferred) if not place.is_built()]:
        for place in waiting:
            place.widget()


def shown(page: QWidget | None) -> QWidget | None:
    """The widget ``page`` stands for: a :class:`Deferred` place's widget once built."""
    if isinstance(page, Deferred) and page.is_built():
        return page.built_widget()
    return page


class DeferredTabs(QTabWidget):
    """Tabs whose pages may be :class:`Deferred` places: once its panel is built, a place stands
    for it in ``widget``, ``currentWidget``, ``indexOf`` and ``setCurrentWidget``, as if the
    panel were the page."""

    def widget(self, index: int) -> QWidget | None:
        """The page at ``index``: its panel, if it is a place whose panel is built."""
        return shown(super().widget(index))

    def currentWidget(self) -> QWidget | None:  # noqa: N802 - Qt's name
        """The current page (its panel, if it is a place whose panel is built)."""
        return shown(super().currentWidget())

    def indexOf(self, widget: QWidget) -> int:  # noqa: N802 - Qt's name
        """The index of the page ``widget`` is, or stands in; -1 if none."""
        for index in range(self.count()):
            if widget in (super().widget(index), self.widget(index)):
                return index
        return -1

    def setCurrentWidget(self, widget: QWidget) -> None:  # noqa: N802 - Qt's name
        """Show the page ``widget`` is, or stands in."""
        self.setCurrentIndex(self.indexOf(widget))
