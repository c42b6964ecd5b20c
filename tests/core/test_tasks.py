"""The task seam: every task answers the same questions, the core asks the project's task
instead of branching on its name, and a new task plugs in with one registration."""

from __future__ import annotations

import json

import numpy as np
import pytest

from studio.core.build.analysis import analyze
from studio.core.build.keras_model import build_model, compile_model
from studio.core.data.pipelines import PIPELINE_BUILDERS, make_pipelines
from studio.core.data.types import ArraySamples, DatasetInfo, LoadedData
from studio.core.inference.predictor import Prediction
from studio.core.model.fixes import Problem
from studio.core.model.graph import Graph, Node
from studio.core.project import document
from studio.core.project.document import DatasetChoice, ProjectFileError, load_project
from studio.core.project.templates import demo_project
from studio.core.tasks.registry import TASKS, task_for
from studio.core.tasks.regression import Regression


class Counting(Regression):
    """A made-up task: the model answers a whole count."""

    name = "counting"
    title = "Counting"

    def check_output(self, graph, out, shapes, dataset, several):
        if shapes[out] == (1,):
            return []
        return [Problem(out, f"A counter for {dataset.title} answers one count.")]

    def answers(self, outputs, class_names, top_k):
        return [{"value": [float(round(v)) for v in row]} for row in outputs]


@pytest.fixture
def counting(monkeypatch):
    """``Counting`` registered, as its one line in the registry would."""
    monkeypatch.setitem(TASKS, Counting.name, Counting())
    for cached in (document.project_schema, document._validator):
        cached.cache_clear()
    yield TASKS[Counting.name]
    for cached in (document.project_schema, document._validator):
        cached.cache_clear()


def dense_graph(units: int) -> Graph:
    return Graph.from_chain([Node("in", "Input", {"shape": [3]}),
                             Node("out", "Dense", {"units": units})])


COUNTS = DatasetInfo("counts.csv", "counts.csv", (3,), 0, (), 50, kind="table", task="counting")


def example_outputs(name: str) -> np.ndarray:
    """Two samples' outputs for two classes, as the task's models give them."""
    if name == "segmentation":  # a 3 × 4 map of two classes' probabilities per image
        first = np.zeros((2, 3, 4), np.int64)
        first[0, :, :3] = first[1, 0, 0] = 1
        return np.eye(2)[first] * 0.8 + 0.1
    if name != "detection":
        return np.array([[0.2, 0.8], [0.9, 0.1]])
    outputs = np.full((2, 4, 4, 6), -5.0)  # a DetectionHead's grid: 2 classes + 4
    outputs[0, 1, 2, 1] = outputs[1, 3, 0, 0] = 5.0  # one confident box in each image
    return outputs


@pytest.mark.parametrize("name", list(TASKS))
def test_every_task_answers_the_seams_questions(name):
    task = task_for(name)
    # (segmentation's "masks" pipeline comes with its data integration, on another branch)
    assert task.label_kind in PIPELINE_BUILDERS and task.title
    outputs = example_outputs(name)
    labels = task.synthetic_labels(4, outputs.shape[1:])
    assert len(labels) == 4 and labels.dtype == task.label_dtype
    assert len(task.losses([True, False])) == 2
    answers = task.answers(outputs, ("cat", "dog"), top_k=1)
    assert len(answers) == 2 and all(answers)
    line = task.answer_text(Prediction("a.png", **answers[0]))
    assert line and "\n" not in line
    if name == "segmentation":  # each image's mask, and each class's pixels in it
        assert [a["labels"] for a in answers] == [["dog", "cat"], ["cat", "dog"]]
        assert [a["areas"] for a in answers] == [[9, 3], [11, 1]]
        assert line == "dog 75.0%  cat 25.0% of 3 × 4 pixels"
    agreement = task.agreement(outputs, outputs)
    assert agreement in (None, 100.0)


@pytest.mark.parametrize("name", [name for name in TASKS
                                  if name not in ("detection", "segmentation")])
def test_every_task_scores_an_evaluation_or_says_why_not(name):
    """(A detector's boxes are scored in tests/core/test_detection_evaluation.py, and a
    segmentation's masks in tests/core/test_segmentation_scores.py.)"""
    task, labels = task_for(name), np.array([1, 0, 1])
    outputs = np.array([[0.2, 0.8], [0.9, 0.1], [0.6, 0.4]], np.float32)
    if task.evaluation_refusal:
        with pytest.raises(NotImplementedError, match="regression"):
            task.score_batch(labels, outputs, False, ("cat", "dog"))
        return
    answers, losses = task.score_batch(labels, outputs, False, ("cat", "dog"))
    assert answers.shape == outputs.shape and losses.shape == (3,)
    evaluation = task.evaluation("validation", ("cat", "dog"), labels, answers,
                                 float(losses.mean()), np.arange(3), None, [])
    assert evaluation.to_dict()["mistakes"] == 1 and evaluation.accuracy == pytest.approx(2 / 3)
    assert task.evaluation_text(evaluation).startswith("3 samples: accuracy 66.67%")


