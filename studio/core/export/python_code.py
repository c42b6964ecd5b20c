"""Exporting a project as a standalone Python script that reads its data, builds its model and
trains it with Keras as Layer Studio does.

The model's layers are written from the same description the app builds them from (each
node's Keras arguments, ``layer_kwargs``, called as its layer type says), the optimizer and
schedule from ``optimizers``' KerasCalls, the loss from the task, and the data part from
``script_data``.
"""

from __future__ import annotations

import keyword
import pprint
import textwrap
from pathlib import Path
from string import Template
from typing import Any

from studio.core.build.analysis import Analysis, analyze
from studio.core.build.keras_model import (
    ModelError,
    calling_type,
    imported_class_path,
    imported_spec,
    keras_model_name,
    layer_kwargs,
    model_endpoints,
    outputs_probabilities,
)
from studio.core.build.optimizers import (
    OPTIMIZER_CLASSES,
    SCHEDULE_HELP,
    SCHEDULE_LABELS,
    KerasCall,
    callback_calls,
    optimizer_call,
    schedule_problems,
)
from studio.core.data.sources import describe
from studio.core.export.script_data import data_section, path_code
from studio.core.export.script_task import TaskCode, task_code
from studio.core.model.applications import APPLICATION, BASES, chosen_part
from studio.core.model.graph import Graph, Node
from studio.core.model.layers import OPAQUE_TYPE, Nested
from studio.core.project.document import EarlyStopping, Project, TrainingSettings
from studio.core.project.weights import file_sha256
from studio.core.runs.folders import BEST
from studio.core.tasks.registry import task_for
from studio.core.training.trainer import start_model_path

_LINE = 96
"""The longest line the script's generated calls are wrapped to."""

_RESERVED = frozenset({"keras", "tf", "np", "IMPORTED", "make_optimizer", "math", "application"})
"""Names the script's ``build_model`` uses, so no layer variable may take them."""

