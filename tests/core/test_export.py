"""Exporting a run's model: every format written with its companions and verified against
the Keras model; a failing conversion, a stop or a folder that cannot be written leaves the
target folder as it was; ``studio export``."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from studio.cli import main
from studio.core.data.image_pipeline import preprocess_image_files
from studio.core.export import exporter
from studio.core.export import staging as export_staging
from studio.core.export.exporter import ExportCancelled, ExportError, export_run
from studio.core.export.formats import FORMATS
from studio.core.runs import folders as runs
from tests.core.test_predictor import keras_answers, run_prep, write_digits
from tests.helpers import snapshot

COMPANIONS = {"labels.txt", "preprocessing.json", "README.md", "verification.json"}


def exports_of(run: Path, tmp_path_factory):
    """``export(fmt)``: ``run`` exported in ``fmt`` (once for each format), as (report,
    folder); for a module's fixture."""
    made: dict[str, tuple] = {}

    def export(fmt: str):
        if fmt not in made:
            out = tmp_path_factory.mktemp(fmt) / "out"
            made[fmt] = export_run(run, fmt, out), out
        return made[fmt]

    return export


def check_report(report, out: Path, fmt: str, name: str, thresholds: tuple[float, float],
                 expected: dict) -> None:
    """A task's export ``report`` (in ``out``) on the 4 validation samples of a tiny run
    holds its ``expected`` agreement (``expected["agreement"]``, as ``name`` says) and
    scores (the rest), is flagged under ``thresholds`` (float, int8), is written in
    verification.json, and agrees fully in the formats of Keras's float32 arithmetic."""
    form = FORMATS[fmt]
    scores = {k: v for k, v in expected.items() if k != "agreement"}
    assert set(report.files) == COMPANIONS | {form.file}
    assert report.samples == 4 and report.latency_ms > 0 and report.size > 0
    assert report.threshold == thresholds[form.quantised]
    assert report.agreement_name == name
    assert report.agreement == pytest.approx(expected["agreement"])
    assert report.scores == pytest.approx(scores)
    assert report.flagged == (expected["agreement"] < report.threshold)
    written = json.loads((out / "verification.json").read_text())
    assert written["agreement"] == report.agreement and written["scores"] == report.scores
    assert written["latency_ms"] == report.latency_ms and written["size"] == report.size
    if fmt in ("keras", "savedmodel", "onnx"):
        assert report.agreement == 100 and not report.flagged


@pytest.fixture
def target(tmp_path) -> Path:
    """An export folder already holding a file of its own and an older model.tflite."""
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    (folder / "model.tflite").write_bytes(b"an older export")
    return folder


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> Path:
    """The demo project's CNN (the one the app opens on), trained for one epoch."""
    from studio.core.project.templates import demo_project
    from studio.core.training.trainer import train

    project = demo_project()
    project.training.epochs = 1
    return train(project, tmp_path_factory.mktemp("demo-run")).run_dir


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_each_format_exports_verified_with_its_companions(demo_run, tmp_path, fmt):
    events = []
    report = export_run(demo_run, fmt, tmp_path / "out", on_event=events.append)
    out = tmp_path / "out"
    form = FORMATS[fmt]
    assert set(report.files) == COMPANIONS | {form.file} == {p.name for p in out.iterdir()}
    assert report.threshold == (97.0 if form.quantised else 99.0)
    assert not report.flagged and report.agreement >= report.threshold
    assert report.agreement_name == "top-1 agreement" and report.scores == {}
    assert report.samples == 200 and report.latency_ms > 0 and report.size > 0
    assert report.max_abs_diff < (0.05 if fmt == "tflite-int8" else 1e-3)
    written = json.loads((out / "verification.json").read_text())
    assert {k: written[k] for k in ("agreement", "max_abs_diff", "flagged", "size")} == {
        "agreement": report.agreement, "max_abs_diff": report.max_abs_diff,
        "flagged": False, "size": report.size}
    prep = run_prep(demo_run)
    assert (out / "labels.txt").read_text().split() == prep["class_names"]
    assert json.loads((out / "preprocessing.json").read_text()) == prep
    assert form.file in (out / "README.md").read_text()
    assert any(e["type"] == "progress" and e["done"] == e["total"] == 200 for e in events)


