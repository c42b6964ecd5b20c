"""Export a run's model from the window: pick a format and a folder; the export runs in the
background and its verification (agreement with the Keras model, largest difference, size,
latency) is shown, flagged in red when the export answers differently."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.events import Event
from studio.core.export.exporter import export_run
from studio.core.export.formats import FORMATS, suggested_folder
from studio.gui.widgets.desktop import open_folder
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.jobs import JobSlot

ERROR_STYLE = "color: #b3261e;"


def _export_task(run_dir: Path, fmt: str, out_dir: Path):
    def task(on_event, stop):
        return export_run(run_dir, fmt, out_dir, on_event, stop)

    return task


def report_words(report) -> str:
    """The verification of an export in a few lines: the note (the agreement on the samples
    compared, or, for numbers, their largest difference), the other figures, the folder."""
    figures = [f"{report.latency_ms:.3g} ms per image", f"{report.size / 1024:,.0f} KB"]
    if report.agreement is not None:  # the note said the agreement, not this
        figures.insert(0, f"largest difference {report.max_abs_diff:.2g}")
    figures[0] = figures[0][0].upper() + figures[0][1:]
    return f"{report.note}\n{', '.join(figures)}.\nSaved in {report.directory}"


class ExportDialog(QDialog):
    """Exports the model of the run in ``run_dir`` and shows its verification."""

    def __init__(self, run_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_dir = Path(run_dir)
        self.job = JobSlot(self)
        self.job.event.connect(self._progressed)
        self.job.succeeded.connect(self._exported)
        self.job.failed.connect(self._failed)
        self.job.finished.connect(self._done)
        self.report = None
        """The last export's report, once one succeeded."""
        self.setWindowTitle(f"Export {self.run_dir.name}")
        self.format = QComboBox()
        self.format.setObjectName("export-format")
        for name, form in FORMATS.items():
            self.format.addItem(form.title, name)
        self.format.setToolTip("Keras and SavedModel for TensorFlow, ONNX for other runtimes, "
                               "TensorFlow Lite (float16 and int8 are smaller) for phones")
        self.folder = QLineEdit()
        self.suggested = ""
        """The folder suggested for the format: it follows the format until edited."""
        self.format.currentIndexChanged.connect(self._suggest_folder)
        self._suggest_folder()
        self.folder.setObjectName("export-folder")
        self.folder.setToolTip("The folder to write the model and its companions into; it "
                               "is left as it was if the export fails")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(browse)
        form = QFormLayout()
        form.addRow("Format", self.format)
        form.addRow("Folder", folder_row)
        self.progress = QProgressBar()
        self.progress.setObjectName("export-progress")
        self.progress.setFormat("Ready")
        self.progress.setValue(0)
        self.result = QLabel("The export is loaded again with its own runtime and compared "
                             "with the Keras model before it is called done.")
        self.result.setObjectName("export-result")
        self.result.setWordWrap(True)
        self.buttons = QDialogButtonBox()
        self.export_button = self.buttons.addButton("Export",
                                                    QDialogButtonBox.ButtonRole.AcceptRole)
        self.export_button.setObjectName("export-start")
        self.open_button = self.buttons.addButton("Open Folder",
                                                  QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.setObjectName("export-open-folder")
        self.open_button.setToolTip("Show the exported files in the file manager")
        self.open_button.setEnabled(False)  # until an export is written
        self.open_button.clicked.connect(self._open_folder)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.buttons.accepted.connect(self.start)
        self.close_button.clicked.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.result)
        layout.addWidget(self.buttons)
        self.resize(560, 260)

    @Slot()
    def _suggest_folder(self) -> None:
        """Suggest the chosen format's own folder, unless the person chose one."""
        if self.folder.text() in ("", self.suggested):
            self.suggested = str(suggested_folder(self.run_dir, self.format.currentData()))
            self.folder.setText(self.suggested)

    def _open_folder(self) -> None:
        problem = open_folder(self.report.directory)
        if problem:
            self.result.setText(f"{self.result.text()}\n{problem}")

    def _browse(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Export into", self.folder.text())
        if chosen:
            self.folder.setText(chosen)

    def start(self) -> None:
        """Export in the background into the chosen folder."""
        if self.job.busy() or not self.folder.text().strip():
            return
        self.report = None
        self.export_button.setEnabled(False)
        self.open_button.setEnabled(False)
        self.close_button.setText("Cancel")
        self.progress.setRange(0, 0)
        self.progress.setFormat("Exporting…")
        self.result.setStyleSheet("")
        self.result.setText("Exporting and verifying…")
        self.job.start(_export_task(self.run_dir, self.format.currentData(),
                                    Path(self.folder.text().strip())))

    @Slot(object)
    def _progressed(self, event: Event) -> None:
        if event.get("type") == "progress" and event.get("total"):
            self.progress.setRange(0, event["total"])
            self.progress.setValue(event["done"])
            self.progress.setFormat(f"{event['what']} %v of %m")
        elif event.get("type") == "note":
            self.result.setText(event["text"])

    @Slot(object)
    def _exported(self, report) -> None:
        self.report = report
        self.result.setStyleSheet(ERROR_STYLE if report.flagged else "")
        self.result.setText(("Flagged: the export answers differently from the Keras model. "
                             if report.flagged else "") + report_words(report))
        self.progress.setFormat("Flagged" if report.flagged else "Verified")
        self.open_button.setEnabled(True)

    @Slot(str)
    def _failed(self, message: str) -> None:
        note_error("Export failed", message)
        self.result.setStyleSheet(ERROR_STYLE)
        self.result.setText(message)
        self.progress.setFormat("Failed")

    @Slot()
    def _done(self) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(1 if self.report is not None else 0)
        self.export_button.setEnabled(True)
        self.close_button.setText("Close")

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Close cancels a running export (its folder is left as it was)."""
        if self.job.busy():
            self.job.stop()
            event.ignore()
            return
        super().closeEvent(event)
