"""The inspector: the selected layer's help, shape, parameter count and parameter editors."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from studio.core.build.weight_shapes import DROPPED, imported_weights_note
from studio.core.model.fixes import AnyFix
from studio.core.model.layers import InputArguments
from studio.core.model.params import format_shape
from studio.core.model.registry import REGISTRY
from studio.core.search.space import SEARCHABLE_KINDS, layer_target
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.param_editors import ParamEditor
from studio.gui.widgets.search_button import SearchButton, with_search_button
from studio.gui.widgets.wrapping_button import WrappingButton

MIN_WIDTH = 250
"""The inspector's narrowest: its texts wrap, and a long label goes above its editor."""


def _wrapping_label(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label


def _form(page: QWidget) -> QFormLayout:
    """The parameters' form: a row too narrow for label and editor puts the label above."""
    form = QFormLayout(page)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return form


class Inspector(QWidget):
    """Edits one layer's parameters; each change is an undoable command."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.node_id = ""
        self.editors: dict[str, ParamEditor] = {}
        self.search_buttons: dict[str, SearchButton] = {}
        """The Search… button of each parameter a search can vary."""
        self._editors_for: tuple[str, str] | None = None
        """The (layer id, layer type) the editors were built for."""
        self.setMinimumWidth(MIN_WIDTH)
        self.title = _wrapping_label("Select a layer")
        self.title.setStyleSheet("font-weight: bold; font-size: 13pt;")
        self.help = _wrapping_label()
        self.facts = _wrapping_label()
        self.weights_note = _wrapping_label()
        self.weights_note.setObjectName("inspector-weights")
        self.problem = _wrapping_label()
        self.problem.setObjectName("inspector-problem")
        self.problem.setStyleSheet("color: #b3261e;")
        self.fix_box = QWidget()
        self.fix_box.setObjectName("inspector-fixes")
        QVBoxLayout(self.fix_box).setContentsMargins(0, 0, 0, 0)
        self.fix_buttons: list[WrappingButton] = []
        self.form_host = QWidget()
        host_layout = QVBoxLayout(self.form_host)
        host_layout.setContentsMargins(0, 0, 0, 0)
        self.form_page = QWidget()
        self.form = _form(self.form_page)
        host_layout.addWidget(self.form_page)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        for widget in (self.title, self.help, self.facts, self.weights_note, self.form_host,
                       self.problem, self.fix_box):
            layout.addWidget(widget)
        layout.addStretch(1)
        doc.changed.connect(self.refresh)
        self.refresh()

    def show_node(self, node_id: str) -> None:
        """Show the layer ``node_id`` (or nothing for an empty string).

        The editors are built once per shown layer; showing the same layer again only updates
        their values, so an editor is never replaced while it is being used.
        """
        self.node_id = node_id
        self.refresh()

    def _build_editors(self, node_id: str, layer_type: str) -> None:
        """Make editors for the parameters of ``layer_type`` (none for an empty type)."""
        if self._editors_for == (node_id, layer_type):
            return
        self._editors_for = (node_id, layer_type)
        # Replace the whole page, and delete the old one only once control is back in the
        # event loop: a signal handler of one of its editors may still be running.
        old = self.form_page
        self.form_page = QWidget()
        self.form = _form(self.form_page)
        self.form.setContentsMargins(0, 6, 0, 0)
        self.editors = {}
        self.search_buttons = {}
        if layer_type:
            for param in REGISTRY[layer_type].params:
                editor = ParamEditor(param)
                editor.edited.connect(lambda value, name=param.name: self._edited(name, value))
                editor.invalid.connect(self.problem.setText)
                self.editors[param.name] = editor
                if param.kind in SEARCHABLE_KINDS:
                    row = with_search_button(editor, self.doc, layer_target(node_id, param.name))
                    self.search_buttons[param.name] = row.search_button
                    self.form.addRow(param.label, row)
                else:
                    self.form.addRow(param.label, editor)
        host_layout = self.form_host.layout()
        host_layout.removeWidget(old)
        host_layout.addWidget(self.form_page)
        old.hide()
        old.deleteLater()

    def refresh(self) -> None:
        """Update texts and editor values from the document."""
        graph = self.doc.project.graph
        if not self.node_id or self.node_id not in graph.ids():
            self.title.setText("Select a layer")
            self.help.setText("Click a layer on the canvas or in the list to see and edit its "
                              "settings.")
            self.facts.clear()
            self.weights_note.hide()
            self.problem.clear()
            self._show_fixes([])
            self._build_editors("", "")
            return
        node = graph.node(self.node_id)
        self._build_editors(self.node_id, node.type)
        layer = REGISTRY[node.type]
        self.title.setText(f"{self.node_id}  ·  {node.type}")
        self.help.setText(layer.help)
        report = self.doc.analysis().nodes.get(self.node_id)
        if report:
            facts = (f"Output shape: {format_shape(report.output_shape)}\n"
                     f"Parameters: {report.params:,}")
        else:
            facts = "Output shape: unknown until the problem is fixed"
        inputs = graph.inputs_of(self.node_id)
        if isinstance(layer.call_arguments, InputArguments) and inputs:  # which is the query
            facts += f"\nInputs, in the order connected: {layer.call_arguments.roles(inputs)}"
        self.facts.setText(facts)
        note = imported_weights_note(self.doc.project, self.doc.analysis(), self.node_id)
        self.weights_note.setText(note)
        self.weights_note.setVisible(bool(note))
        self.weights_note.setStyleSheet("color: #8a5300;" if note.startswith(DROPPED) else "")
        self.problem.setText(self.doc.analysis().problem_at(self.node_id) or "")
        self._show_fixes(self.doc.fixes_for(self.node_id))
        values = node.resolved_params()
        for name, editor in self.editors.items():
            editor.set_value(values[name])

    def _show_fixes(self, fixes: list[AnyFix]) -> None:
        """A button per one-click fix; old buttons go later, one may be mid-click."""
        if [b.text() for b in self.fix_buttons] == [f.label for f in fixes]:
            return
        for button in self.fix_buttons:
            button.hide()
            button.deleteLater()
        self.fix_buttons = []
        for fix in fixes:
            button = WrappingButton(fix.label)
            button.setToolTip("Apply this fix in one step (Ctrl+Z undoes it)")
            button.clicked.connect(lambda _=False, f=fix: self.doc.apply_fix(f))
            self.fix_box.layout().addWidget(button)
            self.fix_buttons.append(button)

    def _edited(self, name: str, value) -> None:
        node_id = self.node_id
        words = REGISTRY[self.doc.project.graph.node(node_id).type].param(name).words

        def change(project) -> None:
            project.graph.node(node_id).params[name] = value

        self.doc.edit(f"Set {words} of {node_id}", change, merge_key=f"{node_id}.{name}")
