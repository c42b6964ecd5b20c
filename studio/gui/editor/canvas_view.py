"""The canvas view: zoom, pan, fit, drop layers from the palette, and quick-add by name."""

from __future__ import annotations

import json

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QStringListModel, Qt, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QCompleter,
    QGraphicsItem,
    QGraphicsView,
    QLineEdit,
    QMenu,
    QWidget,
)

from studio.gui.editor.canvas_blocks import BlockItem
from studio.gui.editor.canvas_items import OVERVIEW_ZOOM, NodeItem
from studio.gui.editor.canvas_scene import CanvasScene
from studio.gui.editor.palette import LAYER_MIME, layers_matching

FRAGMENT_KEY = "layer_studio_fragment"
"""Marks clipboard text that holds copied layers."""
ZOOM_STEP = 1.15
MIN_ZOOM, MAX_ZOOM = 0.1, 3.0
FIT_MARGIN = 40.0


class QuickAdd(QLineEdit):
    """A search box listing the layer types that contain what was typed, best first; Enter
    adds the first one (or the one picked in the list), Escape closes it."""

    chosen = Signal(str)
    """The layer type the person picked."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setPlaceholderText("Add layer: type part of its name")
        self.setFixedWidth(240)
        self.matches = QStringListModel(self)
        completer = QCompleter(self.matches, self)
        completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        completer.activated.connect(self._pick)
        self.setCompleter(completer)
        self.textEdited.connect(lambda text: self.matches.setStringList(layers_matching(text)))
        self.returnPressed.connect(lambda: self._pick(self.text()))
        self.hide()

    def open_at(self, point: QPoint) -> None:
        """Show the box at ``point`` (in the parent's coordinates), empty and focused."""
        self.clear()
        self.matches.setStringList([])
        self.move(point)
        self.show()
        self.raise_()
        self.setFocus()

    def _pick(self, text: str) -> None:
        if not self.isVisible():
            return  # Enter on the completer's list arrives twice: as activated and returnPressed
        matches = layers_matching(text)
        if not matches:
            return
        self.hide()
        self.chosen.emit(matches[0])

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
            return
        super().keyPressEvent(event)


class CanvasView(QGraphicsView):
    """Shows a :class:`CanvasScene`; wheel zooms, middle-drag pans, rubber band selects."""

    def __init__(self, scene: CanvasScene) -> None:
        super().__init__(scene)
        self.canvas = scene
        self.setObjectName("canvas")
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState)
        """Each item sets the pen, brush, font and antialiasing it draws with."""
        self.setAcceptDrops(True)
        self.setBackgroundBrush(Qt.GlobalColor.white)
        self._pan_from: QPoint | None = None
        self._fitted = False
        """The view shows the whole model as fitted, untouched since: a resize fits again."""
        self.quick_add = QuickAdd(self)
        self.quick_add.chosen.connect(self._quick_added)
        self._quick_at = QPointF()
        self.setSceneRect(QRectF())
        scene.doc.changed.connect(self._edited)
        scene.doc.replaced.connect(self.show_model)
        scene.selectionChanged.connect(self._update_overview)

    # Room to scroll: the view's scene rect only ever grows while a project is shown

    def _make_room(self) -> None:
        """Grow the scene rect to hold every node and what is in view, with a view's worth of
        space around, so the view can scroll anywhere near the model.

        Qt would otherwise follow the items' bounding rect, and whenever that changed (a node
        added or moved) the view scrolled or re-centred it: every node jumped on screen. A
        rect that never shrinks, and always exceeds the view, keeps them where they are.
        """
        seen = self.mapToScene(self.viewport().rect()).boundingRect()
        wanted = seen.united(self.canvas.itemsBoundingRect())
        wanted.adjust(-seen.width(), -seen.height(), seen.width(), seen.height())
        if not self.sceneRect().contains(wanted):
            self.setSceneRect(self.sceneRect().united(wanted))

    def _edited(self) -> None:
        self._fitted = False
        self._make_room()
        self._update_overview()

    # The overview: far out, the view draws the whole model in a few calls

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802 - Qt's name
        """Draw the overview below the (then empty) items when zoomed far out; this is where
        the zoom of every paint is known, however the view was scaled."""
        super().drawBackground(painter, rect)
        self.canvas.show_overview(self.zoom() < OVERVIEW_ZOOM)
        if self.canvas.overview:
            self.canvas.overview_drawing.draw(painter)

    def _update_overview(self) -> None:
        """Repaint the overview: Qt drops the updates of items that draw nothing, so their
        moves, selection and edits would not show by themselves."""
        if self.canvas.overview:
            self.viewport().update()

    def _reset_room(self) -> None:
        """Start the scene rect afresh around the model (another project is shown)."""
        self.setSceneRect(self.canvas.itemsBoundingRect())
        self._make_room()

    # Zoom, pan and fit

    def zoom(self) -> float:
        """The current scale (1.0 is 100%)."""
        return self.transform().m11()

    def zoom_by(self, factor: float) -> None:
        """Zoom in (factor > 1) or out, within sensible limits: from far enough out to see
        the whole model (or 10%) to 300%."""
        low = min(MIN_ZOOM, self._fitting_zoom())
        factor = max(low / self.zoom(), min(MAX_ZOOM / self.zoom(), factor))
        self.scale(factor, factor)
        self._fitted = False
        self._make_room()

    def _model_box(self) -> QRectF:
        return self.canvas.itemsBoundingRect().adjusted(-FIT_MARGIN, -FIT_MARGIN,
                                                        FIT_MARGIN, FIT_MARGIN)

    def _fitting_zoom(self) -> float:
        """The zoom at which the whole model fits the view."""
        box, seen = self._model_box(), self.viewport().rect()
        if box.isEmpty() or seen.isEmpty():
            return MIN_ZOOM
        return min(seen.width() / box.width(), seen.height() / box.height())

    def fit(self) -> None:
        """Show every node, centred, at no more than 100%."""
        if not self.canvas.nodes:
            return
        self.resetTransform()
        zoom = min(1.0, self._fitting_zoom())
        self.scale(zoom, zoom)
        self._make_room()
        self.centerOn(self._model_box().center())
        self._fitted = True

    def show_model(self) -> None:
        """Show a newly opened project: all of it, fitted and centred."""
        self._reset_room()
        self.fit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        """Keep the centre in place; a model still shown as fitted is fitted again."""
        super().resizeEvent(event)
        self._make_room()
        if self._fitted:
            self.fit()

    def visible_centre(self) -> QPointF:
        """The scene point at the middle of the view."""
        return self.mapToScene(self.viewport().rect().center())

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt's name
        self.zoom_by(ZOOM_STEP ** (event.angleDelta().y() / 120))

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.MiddleButton:
            self._pan_from = event.position().toPoint()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._update_overview()  # nodes may be dragged
        if self._pan_from is not None:
            delta = event.position().toPoint() - self._pan_from
            self._pan_from = event.position().toPoint()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - delta.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - delta.y())
            self._fitted = False
            self._make_room()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if self._pan_from is not None and event.button() == Qt.MouseButton.MiddleButton:
            self._pan_from = None
            self.viewport().unsetCursor()
            return
        super().mouseReleaseEvent(event)

    # Adding layers: drop from the palette, or quick-add by name

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        """Take layers from the palette; leave anything else (files) to the window."""
        if event.mimeData().hasFormat(LAYER_MIME):
            event.acceptProposedAction()
        else:
            event.ignore()

    dragMoveEvent = dragEnterEvent

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        if not event.mimeData().hasFormat(LAYER_MIME):
            event.ignore()
            return
        layer_type = bytes(event.mimeData().data(LAYER_MIME)).decode()
        self.canvas.clearSelection()
        self.canvas.add_layer(layer_type, self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()

    def open_quick_add(self) -> None:
        """Open the search box under the mouse (or in the middle) to add a layer by name;
        near an edge it moves in, so the whole box shows inside the canvas."""
        viewport = self.viewport()
        point = viewport.mapFromGlobal(self.cursor().pos())
        if not viewport.rect().contains(point):
            point = viewport.rect().center()
        self._quick_at = self.mapToScene(point)
        area = viewport.geometry()
        box = QRect(viewport.mapToParent(point), self.quick_add.sizeHint())
        box.setWidth(self.quick_add.width())
        box.moveRight(min(box.right(), area.right()))
        box.moveBottom(min(box.bottom(), area.bottom()))
        box.moveLeft(max(box.left(), area.left()))
        box.moveTop(max(box.top(), area.top()))
        self.quick_add.open_at(box.topLeft())

    def _quick_added(self, layer_type: str) -> None:
        self.canvas.add_layer(layer_type, self._quick_at)
        self.setFocus()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt's name
        """Right-click on a layer: its one-click fixes, Duplicate, Delete, and marking the
        selection as a block (or unmarking its block); on a block's frame: select its layers
        or unmark it."""
        menu = self.context_menu(self.itemAt(event.pos()))
        if menu is None:
            super().contextMenuEvent(event)
            return
        menu.exec(event.globalPos())

    def context_menu(self, item: QGraphicsItem | None) -> QMenu | None:
        """The menu a right-click on ``item`` opens (None: not a layer or a block)."""
        if isinstance(item, BlockItem):
            menu = QMenu(self)
            ids = [member.node_id for member in item.members]
            menu.addAction(f"Select {item.name}'s Layers", lambda: self.canvas.select_ids(ids))
            menu.addAction(f"Unmark {item.name}", lambda: self.canvas.unmark_block(item.name))
            return menu
        if not isinstance(item, NodeItem):
            return None
        if not item.isSelected():
            self.canvas.select_ids([item.node_id])
        menu = QMenu(self)
        for fix in self.canvas.doc.fixes_for(item.node_id):
            menu.addAction(fix.label, lambda f=fix: self.canvas.doc.apply_fix(f))
        if not menu.isEmpty():
            menu.addSeparator()
        menu.addAction("Duplicate", self.duplicate)
        menu.addAction("Delete", self.canvas.delete_selected)
        menu.addSeparator()
        if item.block is not None:
            name = item.block.name
            menu.addAction(f"Unmark {name}", lambda: self.canvas.unmark_block(name))
        else:
            menu.addAction("Mark as Block", self.canvas.mark_block)
        return menu

    # Clipboard

    def copy(self) -> bool:
        """Put the selected layers on the clipboard; False if nothing is selected.

        They go as JSON text with a marker key: a QMimeData made in Python and handed to the
        clipboard is freed twice when the app exits (PySide6), which crashed on quit.
        """
        fragment = self.canvas.fragment_of_selection()
        if fragment is None:
            return False
        QGuiApplication.clipboard().setText(json.dumps({FRAGMENT_KEY: 1, **fragment}, indent=1))
        return True

    def paste(self) -> list[str]:
        """Paste layers copied from a canvas; returns their new ids (none if the clipboard
        holds something else)."""
        try:
            data = json.loads(QGuiApplication.clipboard().text())
        except ValueError:
            return []
        if not isinstance(data, dict) or data.get(FRAGMENT_KEY) != 1:
            return []
        return self.canvas.paste(data)

    def duplicate(self) -> list[str]:
        """Copy and paste the selection in one go."""
        fragment = self.canvas.fragment_of_selection()
        return self.canvas.paste(fragment) if fragment else []

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Backspace deletes too (Delete, "/" and the rest are the window's actions)."""
        if event.key() == Qt.Key.Key_Backspace:
            self.canvas.delete_selected()
            return
        super().keyPressEvent(event)

