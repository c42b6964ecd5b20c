"""What the canvas draws: a node per layer with its ports, and a curved edge per connection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import Protocol

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QStyleOptionGraphicsItem

from studio.core.model.layout import NODE_HEIGHT, NODE_WIDTH, ROW, V_GAP

PORT_RADIUS = 6.0
CORNER = 8.0
TEXT_MARGIN = 10.0
TITLE_PX = 13
TEXT_PX = 12
"""Text sizes in pixels at 100%: readable on any screen, whatever the platform's point size."""
LINE_HEIGHT = 16.0
TEXT_TOP = 6.0
OVERVIEW_ZOOM = 0.15
"""Below this zoom a node is too small to read: the view draws every node as a box and every
wire as a line in one go (OverviewDrawing), since drawing hundreds of items one by one, each a
call into Python, takes longer than a frame."""
DETAIL_ZOOM = 0.55
"""Below this zoom a node draws its box, its ports and its type in large letters, but not
its smaller lines, which would be too small to read (and slow to draw by the hundred)."""
OVERVIEW_TITLE_PX = 30
SKIP_LANE = NODE_WIDTH / 2 + 24
"""How far right of a column's centre a wire that skips one row runs past it."""
SKIP_STEP = 14
"""How much farther out a wire runs for each further row it skips, so that skips nested in
one another (a U-Net's) run in lanes of their own, the longest outermost."""
LANE_ROWS = 4
"""Wires between columns climbing or dropping this many rows or more run at a quarter of
their strip's width from its middle; those of fewer rows, nearer it."""
CATEGORY_COLOURS = {
    "Core": "#e8f0fe",
    "Activations": "#fff0e6",
    "Convolution": "#e6f4ea",
    "Resizing and padding": "#fdeee2",
    "Regularization": "#fef7e0",
    "Preprocessing": "#f3e8fd",
    "Sequence": "#e4f7fb",
    "Merge": "#fce8e6",
    "Detection": "#fde7f3",
    "Transfer learning": "#e0f2f1",
}
PROBLEM_COLOUR = QColor("#c5221f")
SELECTED_COLOUR = QColor("#1a73e8")
EDGE_COLOUR = QColor("#80868b")
TEXT_COLOUR = QColor("#202124")
MUTED_COLOUR = QColor("#3c4043")
"""Secondary text: lighter than the title, still above 7:1 contrast on every card colour."""
BORDER_COLOUR = QColor("#5f6368")


@dataclass(frozen=True)
class NodeLook:
    """Everything a node shows; the scene builds it from the document and its analysis."""

    node_id: str
    layer_type: str
    category: str
    key_params: str
    shape: str
    params: str
    problem: str
    has_input: bool
    help: str


CARD = QRectF(0, 0, NODE_WIDTH, NODE_HEIGHT)
TEXT_WIDTH = int(NODE_WIDTH - 2 * TEXT_MARGIN)


@dataclass(frozen=True)
class TextLine:
    """One piece of a node's text, laid out (and elided) once when its look changes."""

    text: str
    font: QFont
    colour: QColor
    rect: QRectF
    align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft


def _row(line: int) -> QRectF:
    return QRectF(TEXT_MARGIN, TEXT_TOP + line * LINE_HEIGHT, TEXT_WIDTH, LINE_HEIGHT)


@cache
def node_fonts() -> tuple[QFont, QFont]:
    """The title's bold font and the smaller lines' font, at fixed pixel sizes."""
    title = QFont(QGuiApplication.font())
    title.setPixelSize(TITLE_PX)
    title.setBold(True)
    text = QFont(QGuiApplication.font())
    text.setPixelSize(TEXT_PX)
    return title, text