_SCRIPT = Template('''\
#!/usr/bin/env python3
"""$title: a model designed in Layer Studio, as a Keras script.

$reads

Needs Python with Keras, TensorFlow and NumPy. Run as it is, it trains; --build-only builds
the model, prints a JSON summary and stops; --epochs N trains N epochs instead of EPOCHS;
--summary FILE writes the model's layers, parameter count and each epoch's metrics to FILE
as JSON.$note
"""

from __future__ import annotations

$imports

import keras
import numpy as np
import tensorflow as tf
$task_functions
HERE = Path(__file__).resolve().parent
"""This script's folder: the paths below that start from it move with it."""

# The data
$data_constants
# Training
SEED = $seed
EPOCHS = $epochs
BATCH_SIZE = $batch_size
DETERMINISTIC = $deterministic
"""Whether TensorFlow's ops must be deterministic (slower, exactly reproducible)."""
PRECISION = $precision
"""Keras's dtype policy: float32, or mixed_float16 or mixed_bfloat16 (faster where supported)."""
METRICS = $metrics
CLASS_WEIGHTS = $class_weights
"""Whether each class counts the same in training, however many samples it has."""
EARLY_STOPPING = $early_stopping
"""Stop when the monitored metric has not improved for ``patience`` epochs (None: never)."""
CHECKPOINT_EVERY = $checkpoint_every
"""Save the model with its optimizer state every this many epochs (0: never)."""
CHECKPOINT_BEST_ONLY = $best_only
"""Save only when CHECKPOINT_MONITOR improves, replacing the previous checkpoint."""
CHECKPOINT_MONITOR = $checkpoint_monitor
CHECKPOINTS = HERE / "checkpoints"
$start_weights$model

def make_optimizer(steps_per_epoch):
    """$optimizer_doc"""
$optimizer


def compile_model(model, steps_per_epoch):
    """Compile with the project's optimizer, a loss per output and METRICS."""
    losses = [$losses]
    several = len(losses) > 1
    model.compile(optimizer=make_optimizer(steps_per_epoch),
                  loss=losses if several else losses[0],
                  metrics=[METRICS] * len(losses) if several else METRICS)
$data_functions

class Checkpoints(keras.callbacks.Callback):
    """Save the model (with its optimizer state) every CHECKPOINT_EVERY epochs; with
    CHECKPOINT_BEST_ONLY only when CHECKPOINT_MONITOR improves, replacing the previous one."""

    def __init__(self, folder):
        super().__init__()
        self.folder = Path(folder)
        self.best = None

    def on_epoch_end(self, epoch, logs=None):
        done = epoch + 1
        if not CHECKPOINT_EVERY or done % CHECKPOINT_EVERY:
            return
        if CHECKPOINT_BEST_ONLY:
            value = float((logs or {}).get(CHECKPOINT_MONITOR, math.nan))
            lower = CHECKPOINT_MONITOR.endswith("loss")
            if not math.isfinite(value) or (self.best is not None and (
                    value >= self.best if lower else value <= self.best)):
                return
            self.best = value
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"epoch-{done:04d}.keras"
        self.model.save(path)
        if CHECKPOINT_BEST_ONLY:
            for old in self.folder.glob("epoch-*.keras"):
                if old != path:
                    old.unlink()


def make_callbacks(checkpoints):
    """The learning-rate schedule's callbacks, early stopping and checkpoints."""
    callbacks = [$schedule_callbacks]
    if EARLY_STOPPING:
        callbacks.append(keras.callbacks.EarlyStopping(**EARLY_STOPPING))
    if CHECKPOINT_EVERY:
        callbacks.append(Checkpoints(checkpoints))
    return callbacks


def class_weights(labels):
    """Weights that make every class count the same in training: n / (k × n_class)."""
    counts = np.bincount(labels, minlength=len(CLASS_NAMES))
    present = counts[counts > 0]
    return {i: float(present.sum() / (len(present) * n)) for i, n in enumerate(counts) if n}


def with_float32_outputs(model):
    """The model with float32 outputs, which mixed precision needs for a stable loss."""
    outputs = [keras.layers.Activation("linear", dtype="float32", name=f"{o.name}_float32")(o)
               for o in model.outputs]
    return keras.Model(model.inputs, outputs if len(outputs) > 1 else outputs[0],
                       name=model.name)


def model_summary(model):
    """The model's layer classes and parameter count."""
    return {"layers": [type(layer).__name__ for layer in model.layers],
            "params": model.count_params()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-only", action="store_true",
                        help="build the model, print a JSON summary and stop")
    parser.add_argument("--epochs", type=int, default=EPOCHS, help="how many epochs to train")
    parser.add_argument("--checkpoints", type=Path, default=CHECKPOINTS,
                        help="the folder to save checkpoints in")
    parser.add_argument("--summary", type=Path,
                        help="write the model and each epoch's metrics to this JSON file")
    args = parser.parse_args()
    if DETERMINISTIC:
        tf.config.experimental.enable_op_determinism()
    keras.utils.set_random_seed(SEED)
    keras.mixed_precision.set_global_policy(PRECISION)
    if args.build_only:
        print(json.dumps(model_summary(build_model())))
        return
    print(f"Reading {DATA}")
    samples, labels, splits = load_splits()
    train, validation, test = make_datasets(samples, labels, splits)
    model = build_model()
$start_call    if PRECISION != "float32":
        model = with_float32_outputs(model)
    inputs, outputs = len(model.inputs), len(model.outputs)

    def feed(dataset, repeat=False):
        """Every input sees the samples and every output learns the labels. A repeated
        dataset keeps one iterator for the whole run (and its shuffles), as in Layer Studio."""
        if dataset is None:
            return None
        if repeat:
            dataset = dataset.repeat()
        if inputs == 1 and outputs == 1:
            return dataset
        return dataset.map(lambda x, y: ((x,) * inputs if inputs > 1 else x,
                                         (y,) * outputs if outputs > 1 else y))

    steps = math.ceil(len(splits["train"]) / BATCH_SIZE)
    compile_model(model, steps)
    weights = (class_weights(labels[splits["train"]])
               if CLASS_WEIGHTS and STRATIFY and outputs == 1 else None)
    history = model.fit(feed(train, repeat=True), steps_per_epoch=steps,
                        validation_data=feed(validation, repeat=True),
                        validation_steps=math.ceil(len(splits["validation"]) / BATCH_SIZE),
                        epochs=args.epochs, class_weight=weights,
                        callbacks=make_callbacks(args.checkpoints), shuffle=False)
    if test is not None:
        print("Test:", model.evaluate(feed(test), return_dict=True, verbose=0))
    if args.summary:
        summary = {**model_summary(model), "history": history.history}
        args.summary.write_text(json.dumps(summary, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
''')