def test_an_unknown_task_is_refused_in_one_line(tmp_path):
    with pytest.raises(KeyError, match="Unknown task 'counting': choose one of classification"):
        task_for("counting")
    document_ = demo_project().to_dict()
    document_["dataset"]["task"] = "counting"
    path = tmp_path / "p.studio.json"
    path.write_text(json.dumps(document_))
    with pytest.raises(ProjectFileError) as refused:
        load_project(path)
    assert "counting" in str(refused.value) and "\n" not in str(refused.value)


def test_a_new_task_plugs_in_with_its_registration_alone(counting, tmp_path):
    project = demo_project()
    project.dataset.task = "counting"
    path = tmp_path / "p.studio.json"
    path.write_text(json.dumps(project.to_dict()))
    assert load_project(path).dataset.task == "counting"  # the schema knows it

    (problem,) = analyze(dense_graph(4), COUNTS).problems  # its output check is asked
    assert problem.message == "A counter for counts.csv answers one count."
    assert analyze(dense_graph(1), COUNTS).ok

    graph = dense_graph(1)
    model = build_model(graph, COUNTS, "counter")
    compile_model(model, graph, project.training, "counting",
                  steps_per_epoch=10)  # its loss and metrics (the demo's cosine needs steps)
    assert type(model.loss).__name__ == "MeanSquaredError"
    assert counting.answers(np.array([[2.7]]), (), 1) == [{"value": [3.0]}]


class Tally(Counting):
    """Counting with labels of a kind of its own, as segmentation masks would be."""

    name = "tally"
    label_kind = "tallies"


def test_a_new_kind_of_label_streams_through_its_pipeline_builder(monkeypatch):
    import tensorflow as tf

    monkeypatch.setitem(TASKS, Tally.name, Tally())
    asked = []

    def tallies(loaded, choice, batch_size, seed, output):
        asked.append((batch_size, seed, output))
        batches = tf.data.Dataset.from_tensor_slices(
            (np.zeros((6, 3)), np.arange(6.0))).batch(batch_size)
        return batches, batches, None, {"tallies": "as read"}, "what the task scores"

    monkeypatch.setitem(PIPELINE_BUILDERS, Tally.label_kind, tallies)
    info = DatasetInfo("tallies", "Tallies", (3,), 0, (), 6, kind="table", task=Tally.name)
    splits = {"train": np.arange(4), "validation": np.arange(4, 6), "test": np.arange(0)}
    loaded = LoadedData(info, ArraySamples(np.zeros((6, 3, 1, 1), np.uint8)), np.arange(6.0),
                        splits)
    pipes = make_pipelines(loaded, DatasetChoice(task=Tally.name), 2, 7, output={"grid": 4})
    assert asked == [(2, 7, {"grid": 4})]
    assert pipes.preprocessing == {"tallies": "as read"}
    assert pipes.scoring == "what the task scores" and pipes.test is None
    assert (pipes.steps, pipes.validation_steps) == (2, 1)
    (x, y), = pipes.train.take(1).as_numpy_iterator()
    assert x.shape == (2, 3) and list(y) == [0.0, 1.0]


def test_each_task_sums_up_a_run_by_its_own_scores():
    epoch = {"epoch": 5, "loss": 0.2, "accuracy": 0.95, "mae": 0.31, "val_loss": 0.0934,
             "val_accuracy": 0.9712, "val_mae": 0.4}
    assert task_for("classification").summary(epoch) == "val accuracy 97.1% · val loss 0.0934"
    assert task_for("regression").summary(epoch) == "val mae 0.4 · val loss 0.0934"
    no_validation = {"loss": 0.2, "accuracy": 0.95}
    assert task_for("classification").summary(no_validation) == "accuracy 95.0% · loss 0.2"
    assert task_for("regression").summary({}) == ""
    scores = {"val_map50": 0.912, "val_map": 0.5, "val_loss": 0.5}
    assert task_for("detection").summary(scores) == (
        "val mAP@0.5 91.2% · val mAP@[0.5:0.95] 50.0% · val loss 0.5")