def text_lines(look: NodeLook) -> list[TextLine]:
    """The lines a node shows: its type, its id, its key parameters, its shape and size.

    A line too long for the card is elided: the id in the middle, so that its start and its
    number both stay; the others at the end (the tooltip has them whole).
    """
    title_font, font = node_fonts()
    title = QFontMetrics(title_font).elidedText(_title(look), Qt.TextElideMode.ElideRight,
                                                TEXT_WIDTH)
    metrics = QFontMetrics(font)
    lines = [
        TextLine(title, title_font, _title_colour(look), _row(0)),
        TextLine(metrics.elidedText(look.node_id, Qt.TextElideMode.ElideMiddle, TEXT_WIDTH),
                 font, MUTED_COLOUR, _row(1)),
        TextLine(metrics.elidedText(look.key_params, Qt.TextElideMode.ElideRight, TEXT_WIDTH),
                 font, TEXT_COLOUR, _row(2)),
    ]
    if not look.shape:
        return [*lines, TextLine("shape unknown", font, MUTED_COLOUR, _row(3))]
    size = f"{look.params} params"
    shape_width = TEXT_WIDTH - metrics.horizontalAdvance(size) - 8
    return [*lines,
            TextLine(metrics.elidedText(look.shape, Qt.TextElideMode.ElideRight, shape_width),
                     font, MUTED_COLOUR, _row(3)),
            TextLine(size, font, MUTED_COLOUR, _row(3), Qt.AlignmentFlag.AlignRight)]


def _title(look: NodeLook) -> str:
    return ("⚠ " if look.problem else "") + look.layer_type


def _title_colour(look: NodeLook) -> QColor:
    return PROBLEM_COLOUR if look.problem else TEXT_COLOUR


