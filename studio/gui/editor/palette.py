"""The layer palette: every registered layer type, grouped by category, with help tooltips."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.model.layers import OPAQUE_TYPE, LayerType
from studio.core.model.registry import REGISTRY

TYPE_ROLE = Qt.ItemDataRole.UserRole
LAYER_MIME = "application/x-layer-studio-layer"
"""Drag-and-drop format of a palette entry: the layer type's name in UTF-8."""


def addable_layers() -> list[LayerType]:
    """Layer types a person can add; imported opaque layers only come from model files."""
    return [layer for layer in REGISTRY.values() if layer.name != OPAQUE_TYPE]


def layers_matching(text: str) -> list[str]:
    """Names of the addable layer types that contain ``text`` (ignoring case), best first:
    those that start with it, then the rest by where it occurs, shorter names first, and
    otherwise in palette order (MaxPooling2D before MaxPooling1D)."""
    wanted = text.strip().lower()
    if not wanted:
        return []
    found = [(layer.name.lower().find(wanted), len(layer.name), index, layer.name)
             for index, layer in enumerate(addable_layers())]
    return [name for _, _, _, name in sorted(f for f in found if f[0] >= 0)]


class _LayerTree(QTreeWidget):
    """The palette's tree; dragging an entry carries its layer type."""

    def mimeTypes(self) -> list[str]:  # noqa: N802 - Qt's name
        return [LAYER_MIME]

    def mimeData(self, items: list[QTreeWidgetItem]) -> QMimeData:  # noqa: N802 - Qt's name
        data = QMimeData()
        layer_type = items[0].data(0, TYPE_ROLE) if items else None
        if layer_type:
            data.setData(LAYER_MIME, layer_type.encode())
            data.setText(layer_type)
        return data


class LayerPalette(QWidget):
    """Lists layer types; double-click, Enter or the Add button asks to add one, and an
    entry can be dragged onto the canvas."""

    add_requested = Signal(str)
    """The user wants a layer of this type added to the model."""

    def __init__(self) -> None:
        super().__init__()
        self.tree = _LayerTree()
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setObjectName("palette")
        categories: dict[str, QTreeWidgetItem] = {}
        for layer in addable_layers():
            parent = categories.get(layer.category)
            if parent is None:
                parent = QTreeWidgetItem(self.tree, [layer.category])
                parent.setFlags(Qt.ItemFlag.ItemIsEnabled)
                categories[layer.category] = parent
            item = QTreeWidgetItem(parent, [layer.name])
            item.setData(0, TYPE_ROLE, layer.name)
            item.setToolTip(0, layer.help)
        self.tree.expandAll()
        self.tree.setMinimumWidth(self.tree.sizeHintForColumn(0)
                                  + 2 * self.tree.indentation() + 2 * self.tree.frameWidth())
        self.tree.itemActivated.connect(self._activated)
        self.add_button = QPushButton("Add layer")
        self.add_button.setToolTip("Add the selected layer after the selected row of the model")
        self.add_button.clicked.connect(self._add_current)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tree)
        layout.addWidget(self.add_button)

    def item_for(self, layer_type: str) -> QTreeWidgetItem:
        """The palette entry for ``layer_type``."""
        flags = Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive
        items = self.tree.findItems(layer_type, flags)
        return items[0]

    def _activated(self, item: QTreeWidgetItem) -> None:
        layer_type = item.data(0, TYPE_ROLE)
        if layer_type:
            self.add_requested.emit(layer_type)

    def _add_current(self) -> None:
        item = self.tree.currentItem()
        if item is not None:
            self._activated(item)
