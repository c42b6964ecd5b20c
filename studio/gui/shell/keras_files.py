"""File > Import Keras Model… and File > Export as Python Script…, without blocking the window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from studio.core.base.files import atomic_write_text
from studio.core.base.messages import unwritable
from studio.core.build.imported_weights import keep_weights
from studio.core.build.keras_import import CodeRefused, import_model_with_weights
from studio.core.build.keras_model import ModelError
from studio.core.data.types import DataError
from studio.core.export.python_code import export_code
from studio.core.project.document import project_stem, weights_path_for
from studio.core.runs.folders import runs_root, scratch_project
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.errors import show_error
from studio.gui.widgets.jobs import JobSlot

MODEL_FILTER = "Keras models (*.keras *.h5);;All files (*)"


def _import_task(path: Path, trust: bool):
    """Import ``path``; the project comes with the scratch file of the unsaved project it
    becomes, its weights written beside that (see ``scratch_project``)."""
    def task(on_event, stop):
        try:
            project, weights = import_model_with_weights(path, trust=trust)
        except CodeRefused as refused:
            return refused
        scratch = scratch_project()
        keep_weights(project, weights, weights_path_for(scratch))
        return project, scratch

    return task


class KerasFiles(QObject):
    """Imports a Keras model file on a worker thread and exports the design as a script."""

    message = Signal(str)
    """A short note for the status bar."""
    imported = Signal(object, object)
    """A project made from a Keras model file, and the scratch file beside which its weights
    are kept until it is saved."""

    def __init__(self, parent: QWidget, doc: ProjectDocument) -> None:
        super().__init__(parent)
        self.window = parent
        self.doc = doc
        self.job = JobSlot(self)
        self.job.succeeded.connect(self._succeeded)
        self.job.failed.connect(self._failed)
        self.job.finished.connect(self._done)
        self._path = Path()
        self._refusal: Exception | None = None

    def import_dialog(self) -> None:
        """Ask for a .keras or .h5 file and import it."""
        path, _ = QFileDialog.getOpenFileName(self.window, "Import Keras model", "", MODEL_FILTER)
        if path:
            self.import_path(Path(path))

    def import_path(self, path: Path, trust: bool = False) -> None:
        """Import ``path`` in the background; ``imported`` carries the result."""
        if self.job.busy():
            return
        self._path = path
        self._refusal = None
        self.message.emit(f"Importing {path.name}…")
        self.job.start(_import_task(path, trust))

    @Slot(object)
    def _succeeded(self, result) -> None:
        if isinstance(result, CodeRefused):
            self._refusal = result
            return
        self.message.emit(f"Imported {self._path.name}")
        self.imported.emit(*result)

    @Slot(str)
    def _failed(self, message: str) -> None:
        show_error(self.window, "Cannot import model", message)

    @Slot()
    def _done(self) -> None:
        """Ask about a file holding code only now, with the worker gone: a question asked
        while its signals are still arriving would be answered for the wrong import."""
        refusal, self._refusal = self._refusal, None
        if refusal is None:
            return
        answer = QMessageBox.question(
            self.window, "Trust this model file?",
            f"{refusal}\n\nImport it anyway? Only do this for files from someone you trust.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        if answer == QMessageBox.StandardButton.Yes:
            self.import_path(self._path, trust=True)

    def export_dialog(self) -> None:
        """Ask where to write the design as a Python script and write it."""

        default = f"{project_stem(self.doc.path) if self.doc.path else 'model'}.py"
        path, _ = QFileDialog.getSaveFileName(self.window, "Export as Python script", default,
                                              "Python scripts (*.py)")
        if not path:
            return
        target = Path(path)
        try:
            atomic_write_text(target, export_code(self.doc.project, target,
                                                  runs_root(self.doc.place)))
        except (ModelError, DataError) as exc:
            show_error(self.window, "Cannot export", str(exc))
            return
        except OSError as exc:
            show_error(self.window, "Cannot export", unwritable(target.parent, exc))
            return
        self.message.emit(f"Exported {path}")
