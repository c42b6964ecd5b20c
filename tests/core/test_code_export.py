"""Exported scripts build the same model as Layer Studio, load the same data, and train."""

from __future__ import annotations

import json
import random
import runpy
from dataclasses import dataclass
from pathlib import Path

import keras
import numpy as np
import pytest

from studio.core.build.keras_import import import_model
from studio.core.build.keras_model import ModelError, build_keras_model, outputs_probabilities
from studio.core.build.optimizers import make_optimizer
from studio.core.data import bundled
from studio.core.data import sources as data
from studio.core.data.types import SPLITS
from studio.core.export.python_code import export_code, model_code
from studio.core.model.graph import Graph, Node
from studio.core.model.layers import LayerError
from studio.core.model.registry import REGISTRY
from studio.core.model.weights import use_random_weights
from studio.core.project.document import Project, Schedule
from studio.core.project.templates import demo_project, from_template
from tests.core.test_applications import base_in_two_parts
from tests.core.test_layer_oracle import TESTED
from tests.core.test_layer_oracle import _case as oracle_case
from tests.helpers import tiny_project, two_tower_project
from tests.keras_models import branched_model, imported_branched, lambda_model, random_batch
from tests.script_runs import Job, Ran, run_jobs


@pytest.fixture(scope="module")
def imported_project(tmp_path_factory):
    """The branched model imported: merges, a Reshape, a DepthwiseConv2D and an opaque ReLU."""
    path = tmp_path_factory.mktemp("export") / "branched.keras"
    branched_model().save(path)
    project = import_model(path)
    project.dataset.image_size, project.dataset.color = [8, 8], "rgb"  # MNIST read to fit it
    return project


def settings_project() -> Project:
    project = tiny_project(epochs=1)
    project.training.optimizer, project.training.learning_rate = "sgd", 0.05
    project.training.batch_size = 500
    return project


def cosine_project() -> Project:
    project = tiny_project(epochs=2)
    training = project.training
    training.optimizer, training.learning_rate, training.nesterov = "sgd", 0.1, True
    training.schedule = Schedule(kind="cosine", warmup_epochs=1, min_learning_rate=0.001)
    return project


def plateau_project() -> Project:
    project = cosine_project()
    training = project.training
    training.optimizer, training.schedule = "adamw", Schedule(kind="plateau", patience=1)
    training.weight_decay, training.batch_size = 0.004, 500
    return project


def towers_project() -> Project:
    project = two_tower_project()
    project.training.batch_size = 500
    return project


PREDICT = """
import json, runpy, sys
import numpy as np
script = runpy.run_path(sys.argv[1], run_name="exported")
model = script["build_model"]()
script["load_start_weights"](model)
print(json.dumps(model.predict(np.load(sys.argv[2]), verbose=0).tolist()))
"""


@dataclass(frozen=True)
class Script:
    """An exported script, and what its run printed (with its error, "" if none)."""

    path: Path
    ran: Ran
    expected: np.ndarray | None = None
    """What the script's printout must be (the predictions of the model it exports)."""

    @property
    def stdout(self) -> str:
        assert self.ran.error == "", self.ran.error
        return self.ran.stdout


@pytest.fixture(scope="module")
def scripts(tmp_path_factory, imported_project) -> dict[str, Script]:
    """The scripts that run in a process of their own, all run in one: the demo's and the
    imported model's with --build-only, the project settings', the plateau's (one epoch: the
    callback reports the rate after each), the two towers' and the fine-tuned model's
    predicting from its start weights."""
    root = tmp_path_factory.mktemp("scripts")
    (root / "tuned").mkdir()
    tuned, model = imported_branched(root / "tuned")
    tuned.dataset.image_size, tuned.dataset.color = [8, 8], "rgb"
    batch = random_batch(model)[0]
    np.save(root / "x.npy", batch)
    projects = {"demo": demo_project(), "imported": imported_project,
                "settings": settings_project(), "plateau": plateau_project(),
                "towers": towers_project(), "tuned": tuned}
    paths = {name: root / ("tuned" if name == "tuned" else "") / f"{name}.py"
             for name in projects}
    for name, project in projects.items():  # only the fine-tuned one knows where it goes
        paths[name].write_text(export_code(project, *[paths[name]] * (name == "tuned")))
    jobs = {name: Job([paths[name], "--build-only"], root) for name in ("demo", "imported")}
    jobs |= {name: Job([paths[name]], root) for name in ("settings", "towers")}
    jobs["plateau"] = Job([paths["plateau"], "--epochs", 1], root)
    jobs["tuned"] = Job(["-c", paths["tuned"], root / "x.npy"], root, code=PREDICT)
    ran = run_jobs(jobs, root / "outputs")
    return {name: Script(paths[name], ran[name], model.predict(batch, verbose=0)
                         if name == "tuned" else None) for name in projects}