def test_the_readme_snippet_answers_as_the_keras_model_does(cnn_run, tmp_path, monkeypatch,
                                                            capsys):
    out = tmp_path / "int8"
    export_run(cnn_run, "tflite-int8", out)
    digit = write_digits(tmp_path / "digits", 1, start=7)[0]
    expected = keras_answers(cnn_run / runs.MODEL_FILE,
                             preprocess_image_files(run_prep(cnn_run), [digit]))
    (out / "picture.png").write_bytes(digit.read_bytes())
    monkeypatch.chdir(out)
    code = re.search(r"```python\n(.*)```", (out / "README.md").read_text(), re.S)[1]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - our own snippet
    assert np.abs(scope["outputs"] - expected).max() < 0.05
    assert capsys.readouterr().out.split()[-1] == scope["labels"][int(np.argmax(
        scope["outputs"]))]


def answers_changed(monkeypatch, change) -> None:
    """Make every reloaded export answer with ``change`` applied to its outputs."""
    real = exporter.load_answer

    def changed(*args):
        answer = real(*args)
        return lambda x: change(answer(x))

    monkeypatch.setattr(exporter, "load_answer", changed)  # where the export calls it


def flagged_keras_export(run: Path, out: Path, capsys) -> tuple[dict, str, str]:
    """``studio export RUN --format keras -o OUT``, which must exit 1 (flagged): the
    verification.json written, and what it printed and warned."""
    assert main(["export", str(run), "--format", "keras", "-o", str(out)]) == 1
    printed, warned = capsys.readouterr()
    report = json.loads((out / "verification.json").read_text())
    assert report["flagged"] and report["agreement"] < 50
    return report, printed, warned


def test_an_export_answering_differently_is_flagged_and_kept(cnn_run, tmp_path, monkeypatch):
    answers_changed(monkeypatch, lambda y: np.roll(y, 1, axis=-1))
    report = export_run(cnn_run, "tflite", tmp_path / "out")
    assert report.flagged and report.agreement < 50
    assert "under the 99%" in report.note
    assert json.loads((tmp_path / "out" / "verification.json").read_text())["flagged"]


def run_tflite_cannot_express(cnn_run: Path, folder: Path) -> Path:
    """A copy of ``cnn_run`` whose model resizes bicubically, which no TFLite op does."""
    import keras

    shutil.copytree(cnn_run, folder)
    inputs = keras.Input((28, 28, 1))
    x = keras.layers.Resizing(20, 20, interpolation="bicubic")(inputs)
    x = keras.layers.Dense(10, activation="softmax")(keras.layers.Flatten()(x))
    keras.Model(inputs, x).save(folder / runs.MODEL_FILE)
    return folder


def test_a_failing_conversion_leaves_the_target_as_it_was(cnn_run, target, tmp_path):
    run = run_tflite_cannot_express(cnn_run, tmp_path / "bicubic-run")
    before, around = snapshot(target), snapshot(target.parent)
    with pytest.raises(ExportError) as caught:
        export_run(run, "tflite", target)
    assert str(caught.value).startswith(
        "TensorFlow Lite (float32) cannot express this model: 'tf.ResizeBicubic' op is neither "
        "a custom op nor a flex op (TensorFlow Lite has no built-in operation for "
        "ResizeBicubic). Export it in another format")
    assert snapshot(target) == before and snapshot(target.parent) == around
    fresh = target.parent / "new" / "folder"
    with pytest.raises(ExportError, match="ResizeBicubic"):
        export_run(run, "tflite-int8", fresh)
    assert snapshot(target.parent) == around
    assert not export_run(run, "keras", fresh).flagged  # a format keeping every layer


def test_a_stopped_export_leaves_the_target_as_it_was(cnn_run, target):
    import threading

    stop = threading.Event()
    stop.set()
    before = snapshot(target.parent)
    with pytest.raises(ExportCancelled):
        export_run(cnn_run, "keras", target, stop=stop)
    assert snapshot(target.parent) == before


@pytest.mark.parametrize(("code", "said"), [(errno.EROFS, "is read-only"),
                                            (errno.ENOSPC, "not enough free space")])
