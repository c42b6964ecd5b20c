"""The Try view's answers to images: a card per image, newest on top, and beside them why
the model answered the chosen one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QScrollArea, QSplitter, QVBoxLayout, QWidget

from studio.core.inference.predictor import Prediction, Predictor
from studio.gui.inference.explain_view import ExplainView
from studio.gui.inference.result_card import ResultCard
from studio.gui.widgets.forms import hint, scrolling

MAX_CARDS = 200
"""Cards kept on screen; older ones make way (a folder belongs in the table instead)."""
EMPTY_TEXT = ("Drop images or a folder anywhere on the window, paste an image (Ctrl+V) or "
              "pick files with “Add images…” to see what the model answers.")


class ImageCards(QSplitter):
    """Cards of answered images beside the explanation of the one chosen; ``predictor``
    gives the model that explains (None while none is loaded)."""

    selected = Signal(object)
    """The person picked an answered image (its Prediction) to see why."""
    card_made = Signal(object)
    """A card was made (the ResultCard), to add tools to it."""

    def __init__(self, predictor: Callable[[], Predictor | None]) -> None:
        super().__init__()
        self.predictor = predictor
        self.cards: list[ResultCard] = []
        self.empty = hint(EMPTY_TEXT)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.card_list = QWidget()
        self.card_layout = QVBoxLayout(self.card_list)
        self.card_layout.addWidget(self.empty)
        self.card_layout.addStretch(1)
        cards = QScrollArea()
        cards.setObjectName("try-cards")
        cards.setWidgetResizable(True)
        cards.setWidget(self.card_list)
        self.explain = ExplainView()
        self.addWidget(cards)
        self.addWidget(scrolling(self.explain))
        self.setStretchFactor(0, 3)
        self.setStretchFactor(1, 2)
        self.setChildrenCollapsible(False)

    def add(self, predictions: list[Prediction]) -> None:
        """Put a card per prediction on top (the oldest beyond ``MAX_CARDS`` go) and choose
        the first answered one."""
        self.empty.hide()
        for prediction in predictions:
            card = ResultCard(prediction)
            card.clicked.connect(self._card_clicked)
            self.card_layout.insertWidget(0, card)
            self.cards.insert(0, card)
            self.card_made.emit(card)
        for card in self.cards[MAX_CARDS:]:
            card.deleteLater()
        del self.cards[MAX_CARDS:]
        if predictions and not predictions[0].error:
            self._card_clicked(self.cards[len(predictions) - 1])

    @Slot(object)
    def _card_clicked(self, card: ResultCard) -> None:
        for other in self.cards:
            other.set_selected(other is card)
        predictor = self.predictor()
        if predictor is not None and card.prediction.error is None:
            self.explain.show_prediction(predictor, card.prediction)
        self.selected.emit(card.prediction)

    def clear(self) -> None:
        """Remove every card."""
        for card in self.cards:
            card.deleteLater()
        self.cards.clear()
        self.empty.show()