def summary(model) -> dict:
    return {"layers": [type(layer).__name__ for layer in model.layers],
            "params": model.count_params()}


@pytest.mark.parametrize("which", ["demo", "imported"])
def test_the_script_builds_the_same_model(imported_project, scripts, which):
    project = demo_project() if which == "demo" else imported_project
    printed = json.loads(scripts[which].stdout.strip().splitlines()[-1])
    assert printed == summary(build_keras_model(project.graph))
    if which == "imported":
        assert {"ReLU", "DepthwiseConv2D", "Add", "Multiply", "Average"} <= set(printed["layers"])


def test_the_script_trains_with_the_project_settings(scripts):
    script = scripts["settings"]
    text = script.path.read_text()
    assert text == export_code(settings_project())
    assert "return keras.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=False)" in text
    assert "losses = [keras.losses.SparseCategoricalCrossentropy(from_logits=False)]" in text
    assert f"Reading {bundled.dataset_path(bundled.MNIST_10K)}" in script.stdout
    assert "16/16" in script.stdout and "val_accuracy" in script.stdout  # 8,000 / 500 steps


def test_the_script_builds_the_projects_optimizer_and_schedule(tmp_path, scripts):
    project = cosine_project()
    training = project.training
    text = export_code(project)
    assert ("learning_rate = keras.optimizers.schedules.CosineDecay(\n"
            "        initial_learning_rate=0.0, decay_steps=steps_per_epoch, alpha=0.01, "
            "warmup_target=0.1,\n        warmup_steps=steps_per_epoch)\n"
            "    return keras.optimizers.SGD(learning_rate=learning_rate, momentum=0.9, "
            "nesterov=True)") in text
    path = tmp_path / "cosine.py"
    path.write_text(text)
    script = runpy.run_path(str(path), run_name="exported")
    exported, ours = script["make_optimizer"](63), make_optimizer(training, 63)
    assert exported.get_config() == {**ours.get_config(), "name": exported.name}
    script = scripts["plateau"]
    text = script.path.read_text()
    assert text == export_code(plateau_project())
    assert ("callbacks = [keras.callbacks.ReduceLROnPlateau(monitor='val_loss', factor=0.5, "
            "patience=1, min_lr=0.0)]") in text
    assert "learning_rate: 0.1000" in script.stdout  # the callback reports the rate


@pytest.mark.parametrize(("normalization", "low", "high"), [("unit", 0.0, 1.0),
                                                          ("symmetric", -1.0, 1.0)])
def test_the_script_splits_and_scales_like_layer_studio(tmp_path, normalization, low, high):
    project = demo_project()
    project.dataset.seed, project.dataset.validation_split = 7, 0.25
    project.dataset.test_split, project.dataset.normalization = 0.1, normalization
    path = tmp_path / "model.py"
    path.write_text(export_code(project))
    script = runpy.run_path(str(path), run_name="exported")
    samples, labels, splits = script["load_splits"]()
    datasets = dict(zip(SPLITS, script["make_datasets"](samples, labels, splits), strict=True))
    ours = data.load(project.dataset)
    for split in SPLITS:
        indices = ours.splits[split]
        np.testing.assert_array_equal(splits[split], indices)
        np.testing.assert_array_equal(labels[splits[split]], ours.labels[indices])
    x, y = next(iter(datasets["validation"]))
    first = ours.splits["validation"][:len(y)]
    np.testing.assert_array_equal(y, ours.labels[first])
    assert x.dtype == "float32" and tuple(x.shape[1:]) == (28, 28, 1)
    pixels = ours.samples.x[first].astype(np.float32) / 255.0
    np.testing.assert_allclose(x, low + (high - low) * pixels, rtol=1e-5, atol=1e-6)
    assert script["EPOCHS"] == project.training.epochs
    assert script["BATCH_SIZE"] == project.training.batch_size


def test_standardized_pixels_have_zero_mean_on_the_training_split(tmp_path):
    project = demo_project()
    project.dataset.normalization = "standardize"
    project.training.batch_size = 2000
    path = tmp_path / "model.py"
    path.write_text(export_code(project))
    script = runpy.run_path(str(path), run_name="exported")
    train, _, _ = script["make_datasets"](*script["load_splits"]())
    x_train = np.concatenate([x for x, _ in train])
    # From 2,000 of the 8,000 training images, as Layer Studio takes them.
    assert abs(float(x_train.mean())) < 0.02 and float(x_train.std()) == pytest.approx(1, 0.02)


