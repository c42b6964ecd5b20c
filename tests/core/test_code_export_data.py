"""Exported scripts read image folders, Keras built-ins, CSV tables and CSV texts as Layer
Studio does: run in their own process, they build the same model and, with the same seed,
train to the same first-epoch loss as the app's own run."""

from __future__ import annotations

import json
import re
import runpy
import shutil
from dataclasses import dataclass
from pathlib import Path

import keras
import numpy as np
import pytest

from studio.core.base.paths import workspace
from studio.core.data.builtin import cache_path
from studio.core.data.sources import load
from studio.core.data.types import DataError
from studio.core.export.python_code import export_code
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project, Schedule
from studio.core.runs.folders import MODEL_FILE
from studio.core.training.trainer import train
from tests.helpers import digit_folder
from tests.script_runs import Job, run_jobs
from tests.segmentation_runs import demo_folder, segmenter

LOSS_TOLERANCE = 1e-4
"""Relative: the script feeds the same batches in the same order to the same model, so only
the last bits of TensorFlow's threaded sums may differ."""


def chain(*nodes: Node) -> Graph:
    return Graph.from_chain(list(nodes))


def folder_project(tmp_path: Path, per_class: int = 12) -> Project:
    """20 × 20 grey PNGs read at 16 × 16 (resized), standardised per channel."""
    folder = digit_folder(tmp_path / "digits", per_class)
    project = Project(name="Folder", graph=chain(
        Node("input_1", "Input", {"shape": [16, 16, 1]}),
        Node("conv2d_1", "Conv2D", {"filters": 4, "kernel_size": 3, "activation": "relu"}),
        Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})))
    project.dataset = DatasetChoice(source="folder", path=str(folder), image_size=[16, 16],
                                    color="grayscale", normalization="standardize",
                                    validation_split=0.25)
    return project


def builtin_project(tmp_path: Path) -> Project:
    """Keras's MNIST, as a small stand-in in Layer Studio's converted copy, read at 14 × 14."""
    rng = np.random.default_rng(1)
    path = cache_path("mnist")
    path.parent.mkdir(parents=True)
    np.savez(path, x=rng.integers(0, 256, (60, 28, 28, 1), dtype=np.uint8),
             y=np.repeat(np.arange(10), 6).astype(np.uint8))
    project = Project(name="Builtin", graph=chain(
        Node("input_1", "Input", {"shape": [14, 14, 1]}),
        Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dense", {"units": 10})))
    project.dataset = DatasetChoice(source="keras", name="mnist", image_size=[14, 14],
                                    resize="pad", normalization="symmetric", test_split=0.1)
    return project


def table_project(tmp_path: Path) -> Project:
    """A semicolon CSV with decimal commas, missing values, a text column left out and a row
    without a label."""
    rng = np.random.default_rng(2)
    lines = ["height;width;note;weight;kind"]
    for i in range(60):
        a, b, c = rng.normal(size=3)
        cells = [f"{a:.3f}".replace(".", ","), "NA" if i % 7 == 0 else f"{b:.2f}".replace(".", ","),
                 "some text", f"{c * 10:.1f}".replace(".", ","), ["small", "big", "mid"][i % 3]]
        lines.append(";".join(cells))
    lines.append("1,0;2,0;x;3,0;")
    path = tmp_path / "shapes.csv"
    path.write_text("\n".join(lines), encoding="utf-8")
    project = Project(name="Table", graph=chain(
        Node("input_1", "Input", {"shape": [3]}),
        Node("dense_1", "Dense", {"units": 8, "activation": "relu"}),
        Node("dense_2", "Dense", {"units": 3, "activation": "softmax"})))
    project.dataset = DatasetChoice(source="csv", path=str(path), label_column="kind")
    return project


def text_project(tmp_path: Path) -> Project:
    rng = np.random.default_rng(3)
    words = "good great fine bad awful poor movie plot, actors! The the".split()
    rows = ["review,label"]
    for i in range(48):
        text = " ".join(rng.choice(words, size=rng.integers(2, 9)))
        rows.append(f"\"{text}\",{'yes' if i % 2 else 'no'}")
    path = tmp_path / "reviews.csv"
    path.write_text("\n".join(rows), encoding="utf-8")
    project = Project(name="Texts", graph=chain(
        Node("input_1", "Input", {"shape": [8]}),
        Node("embedding_1", "Embedding", {"input_dim": 30, "output_dim": 4}),
        Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})))
    project.dataset = DatasetChoice(source="csv", path=str(path), label_column="label",
                                    text_column="review", max_tokens=30, sequence_length=8)
    return project