def test_a_folder_refusing_the_files_says_so_and_keeps_what_it_held(cnn_run, target,
                                                                    monkeypatch, code, said):
    replace, calls = os.replace, []

    def refusing(source, destination):
        if target in (Path(source).parent, Path(destination).parent):
            calls.append(destination)
        if len(calls) == 4:  # README.md, labels.txt moved in, the old model set aside
            raise OSError(code, os.strerror(code), str(destination))
        replace(source, destination)

    monkeypatch.setattr(export_staging.os, "replace", refusing)
    before = snapshot(target)
    with pytest.raises(ExportError, match=said):
        export_run(cnn_run, "tflite", target)
    assert snapshot(target) == before


def test_a_folder_refusing_the_staging_folder_says_so_and_writes_nothing(cnn_run, target,
                                                                         monkeypatch):
    mkdir = Path.mkdir

    def refusing(self, *args, **kwargs):
        if self.name.startswith(".export-"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", refusing)
    before = snapshot(target.parent)
    with pytest.raises(ExportError, match=f"^{re.escape(str(target))} is read-only .*choose "
                                          "another folder. Nothing was written."):
        export_run(cnn_run, "keras", target)
    assert snapshot(target.parent) == before


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into read-only folders")
def test_a_read_only_folder_says_so_and_writes_nothing(cnn_run, target):
    before = snapshot(target)
    target.chmod(0o555)
    try:
        with pytest.raises(ExportError, match="is read-only"):
            export_run(cnn_run, "keras", target)
    finally:
        target.chmod(0o755)
    assert snapshot(target) == before


def test_studio_export_prints_the_report_as_json(cnn_run, target, capsys):
    code = main(["export", str(cnn_run), "--format", "tflite-fp16", "-o", str(target),
                 "--json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert code == 0 and err == ""
    assert report["format"] == "tflite-fp16" and not report["flagged"]
    assert report["agreement"] >= 99 and report["directory"] == str(target)
    assert {p.name for p in target.iterdir()} == COMPANIONS | {"model.tflite", "notes.txt"}
    assert (target / "model.tflite").read_bytes() != b"an older export"


def test_studio_export_says_why_it_cannot(cnn_run, tmp_path, capsys):
    code = main(["export", str(tmp_path), "--format", "onnx", "-o", str(tmp_path / "out")])
    assert code == 1 and "is not a run folder" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    code = main(["export", str(cnn_run), "--format", "keras", "-o", str(tmp_path / "file")])
    assert code == 1 and "is a file: export into a folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ExportError, match="Unknown export format 'pdf': choose one of keras"):
        export_run(cnn_run, "pdf", tmp_path / "out")


def test_a_text_run_exports_with_float_inputs_for_its_token_ids(tmp_path):
    import tensorflow as tf

    from tests.core.test_predictor import trained_text_run

    run = trained_text_run(tmp_path)
    report = export_run(run, "onnx", tmp_path / "onnx")
    assert report.agreement == 100 and report.max_abs_diff < 1e-5
    export_run(run, "tflite-int8", tmp_path / "int8")
    interpreter = tf.lite.Interpreter(model_path=str(tmp_path / "int8" / "model.tflite"))
    assert interpreter.get_input_details()[0]["dtype"] == np.float32
    assert interpreter.get_output_details()[0]["dtype"] == np.int8


@pytest.mark.parametrize(("code", "said"), [(errno.ENOSPC, "not enough free space"),
                                            (errno.EROFS, "is read-only")])
def test_a_full_disk_under_tensorflow_is_said_as_a_disk_problem(cnn_run, target, monkeypatch,
                                                                code, said):
    import keras
    import tensorflow as tf

    def refused(model, path, *args, **kwargs):  # as TensorFlow's own file system says it
        raise tf.errors.ResourceExhaustedError(
            None, None, f"{path}/variables/variables_temp/part-00000-of-00001.data-00000-of-"
            f"00001.tempstate6115783527418073095; {os.strerror(code)} [Op:SaveV2]")

    monkeypatch.setattr(keras.Model, "export", refused)
    before = snapshot(target)
    with pytest.raises(ExportError, match=said) as caught:
        export_run(cnn_run, "savedmodel", target)
    assert "cannot express" not in str(caught.value)
    assert snapshot(target) == before