def test_a_model_that_does_not_fit_the_data_is_not_exported():
    project = demo_project()
    project.dataset.image_size = [32, 32]
    with pytest.raises(ModelError, match="The model does not fit MNIST-10k yet: "):
        export_code(project)


def test_ids_that_are_python_keywords_or_script_names_still_work(tmp_path):
    nodes = [Node("keras", "Input", {"shape": [28, 28, 1]}), Node("lambda", "Flatten"),
             Node("IMPORTED", "Dense", {"units": 10, "activation": "softmax"})]
    project = Project(name='A "quoted" \\ name', graph=Graph.from_chain(nodes))
    path = tmp_path / "odd.py"
    path.write_text(export_code(project))
    script = runpy.run_path(str(path), run_name="exported")
    assert script["__doc__"].startswith('A "quoted" \\ name: a model designed')
    assert summary(script["build_model"]()) == summary(build_keras_model(project.graph))


@pytest.mark.parametrize(
    ("last", "probabilities"),
    [(lambda: keras.layers.Dense(10, activation="softmax", bias_regularizer="l2"), True),
     (lambda: keras.layers.Softmax(axis=(1,)), True),  # a Softmax node has one axis, no tuple
     (lambda: keras.layers.Dense(10, bias_regularizer="l2"), False)],
)
def test_an_imported_layer_ending_in_softmax_outputs_probabilities(tmp_path, last, probabilities):
    inputs = keras.Input((28, 28, 1))
    flat = keras.layers.Flatten()(inputs)
    keras.Model(inputs, last()(keras.layers.Dense(10)(flat))).save(tmp_path / "m.keras")
    project = import_model(tmp_path / "m.keras")
    assert project.graph.node(project.graph.sinks()[0]).type == "Keras"
    assert outputs_probabilities(project.graph) == [probabilities]
    assert f"SparseCategoricalCrossentropy(from_logits={not probabilities})" in export_code(
        project)


def test_a_softmax_layer_at_the_end_outputs_probabilities():
    graph = Graph.from_chain([Node("x", "Input", {"shape": [28, 28, 1]}), Node("flat", "Flatten"),
                              Node("scores", "Dense", {"units": 10, "activation": "linear"}),
                              Node("probabilities", "Softmax", {})])
    assert outputs_probabilities(graph) == [True]
    assert "SparseCategoricalCrossentropy(from_logits=False)" in export_code(
        Project(name="p", graph=graph))


def test_exported_text_compiles(imported_project):
    for project in (demo_project(), tiny_project(), imported_project):
        compile(export_code(project), "exported.py", "exec")


def test_a_model_that_cannot_be_built_is_not_exported(tmp_path):
    with pytest.raises(ModelError, match="Nothing is connected"):
        export_code(Project(graph=Graph(nodes=[Node("input_1", "Input"),
                                               Node("dense_1", "Dense")])))
    path = tmp_path / "lambda.keras"
    lambda_model().save(path)
    with pytest.raises(ModelError, match="holds Python code"):
        export_code(import_model(path, trust=True))


def test_a_script_with_two_inputs_and_two_outputs_trains(scripts):
    stdout = scripts["towers"].stdout
    assert "val_main_accuracy" in stdout and "val_aux_accuracy" in stdout


def model_from_code(project: Project):
    """The model the script's ``build_model`` builds (made for other data than the project's,
    so written without the rest of the script)."""
    namespace = {"keras": keras}
    exec(model_code(project.graph, project.name), namespace)  # noqa: S102 - our own output
    return namespace["build_model"]()


def test_a_transfer_template_exports_the_same_model():
    project = from_template("mobilenetv2")
    use_random_weights(project.graph)
    project.graph.node(application_id(project)).params["trainable_layers"] = 20
    exported, ours = model_from_code(project), build_keras_model(project.graph, project.name)
    assert summary(exported) == summary(ours)
    trainable = [len(m.trainable_weights) for m in (exported, ours)]
    assert trainable[0] == trainable[1] > 0
    assert len(exported.trainable_weights) < len(exported.weights)


