"""Evaluating a run on its own split: scores that agree with Keras, per-class scores checked
by hand, the samples behind each cell, and plain refusals of what cannot be evaluated."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from studio.core.data import sources as data
from studio.core.data.display import sample_images
from studio.core.data.types import DataError
from studio.core.inference.evaluation import EvaluationCancelled, evaluate_run
from studio.core.inference.predictor import ModelFileError
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project, load_project, save_project
from studio.core.runs import folders as runs
from studio.core.tasks.class_scores import Evaluation, per_class_scores


@pytest.fixture(scope="module")
def test_split(cnn_run):
    """The final model of ``cnn_run`` evaluated on its test split, and the data it read."""
    project = load_project(cnn_run / runs.PROJECT_FILE)
    return evaluate_run(cnn_run, "test"), data.load(project.dataset)


def keras_scores(run_dir: Path, model_path: Path, split: str) -> dict[str, float]:
    """``model.evaluate`` on the run's split, read through the training pipeline."""
    import keras

    from studio.core.data.pipelines import make_pipelines

    project = load_project(run_dir / runs.PROJECT_FILE)
    loaded = data.load(project.dataset)
    pipes = make_pipelines(loaded, project.dataset, 100, project.training.seed)
    dataset = pipes.test if split == "test" else pipes.validation
    model = keras.saving.load_model(model_path, safe_mode=True, compile=False)
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"])
    steps = None if split == "test" else pipes.validation_steps
    return model.evaluate(dataset, steps=steps, verbose=0, return_dict=True)


def test_test_scores_are_those_keras_recorded_after_training(cnn_run, test_split):
    evaluation, _ = test_split
    recorded = json.loads((cnn_run / runs.RUN_FILE).read_text())["test"]
    assert evaluation.split == "test" and len(evaluation.true) == 999
    assert evaluation.loss == pytest.approx(recorded["loss"], rel=1e-5)
    assert evaluation.accuracy == pytest.approx(recorded["accuracy"], abs=1e-6)
    assert evaluation.notes == []


def test_a_checkpoint_on_the_validation_split_agrees_with_model_evaluate(cnn_run):
    checkpoint = runs.checkpoints(cnn_run)[0][1]
    evaluation = evaluate_run(cnn_run, "validation", checkpoint)
    expected = keras_scores(cnn_run, checkpoint, "validation")
    assert len(evaluation.true) == 2000
    assert evaluation.loss == pytest.approx(expected["loss"], rel=1e-5)
    assert evaluation.accuracy == pytest.approx(expected["accuracy"], abs=1e-6)
    final = evaluate_run(cnn_run, "validation")
    assert final.loss != pytest.approx(evaluation.loss, rel=1e-3)


def test_answers_follow_the_split_order_and_fill_the_confusion_matrix(test_split):
    evaluation, loaded = test_split
    indices = loaded.splits["test"]
    assert np.array_equal(evaluation.indices, indices)
    assert np.array_equal(evaluation.true, loaded.labels[indices])
    confusion = evaluation.confusion
    assert confusion.shape == (10, 10) and confusion.dtype == np.int64
    assert confusion.sum(axis=1).tolist() == loaded.class_counts("test")
    assert np.array_equal(evaluation.support, confusion.sum(axis=1))
    assert np.trace(confusion) / confusion.sum() == pytest.approx(evaluation.accuracy)
    assert np.all((evaluation.confidence > 0.1) & (evaluation.confidence <= 1))


def test_a_cell_holds_the_samples_of_that_true_class_given_that_answer(test_split):
    evaluation, loaded = test_split
    for true, answer in ((3, 3), (4, 9)):
        positions = evaluation.cell(true, answer)
        assert len(positions) == evaluation.confusion[true, answer]
        assert np.all(evaluation.true[positions] == true)
        assert np.all(evaluation.predicted[positions] == answer)
    images = sample_images(evaluation.samples,
                           evaluation.sample_indices(evaluation.cell(4, 9)[:3]))
    expected = loaded.samples.x[loaded.splits["test"][evaluation.cell(4, 9)[:3]]]
    assert all(im.dtype == np.uint8 and im.shape == (28, 28, 1) for im in images)
    assert np.array_equal(np.stack(images), expected)


