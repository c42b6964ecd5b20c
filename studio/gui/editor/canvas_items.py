"""What the canvas draws: a node per layer with its ports, and a curved edge per connection."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QStyleOptionGraphicsItem

from studio.core.model.layout import NODE_HEIGHT, NODE_WIDTH, ROW

PORT_RADIUS = 6.0
CORNER = 8.0
TEXT_MARGIN = 10.0
SKIP_BOW = NODE_WIDTH * 0.9
"""How far a wire that skips rows swings to the side of the column it passes."""
CATEGORY_COLOURS = {
    "Core": "#e8f0fe",
    "Convolution": "#e6f4ea",
    "Regularization": "#fef7e0",
    "Preprocessing": "#f3e8fd",
    "Sequence": "#e4f7fb",
    "Merge": "#fce8e6",
    "Transfer learning": "#e0f2f1",
}
PROBLEM_COLOUR = QColor("#d93025")
SELECTED_COLOUR = QColor("#1a73e8")
EDGE_COLOUR = QColor("#80868b")
TEXT_COLOUR = QColor("#202124")
MUTED_COLOUR = QColor("#5f6368")


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


class NodeItem(QGraphicsItem):
    """One layer: a rounded card with an input port on top and an output port below."""

    def __init__(self, look: NodeLook) -> None:
        super().__init__()
        self.look = look
        self.edges: list[EdgeItem] = []
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
        tip = f"<b>{look.layer_type}</b> — {look.help}"
        if look.problem:
            tip += f"<br><br><b>Problem:</b> {look.problem}"
        self.setToolTip(tip)
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

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        look = self.look
        card = QRectF(0, 0, NODE_WIDTH, NODE_HEIGHT)
        border = QPen(MUTED_COLOUR, 1.2)
        if look.problem:
            border = QPen(PROBLEM_COLOUR, 2.2)
        if self.isSelected():
            border = QPen(SELECTED_COLOUR, 2.6)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(border)
        painter.setBrush(QBrush(QColor(CATEGORY_COLOURS.get(look.category, "#f1f3f4"))))
        painter.drawRoundedRect(card, CORNER, CORNER)

        inner = NODE_WIDTH - 2 * TEXT_MARGIN
        bold = QFont(painter.font())
        bold.setPointSizeF(9.5)
        bold.setBold(True)
        small = QFont(painter.font())
        small.setPointSizeF(8)
        title = ("⚠ " if look.problem else "") + look.layer_type
        title_width = QFontMetrics(bold).horizontalAdvance(title) + 8
        self._text(painter, bold, PROBLEM_COLOUR if look.problem else TEXT_COLOUR, 5, title)
        node_id = QFontMetrics(small).elidedText(look.node_id, Qt.TextElideMode.ElideLeft,
                                                 max(0, inner - title_width))
        self._text(painter, small, MUTED_COLOUR, 6, node_id, Qt.AlignmentFlag.AlignRight)
        self._text(painter, small, TEXT_COLOUR, 25, look.key_params)
        self._text(painter, small, MUTED_COLOUR, 43, look.shape or "shape unknown")
        if look.shape:
            self._text(painter, small, MUTED_COLOUR, 43, f"{look.params} params",
                       Qt.AlignmentFlag.AlignRight)

        painter.setPen(QPen(MUTED_COLOUR, 1.2))
        painter.setBrush(QBrush(QColor("white")))
        if look.has_input:
            painter.drawEllipse(QPointF(NODE_WIDTH / 2, 0), PORT_RADIUS, PORT_RADIUS)
        painter.setBrush(QBrush(MUTED_COLOUR))
        painter.drawEllipse(QPointF(NODE_WIDTH / 2, NODE_HEIGHT), PORT_RADIUS, PORT_RADIUS)

    @staticmethod
    def _text(painter: QPainter, font: QFont, colour: QColor, top: float, text: str,
              align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft) -> None:
        painter.setFont(font)
        painter.setPen(colour)
        painter.drawText(QRectF(TEXT_MARGIN, top, NODE_WIDTH - 2 * TEXT_MARGIN, 18), align, text)

    def itemChange(self, change, value):  # noqa: N802 - Qt's name
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            for edge in self.edges:
                edge.reroute()
        return super().itemChange(change, value)


def wire_path(start: QPointF, end: QPointF) -> QPainterPath:
    """A smooth S-curve from an output port down to an input port.

    A wire that skips rows (a residual connection, say) bows out to the right so it does not
    run hidden behind the nodes in between.
    """
    path = QPainterPath(start)
    drop = end.y() - start.y()
    bend = max(40.0, abs(drop) / 2)
    if drop > 1.5 * ROW and abs(end.x() - start.x()) < NODE_WIDTH:
        bow = QPointF(SKIP_BOW, 0)
        path.cubicTo(start + QPointF(0, ROW) + bow, end - QPointF(0, ROW) + bow, end)
        return path
    path.cubicTo(start + QPointF(0, bend), end - QPointF(0, bend), end)
    return path


class EdgeItem(QGraphicsPathItem):
    """A connection from one node's output port to another's input port."""

    def __init__(self, source: NodeItem, target: NodeItem) -> None:
        super().__init__()
        self.source = source
        self.target = target
        source.edges.append(self)
        target.edges.append(self)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(0)
        self.setToolTip(f"{source.node_id} → {target.node_id}")
        self.setPen(QPen(EDGE_COLOUR, 1.6))
        self.reroute()

    @property
    def key(self) -> tuple[str, str]:
        """(source id, target id)."""
        return self.source.node_id, self.target.node_id

    def reroute(self) -> None:
        """Follow the ports after a node moved."""
        self.setPath(wire_path(self.source.output_port(), self.target.input_port()))

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
        painter.drawPath(self.path())

    def shape(self) -> QPainterPath:
        """A wider band than the line itself, so an edge is easy to click."""
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        return stroker.createStroke(self.path())