def big_folder_project(tmp_path: Path) -> Project:
    """300 training images, more than one chunk of the app's image cache (on by default),
    which then shuffles the chunks and the images within a buffer: the script must too (with
    the seed the tests use, the chunks do change places)."""
    project = folder_project(tmp_path, per_class=200)
    assert project.dataset.cache == "auto"
    return project


def bfloat16_table_project(tmp_path: Path) -> Project:
    """The table, computed in mixed bfloat16 precision (with float32 outputs)."""
    project = table_project(tmp_path)
    project.training.device.precision = "mixed_bfloat16"
    return project


def segmentation_project(tmp_path: Path) -> Project:
    """A folder of the demo set's images and masks, read at 16 × 16 by two convolutions."""
    return segmenter(demo_folder(tmp_path / "digits"))


PROJECTS = {"folder": big_folder_project, "builtin": builtin_project, "table": table_project,
            "text": text_project, "bfloat16": bfloat16_table_project,
            "segmentation": segmentation_project}


def augmented_project(tmp_path: Path) -> Project:
    """The folder with one image fewer, augmented, with class weights, a halving rate,
    early stopping and the best checkpoint kept."""
    project = folder_project(tmp_path)
    project.dataset.class_weights = True
    (tmp_path / "digits" / "1" / "0.png").unlink()  # unequal classes: the weights matter
    aug = project.dataset.augmentation
    aug.flip_horizontal, aug.crop, aug.rotation, aug.noise = True, 0.2, 10.0, 0.05
    training = project.training
    training.batch_size, training.epochs, training.learning_rate = 4, 6, 0.05
    training.optimizer = "sgd"
    training.schedule = Schedule(kind="step", step_epochs=1, factor=0.5)
    # Six noise images to validate on: their accuracy soon stops rising, which stops the run.
    training.early_stopping.enabled, training.early_stopping.patience = True, 1
    training.early_stopping.monitor = "val_accuracy"
    training.checkpoints.keep_best_only = True
    return project


@dataclass(frozen=True)
class Exported:
    """A project exported into ``folder`` (where its data lies, so the script names it from
    its own folder), and what its script, run from elsewhere, wrote: the summary or the
    error."""

    project: Project
    folder: Path
    workspace: Path
    summary: dict | None
    error: str


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Exported]:
    """Every project of this file exported, and all their scripts run in one process, one
    epoch each (the augmented one its project's epochs)."""
    root = tmp_path_factory.mktemp("exported")
    workspace, projects, jobs = root / "workspace", {}, {}
    with pytest.MonkeyPatch.context() as patch:  # where the built-in data's copy goes
        patch.setenv("LAYER_STUDIO_HOME", str(workspace))
        for kind, make in {**PROJECTS, "augmented": augmented_project}.items():
            folder = root / kind
            folder.mkdir()
            project = projects[kind] = make(folder)
            if kind != "augmented":
                project.training.batch_size, project.training.seed = 8, 5
            script = folder / "exported.py"
            script.write_text(export_code(project, script), encoding="utf-8")
            epochs = project.training.epochs if kind == "augmented" else 1
            jobs[kind] = Job([script, "--epochs", epochs, "--summary", folder / "summary.json"],
                             cwd=root)
    ran = run_jobs(jobs, root / "outputs", timeout=900)
    return {kind: Exported(
        project, root / kind, workspace, json.loads(summary.read_text(encoding="utf-8"))
        if (summary := root / kind / "summary.json").is_file() else None, ran[kind].error)
        for kind, project in projects.items()}


def script_summary(case: Exported) -> dict:
    assert case.error == "", case.error
    assert case.summary is not None
    return case.summary


def run_app(case: Exported, root: Path, epochs: int = 1):
    """The app's own run of the exported project, on the data its script read."""
    datasets = case.workspace / "datasets"
    if datasets.is_dir():
        shutil.copytree(datasets, workspace() / "datasets")
    result = train(case.project, root, epochs=epochs)
    assert result.status == "finished", result
    return result


