"""An answer shown in one place and replaced by each newer one (the drawing pad's, the
camera's)."""

from __future__ import annotations

from PySide6.QtWidgets import QBoxLayout, QWidget

from studio.core.inference.predictor import Prediction
from studio.gui.tasks.registry import views_for


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