_MODEL = Template('''\
$imported$helpers

def build_model():
    """The model, one layer per statement."""
$layers
    return keras.Model($inputs, $outputs, name=$model_name)
''')

_APPLICATION_HELPER = '''

def application(base_name, input_shape, weights, trainable_layers, scale, offset,
                flip_channels_of, name, end_at=None, start_at=None, input_stride=1):
    """A keras.applications base without its classifier, reading pixels in 0..1.

    With weights="imagenet", Keras downloads and caches them; a base trained on BGR images
    then has its first convolution reversed over colours so that it reads RGB. ``end_at``
    names the layer the base ends at, if not its last; ``start_at`` the layer whose
    features, ``input_stride`` times smaller than the image, it goes on from instead of
    reading the image. Only the last ``trainable_layers`` layers learn, and pre-trained batch
    normalizations never do.
    """
    image = (input_shape[0] * input_stride, input_shape[1] * input_stride, 3)
    base = getattr(keras.applications, base_name)(
        include_top=False, weights=weights, input_shape=image, pooling=None)
    pretrained = weights == "imagenet"
    if pretrained and flip_channels_of:
        conv = base.get_layer(flip_channels_of)
        kernel, *rest = conv.get_weights()
        conv.set_weights([kernel[:, :, ::-1, :], *rest])
    if start_at or end_at:
        start = base.get_layer(start_at).output if start_at else base.input
        end = base.get_layer(end_at).output if end_at else base.output
        base = keras.Model(start, end, name=base.name)
    first = len(base.layers) - trainable_layers
    for index, layer in enumerate(base.layers):
        frozen_norm = pretrained and isinstance(layer, keras.layers.BatchNormalization)
        layer.trainable = index >= first and not frozen_norm
    inputs = keras.Input(shape=input_shape)
    features = inputs if start_at else keras.layers.Rescaling(
        scale, list(offset), name="input_scaling")(inputs)
    return keras.Model(inputs, base(features), name=name)
'''
"""The script's builder for Application layers: the same model as
studio.core.model.applications.build_application (tests/core/test_code_export.py compares them)."""


def export_code(project: Project, script: Path | None = None,
                run_root: Path | None = None) -> str:
    """A runnable Python script that reads ``project``'s data, builds its model and trains it
    with Keras as Layer Studio does; ``script`` is where it will be written (paths to data in
    its folder are then written relative to it), ``run_root`` the project's runs (where the
    run's model it may start from is).

    Raise ModelError if the model cannot be built, does not fit the data or cannot be trained
    with its settings, and DataError if the data cannot be read.
    """
    graph = project.graph
    report = analyze(graph)
    if not report.ok:
        raise ModelError(report.reason)
    info = describe(project.dataset)
    fit = analyze(graph, info)
    if not fit.ok:
        raise ModelError(f"The model does not fit {info.title} yet: {fit.reason}")
    settings = project.training
    problems = schedule_problems(settings)
    if problems:
        raise ModelError(" ".join(problems))
    data = data_section(project.dataset, info, settings.seed, script)
    start_weights = _start_weights(project, script, run_root)
    learns = task_for(info.task)
    code = task_code(info.task)
    probabilities = outputs_probabilities(graph)
    return _SCRIPT.substitute(
        title=_docstring_text(project.name),
        reads=_docstring_text(textwrap.fill(
            f"Reads {data.where}, splits and preprocesses it as Layer Studio does, builds the "
            "model with the Keras functional API, then compiles and trains it with the "
            "project's settings and seed.", _LINE, break_long_words=False,
            break_on_hyphens=False)),
        note=_docstring_text(_application_note(graph)),
        start_call=_START_CALLS.get(settings.start_from, ""),
        imports=_imports([*data.imports, *code.imports]),
        task_functions=code.functions,
        data_constants=data.constants,
        data_functions=data.functions,
        seed=settings.seed,
        epochs=settings.epochs,
        batch_size=settings.batch_size,
        deterministic=settings.device.deterministic,
        precision=repr(settings.device.precision),
        metrics=code.metrics or repr(learns.metrics(settings.metrics, probabilities)),
        class_weights=project.dataset.class_weights,
        early_stopping=_early_stopping(settings.early_stopping),
        checkpoint_every=settings.checkpoints.every_epochs,
        best_only=settings.checkpoints.keep_best_only,
        checkpoint_monitor=repr(settings.checkpoints.monitor),
        start_weights=start_weights,
        model=model_code(graph, project.name, report),
        optimizer_doc=_docstring_text(_optimizer_doc(settings)),
        optimizer=_optimizer_code(settings),
        losses=", ".join(_loss_code(code, loss, kwargs)
                         for loss, kwargs in learns.loss_specs(probabilities, settings.loss)),
        schedule_callbacks=", ".join(call.source() for call in callback_calls(settings)),
    )


