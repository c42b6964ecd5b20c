"""The search space and strategy of the Search tab: the dimensions searched (added, edited and
removed as undo steps) and the strategy, trial count, random start-up trials, parallelism,
seed, metric and the extra objectives (latency, parameters or size)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QBrush, QColor, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.project.document import OBJECTIVES
from studio.core.search.space import (
    STRATEGY_NAMES,
    TRAINING_TARGETS,
    SearchSpaceError,
    auto_startup_trials,
    bypassable_layers,
    check_dimension,
    layer_target,
    metric_choices,
    presence_target,
    repeats_target,
    search_metric,
    searchable_params,
    target_label,
    training_target,
)
from studio.gui.search.trial_table import offer_metrics
from studio.gui.widgets.dimension_dialog import (
    DimensionDialog,
    format_points,
    open_dimension_dialog,
    remove_dimension,
)
from studio.gui.widgets.document import ProjectDocument

TARGET_ROLE = Qt.ItemDataRole.UserRole
TPE_STRATEGIES = ("bayes", "hyperband")
"""The strategies whose TPE sampler starts with random trials."""
OBJECTIVE_BOXES = {"latency": ("Latency", "the trained model's milliseconds per sample, "
                               "timed as the export's check times it"),
                   "params": ("Parameters", "the model's parameter count"),
                   "size": ("Size", "the saved model file's size")}
PRESENT_ENTRY = "Whether it is present"
"""The Add menu's entry that searches with and without a layer."""
REPEATS_ENTRY = "Number of repeats"
"""The Add menu's entry that searches how many times a block is in the model."""
EXCLUSIVE = {"params": "size", "size": "params"}
"""Objectives that measure the same thing: choosing one drops the other."""
EMPTY_HINT = ("Nothing is searched yet. Click the\nmagnifier beside a layer parameter\n"
              "or a training setting, or Add… below.")


