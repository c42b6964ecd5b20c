"""The export dialog: a folder per format, one verification message, Open Folder."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt, QUrl

from studio.core.export import exporter
from studio.core.export.formats import FORMATS
from studio.core.tasks.task import ExportAgreement
from studio.gui.runs import export_dialog
from studio.gui.runs.export_dialog import ExportDialog
from studio.gui.shell.app import create_application
from studio.gui.widgets.errors import last_error
from tests.gui.support import type_into

LEFT = Qt.MouseButton.LeftButton
FIGURES = {"max_abs_diff": 2e-4, "latency_ms": 0.0123, "samples": 200}
AGREEMENT = ExportAgreement(100.0, "top-1 agreement",
                            "gives the Keras model's top answer on 100.0% of 200 validation "
                            "samples")


@pytest.fixture
def fake_export(monkeypatch):
    """Exports write one file and report as the real export does, without TensorFlow."""
    def export(run_dir, fmt, out_dir, on_event, stop):
        form = FORMATS[fmt]
        out_dir.mkdir(parents=True)
        (out_dir / form.file).write_bytes(b"m" * 4096)
        return exporter.ExportReport(fmt, str(out_dir), [form.file], 4096,
                                     agreement=100.0, threshold=99.0, flagged=False,
                                     note=exporter._note(form, FIGURES, AGREEMENT, 99.0, False),
                                     **FIGURES)

    monkeypatch.setattr(export_dialog, "export_run", export)


@pytest.fixture
def dialog(qtbot, tmp_path):
    create_application()
    dialog = ExportDialog(tmp_path / "run")
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog



def ended(qtbot, dialog, timeout: int = 5_000) -> None:
    """Wait until the export has ended as a person sees it: Export offered again, which the
    job's last signal does (its result shows a moment before, with its thread still
    running)."""
    qtbot.waitUntil(lambda: dialog.export_button.isEnabled() and not dialog.job.busy(),
                    timeout=timeout)

def test_each_format_is_offered_its_own_folder_until_one_is_typed(qtbot, dialog, tmp_path):
    run = tmp_path / "run"
    assert dialog.format.currentData() == "keras"
    assert dialog.folder.text() == str(run / "export" / "keras")
    dialog.format.setFocus()
    qtbot.keyClick(dialog.format, Qt.Key.Key_Down)
    assert dialog.format.currentData() == "savedmodel"
    assert dialog.folder.text() == str(run / "export" / "savedmodel")
    type_into(qtbot, dialog.folder, str(tmp_path / "mine"))
    qtbot.keyClick(dialog.format, Qt.Key.Key_Down)
    assert dialog.format.currentData() == "onnx"
    assert dialog.folder.text() == str(tmp_path / "mine")  # the person's choice stays


def test_the_verification_says_each_thing_once_and_open_folder_shows_it(
        qtbot, dialog, tmp_path, fake_export, opened_urls):
    assert not dialog.open_button.isEnabled()
    dialog.format.setCurrentIndex(dialog.format.findData("onnx"))
    qtbot.mouseClick(dialog.export_button, LEFT)
    ended(qtbot, dialog)
    assert dialog.progress.text() == "Verified"
    out = tmp_path / "run" / "export" / "onnx"
    assert dialog.result.text() == (
        "The ONNX export gives the Keras model's top answer on 100.0% of 200 validation "
        "samples (at least 99% expected).\n"
        "Largest difference 0.0002, 0.0123 ms per image, 4 KB.\n"
        f"Saved in {out}")
    assert dialog.open_button.isEnabled()
    qtbot.mouseClick(dialog.open_button, LEFT)
    assert opened_urls == [QUrl.fromLocalFile(str(out))]


def test_numbers_are_compared_once_too():
    report = exporter.ExportReport(
        "keras", "/out", ["model.keras"], 10240, agreement=None, threshold=99.0, flagged=False,
        note=exporter._note(FORMATS["keras"], FIGURES, ExportAgreement(None), 99.0, False),
        **FIGURES)
    assert export_dialog.report_words(report) == (
        "Largest difference from the Keras model's answers on 200 validation samples: "
        "0.0002.\n0.0123 ms per image, 10 KB.\nSaved in /out")


def test_a_failed_export_is_shown_and_kept_for_the_diagnostics(qtbot, dialog, monkeypatch):
    def refuse(run_dir, fmt, out_dir, on_event, stop):
        raise exporter.ExportError("ONNX cannot express this model: no Lambda.")

    monkeypatch.setattr(export_dialog, "export_run", refuse)
    qtbot.mouseClick(dialog.export_button, LEFT)
    ended(qtbot, dialog)
    assert dialog.progress.text() == "Failed"
    assert dialog.result.text() == "ONNX cannot express this model: no Lambda."
    assert last_error() == "Export failed: ONNX cannot express this model: no Lambda."
    assert not dialog.open_button.isEnabled()


def test_a_detector_export_shows_its_boxes_found_again_and_both_maps(qtbot, detection_run,
                                                                     tmp_path):
    create_application()
    dialog = ExportDialog(detection_run)
    qtbot.addWidget(dialog)
    dialog.show()
    type_into(qtbot, dialog.folder, str(tmp_path / "keras"))
    qtbot.mouseClick(dialog.export_button, LEFT)
    ended(qtbot, dialog, timeout=60_000)
    report = dialog.report
    assert report.agreement == 100.0 and set(report.scores) == {"map50", "keras_map50"}
    lines = dialog.result.text().splitlines()
    boxes = re.search(r"the Keras model's (\d+) boxes", lines[0])[1]
    assert int(boxes) > 0 and lines[0] == (
        f"The Keras (.keras) export finds 100.0% of the Keras model's {boxes} "
        f"boxes (same class, IoU ≥ 0.9) in 4 validation samples (at least 99% expected). "
        f"mAP@0.5 {report.scores['map50']:.3f}, against the Keras model's "
        f"{report.scores['keras_map50']:.3f}.")
    assert lines[1].startswith("Largest difference 0, ") and lines[1].endswith(" KB.")
    assert lines[2] == f"Saved in {tmp_path / 'keras'}"