def _loss_code(code: TaskCode, loss: str, kwargs: dict[str, Any]) -> str:
    """One loss as the script makes it: the task's way, or Keras's own class."""
    if code.loss is not None:
        return code.loss(loss, kwargs)
    return f"keras.losses.{loss}({', '.join(_arguments((), kwargs))})"


def model_code(graph: Graph, name: str, report: Analysis | None = None) -> str:
    """The script's ``build_model`` (with the imported layers' configs and helpers it uses):
    ``graph`` as a functional Keras model called ``name``, one layer per line. ``report`` is
    ``analyze(graph)`` if the caller has it."""
    report = report or analyze(graph)
    names = _variable_names(graph.ids())
    inputs, outputs = model_endpoints(graph)
    return _MODEL.substitute(
        imported=_imported_configs(graph),
        helpers=_APPLICATION_HELPER if _has_application(graph) else "",
        layers="\n".join(_layer_call(graph, graph.node(node_id), names, report)
                          for node_id in graph.topological_order()),
        inputs=_one_or_list([names[i] for i in inputs]),
        outputs=_one_or_list([names[i] for i in outputs]),
        model_name=repr(keras_model_name(name)),
    )


def _imports(extra: list[str]) -> str:
    """The script's standard-library imports, sorted by module as isort does."""
    lines = {"import argparse", "import json", "import math", "from pathlib import Path",
             *extra}
    return "\n".join(sorted(lines, key=lambda line: (line.startswith("from"), line.split()[1])))


def _early_stopping(rule: EarlyStopping) -> str:
    """The script's EARLY_STOPPING: EarlyStopping's arguments, or None when it is off."""
    if not rule.enabled:
        return "None"
    mode = "min" if BEST.get(rule.monitor, min) is min else "max"
    return repr({"monitor": rule.monitor, "patience": rule.patience, "mode": mode})


def _application_note(graph: Graph) -> str:
    if not any(node.type == APPLICATION.name and node.resolved_params()["weights"] == "imagenet"
               for node in graph.nodes):
        return ""
    return ("\n\nIts pre-trained base downloads its ImageNet weights from Keras on first use "
            "(to ~/.keras/models).")


_START_WEIGHTS = '''
START_WEIGHTS = {path}
"""The weights imported with the model: one HDF5 group per layer, named by its id, holding
one dataset per weight in Keras's order."""
START_WEIGHTS_SHA256 = {sha256!r}


def load_start_weights(model):
    """Give each layer of ``model`` its imported weights from START_WEIGHTS (checked against
    START_WEIGHTS_SHA256); a layer whose weight shapes changed since the import keeps its
    random start, as in Layer Studio."""
    import hashlib

    import h5py

    if hashlib.sha256(START_WEIGHTS.read_bytes()).hexdigest() != START_WEIGHTS_SHA256:
        raise SystemExit(f"{{START_WEIGHTS.name}} is not the weights file this project "
                         "imported (its SHA-256 differs).")
    print(f"Starting from the imported weights in {{START_WEIGHTS}}")
    layers = {{layer.name: layer for layer in model.layers}}
    with h5py.File(START_WEIGHTS, "r") as h5:
        for name, group in h5.items():
            layer = layers.get(name)
            if layer is None:
                continue
            values = [np.asarray(group[str(i)]) for i in range(len(group))]
            if [tuple(w.shape) for w in layer.weights] != [v.shape for v in values]:
                print(f"{{name}} starts from random weights: its weight shapes differ since "
                      "the import.")
                continue
            layer.set_weights(values)

'''