def model_summary(model) -> dict:
    return {"layers": [type(layer).__name__ for layer in model.layers],
            "params": model.count_params()}


@pytest.mark.parametrize("kind", list(PROJECTS))
def test_the_script_trains_like_the_app(tmp_path, exported, kind):
    case = exported[kind]
    summary = script_summary(case)
    ours = run_app(case, tmp_path / "runs")
    model = keras.saving.load_model(ours.run_dir / MODEL_FILE)  # the model the app trained
    assert {k: summary[k] for k in ("layers", "params")} == model_summary(model)
    assert summary["history"]["loss"][0] == pytest.approx(ours.epochs[0]["loss"],
                                                          rel=LOSS_TOLERANCE)
    assert summary["history"]["val_loss"][0] == pytest.approx(ours.epochs[0]["val_loss"],
                                                              rel=LOSS_TOLERANCE)
    for score in summary["history"].keys() & {"val_mean_iou", "val_pixel_accuracy"}:
        assert summary["history"][score][0] == pytest.approx(ours.epochs[0][score],
                                                             rel=LOSS_TOLERANCE)


def test_augmentation_class_weights_schedule_early_stopping_and_checkpoints(tmp_path, exported):
    case = exported["augmented"]
    project, training = case.project, case.project.training
    text = export_code(project)
    for expected in ("keras.layers.RandomFlip(mode='horizontal', seed=0)",
                     "RandomCropResize(fraction=0.2, seed=1)",
                     "keras.layers.RandomRotation(factor=", "keras.layers.GaussianNoise(",
                     "CLASS_WEIGHTS = True",
                     "keras.optimizers.schedules.ExponentialDecay(",
                     "EARLY_STOPPING = {'monitor': 'val_accuracy', 'patience': 1, 'mode': 'max'}",
                     "CHECKPOINT_BEST_ONLY = True"):
        assert expected in text
    assert "DATA = HERE / 'digits'" in export_code(project, case.folder / "exported.py")
    summary = script_summary(case)
    ours = run_app(case, tmp_path / "runs", epochs=training.epochs)
    assert ours.note.startswith("Stopped early"), ours.note  # so early stopping is tested
    losses = [row["loss"] for row in ours.epochs]
    assert len(losses) < training.epochs
    # Every epoch's loss, so the halving rate and the augmentation's draws match too.
    assert summary["history"]["loss"] == pytest.approx(losses, rel=LOSS_TOLERANCE)
    kept = sorted(p.name for p in (case.folder / "checkpoints").iterdir())
    best = 1 + int(np.argmin([row["val_loss"] for row in ours.epochs]))
    assert kept == [f"epoch-{best:04d}.keras"]


def test_a_separate_validation_folder_is_read_as_the_app_reads_it(tmp_path):
    project = folder_project(tmp_path)
    validation = digit_folder(tmp_path / "checked", per_class=3)
    (validation / "0" / "1.png").unlink()
    project.dataset.validation_path, project.dataset.test_split = str(validation), 0.2
    script = tmp_path / "exported.py"
    script.write_text(export_code(project, script), encoding="utf-8")
    samples, labels, splits = runpy.run_path(str(script), run_name="exported")["load_splits"]()
    ours = load(project.dataset)
    assert list(samples) == [str(path) for path in ours.samples.paths]
    np.testing.assert_array_equal(labels, ours.labels)
    for name, indices in ours.splits.items():
        np.testing.assert_array_equal(splits[name], indices)
    assert len(splits["validation"]) == 5


def test_a_segmentation_script_carries_its_loss_and_metrics_and_reads_no_demo(tmp_path,
                                                                             exported):
    case = exported["segmentation"]
    text = (case.folder / "exported.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import) studio", text, re.M)
    assert "losses = [segmentation_loss(kind='cross_entropy_dice', from_logits=False, " in text
    assert "METRICS = [metric() for metric in metric_classes()]" in text
    assert "DATA = HERE / 'digits'" in text and "'images/train/" in text
    assert set(script_summary(case)["history"]) >= {"val_mean_iou", "val_pixel_accuracy"}
    case.project.dataset.path = ""
    with pytest.raises(DataError, match="^The segmentation demo set is drawn by Layer Studio"):
        export_code(case.project)
