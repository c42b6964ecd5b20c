"""A live answer (the drawing pad's, the camera's): beside its input, in one place, replaced
by each newer one."""

from __future__ import annotations

from PySide6.QtWidgets import QBoxLayout, QSplitter, QVBoxLayout, QWidget

from studio.core.inference.predictor import Prediction
from studio.gui.tasks.registry import views_for
from studio.gui.widgets.forms import scrolling


def replace_answer(layout: QBoxLayout, old: QWidget | None, prediction: Prediction) -> QWidget:
    """Put ``prediction`` as its task draws it in ``layout``, in place of ``old`` (whose
    settings it keeps), and return it."""
    answer = views_for(prediction.task).answer_widget(prediction, old)
    if old is not None:
        layout.replaceWidget(old, answer)
        old.deleteLater()
    else:
        layout.addWidget(answer)
    answer.show()  # at once: a layout shows a widget it is given only later
    return answer


def beside(owner: QWidget, source: QWidget, answers: QWidget, stretches: tuple[int, int]
           ) -> None:
    """Fill ``owner`` with ``source`` beside ``answers`` (scrolling), split as ``stretches``
    say; the person may drag the split."""
    splitter = QSplitter()
    splitter.addWidget(source)
    splitter.addWidget(scrolling(answers))
    for index, stretch in enumerate(stretches):
        splitter.setStretchFactor(index, stretch)
    splitter.setChildrenCollapsible(False)
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(splitter)