def overview_title(look: NodeLook) -> TextLine:
    """The type alone, as large as fits the card (up to OVERVIEW_TITLE_PX): what a node
    shows when zoomed out, so a whole model in view still reads as a list of layer types."""
    font = QFont(node_fonts()[0])
    font.setPixelSize(OVERVIEW_TITLE_PX)
    wide = QFontMetrics(font).horizontalAdvance(_title(look))
    font.setPixelSize(max(TITLE_PX, min(OVERVIEW_TITLE_PX, OVERVIEW_TITLE_PX * TEXT_WIDTH // wide)))
    text = QFontMetrics(font).elidedText(_title(look), Qt.TextElideMode.ElideRight, TEXT_WIDTH)
    return TextLine(text, font, _title_colour(look), CARD, Qt.AlignmentFlag.AlignHCenter)


class Frame(Protocol):
    """What a card knows of the block frame around it (``canvas_blocks.BlockItem``)."""

    name: str

    def refit(self) -> None:
        """Fit the frame to where its cards are now."""


class NodeItem(QGraphicsItem):
    """One layer: a rounded card with an input port on top and an output port below.

    What it draws depends on the zoom (see OVERVIEW_ZOOM, DETAIL_ZOOM), so that a view of a
    few hundred layers pans and zooms smoothly.
    """

    def __init__(self, look: NodeLook, overview: OverviewDrawing | None = None) -> None:
        super().__init__()
        self.look = look
        self.overview_drawing = overview
        """The scene's overview, told when this node moves, is selected or changes look."""
        self.lines: list[TextLine] = []
        self.overview: TextLine | None = None
        self.edges: list[EdgeItem] = []
        self.block: Frame | None = None
        """The frame of the block this layer is in, refitted as the card moves."""
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsMovable
                      | QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
                      | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges)
        self.setAcceptHoverEvents(True)
        self.setZValue(1)
        self.show_look(look)

    @property
    def node_id(self) -> str:
        """The layer id this item shows."""
        return self.look.node_id

    def show_look(self, look: NodeLook) -> None:
        """Show new texts and problem state."""
        self.look = look
        self.lines = text_lines(look)
        self.overview = overview_title(look)
        self.fill = QColor(CATEGORY_COLOURS.get(look.category, "#f1f3f4"))
        self._fill = QBrush(self.fill)
        tip = f"<b>{look.layer_type}</b> <i>{look.node_id}</i> — {look.help}"
        if look.problem:
            tip += f"<br><br><b>Problem:</b> {look.problem}"
        self.setToolTip(tip)
        self._changed_overview()
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        pad = PORT_RADIUS + 2
        return QRectF(-2, -pad, NODE_WIDTH + 4, NODE_HEIGHT + 2 * pad)

    def input_port(self) -> QPointF:
        """Scene position of the input port."""
        return self.mapToScene(QPointF(NODE_WIDTH / 2, 0))

    def output_port(self) -> QPointF:
        """Scene position of the output port."""
        return self.mapToScene(QPointF(NODE_WIDTH / 2, NODE_HEIGHT))

    def on_output_port(self, scene_pos: QPointF) -> bool:
        """True if ``scene_pos`` is on (or close to) the output port."""
        delta = scene_pos - self.output_port()
        return delta.x() ** 2 + delta.y() ** 2 <= (PORT_RADIUS * 2.2) ** 2

    def _border(self) -> QPen:
        if self.isSelected():
            return QPen(SELECTED_COLOUR, 2.6)
        if self.look.problem:
            return QPen(PROBLEM_COLOUR, 2.2)
        return QPen(BORDER_COLOUR, 1.2)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        zoom = option.levelOfDetailFromTransform(painter.worldTransform())  # 1.0 at 100%
        zoom = round(zoom, 6)  # a view at DETAIL_ZOOM: an item far down measures 0.5499999
        painter.setPen(self._border())
        painter.setBrush(self._fill)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.drawRoundedRect(CARD, CORNER, CORNER)
        for line in self.lines if zoom >= DETAIL_ZOOM else [self.overview]:
            painter.setFont(line.font)
            painter.setPen(line.colour)
            painter.drawText(line.rect, line.align | Qt.AlignmentFlag.AlignVCenter, line.text)
        painter.setPen(QPen(BORDER_COLOUR, 1.2))
        painter.setBrush(QBrush(QColor("white")))
        if self.look.has_input:
            painter.drawEllipse(QPointF(NODE_WIDTH / 2, 0), PORT_RADIUS, PORT_RADIUS)
        painter.setBrush(QBrush(BORDER_COLOUR))
        painter.drawEllipse(QPointF(NODE_WIDTH / 2, NODE_HEIGHT), PORT_RADIUS, PORT_RADIUS)

    def _changed_overview(self) -> None:
        if self.overview_drawing is not None:
            self.overview_drawing.forget()

    def itemChange(self, change, value):  # noqa: N802 - Qt's name
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            for edge in self.edges:
                edge.reroute()
            if self.block is not None:
                self.block.refit()
            self._changed_overview()
        elif change == QGraphicsItem.GraphicsItemChange.ItemSelectedHasChanged:
            self._changed_overview()
        return super().itemChange(change, value)


def wire_path(start: QPointF, end: QPointF, lanes: Sequence[tuple[float, float]] = ()
              ) -> QPainterPath:
    """A smooth S-curve from an output port down to an input port.

    A wire that skips rows (a residual or U-Net connection) turns right in the gap below
    its source, runs down a lane beside the column, clear of the nodes in between, and
    turns back in the gap above its target; the more rows it skips, the farther out its lane.
    A wire from one column of a wrapped layout to another runs in the gaps instead: below its
    source's row, up or down the free vertical strip of ``lanes`` nearest its target, and in
    over its target.
    """
    path = QPainterPath(start)
    left, right = sorted((start.x(), end.x()))
    between = [(a, b) for a, b in lanes if left < a and b < right]
    if between:
        a, b = max(between) if end.x() > start.x() else min(between)
        # Wires in one strip run apart, by how many rows they climb or drop.
        rows = max(-LANE_ROWS, min(LANE_ROWS, round((end.y() - start.y()) / ROW)))
        lane = (a + b) / 2 + (b - a) / 4 * rows / LANE_ROWS
        # Leaving a row and entering one below it, wires cross one gap at different heights.
        below, above = start.y() + V_GAP / 3, end.y() - V_GAP / 3
        for x, y in ((start.x(), below), (lane, below), (lane, above), (end.x(), above)):
            path.lineTo(x, y)
        path.lineTo(end)
        return path
    drop = end.y() - start.y()
    if drop > ROW and abs(end.x() - start.x()) < NODE_WIDTH:  # it passes at least one row
        rows = round(drop / ROW)
        lane = max(start.x(), end.x()) + SKIP_LANE + SKIP_STEP * (rows - 2)
        turn = QPointF(0, V_GAP / 2)
        top, bottom = QPointF(lane, start.y() + V_GAP), QPointF(lane, end.y() - V_GAP)
        path.cubicTo(start + turn, top - turn, top)
        path.lineTo(bottom)
        path.cubicTo(bottom + turn, end - turn, end)
        return path
    bend = max(40.0, abs(drop) / 2)
    path.cubicTo(start + QPointF(0, bend), end - QPointF(0, bend), end)
    return path


class EdgeItem(QGraphicsPathItem):
    """A connection from one node's output port to another's input port."""

    def __init__(self, source: NodeItem, target: NodeItem,
                 lanes: Sequence[tuple[float, float]] = ()) -> None:
        super().__init__()
        self.source = source
        self.target = target
        self.lanes = lanes
        """The free strips between columns (see ``layout.lanes``), shared with the scene."""
        source.edges.append(self)
        target.edges.append(self)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(0)
        self.setToolTip(f"{source.node_id} → {target.node_id}")
        self.setPen(QPen(EDGE_COLOUR, 1.6))
        self._shape: QPainterPath | None = None
        self.reroute()

    @property
    def key(self) -> tuple[str, str]:
        """(source id, target id)."""
        return self.source.node_id, self.target.node_id

    def reroute(self) -> None:
        """Follow the ports after a node moved."""
        self._shape = None
        path = wire_path(self.source.output_port(), self.target.input_port(), self.lanes)
        corners = [QPointF(path.elementAt(i).x, path.elementAt(i).y)
                   for i in range(path.elementCount())]
        self.outline = [QLineF(a, b) for a, b in pairwise(corners)]
        """The curve's control polygon: what the overview draws for it."""
        self.setPath(path)

    def detach(self) -> None:
        """Forget the nodes before this edge is removed from the scene."""
        for node in (self.source, self.target):
            if self in node.edges:
                node.edges.remove(self)

    def itemChange(self, change, value):  # noqa: N802 - Qt's name
        if change == QGraphicsItem.GraphicsItemChange.ItemSelectedHasChanged:
            self.setPen(QPen(SELECTED_COLOUR, 2.6) if value else QPen(EDGE_COLOUR, 1.6))
        return super().itemChange(change, value)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(self.pen())
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path())

    def shape(self) -> QPainterPath:
        """A wider band than the line itself, so an edge is easy to click (made once per
        route: hit tests and rubber-band selection ask for it often)."""
        if self._shape is None:
            stroker = QPainterPathStroker()
            stroker.setWidth(10)
            self._shape = stroker.createStroke(self.path())
        return self._shape


class OverviewDrawing:
    """Every node as a box and every wire as its control polygon, one pixel wide and in a few
    calls: what a model far too small to read looks like. Selected nodes are filled blue,
    those with a problem red, as their borders would be too thin to see.

    The lines and boxes are kept between frames: gathering them walks every node and wire in
    Python, which was most of such a frame. Whatever changes them calls :meth:`forget`: a
    node moved, selected or given a new look, or the scene's nodes and wires changed.
    """

    def __init__(self, nodes: dict[str, NodeItem], edges: dict[tuple[str, str], EdgeItem]) -> None:
        self.nodes = nodes
        self.edges = edges
        """The scene's own dicts of nodes and wires, as they change."""
        self._lines: list[QLineF] | None = None
        self._boxes: list[tuple[QColor, list[QRectF]]] = []

    def forget(self) -> None:
        """Gather the lines and boxes again before the next frame."""
        self._lines = None

    def _gather(self) -> None:
        self._lines = [line for edge in self.edges.values() for line in edge.outline]
        boxes: dict[int, tuple[QColor, list[QRectF]]] = {}
        for node in self.nodes.values():
            fill = (SELECTED_COLOUR if node.isSelected()
                    else PROBLEM_COLOUR if node.look.problem else node.fill)
            boxes.setdefault(fill.rgba(), (fill, []))[1].append(
                QRectF(node.x(), node.y(), NODE_WIDTH, NODE_HEIGHT))
        self._boxes = list(boxes.values())

    def draw(self, painter: QPainter) -> None:
        """Draw the overview with ``painter`` in scene coordinates."""
        if self._lines is None:
            self._gather()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QPen(EDGE_COLOUR, 0))
        painter.drawLines(self._lines)
        painter.setPen(QPen(BORDER_COLOUR, 0))
        for fill, rects in self._boxes:
            painter.setBrush(fill)
            painter.drawRects(rects)
