"""The Try view's answers to images: a card per image, newest first, flowing into as many
columns as fit, and beside them why the model answered the chosen one (for a task whose
answers get an explanation)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QScrollArea, QSplitter, QVBoxLayout, QWidget

from studio.core.inference.predictor import Prediction, Predictor
from studio.gui.inference.explain_view import ExplainView
from studio.gui.inference.result_card import ResultCard
from studio.gui.tasks.registry import views_for
from studio.gui.widgets.flow_grid import FlowGrid
from studio.gui.widgets.forms import hint, scrolling

MAX_CARDS = 200
"""Cards kept on screen; older ones make way (a folder belongs in the table instead)."""
EMPTY_TEXT = ("Drop images or a folder anywhere on the window, paste an image (Ctrl+V) or "
              "pick files with “Add images…” to see what the model answers.")


class ImageCards(QSplitter):
    """Cards of answered images beside the explanation of the one chosen; ``predictor``
    gives the model that explains (None while none is loaded). For a model whose answers get
    no explanation the explanation is put away and the cards take the width, under a line
    saying why."""

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
        self.card_layout = FlowGrid()
        listed = QVBoxLayout(self.card_list)
        listed.addWidget(self.empty)
        listed.addLayout(self.card_layout)
        listed.addStretch(1)
        self.card_area = QScrollArea()
        self.card_area.setObjectName("try-cards")
        self.card_area.setWidgetResizable(True)
        self.card_area.setWidget(self.card_list)
        self.not_explained = hint()
        """Why there is no explanation beside the cards (shown only then)."""
        self.not_explained.setObjectName("try-not-explained")
        self.not_explained.hide()
        answers = QWidget()
        answers_layout = QVBoxLayout(answers)
        answers_layout.setContentsMargins(0, 0, 0, 0)
        answers_layout.addWidget(self.not_explained)
        answers_layout.addWidget(self.card_area, 1)
        self.explain = ExplainView()
        self.why = scrolling(self.explain)
        """The explanation's pane: put away for a model whose answers get none."""
        self.addWidget(answers)
        self.addWidget(self.why)
        self.setStretchFactor(0, 3)
        self.setStretchFactor(1, 2)
        self.setChildrenCollapsible(False)

    def expect(self, task: str) -> None:
        """Get ready for the answers of a model of ``task``: the explanation beside the cards
        where it explains them, else the cards alone, under why."""
        not_explained = views_for(task).not_explained
        self.why.setVisible(not not_explained)
        self.not_explained.setText(not_explained)
        self.not_explained.setVisible(bool(not_explained))
        self.explain.expect(task)

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
