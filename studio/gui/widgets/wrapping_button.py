"""A push button whose text wraps onto more lines when the button is narrow, rather than
being cut or widening its panel (the inspector's one-click fixes)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QVBoxLayout

MARGINS = (8, 4, 8, 4)


class WrappingButton(QPushButton):
    """A button showing ``text`` in a word-wrapped label; ``text()`` reads it back."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.label = QLabel(text)
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAccessibleName(text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addWidget(self.label)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def text(self) -> str:
        """The text the button shows (in its label: the button's own text stays empty, so
        that the style does not draw it a second time, on one line)."""
        return self.label.text()

    def sizeHint(self):  # noqa: N802 - Qt's name
        """The label's size on one line, with the button's margins."""
        return self.layout().sizeHint()

    def minimumSizeHint(self):  # noqa: N802 - Qt's name
        """As narrow as the label's longest word."""
        return self.layout().minimumSize()

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        """The height grows as the width shrinks and the text wraps."""
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        """The height of the wrapped text at ``width``, with the margins."""
        return self.layout().totalHeightForWidth(width)
