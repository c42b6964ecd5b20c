"""View > Hide Training and Runs (Ctrl+J): the docks below the tabs put away and brought back
in one keystroke, so a laptop screen can give their height to the Data, Try or Evaluate tab
and have the curves back when a run starts."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow

HIDE, SHOW = "Hide Training and Runs", "Show Training and Runs"


def in_front(dock: QDockWidget) -> bool:
    """Whether ``dock`` shows: a dock behind another of its tab group stays "visible" to Qt,
    with nothing of it on screen."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


class BottomDocks:
    """The toggle of ``docks`` (the first is raised when they come back, unless another of
    them was in front when they went)."""

    def __init__(self, window: QMainWindow, docks: list[QDockWidget]) -> None:
        self.docks = docks
        self._put_away: list[QDockWidget] = []
        self._front: QDockWidget | None = None
        self.action = QAction(HIDE, window)
        self.action.setShortcut(QKeySequence("Ctrl+J"))
        self.action.setStatusTip("Give the docks' height to the tabs above them, or bring "
                                 "them back")
        self.action.triggered.connect(self.toggle)
        for dock in docks:
            dock.toggleViewAction().toggled.connect(self._name_action)

    def open_docks(self) -> list[QDockWidget]:
        """The docks that are open (shown, or behind another in their tab group)."""
        return [d for d in self.docks if d.toggleViewAction().isChecked()]

    def toggle(self) -> None:
        """Put the open docks away, or bring back those it put away (the first if none)."""
        opened = self.open_docks()
        if opened:
            self._put_away = opened
            self._front = next((d for d in opened if in_front(d)), None)
            for dock in opened:
                dock.hide()
            return
        front = self._front or self.docks[0]
        # the dock shown last comes in front of its tab group
        for dock in sorted(self._put_away or [front], key=lambda d: d is front):
            dock.show()
        front.raise_()

    def bring_back(self, dock: QDockWidget) -> None:
        """If the docks are put away, bring them back with ``dock`` in front (a run started
        meanwhile shows its curves); open docks stay as they are."""
        if self.open_docks():
            return
        self._front = dock
        self.toggle()

    def _name_action(self) -> None:
        self.action.setText(HIDE if self.open_docks() else SHOW)
