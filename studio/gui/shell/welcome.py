"""The welcome page: how to start (the demo project, a project, a folder of images, a Keras
model), the recent projects and the starter templates as cards."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCommandLinkButton,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from studio.core.project.document import SUFFIX
from studio.core.project.templates import TEMPLATES

CARD_COLUMNS = 3
START_WIDTH = 320
RECENT_TEXT_WIDTH = START_WIDTH - 60
"""Room for a recent project's folder beside the link's arrow; longer ones are elided."""
CARD_STYLE = """
QPushButton#template-card { border: 1px solid #dadce0; border-radius: 6px;
                            background: palette(base); }
QPushButton#template-card:hover { border-color: #1a73e8; background: #f1f6fe; }
QPushButton#template-card:focus { border: 2px solid #1a73e8; }
"""
GREY = "color: #5f6368;"


def _label(text: str, point_delta: int = 0, bold: bool = False, style: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    font = QFont(label.font())
    font.setPointSize(font.pointSize() + point_delta)
    font.setBold(bold)
    label.setFont(font)
    label.setStyleSheet(style)
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    return label


def _heading(text: str) -> QLabel:
    heading = _label(text, point_delta=2, bold=True)
    heading.setWordWrap(False)  # one line: wrapped, its height is reckoned for a narrow page
    return heading


class TemplateCard(QPushButton):
    """A template as a card: its title and category; the description is its tooltip."""

    def __init__(self, name: str) -> None:
        super().__init__()
        template = TEMPLATES[name]
        self.name = name
        self.setObjectName("template-card")
        self.setAccessibleName(f"{template.title} template")
        self.setToolTip(template.description)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(2)
        for label in (_label(template.title, bold=True), _label(template.category, style=GREY)):
            label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
            layout.addWidget(label)
        layout.addStretch(1)
        lines = self.fontMetrics().lineSpacing() * 3  # a title on two lines, the category
        self.setFixedHeight(lines + 26)
        self.setMinimumWidth(190)


class WelcomePage(QDialog):
    """The first-run page (also Help > Welcome…); every choice closes it and emits one signal."""

    demo_requested = Signal()
    """Open the demo project (the small CNN on MNIST-10k)."""
    open_requested = Signal()
    """Ask for a project file to open."""
    folder_requested = Signal()
    """Ask for a folder of images (one subfolder per class) to train on."""
    model_requested = Signal()
    """Ask for a Keras model file to import."""
    recent_chosen = Signal(Path)
    """Open this recent project."""
    template_chosen = Signal(str)
    """Start a new project from the template with this name."""
    gallery_requested = Signal()
    """Show the template gallery (the templates with their details)."""

    def __init__(self, recent: list[Path], parent: QWidget | None = None) -> None:
        """``recent``: the recent projects to offer, most recent first."""
        super().__init__(parent)
        self.setWindowTitle("Welcome to Layer Studio")
        self.setStyleSheet(CARD_STYLE)
        self.demo = self._link("Open the demo project",
                               "A small CNN on 10,000 handwritten digits, ready to train",
                               self.demo_requested)
        self.open_project = self._link("Open a project…", "A Layer Studio project file",
                                       self.open_requested)
        self.open_folder = self._link("Open a folder of images…",
                                      "One subfolder per class: the data to train on",
                                      self.folder_requested)
        self.open_model = self._link("Open a Keras model…",
                                     "A .keras or .h5 file, as a graph you can edit",
                                     self.model_requested)
        self.demo.setDefault(True)
        start_column = QWidget()
        start_column.setFixedWidth(START_WIDTH)
        start = QVBoxLayout(start_column)
        start.setContentsMargins(0, 0, 0, 0)
        start.setSpacing(2)
        start.addWidget(_heading("Start"))
        for button in (self.demo, self.open_project, self.open_folder, self.open_model):
            start.addWidget(button)
        start.addSpacing(16)
        start.addWidget(_heading("Recent projects"))
        self.recent_buttons = [self._recent_button(path) for path in recent]
        for button in self.recent_buttons:
            start.addWidget(button)
        if not recent:
            start.addWidget(_label("Projects you open or save are listed here.", style=GREY))
        start.addStretch(1)

        self.cards = [TemplateCard(name) for name in TEMPLATES]
        grid = QGridLayout()
        grid.setSpacing(8)
        for index, card in enumerate(self.cards):
            card.clicked.connect(lambda _=False, name=card.name: self._choose(
                self.template_chosen, name))
            grid.addWidget(card, index // CARD_COLUMNS, index % CARD_COLUMNS)
        self.gallery = QPushButton("Compare the templates…")
        self.gallery.setToolTip("The template gallery: each template's size, layers and "
                                "whether it fits its data")
        self.gallery.clicked.connect(lambda: self._choose(self.gallery_requested))
        templates = QVBoxLayout()
        templates.setSpacing(6)
        templates.addWidget(_heading("Start from a template"))
        hint = _label("A new project with a ready-made model; hover over a card for what it "
                      "is good at.", style=GREY)
        hint.setWordWrap(False)
        templates.addWidget(hint)
        templates.addSpacing(4)
        templates.addLayout(grid)
        templates.addStretch(1)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.addButton(self.gallery, QDialogButtonBox.ButtonRole.ActionRole)
        columns = QHBoxLayout()
        columns.setSpacing(32)
        columns.addWidget(start_column)
        columns.addLayout(templates, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(28, 24, 28, 16)
        layout.addWidget(_label("Welcome to Layer Studio", point_delta=8, bold=True))
        layout.addWidget(_label("Design, train and export Keras models for images, "
                                "without writing code.", point_delta=1, style=GREY))
        layout.addSpacing(16)
        layout.addLayout(columns, 1)
        layout.addWidget(buttons)

    def _link(self, title: str, detail: str, signal: Signal) -> QCommandLinkButton:
        button = QCommandLinkButton(title, detail)
        button.clicked.connect(lambda: self._choose(signal))
        return button

    def _recent_button(self, path: Path) -> QCommandLinkButton:
        folder = self.fontMetrics().elidedText(str(path.parent), Qt.TextElideMode.ElideMiddle,
                                               RECENT_TEXT_WIDTH)
        button = QCommandLinkButton(path.name.removesuffix(SUFFIX), folder)
        button.setToolTip(str(path))
        button.clicked.connect(lambda: self._choose(self.recent_chosen, path))
        return button

    def _choose(self, signal: Signal, *args) -> None:
        """Close the page, then ask for what was chosen (so its dialogs come up alone)."""
        self.accept()
        signal.emit(*args)