def _spin(low: int, high: int, tip: str, name: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setToolTip(tip)
    spin.setObjectName(name)
    return spin


class SpaceEditor(QWidget):
    """Edits the document's search settings; every change is an undo step of the document."""

    def __init__(self, doc: ProjectDocument, cores: int) -> None:
        super().__init__()
        self.doc = doc
        self.dimensions = QListWidget()
        self.dimensions.setObjectName("search-dimensions")
        self.dimensions.setToolTip("The values the search varies. Double-click or Enter to "
                                   "change one, Delete to remove it")
        self.dimensions.itemActivated.connect(lambda item: self.edit_dimension())
        self.dimensions.currentRowChanged.connect(self._selection_changed)
        self.add_button = QToolButton()
        self.add_button.setText("Add…")
        self.add_button.setObjectName("search-add")
        self.add_button.setToolTip("Make a training setting or a layer parameter a search "
                                   "dimension (or use the magnifier beside it)")
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(self)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.add_button.setMenu(self.add_menu)
        self.edit_button = QPushButton("Edit…")
        self.edit_button.setObjectName("search-edit")
        self.edit_button.setToolTip("Change the values of the selected dimension (Enter)")
        self.edit_button.clicked.connect(self.edit_dimension)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("search-remove")
        self.remove_button.setToolTip("Stop searching the selected value (Delete)")
        self.remove_button.clicked.connect(self.remove_selected)
        remove_key = QAction(self.dimensions)
        remove_key.setShortcut(QKeySequence.StandardKey.Delete)
        remove_key.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        remove_key.triggered.connect(self.remove_selected)
        self.dimensions.addAction(remove_key)
        self.dialog: DimensionDialog | None = None
        """The dimension dialog opened last from this tab."""

        self.strategy = QComboBox()
        self.strategy.setObjectName("search-strategy")
        for key, name in STRATEGY_NAMES.items():
            self.strategy.addItem(name, key)
        self.strategy.setToolTip(
            "Grid tries every combination; Random samples the ranges; Bayesian (TPE) samples "
            "where earlier trials did well; Hyperband also stops poor trials early")
        self.strategy.currentIndexChanged.connect(
            lambda: self._edit("strategy", self.strategy.currentData(), "strategy"))
        self.trials = _spin(1, 100_000, "How many trials random, Bayesian and Hyperband search "
                            "run (a grid runs every combination)", "search-trials")
        self.trials.valueChanged.connect(lambda v: self._edit("trials", v, "number of trials"))
        self.startup = _spin(0, 100_000, "How many trials Bayesian and Hyperband search draw at "
                             "random before TPE's model proposes values. Auto: a fifth of the "
                             "trials, at least 2 and at most 10", "search-startup")
        self.startup.valueChanged.connect(
            lambda v: self._edit("startup_trials", v or None, "random start-up trials"))
        self.workers = _spin(1, cores, "How many trials run at once, each in its own "
                             "process with its share of the CPU cores", "search-workers")
        self.workers.valueChanged.connect(lambda v: self._edit("workers", v, "trials at once"))
        self.seed = _spin(0, 2**31 - 1, "Seeds the sampler: the same seed samples the same "
                          "trials", "search-seed")
        self.seed.valueChanged.connect(lambda v: self._edit("seed", v, "search seed"))
        self.metric_box = QComboBox()
        self.metric_box.setObjectName("search-metric")
        self.metric_box.setToolTip("What the search optimises, among what the project's task "
                                   "logs (its default first): accuracies and mAP are "
                                   "maximised, losses and errors minimised")
        self.metric_box.currentIndexChanged.connect(
            lambda: self._edit("metric", self.metric_box.currentData(), "search metric"))
        self.objective_boxes: dict[str, QCheckBox] = {}
        for name, (label, what) in OBJECTIVE_BOXES.items():
            box = QCheckBox(label)
            box.setObjectName(f"search-objective-{name}")
            box.setToolTip(f"Also minimise {what}: the search then looks for the Pareto front "
                           f"of the metric and its other objectives (not with Hyperband)")
            box.clicked.connect(lambda checked, name=name: self._objective_clicked(name, checked))
            self.objective_boxes[name] = box
        self._build_layout()

    def _build_layout(self) -> None:
        dimension_buttons = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button):
            dimension_buttons.addWidget(button)
        dimension_buttons.addStretch(1)
        objectives = QHBoxLayout()
        for box in self.objective_boxes.values():
            objectives.addWidget(box)
        objectives.addStretch(1)
        self.form = QFormLayout()
        for label, widget in (("Strategy", self.strategy), ("Trials", self.trials),
                              ("Random start", self.startup), ("At once", self.workers),
                              ("Seed", self.seed), ("Optimise", self.metric_box),
                              ("Also minimise", objectives)):
            self.form.addRow(label, widget)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        title = QLabel("Search space")
        title.setStyleSheet("font-weight: bold;")
        column.addWidget(title)
        column.addWidget(self.dimensions, 1)
        column.addLayout(dimension_buttons)
        column.addLayout(self.form)
        self.dimensions.setMinimumHeight(70)

    def _edit(self, field: str, value: Any, label: str) -> None:
        if getattr(self.doc.project.search, field) != value:
            self.doc.edit(f"Set {label}", lambda p: setattr(p.search, field, value),
                          merge_key=f"search.{field}")

    def _objective_clicked(self, name: str, checked: bool) -> None:
        """Add or drop objective ``name`` (one undo step each, never merged: each click is a
        choice of its own); choosing parameters drops size, and the other way round."""
        kept = [n for n in self.doc.project.search.objectives
                if n != name and not (checked and n == EXCLUSIVE.get(name))]
        objectives = sorted([*kept, name] if checked else kept, key=OBJECTIVES.index)
        label = OBJECTIVE_BOXES[name][0].lower()
        self.doc.edit(f"{'Add' if checked else 'Remove'} search objective {label}",
                      lambda p: setattr(p.search, "objectives", objectives))

    def _fill_add_menu(self) -> None:
        """Every value that can be searched: the training settings, then each layer's, with
        whether the layer is present for one a trial can leave out, then how many times each
        marked block is in the model."""
        self.add_menu.clear()
        project = self.doc.project
        training = self.add_menu.addMenu("Training")
        for path in TRAINING_TARGETS:
            self._add_entry(training, training_target(path))
        bypassable = bypassable_layers(project)
        for node in project.graph.nodes:
            params = searchable_params(node.type)
            if params or node.id in bypassable:
                menu = self.add_menu.addMenu(node.id)
                for param in params:
                    self._add_entry(menu, layer_target(node.id, param.name), param.label)
                if node.id in bypassable:
                    self._add_entry(menu, presence_target(node.id), PRESENT_ENTRY)
        if project.graph.blocks:
            self.add_menu.addSeparator()
        for block in project.graph.blocks:
            self._add_entry(self.add_menu.addMenu(block), repeats_target(block), REPEATS_ENTRY)

    def _add_entry(self, menu: QMenu, target: str, label: str = "") -> None:
        action = menu.addAction(label or target_label(target))
        action.triggered.connect(lambda: self.open_dialog(target))

    def open_dialog(self, target: str) -> DimensionDialog:
        """Ask for the values of ``target`` to search (one undo step on OK)."""
        self.dialog = open_dimension_dialog(self.window(), self.doc, target)
        return self.dialog

    def selected_target(self) -> str:
        """The target of the selected dimension, or empty."""
        item = self.dimensions.currentItem()
        return (item.data(TARGET_ROLE) or "") if item is not None else ""

    def edit_dimension(self) -> None:
        """Change the values of the selected dimension."""
        if self.selected_target():
            self.open_dialog(self.selected_target())

    def remove_selected(self) -> None:
        """Stop searching the selected dimension (one undo step)."""
        if self.selected_target():
            remove_dimension(self.doc, self.selected_target())

    def _selection_changed(self) -> None:
        chosen = bool(self.selected_target())
        self.edit_button.setEnabled(chosen)
        self.remove_button.setEnabled(chosen)

    def _show_dimensions(self) -> None:
        project = self.doc.project
        selected = self.selected_target()
        self.dimensions.clear()
        for dimension in project.search.dimensions:
            label = target_label(dimension.target)
            item = QListWidgetItem()
            item.setData(TARGET_ROLE, dimension.target)
            try:
                points = check_dimension(project, dimension)
            except SearchSpaceError as exc:
                item.setText(f"{label}: cannot be searched")
                item.setForeground(QBrush(QColor("#b3261e")))
                item.setToolTip(str(exc))
            else:
                ranged = " (range)" if dimension.is_range else ""
                item.setText(f"{label}: {format_points(points, 6)}{ranged}")
                item.setToolTip(f"{len(points)} values: {format_points(points, 50)}")
            self.dimensions.addItem(item)
            if dimension.target == selected:
                self.dimensions.setCurrentItem(item)
        if not project.search.dimensions:
            hint = QListWidgetItem(EMPTY_HINT)
            hint.setFlags(Qt.ItemFlag.NoItemFlags)
            self.dimensions.addItem(hint)
        self._selection_changed()

    def refresh(self) -> None:
        """Show the document's search space and settings."""
        project = self.doc.project
        search = project.search
        self._show_dimensions()
        offer_metrics(self.metric_box, metric_choices(project))
        for combo, value in ((self.strategy, search.strategy),
                             (self.metric_box, search_metric(project))):
            if combo.currentData() != value:
                combo.blockSignals(True)
                combo.setCurrentIndex(combo.findData(value))
                combo.blockSignals(False)
        self.startup.setSpecialValueText(f"Auto ({auto_startup_trials(search.trials)})")
        for spin, value in ((self.trials, search.trials), (self.workers, search.workers),
                            (self.seed, search.seed),
                            (self.startup, search.startup_trials or 0)):
            if spin.value() != value:
                spin.blockSignals(True)
                spin.setValue(value)
                spin.blockSignals(False)
        self.trials.setEnabled(search.strategy != "grid")
        self.trials.setToolTip(self.trials.toolTip().split(" (now ")[0] + (
            " (now a grid: every combination)" if search.strategy == "grid" else ""))
        self.form.setRowVisible(self.startup, search.strategy in TPE_STRATEGIES)
        for name, box in self.objective_boxes.items():
            box.setChecked(name in search.objectives)