_START_MODEL = '''
START_MODEL = {path}
"""The run's model this project's training starts from (a Keras file Layer Studio saved)."""
START_MODEL_SHA256 = {sha256!r}


def load_start_weights(model):
    """Give each layer of ``model`` the weights of the layer of the same name in START_MODEL
    (checked against START_MODEL_SHA256, loaded in safe mode: no code in it runs); a layer
    whose weight shapes differ there keeps its random start, as in Layer Studio."""
    import hashlib

    if hashlib.sha256(START_MODEL.read_bytes()).hexdigest() != START_MODEL_SHA256:
        raise SystemExit(f"{{START_MODEL.name}} is not the model this project starts from (its "
                         "SHA-256 differs).")
    print(f"Starting from the run's model in {{START_MODEL}}")
    start = keras.saving.load_model(START_MODEL, compile=False, safe_mode=True)
    given = {{layer.name: layer.get_weights() for layer in start.layers}}
    for layer in model.layers:
        values = given.get(layer.name)
        if not values:
            continue
        if [tuple(w.shape) for w in layer.weights] != [v.shape for v in values]:
            print(f"{{layer.name}} starts from random weights: its weight shapes differ in "
                  f"{{START_MODEL.name}}.")
            continue
        layer.set_weights(values)

'''

_START_CALLS = {"imported": "    load_start_weights(model)\n",
                "run": "    load_start_weights(model)\n"}
"""What ``main`` does after building the model, by where the project's training starts."""


def _start_weights(project: Project, script: Path | None, run_root: Path | None) -> str:
    """The script's START_WEIGHTS or START_MODEL and its loader, when training starts from
    imported weights or a run's model (taken from ``run_root``); ModelError if the project
    has none or their file is missing."""
    start = project.training.start_from
    if start == "run":
        source = None if run_root is None else start_model_path(project, run_root)
        if source is None or not source.is_file():
            raise ModelError(f"Training starts from a run's model, but "
                             f"{(project.training.start_model or 'no run')[:80]} is not there: "
                             "choose another run, or start from random weights.")
        return _START_MODEL.format(path=path_code(source, script), sha256=file_sha256(source))
    record = project.weights
    if start != "imported":
        return ""
    if record is None or not record.path.is_file():
        problem = ("this project has none" if record is None
                   else f"{record.path.name[:80]} is missing")
        raise ModelError(f"Training starts from imported weights, but {problem}: import the "
                         "model again, or start from random weights.")
    return _START_WEIGHTS.format(path=path_code(record.path, script), sha256=record.sha256)


def _optimizer_doc(settings: TrainingSettings) -> str:
    """The script's ``make_optimizer`` docstring: the optimizer and what its schedule does."""
    kind = settings.schedule.kind
    help_text = textwrap.fill(SCHEDULE_HELP[kind], _LINE, initial_indent="    ",
                              subsequent_indent="    ")
    return (f"{OPTIMIZER_CLASSES[settings.optimizer]}; learning rate: "
            f"{SCHEDULE_LABELS[kind].lower()}.\n\n{help_text}\n    ")


def _optimizer_code(settings: TrainingSettings) -> str:
    """The body of the script's ``make_optimizer``: its schedule, then the optimizer."""
    call = optimizer_call(settings)
    rate = call.kwargs["learning_rate"]
    if not isinstance(rate, KerasCall):
        return _wrapped("    return ", call.source())
    optimizer = KerasCall(call.path, {**call.kwargs, "learning_rate": _Name("learning_rate")})
    return "\n".join([_wrapped("    learning_rate = ", rate.source()),
                      _wrapped("    return ", optimizer.source())])


class _Name(str):
    """A name written as it is in generated code (its repr is itself)."""

    def __repr__(self) -> str:
        return str(self)


def _wrapped(start: str, code: str) -> str:
    """``start + code``, its arguments wrapped at the script's line length below the call."""
    head, _, arguments = code.partition("(")
    first = start + head + "("
    line = first.splitlines()[-1]
    if len(line) + len(arguments) <= _LINE:
        return first + arguments
    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    return first + "\n" + textwrap.fill(arguments, _LINE, initial_indent=indent,
                                        subsequent_indent=indent, break_long_words=False,
                                        break_on_hyphens=False)