def test_a_base_ended_at_stride_16_exports_the_same_model():
    graph = Graph.from_chain([
        Node("image", "Input", {"shape": [64, 64, 3]}),
        Node("base", "Application", {"name": "MobileNetV2", "weights": "random",
                                     "trainable_layers": 30, "output_stride": "16"})])
    project = Project(name="ended", graph=graph)
    exported, ours = model_from_code(project), build_keras_model(graph, project.name)
    assert "end_at='block_13_expand_relu'" in model_code(graph, project.name)
    assert summary(exported) == summary(ours) and ours.output_shape == (None, 4, 4, 576)
    assert len(exported.trainable_weights) == len(ours.trainable_weights) > 0



def test_a_base_in_parts_exports_the_same_model():
    graph = base_in_two_parts()
    project = Project(name="parts", graph=graph)
    assert "start_at='block2_conv2', input_stride=2" in model_code(graph, project.name)
    exported, ours = model_from_code(project), build_keras_model(graph, project.name)
    assert summary(exported) == summary(ours)
    for part in ("early", "late"):
        assert summary(exported.get_layer(part)) == summary(ours.get_layer(part))
    assert len(exported.trainable_weights) == len(ours.trainable_weights) > 0
    exported.set_weights(ours.get_weights())
    pixels = np.random.default_rng(0).random((2, 40, 56, 3), dtype="float32")
    np.testing.assert_allclose(exported(pixels), ours(pixels), rtol=1e-6)


def test_imagenet_weights_are_left_to_keras_and_read_rgb():
    text = model_code(from_template("resnet50").graph, "resnet50")
    compile(text, "resnet50.py", "exec")
    assert "weights='imagenet'" in text and "flip_channels_of='conv1_conv'" in text


def application_id(project: Project) -> str:
    (node,) = [n for n in project.graph.nodes if n.type == "Application"]
    return node.id


def test_the_script_writes_sizes_per_axis_sides_and_regularizers_as_keras_takes_them(
        tmp_path):
    layers = [Node("image", "Input", {"shape": [28, 28, 1]}),
              Node("pad", "ZeroPadding2D", {"padding": [0, 1, 0, 1]}),
              Node("conv", "Conv2D", {"filters": 4, "kernel_size": [3, 1], "strides": [2, 1],
                                      "kernel_initializer": "he_normal",
                                      "kernel_regularizer": "l1_l2",
                                      "kernel_regularizer_factor": 1e-4}),
              Node("up", "Conv2DTranspose", {"filters": 2, "strides": [1, 2]}),
              Node("flat", "Flatten", {}),
              Node("out", "Dense", {"units": 10, "activation": "softmax"})]
    project = Project(name="per axis", graph=Graph.from_chain(layers))
    path = tmp_path / "model.py"
    path.write_text(export_code(project))
    script = runpy.run_path(str(path), run_name="exported")
    exported, ours = script["build_model"](), build_keras_model(project.graph)
    for name in ("pad", "conv", "up"):
        assert exported.get_layer(name).get_config() == ours.get_layer(name).get_config()
    assert ours.get_layer("conv").get_config()["kernel_regularizer"]["config"] == {
        "l1": 1e-4, "l2": 1e-4}


@pytest.mark.parametrize("name", TESTED)
def test_every_layer_type_is_written_from_its_keras_arguments(name):
    """Each palette type, with the layer oracle's random parameters, comes out of the script
    as the same layer the app builds: new types need nothing in the exporter."""
    rng = random.Random(f"export-{name}")
    written = 0
    while written < 3:
        params, shapes = oracle_case(name, rng)
        try:
            REGISTRY[name].output(params, shapes)
        except LayerError:
            continue
        inputs = [Node(f"input_{i}", "Input", {"shape": list(s)}) for i, s in enumerate(shapes)]
        graph = Graph(nodes=[*inputs, Node("layer", name, params)],
                      edges=[(node.id, "layer") for node in inputs])
        exported = model_from_code(Project(name=name, graph=graph))
        ours = build_keras_model(graph, name)
        assert summary(exported) == summary(ours)
        assert exported.output_shape == ours.output_shape
        written += 1


def test_keras_objects_among_a_layers_arguments_are_rebuilt_from_their_config(monkeypatch):
    from studio.core.export import python_code

    real = python_code.layer_kwargs
    monkeypatch.setattr(python_code, "layer_kwargs", lambda node, inputs=(): {
        **real(node, inputs), "kernel_regularizer": keras.regularizers.L2(0.25)})
    graph = Graph.from_chain([Node("input_1", "Input", {"shape": [4]}),
                              Node("dense_1", "Dense", {"units": 2})])
    model = model_from_code(Project(graph=graph))
    assert model.get_layer("dense_1").kernel_regularizer.get_config() == {"l2": 0.25}


