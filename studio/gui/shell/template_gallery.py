"""The template gallery: every starter model with what it is, its size and whether it fits."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.messages import count
from studio.core.build.analysis import Analysis, analyze_project
from studio.core.data.sources import describe
from studio.core.model.params import format_shape
from studio.core.model.weights import missing_weights
from studio.core.project.document import Project
from studio.core.project.templates import BLANK, TEMPLATES, blank_project, from_template
from studio.gui.widgets.document import ProjectDocument

NAME_ROLE = Qt.ItemDataRole.UserRole
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


BLANK_TITLE = "Blank"
BLANK_CATEGORY = "Start from scratch"


def blank_for(doc: ProjectDocument) -> Project:
    """A blank project on ``doc``'s data: its Input takes the data's samples or, while they
    are unknown, the shape of the current model's first Input."""
    info = doc.dataset()
    shape = info.sample_shape if info is not None else next(
        (n.params.get("shape") for n in doc.project.graph.nodes if n.type == "Input"), None)
    return blank_project(doc.project.dataset, shape)


def new_project(name: str, doc: ProjectDocument) -> Project:
    """A fresh project from the template called ``name``, or blank on ``doc``'s data."""
    return blank_for(doc) if name == BLANK else from_template(name)


def _label(text: str = "", point_delta: int = 0, bold: bool = False) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    font = QFont(label.font())
    font.setPointSize(font.pointSize() + point_delta)
    font.setBold(bold)
    label.setFont(font)
    return label


class TemplateGallery(QDialog):
    """Lists the templates by category, after a Blank card when ``blank`` is given (the empty
    project on the current data); Open (or a double-click) emits ``chosen``."""

    chosen = Signal(str)
    """The user wants a new project from the template with this name."""
    inserted = Signal(str)
    """The user wants the template with this name added to the current model."""

    def __init__(self, parent: QWidget | None = None, blank: Project | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New from Template")
        self.projects = {BLANK: blank} if blank is not None else {}
        self.projects.update({name: from_template(name) for name in TEMPLATES})
        self.reports: dict[str, Analysis] = {
            name: analyze_project(project) for name, project in self.projects.items()}
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Template", "Layers", "Parameters"])
        self.tree.setRootIsDecorated(False)
        self.tree.setAllColumnsShowFocus(True)
        self.tree.setStyleSheet("QTreeView::item { padding: 4px 2px; }")
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
            self.tree.headerItem().setTextAlignment(column, RIGHT)
        self._fill()
        self.tree.ensurePolished()
        self.tree.setMinimumWidth(
            sum(self.tree.sizeHintForColumn(c) for c in range(3)) + 2 * self.tree.indentation()
            + 2 * self.tree.frameWidth() + self.tree.verticalScrollBar().sizeHint().width())
        self.title = _label(point_delta=4, bold=True)
        self.category = _label()
        self.category.setStyleSheet("color: #5f6368;")
        self.size = _label()
        self.description = _label()
        self.fit = _label()
        details = QWidget()
        column = QVBoxLayout(details)
        column.setContentsMargins(12, 0, 0, 0)
        for label in (self.title, self.category, self.size, self.description, self.fit):
            column.addWidget(label)
        column.addStretch(1)
        details.setFixedWidth(380)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.open_button: QPushButton = self.buttons.addButton(
            "Open", QDialogButtonBox.ButtonRole.AcceptRole)
        self.insert_button: QPushButton = self.buttons.addButton(
            "Insert into Model", QDialogButtonBox.ButtonRole.ActionRole)
        self.insert_button.setToolTip("Add these layers beside the current model, in one step")
        self.insert_button.clicked.connect(self._insert)
        self.buttons.accepted.connect(self._open)
        self.buttons.rejected.connect(self.reject)
        body = QHBoxLayout()
        body.addWidget(self.tree, 1)
        body.addWidget(details)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addWidget(self.buttons)
        self.tree.currentItemChanged.connect(self._show)
        self.tree.itemActivated.connect(self._open)
        self.tree.setCurrentItem(self.item_for(next(iter(TEMPLATES))))
        self.resize(self.minimumSizeHint().width(), 480)

    def _card(self, name: str) -> tuple[str, str, str]:
        """The title, category and description of the card of ``name``."""
        if name != BLANK:
            template = TEMPLATES[name]
            return template.title, template.category, template.description
        (node,) = self.projects[BLANK].graph.nodes
        return (BLANK_TITLE, BLANK_CATEGORY,
                f"An empty canvas with only an Input that takes the current data's samples "
                f"({format_shape(tuple(node.params['shape']))}). Add layers from the palette, "
                "or press / and type a layer's name.")

    def _fill(self) -> None:
        groups: dict[str, QTreeWidgetItem] = {}
        for name in self.projects:
            title, category, _ = self._card(name)
            group = groups.get(category)
            if group is None:
                group = QTreeWidgetItem(self.tree, [category])
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                group.setFirstColumnSpanned(True)
                font = QFont(group.font(0))
                font.setBold(True)
                group.setFont(0, font)
                groups[category] = group
            item = QTreeWidgetItem(group, [title, str(self._layer_count(name)),
                                           f"{self.reports[name].total_params:,}"])
            item.setData(0, NAME_ROLE, name)
            for column in (1, 2):
                item.setTextAlignment(column, RIGHT)
        self.tree.expandAll()

    def _layer_count(self, name: str) -> int:
        return len(self.projects[name].graph.nodes)

    def item_for(self, name: str) -> QTreeWidgetItem:
        """The row of the template called ``name``."""
        for group in range(self.tree.topLevelItemCount()):
            parent = self.tree.topLevelItem(group)
            for row in range(parent.childCount()):
                if parent.child(row).data(0, NAME_ROLE) == name:
                    return parent.child(row)
        raise KeyError(name)

    def selected(self) -> str | None:
        """The name of the selected template, or None."""
        item = self.tree.currentItem()
        return item.data(0, NAME_ROLE) if item is not None else None

    @Slot(QTreeWidgetItem, QTreeWidgetItem)
    def _show(self, _current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        name = self.selected()
        self.open_button.setEnabled(name is not None)
        if name is None:
            return
        self.insert_button.setEnabled(name != BLANK)  # it has nothing to add
        title, category, description = self._card(name)
        report = self.reports[name]
        self.title.setText(title)
        self.category.setText(category)
        self.size.setText(f"{count(self._layer_count(name), 'layer')} · "
                          f"{report.total_params:,} parameters")
        self.description.setText(description)
        project = self.projects[name]
        if name == BLANK:
            fit = "Its Input fits the current data; the layers that learn it are yours to add."
        elif report.ok:
            fit = f"Ready to train on {describe(project.dataset).title}."
        else:
            fit = report.problems[0].message
        if missing_weights(project.graph):
            fit += (" Its ImageNet weights are downloaded when you open it; without a network "
                    "it can start from random weights.")
        self.fit.setText(fit)
        self.fit.setStyleSheet("color: #188038;" if report.ok or name == BLANK
                               else "color: #b06000;")

    def _insert(self) -> None:
        name = self.selected()
        if name is not None:
            self.accept()
            self.inserted.emit(name)

    def _open(self, *_item: QTreeWidgetItem) -> None:
        name = self.selected()
        if name is not None:
            self.accept()
            self.chosen.emit(name)
