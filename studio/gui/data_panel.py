"""The data panel: which dataset, how it is split, and what its samples look like."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from studio.core.data import DATASETS, DataError, load_arrays
from studio.core.params import format_shape
from studio.gui.document import ProjectDocument
from studio.gui.images import grey_pixmap, mosaic
from studio.gui.sync import show_value

PREVIEW_COUNT = 40
PREVIEW_COLUMNS = 10


class DataPanel(QWidget):
    """Shows the chosen dataset and edits its split; edits are undoable."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.dataset = QComboBox()
        self.dataset.setObjectName("dataset")
        for info in DATASETS.values():
            self.dataset.addItem(info.title, info.name)
        self.dataset.setToolTip("The data the model trains on")
        self.split = QDoubleSpinBox()
        self.split.setObjectName("validation-split")
        self.split.setRange(0.05, 0.5)
        self.split.setSingleStep(0.05)
        self.split.setDecimals(2)
        self.split.setToolTip("Fraction of samples held out to measure validation accuracy")
        self.split.valueChanged.connect(
            lambda v: self._edit("validation split", "validation_split", round(v, 4))
        )
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setToolTip("The same seed always gives the same split")
        self.seed.valueChanged.connect(lambda v: self._edit("split seed", "seed", v))
        self.facts = QLabel()
        self.facts.setWordWrap(True)
        self.preview = QLabel()
        self.preview.setObjectName("data-preview")
        self.preview.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.credit = QLabel()
        self.credit.setWordWrap(True)
        self.credit.setStyleSheet("color: palette(mid); font-size: 8pt;")
        form = QFormLayout()
        form.addRow("Dataset", self.dataset)
        form.addRow("Validation split", self.split)
        form.addRow("Split seed", self.seed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(form)
        layout.addWidget(self.facts)
        layout.addWidget(self.preview)
        layout.addWidget(self.credit)
        layout.addStretch(1)
        self._previewed = ""
        doc.changed.connect(self.refresh)
        self.refresh()

    def _edit(self, label: str, field: str, value) -> None:
        self.doc.edit(f"Set {label}", lambda p: setattr(p.dataset, field, value),
                      merge_key=f"dataset.{field}")

    def refresh(self) -> None:
        """Update the editors, facts and preview from the document."""
        choice = self.doc.project.dataset
        for widget, value in ((self.split, choice.validation_split), (self.seed, choice.seed)):
            show_value(widget, value)
        info = self.doc.dataset()
        if info is None:
            self.facts.setText(f"The dataset {choice.name!r} is not available.")
            return
        show_value(self.dataset, info.title)
        n_val = round(info.num_samples * choice.validation_split)
        self.facts.setText(
            f"{info.num_samples:,} samples of {format_shape(info.sample_shape)}, "
            f"{info.num_classes} classes\n"
            f"{info.num_samples - n_val:,} for training, {n_val:,} for validation"
        )
        self.credit.setText(info.credit)
        if self._previewed != info.name:
            self._show_preview(choice)
            self._previewed = info.name

    def _show_preview(self, choice) -> None:
        try:
            x, _ = load_arrays(choice)
        except DataError as exc:
            self.preview.setText(str(exc))
            return
        self.preview.setPixmap(grey_pixmap(mosaic(x[:PREVIEW_COUNT], PREVIEW_COLUMNS)))
        self.preview.setToolTip(f"The first {PREVIEW_COUNT} samples")