def test_a_layer_type_says_how_its_layer_is_called(monkeypatch):
    from dataclasses import replace

    attention = replace(REGISTRY["Add"], call_arguments=lambda feeds: (
        (feeds[0], feeds[-1]), {"use_causal_mask": False}))
    monkeypatch.setitem(REGISTRY, "Add", attention)
    graph = Graph(nodes=[Node("query", "Input", {"shape": [4]}),
                         Node("value", "Input", {"shape": [4]}), Node("add_1", "Add")],
                  edges=[("query", "add_1"), ("value", "add_1")])
    assert "name='add_1')(query, value, use_causal_mask=False)" in model_code(graph, "m")


@pytest.fixture
def fine_tuned(tmp_path):
    """The branched model imported with its weights beside the project, training from them."""
    project, model = imported_branched(tmp_path)
    project.dataset.image_size, project.dataset.color = [8, 8], "rgb"
    return project, model


def test_the_script_starts_from_the_imported_weights(scripts):
    script = scripts["tuned"]
    text = script.path.read_text()
    assert "START_WEIGHTS = HERE / 'm.weights.h5'" in text
    assert "    model = build_model()\n    load_start_weights(model)\n" in text  # before fit
    assert "Starting from the imported weights" in script.stdout
    predicted = np.array(json.loads(script.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(predicted, script.expected, atol=1e-5)


def test_a_layer_whose_shapes_changed_keeps_its_random_start(tmp_path, fine_tuned, capsys):
    project, model = fine_tuned
    project.graph.node("left").params["kernel_size"] = 5
    path = tmp_path / "model.py"
    path.write_text(export_code(project, path))
    script = runpy.run_path(str(path), run_name="exported")
    built = script["build_model"]()
    script["load_start_weights"](built)
    for name in ("right", "hidden", "out"):
        for mine, theirs in zip(built.get_layer(name).get_weights(),
                                model.get_layer(name).get_weights(), strict=True):
            np.testing.assert_array_equal(mine, theirs)
    assert built.get_layer("left").kernel.shape == (5, 5, 3, 4)
    assert "left starts from random weights: its weight shapes differ" in capsys.readouterr().out


def test_missing_imported_weights_are_not_exported(tmp_path, fine_tuned):
    project, _ = fine_tuned
    project.weights.path.unlink()
    with pytest.raises(ModelError, match="m.weights.h5 is missing"):
        export_code(project, tmp_path / "model.py")
    project.weights = None
    with pytest.raises(ModelError, match="this project has none"):
        export_code(project)


def test_a_script_of_a_project_started_from_a_run_starts_from_that_runs_model(tmp_path,
                                                                              capsys):
    project = tiny_project(epochs=1)
    project.graph.nodes.insert(2, Node("hidden", "Dense", {"units": 6}))
    project.graph = Graph.from_chain(project.graph.nodes)
    earlier = project.copy()
    earlier.graph.node("dense_1").params["units"] = 12  # the run had other classes
    run_model = build_keras_model(earlier.graph, project.name)
    (tmp_path / "runs" / "r1").mkdir(parents=True)
    run_model.save(tmp_path / "runs" / "r1" / "model.keras")
    project.training.start_from, project.training.start_model = "run", "r1/model.keras"
    path = tmp_path / "model.py"
    path.write_text(export_code(project, path, tmp_path / "runs"))
    assert "START_MODEL = HERE / 'runs/r1/model.keras'" in path.read_text()
    script = runpy.run_path(str(path), run_name="exported")
    built = script["build_model"]()
    script["load_start_weights"](built)
    for mine, theirs in zip(built.get_layer("hidden").get_weights(),
                            run_model.get_layer("hidden").get_weights(), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert built.get_layer("dense_1").kernel.shape == (6, 10)
    said = capsys.readouterr().out
    assert "Starting from the run's model in" in said
    assert "dense_1 starts from random weights: its weight shapes differ in model.keras" in said
    (tmp_path / "runs" / "r1" / "model.keras").write_bytes(b"another model")
    with pytest.raises(SystemExit, match="not the model this project starts from"):
        script["load_start_weights"](built)
    (tmp_path / "runs" / "r1" / "model.keras").unlink()
    with pytest.raises(ModelError, match="r1/model.keras is not there"):
        export_code(project, path, tmp_path / "runs")
    assert "load_start_weights" not in export_code(tiny_project(epochs=1))