def test_confident_mistakes_are_wrong_and_sorted_by_confidence(test_split):
    evaluation, _ = test_split
    mistakes = evaluation.confident_mistakes(20)
    assert len(mistakes) == 20
    assert np.all(evaluation.true[mistakes] != evaluation.predicted[mistakes])
    confidence = evaluation.confidence[mistakes]
    assert np.all(np.diff(confidence) <= 0)
    wrong = evaluation.true != evaluation.predicted
    assert confidence[0] == evaluation.confidence[wrong].max()
    assert len(evaluation.confident_mistakes(10_000)) == wrong.sum()


def hand_made() -> Evaluation:
    """Nine answers whose confusion matrix is [[3, 1, 0], [2, 2, 0], [1, 0, 0]]: class c is
    never answered."""
    true = [0, 0, 0, 0, 1, 1, 1, 1, 2]
    answers = [0, 0, 0, 1, 0, 0, 1, 1, 0]
    confidence = [0.9, 0.8, 0.7, 0.95, 0.6, 0.99, 0.5, 0.55, 0.4]
    probabilities = np.zeros((9, 3))
    for row, (answer, p) in enumerate(zip(answers, confidence, strict=True)):
        probabilities[row] = (1 - p) / 2
        probabilities[row, answer] = p
    return Evaluation.of_answers("validation", ["a", "b", "c"], np.array(true), probabilities,
                                 0.5)


def test_precision_recall_and_f1_match_a_hand_computation():
    evaluation = hand_made()
    assert evaluation.confusion.tolist() == [[3, 1, 0], [2, 2, 0], [1, 0, 0]]
    assert evaluation.accuracy == pytest.approx(5 / 9)
    assert evaluation.precision == pytest.approx([3 / 6, 2 / 3, 0])
    assert evaluation.recall == pytest.approx([3 / 4, 2 / 4, 0])
    assert evaluation.f1 == pytest.approx([0.6, 4 / 7, 0])
    assert evaluation.support.tolist() == [4, 4, 1]


def test_a_class_never_answered_or_absent_scores_zero_not_nan():
    precision, recall, f1, support = per_class_scores(np.array([[2, 0], [0, 0]]))
    assert precision.tolist() == [1.0, 0.0] and recall.tolist() == [1.0, 0.0]
    assert f1.tolist() == [1.0, 0.0] and support.tolist() == [2, 0]
    report = hand_made().to_dict()
    json.dumps(report, allow_nan=False)
    c = report["per_class"][2]
    assert c == {"class": "c", "precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1,
                 "answered": 0}
    assert any("Precision is 0" in note and "(c)" in note for note in report["notes"])
    assert report["confusion"] == [[3, 1, 0], [2, 2, 0], [1, 0, 0]] and report["mistakes"] == 4


def test_cells_and_mistakes_of_a_hand_made_evaluation():
    evaluation = hand_made()
    assert evaluation.cell(1, 0).tolist() == [4, 5]
    assert evaluation.cell(2, 2).tolist() == []
    assert evaluation.confident_mistakes(3).tolist() == [5, 3, 4]


def test_stopping_while_answering_cancels(cnn_run):
    stop = threading.Event()
    seen = []

    def progress(what, done, total):
        seen.append((what, done, total))
        if what.startswith("Answering"):
            stop.set()

    with pytest.raises(EvaluationCancelled, match="cancelled"):
        evaluate_run(cnn_run, "validation", on_progress=progress, stop=stop)
    assert seen == [("Answering 2,000 samples", 256, 2000)]


