"""A marked block on the canvas: a dashed frame behind its layers, named at its top left, that
follows them as they move; drawn in the problem colour, with the reason in its tooltip, while
its layers are no longer one way in and one way out."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from studio.gui.editor.canvas_items import CARD, PROBLEM_COLOUR, NodeItem, node_fonts

BLOCK_COLOUR = QColor("#7b1fa2")
"""A colour no layer category uses, so a frame never reads as a card."""
FILL = QColor(123, 31, 162, 14)
PAD = 8.0
LABEL_HEIGHT = 22.0
LABEL_PX = 12
"""The name's size in pixels at 100%; zoomed out it grows, up to what its band holds, so it
stays readable when the cards show only their types."""
LARGEST_LABEL_PX = 20


class BlockItem(QGraphicsItem):
    """The frame of block ``name`` around the cards of ``members``."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.members: list[NodeItem] = []
        self.problem = ""
        self._rect = QRectF()
        self.setZValue(-1)  # behind the wires and the cards
        self.setAcceptHoverEvents(True)
        self.font = QFont(node_fonts()[0])

    def frame(self, members: list[NodeItem], problem: str) -> None:
        """Frame ``members``; ``problem`` says why the block cannot be repeated (empty if it
        can)."""
        for item in self.members:
            if item.block is self:
                item.block = None
        self.members = members
        for item in members:
            item.block = self
        self.problem = problem
        count = f"{len(members)} layer{'s' if len(members) != 1 else ''}"
        tip = (f"<b>{self.name}</b>: {count} marked as a block. The Search tab's <i>Add…</i> "
               "menu can search how many times it is in the model; right-click to unmark it.")
        if problem:
            tip += f"<br><br><b>It cannot be repeated now:</b> {problem}"
        self.setToolTip(tip)
        self.refit()

    def refit(self) -> None:
        """Fit the frame to where its cards are now."""
        cards = QRectF()
        for item in self.members:
            cards = cards.united(item.mapRectToScene(CARD))
        self.prepareGeometryChange()
        self._rect = cards.adjusted(-PAD, -PAD - LABEL_HEIGHT, PAD, PAD)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        return self._rect.adjusted(-1, -1, 1, 1)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        colour = PROBLEM_COLOUR if self.problem else BLOCK_COLOUR
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(colour, 1.6, Qt.PenStyle.DashLine))
        painter.setBrush(QBrush(FILL))
        painter.drawRoundedRect(self._rect, PAD, PAD)
        zoom = max(option.levelOfDetailFromTransform(painter.worldTransform()), 0.01)
        self.font.setPixelSize(round(min(LARGEST_LABEL_PX, max(LABEL_PX, LABEL_PX / zoom))))
        painter.setFont(self.font)
        label = ("⚠ " if self.problem else "") + self.name
        room = int(self._rect.width() - 2 * PAD)
        text = QFontMetrics(self.font).elidedText(label, Qt.TextElideMode.ElideRight, room)
        painter.drawText(QRectF(self._rect.left() + PAD, self._rect.top(), room,
                                LABEL_HEIGHT), Qt.AlignmentFlag.AlignLeft
                         | Qt.AlignmentFlag.AlignVCenter, text)