def _docstring_text(text: str) -> str:
    """``text`` made safe inside the script's triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _variable_names(ids: list[str]) -> dict[str, str]:
    """A distinct Python variable for each node id: the id, with ``_`` added if it must."""
    names: dict[str, str] = {}
    for node_id in ids:
        name = node_id
        while keyword.iskeyword(name) or name in _RESERVED or name in names.values():
            name += "_"
        names[node_id] = name
    return names


def _one_or_list(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"[{', '.join(names)}]"


def _has_application(graph: Graph) -> bool:
    return any(node.type == APPLICATION.name for node in graph.nodes)


def _application_call(node: Node, input_shape: tuple[int, ...]) -> str:
    """A call of the script's ``application`` helper for an Application node."""
    params = node.resolved_params()
    base = BASES[params["name"]]
    weights = "imagenet" if params["weights"] == "imagenet" else None
    part = chosen_part(params)
    ends = f", end_at={part.layer!r}" if part.layer else ""
    if part.start:
        ends += f", start_at={part.start!r}, input_stride={int(params['input_stride'])}"
    return (f"application({params['name']!r}, {input_shape!r}, weights={weights!r}, "
            f"trainable_layers={params['trainable_layers']}, scale={base.input_scale!r}, "
            f"offset={base.input_offset!r}, flip_channels_of={base.flip_channels_of!r}, "
            f"name={node.id!r}{ends})")


def _layer_call(graph: Graph, node: Node, names: dict[str, str], report: Analysis) -> str:
    """The line (or lines) that make ``node``'s output tensor: its layer, made from its Keras
    arguments, called on its inputs as its layer type says."""
    start = f"    {names[node.id]} = "
    if node.type == "Input":
        return f"{start}keras.Input(shape={tuple(node.params['shape'])!r}, name={node.id!r})"
    sources = graph.inputs_of(node.id)
    args, kwargs = calling_type(node).arguments([_Name(names[src]) for src in sources])
    called = f"({', '.join(_arguments(args, kwargs))})"
    if node.type == APPLICATION.name:
        (source,) = graph.inputs_of(node.id)
        return start + _application_call(node, tuple(report.nodes[source].output_shape)) + called
    if node.type == OPAQUE_TYPE:
        class_name = node.params["class_name"]
        custom = f"{{{class_name!r}: {imported_class_path(class_name)}}}"
        return _call(start, "keras.layers.deserialize",
                     [f"IMPORTED[{node.id!r}]", f"custom_objects={custom}"], called)
    shapes = [report.nodes[src].output_shape for src in sources]
    return _call(start, f"keras.layers.{calling_type(node).keras_name}",
                 _arguments((), {**layer_kwargs(node, shapes), "name": node.id}), called)


def _call(start: str, callee: str, arguments: list[str], tail: str) -> str:
    """``start`` and a call of ``callee`` with ``arguments``, then ``tail``; when that is too
    long for a line, the arguments go on the lines below, wrapped between arguments only."""
    line = f"{start}{callee}({', '.join(arguments)}){tail}"
    if len(line) <= _LINE or not arguments:
        return line
    indent = " " * (len(start) - len(start.lstrip(" ")) + 4)
    lines, current = [], ""
    for argument in arguments:
        if current and len(indent) + len(current) + len(argument) + 2 > _LINE:
            lines.append(indent + current.rstrip())
            current = ""
        current += f"{argument}, "
    lines.append(indent + current.rstrip(", "))
    return f"{start}{callee}(\n" + "\n".join(lines) + f"){tail}"


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """Positional and keyword arguments as they are written in a call."""
    return [*map(_code, args), *(f"{key}={_code(value)}" for key, value in kwargs.items())]


def _code(value: Any) -> str:
    """Python code for an argument's value: a variable, a plain value, or a Keras object
    (a wrapped layer, a regularizer) rebuilt from its config."""
    if isinstance(value, _Name):
        return str(value)
    if isinstance(value, Nested):  # a wrapper's layer
        return f"keras.layers.{value.class_name}({', '.join(_arguments((), value.kwargs))})"
    if isinstance(value, list):
        return f"[{', '.join(map(_code, value))}]"
    if isinstance(value, tuple):
        return f"({', '.join(map(_code, value))}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_code(k)}: {_code(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "get_config"):
        import keras

        config = keras.saving.serialize_keras_object(value)
        return f"keras.saving.deserialize_keras_object({_code(config)})"
    return repr(value)


def _imported_configs(graph: Graph) -> str:
    """The script's IMPORTED, or nothing when no layer is an imported one."""
    configs = {n.id: imported_spec(n) for n in graph.nodes if n.type == OPAQUE_TYPE}
    if not configs:
        return ""
    return (f"\nIMPORTED = {pprint.pformat(configs, width=96, sort_dicts=False)}\n"
            '"""Imported Keras layers that Layer Studio keeps as they are: class and full '
            'config."""\n')
