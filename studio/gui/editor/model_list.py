"""The model as an ordered, editable list of layers with live shapes and parameter counts."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.model.graph import Graph, GraphError, Node
from studio.core.model.params import format_shape
from studio.core.model.registry import REGISTRY
from studio.gui.editor.model_summary import ModelSummary
from studio.gui.widgets.document import ProjectDocument

ID_ROLE = Qt.ItemDataRole.UserRole
ERROR_BACKGROUND = QColor("#fde2e1")


class ModelList(QWidget):
    """Shows the layers in order; every change goes through the document's undo stack."""

    selection_changed = Signal(str)
    """The selected layer's id, or an empty string; emitted only when that id changes."""
    message = Signal(str)
    """A short note for the status bar, e.g. why an edit was refused."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self._announced = ""
        """The id ``selection_changed`` last carried."""
        self.table = QTreeWidget()
        self.table.setObjectName("model-list")
        self.table.setRootIsDecorated(False)
        self.table.setHeaderLabels(["#", "Layer", "Type", "Output shape", "Parameters"])
        self.table.setAlternatingRowColors(True)
        header = self.table.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.currentItemChanged.connect(self._current_changed)
        self.summary = ModelSummary(doc)

        self.remove_button = self._button("Remove", QStyle.StandardPixmap.SP_TrashIcon,
                                          "Remove the selected layer (Delete)",
                                          self.remove_selected)
        self.up_button = self._button("Up", QStyle.StandardPixmap.SP_ArrowUp,
                                      "Move the selected layer up (Ctrl+Up)",
                                      lambda: self.move_selected(-1))
        self.down_button = self._button("Down", QStyle.StandardPixmap.SP_ArrowDown,
                                        "Move the selected layer down (Ctrl+Down)",
                                        lambda: self.move_selected(1))
        for keys, slot in (
            (QKeySequence.StandardKey.Delete, self.remove_selected),
            (QKeySequence("Ctrl+Up"), lambda: self.move_selected(-1)),
            (QKeySequence("Ctrl+Down"), lambda: self.move_selected(1)),
        ):
            shortcut = QShortcut(keys, self.table)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(slot)

        buttons = QHBoxLayout()
        for button in (self.up_button, self.down_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.summary)
        doc.changed.connect(self.refresh)
        self.refresh()

    def _button(self, text, icon, tip, slot) -> QPushButton:
        button = QPushButton(self.style().standardIcon(icon), text)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        return button

    def order(self) -> list[str]:
        """Layer ids as listed: the chain, or a topological order for a branching model."""
        graph = self.doc.project.graph
        chain = graph.chain()
        if chain is not None:
            return chain
        try:
            return graph.topological_order()
        except GraphError:
            return graph.ids()

    def selected_id(self) -> str:
        """The selected layer's id, or an empty string."""
        item = self.table.currentItem()
        return item.data(0, ID_ROLE) if item else ""

    def select(self, node_id: str) -> None:
        """Select the row of ``node_id``."""
        for row in range(self.table.topLevelItemCount()):
            item = self.table.topLevelItem(row)
            if item.data(0, ID_ROLE) == node_id:
                self.table.setCurrentItem(item)
                return

    def refresh(self) -> None:
        """Rebuild the rows from the document, keeping the selection."""
        keep = self.selected_id()
        analysis = self.doc.analysis()
        graph = self.doc.project.graph
        self.table.blockSignals(True)
        self.table.clear()
        for index, node_id in enumerate(self.order()):
            node = graph.node(node_id)
            report = analysis.nodes.get(node_id)
            shape = format_shape(report.output_shape) if report else "—"
            params = f"{report.params:,}" if report else "—"
            item = QTreeWidgetItem([str(index + 1), node_id, node.type, shape, params])
            item.setData(0, ID_ROLE, node_id)
            item.setTextAlignment(4, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            tip = REGISTRY[node.type].help
            problem = analysis.problem_at(node_id)
            if problem:
                warning = QStyle.StandardPixmap.SP_MessageBoxWarning
                item.setIcon(1, self.style().standardIcon(warning))
                for column in range(5):
                    item.setBackground(column, QBrush(ERROR_BACKGROUND))
                tip = f"<b>Problem:</b> {problem}"
            for column in range(5):
                item.setToolTip(column, tip)
            self.table.addTopLevelItem(item)
        if keep and keep in graph.ids():
            self.select(keep)
        self.table.blockSignals(False)
        # Announce only a real change (the selected layer is gone): every edit refreshes the
        # list, and announcing the same layer again made the inspector rebuild the editor that
        # was being typed into, under its own signal handler.
        self._current_changed()

    def _update_buttons(self) -> None:
        chain = self.doc.project.graph.chain() is not None
        selected = bool(self.selected_id())
        for button in (self.remove_button, self.up_button, self.down_button):
            button.setEnabled(chain and selected)

    def _current_changed(self, *_args) -> None:
        self._update_buttons()
        node_id = self.selected_id()
        if node_id != self._announced:
            self._announced = node_id
            self.selection_changed.emit(node_id)

    def _chain_edit(self, text: str, change) -> bool:
        try:
            self.doc.edit(text, lambda project: change(project.graph))
        except GraphError as exc:
            self.message.emit(str(exc))
            return False
        return True

    def add_layer(self, layer_type: str) -> None:
        """Insert a new layer of ``layer_type`` after the selection (or at the end)."""
        graph = self.doc.project.graph
        order = self.order()
        selected = self.selected_id()
        index = order.index(selected) + 1 if selected in order else len(order)
        node = Node(graph.new_id(layer_type), layer_type, REGISTRY[layer_type].defaults())

        def insert(g: Graph) -> None:
            g.insert(index, node)

        if self._chain_edit(f"Add {layer_type}", insert):
            self.select(node.id)

    def remove_selected(self) -> None:
        """Remove the selected layer, selecting its neighbour."""
        node_id = self.selected_id()
        if not node_id:
            return
        order = self.order()
        index = order.index(node_id)
        if self._chain_edit(f"Remove {node_id}", lambda g: g.remove(node_id)):
            rest = [i for i in order if i != node_id]
            if rest:
                self.select(rest[min(index, len(rest) - 1)])

    def move_selected(self, delta: int) -> None:
        """Move the selected layer ``delta`` rows up (negative) or down."""
        node_id = self.selected_id()
        if not node_id:
            return
        index = self.order().index(node_id) + delta
        if 0 <= index < len(self.order()):
            self._chain_edit(f"Move {node_id}", lambda g: g.move(node_id, index))
            self.select(node_id)