def folder_run(root: Path, test_split: float = 0.0) -> Path:
    """A run folder made by hand: a project reading an image folder of two classes (grey,
    RGB, RGBA and 16-bit PNGs and a JPEG), a small untrained CNN as its model, and the data's
    fingerprint in its config."""
    from studio.core.build.keras_model import build_model

    images = root / "images"
    rng = np.random.default_rng(3)
    for label, name in enumerate(("cats", "dogs")):
        for i in range(5):
            pixels = rng.integers(0, 256, (12, 10, 3), dtype=np.uint8)
            pixels[..., label] = 250
            picture = [Image.fromarray(pixels), Image.fromarray(pixels[..., 0]),
                       Image.fromarray(np.dstack([pixels, pixels[..., :1]])),
                       Image.fromarray(pixels[..., 1].astype(np.uint16) * 257),
                       Image.fromarray(pixels)][i]
            path = images / name / (f"{i}.jpg" if i == 4 else f"{i}.png")
            path.parent.mkdir(parents=True, exist_ok=True)
            picture.save(path)
    choice = DatasetChoice(source="folder", path=str(images), image_size=[8, 8], color="rgb",
                           validation_split=0.4, test_split=test_split)
    nodes = [Node("input_1", "Input", {"shape": [8, 8, 3]}),
             Node("conv2d_1", "Conv2D", {"filters": 2, "kernel_size": 3}),
             Node("flatten_1", "Flatten", {}),
             Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})]
    project = Project(name="Pets", graph=Graph.from_chain(nodes), dataset=choice)
    run = root / "run"
    run.mkdir()
    save_project(project, run / runs.PROJECT_FILE)
    build_model(project.graph, data.describe(choice)).save(run / runs.MODEL_FILE)
    fingerprint = data.load(choice).fingerprint()
    (run / runs.CONFIG_FILE).write_text(json.dumps({"dataset_fingerprint": fingerprint}))
    return run


def changed(notes: list[str]) -> list[str]:
    return [note for note in notes if "data changed since this run was trained" in note]


def test_an_image_folder_run_shows_its_files_as_grey_or_rgb(tmp_path):
    run = folder_run(tmp_path)
    evaluation = evaluate_run(run, "validation")
    assert len(evaluation.true) == 4 and not changed(evaluation.notes)
    assert evaluation.confusion.sum() == 4
    images = sample_images(evaluation.samples, evaluation.sample_indices(range(4)))
    loaded = evaluation.samples
    for position, image in enumerate(images):
        path = loaded.paths[evaluation.indices[position]]
        channels = 1 if path.stem in ("1", "3") else 3
        assert image.dtype == np.uint8 and image.shape == (12, 10, channels), path.name
        if path.stem in ("0", "2"):
            assert np.array_equal(image, np.asarray(Image.open(path).convert("RGB")))


def test_changed_data_is_noted(tmp_path):
    run = folder_run(tmp_path)
    Image.fromarray(np.zeros((12, 10, 3), np.uint8)).save(tmp_path / "images" / "cats" / "x.png")
    assert len(changed(evaluate_run(run, "validation").notes)) == 1


def test_data_no_longer_there_is_refused_in_plain_words(tmp_path):
    run = folder_run(tmp_path)
    shutil.move(tmp_path / "images", tmp_path / "moved")
    with pytest.raises(DataError, match="cannot be read any more.*does not exist.*Put it back"):
        evaluate_run(run, "validation")


def test_a_run_without_a_test_split_is_refused(tmp_path):
    run = folder_run(tmp_path)
    with pytest.raises(DataError, match="no test split: set a test split in Data and train "
                                        "again"):
        evaluate_run(run, "test")


def test_a_model_that_does_not_fit_the_run_is_refused(tmp_path):
    import keras

    run = folder_run(tmp_path)
    other = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Flatten(),
                              keras.layers.Dense(5, activation="softmax")])
    other.save(tmp_path / "other.keras")
    with pytest.raises(ValueError, match="answers with 5 values.*2 classes"):
        evaluate_run(run, "validation", tmp_path / "other.keras")
    (tmp_path / "junk.keras").write_text("not a model")
    with pytest.raises(ModelFileError, match="junk.keras"):
        evaluate_run(run, "validation", tmp_path / "junk.keras")


def test_a_regression_run_is_refused(tmp_path):
    choice = DatasetChoice(source="csv", path=str(tmp_path / "prices.csv"), label_column="price",
                           task="regression")
    nodes = [Node("input_1", "Input", {"shape": [3]}), Node("dense_1", "Dense", {"units": 1})]
    save_project(Project(name="Prices", graph=Graph.from_chain(nodes), dataset=choice),
                 tmp_path / runs.PROJECT_FILE)
    with pytest.raises(ValueError, match="regression.*no classes"):
        evaluate_run(tmp_path, "validation")


@pytest.mark.parametrize("split", ["train", "everything"])
def test_only_the_validation_and_test_splits_are_evaluated(cnn_run, split):
    with pytest.raises(ValueError, match="validation or test"):
        evaluate_run(cnn_run, split)


def test_a_folder_that_is_not_a_run_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a run.*does not exist"):
        evaluate_run(tmp_path, "validation")
