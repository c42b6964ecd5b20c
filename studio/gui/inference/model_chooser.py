"""What answers in the Try view: a run and one of its models or checkpoints, or a model
file; the newest run answers until the person picks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QWidget

from studio.core.runs.folders import answer_choices
from studio.core.runs.history import RunSummary
from studio.gui.runs.run_picker import IMPORTED_CHOICE, imported_run, offer_imported, offer_runs
from studio.gui.widgets.forms import narrow_box

MODEL_FILTER = "Keras models (*.keras *.h5)"


class ModelChooser(QWidget):
    """The run, model and "Open model file…" choices; ``picked`` says which model answers."""

    picked = Signal(object)
    """The model (a Path: a run's model or checkpoint, or a model file) to answer with."""
    imported_wanted = Signal()
    """The person chose "Imported model": its run is to be made (it answers once listed)."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[RunSummary] = []
        self.picked_by_hand = False
        """The person chose the model; new runs do not replace it."""
        self.file: Path | None = None
        """The model file last opened to answer with (a model of no run)."""
        self.imported_missing: Callable[[], bool] = lambda: False
        """Whether to offer "Imported model" (weights imported, no run of them yet)."""
        self.awaiting_imported = False
        """"Imported model" was chosen: its run answers once it is listed."""
        self.run_box = narrow_box()
        self.run_box.setObjectName("try-run")
        self.run_box.setToolTip("The run whose model answers")
        self.run_box.activated.connect(self._run_picked)
        self.model_box = narrow_box()
        self.model_box.setObjectName("try-model")
        self.model_box.setToolTip("The run's final model, or one of its checkpoints")
        self.model_box.activated.connect(self._model_picked)
        self.open_button = QPushButton("Open model file…")
        self.open_button.setToolTip("Answer with a .keras or .h5 model file instead of a run")
        self.open_button.clicked.connect(self.open_model_dialog)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Answer with"))
        row.addWidget(self.run_box, 2)
        row.addWidget(self.model_box, 1)
        row.addWidget(self.open_button)

    def set_runs(self, runs: Sequence[RunSummary], chosen: Path | None) -> bool:
        """Offer the runs that have a model or a checkpoint (newest first), ``chosen`` the
        model answering now, and "Imported model" if it is missing; the newest run's model
        is picked unless the person picked one that is still listed (a run that moved with
        its project is followed), or chose "Imported model" and its run is now listed.
        Returns whether a model was picked."""
        self.runs = [r for r in runs if r.has_model() or r.has_checkpoint()]
        wanted = imported_run(self.runs) if self.awaiting_imported else None
        if wanted is not None:
            self.awaiting_imported = False
            self.picked_by_hand = True
            self._show_run(wanted)
            picked = True
        else:
            picked = self._offer(chosen)
        if offer_imported(self.run_box, self.imported_missing()):
            self.run_box.setEnabled(True)
        return picked

    def _offer(self, chosen: Path | None) -> bool:
        if self.gone(chosen):
            chosen = self._moved(chosen)
            if chosen is None:  # its run was deleted, or is another project's
                self.picked_by_hand = False
            elif self.picked_by_hand:
                self._show_run(self.run_of(chosen), chosen)
                return True
        run = self.run_of(chosen)
        index = offer_runs(self.run_box, self.runs, str(run.path) if run else None)
        if chosen is not None and run is None and self.picked_by_hand:
            self.run_box.insertItem(0, f"File: {chosen.name}", str(chosen))
            self.run_box.setCurrentIndex(0)
            index = 0
        self.run_box.setEnabled(bool(self.runs) or index == 0)
        if self.runs and (not self.picked_by_hand or index < 0):
            self.picked_by_hand = False
            self._fill_models(Path(self.runs[0].path))
            return True
        return False

    def _show_run(self, run: RunSummary, chosen: Path | None = None) -> None:
        """List the runs with ``run`` chosen, and its models with ``chosen`` (else its first)."""
        offer_runs(self.run_box, self.runs, str(run.path))
        self.run_box.setEnabled(True)
        self._fill_models(Path(run.path), chosen)

    def gone(self, chosen: Path | None) -> bool:
        """True if ``chosen`` was a run's model and that run is no longer offered."""
        return chosen is not None and chosen != self.file and self.run_of(chosen) is None

    def _moved(self, path: Path) -> Path | None:
        """The same model in an offered run of the same id (the run moved with its project),
        if there is one."""
        for run in self.runs:
            for folder in path.parents:
                if folder.name == run.id and (Path(run.path) / path.relative_to(folder)).exists():
                    return Path(run.path) / path.relative_to(folder)
        return None

    def run_of(self, path: Path | None) -> RunSummary | None:
        """The listed run ``path`` (a model or checkpoint) belongs to, if any."""
        if path is None:
            return None
        return next((r for r in self.runs if Path(r.path) in path.parents), None)

    @Slot(int)
    def _run_picked(self, index: int) -> None:
        data = self.run_box.itemData(index)
        if data == IMPORTED_CHOICE:
            self.awaiting_imported = True
            self.imported_wanted.emit()
        elif data and Path(data).is_dir():
            self.picked_by_hand = True
            self._fill_models(Path(data))

    def _fill_models(self, run_dir: Path, chosen: Path | None = None) -> None:
        """List the run's models, picking ``chosen`` (else the first)."""
        self.model_box.clear()
        for text, path in answer_choices(run_dir):
            self.model_box.addItem(text, str(path))
        self.model_box.setEnabled(self.model_box.count() > 0)
        if self.model_box.count():
            self.model_box.setCurrentIndex(max(self.model_box.findData(str(chosen)), 0))
            self.picked.emit(Path(self.model_box.currentData()))

    @Slot(int)
    def _model_picked(self, index: int) -> None:
        data = self.model_box.itemData(index)
        if data:
            self.picked_by_hand = True
            self.picked.emit(Path(data))

    def open_model_dialog(self) -> None:
        """Pick a model file to answer with."""
        name, _ = QFileDialog.getOpenFileName(self, "Open a model to answer with", "",
                                              MODEL_FILTER)
        if name:
            self.picked_by_hand = True
            self.file = Path(name)
            self.picked.emit(Path(name))
            self.model_box.clear()
            self.model_box.setEnabled(False)
            self.set_runs(self.runs, Path(name))

    def describe(self, path: Path) -> str:
        """The model at ``path`` in words: its run and which model, or the file."""
        run = self.run_of(path)
        if run is None:
            return str(path)
        return f"{run.id}, {self.model_box.currentText().lower() or path.name}"
