"""Exporting a project as a standalone Python script that builds and trains it with Keras."""

from __future__ import annotations

import keyword
import pprint
import textwrap
from string import Template
from typing import Any

import numpy as np

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
)
from studio.core.data.sources import DATASETS, dataset_path, describe, load
from studio.core.model.applications import APPLICATION, BASES
from studio.core.model.graph import Graph, Node
from studio.core.model.layers import OPAQUE_TYPE, Nested
from studio.core.project.document import DatasetChoice, Project, TrainingSettings

_LINE = 96
"""The longest line the script's generated calls are wrapped to."""

_RESERVED = frozenset({"keras", "IMPORTED", "make_optimizer", "math"})
"""Names the script's ``build_model`` uses, so no layer variable may take them."""

_SCRIPT = Template('''\
#!/usr/bin/env python3
"""$title: a model designed in Layer Studio, as a Keras script.

Builds the model with the Keras functional API, loads $dataset with the same seeded split
and scaling as Layer Studio, then compiles and trains it with the project's settings.
Run with --build-only to build the model, print a JSON summary and stop.$note
"""

import argparse
import json
import math
from pathlib import Path

import keras
import numpy as np

DATA = Path($data_path)
"""Layer Studio's copy of $dataset; pass --data to use another."""
VALIDATION_SPLIT = $validation_split
TEST_SPLIT = $test_split
SPLIT_SEED = $split_seed
SCALE = $scale
OFFSET = $offset
SEED = $seed
EPOCHS = $epochs
BATCH_SIZE = $batch_size

IMPORTED = $imported
"""Imported Keras layers that Layer Studio keeps as they are: class and full config."""
$helpers


def build_model():
    """The model, one layer per line."""
$layers
    return keras.Model($inputs, $outputs, name=$model_name)


def make_optimizer(steps_per_epoch):
    """$optimizer_doc"""
$optimizer


def load_data(path):
    """Training, validation and test arrays, split per class and scaled as Layer Studio does."""
    with np.load(path, allow_pickle=False) as archive:
        x, y = archive["x"][..., np.newaxis], archive["y"].astype("int32")
    rng = np.random.default_rng(SPLIT_SEED)
    parts = {"train": [], "val": [], "test": []}
    for label in np.unique(y):
        order = rng.permutation(np.flatnonzero(y == label))
        n = len(order)
        n_val = min(max(1, round(n * VALIDATION_SPLIT)), n - 1) if n > 1 else 0
        n_test = min(round(n * TEST_SPLIT), n - n_val - 1) if TEST_SPLIT > 0 else 0
        parts["val"].append(order[:n_val])
        parts["test"].append(order[n_val:n_val + n_test])
        parts["train"].append(order[n_val + n_test:])
    x = x.astype("float32") * np.float32(SCALE) + np.float32(OFFSET)
    return [(x[i], y[i]) for i in (np.sort(np.concatenate(parts[k])) for k in parts)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the dataset's .npz file")
    parser.add_argument("--build-only", action="store_true",
                        help="build the model, print a JSON summary and stop")
    args = parser.parse_args()
    keras.utils.set_random_seed(SEED)
    model = build_model()
    if args.build_only:
        layers = [type(layer).__name__ for layer in model.layers]
        print(json.dumps({"layers": layers, "params": model.count_params()}))
        return
    print(f"Loading $dataset from {args.data}")
    (x_train, y_train), (x_val, y_val), (x_test, y_test) = load_data(args.data)
    # One loss per output; from_logits where an output does not end in softmax.
    losses = [keras.losses.SparseCategoricalCrossentropy(from_logits=logits)
              for logits in $from_logits]
    several = len(losses) > 1
    model.compile(
        optimizer=make_optimizer(math.ceil(len(x_train) / BATCH_SIZE)),
        loss=losses if several else losses[0],
        metrics=[$metrics] * len(losses) if several else $metrics,
    )

    def feed(x, y):
        """Every input sees the images and every output learns the labels."""
        inputs = len(model.inputs)
        return [x] * inputs if inputs > 1 else x, [y] * len(losses) if several else y

    model.fit(*feed(x_train, y_train), batch_size=BATCH_SIZE, epochs=EPOCHS,
              validation_data=feed(x_val, y_val)$callbacks)
    if len(x_test):
        print("Test:", model.evaluate(*feed(x_test, y_test), return_dict=True, verbose=0))


if __name__ == "__main__":
    main()
''')


_APPLICATION_HELPER = '''

def application(base_name, input_shape, weights, trainable_layers, scale, offset,
                flip_channels_of, name):
    """A keras.applications base without its classifier, reading pixels in 0..1.

    With weights="imagenet", Keras downloads and caches them; a base trained on BGR images
    then has its first convolution reversed over colours so that it reads RGB. Only the last
    ``trainable_layers`` layers learn, and pre-trained batch normalizations never do.
    """
    base = getattr(keras.applications, base_name)(
        include_top=False, weights=weights, input_shape=input_shape, pooling=None)
    pretrained = weights == "imagenet"
    if pretrained and flip_channels_of:
        conv = base.get_layer(flip_channels_of)
        kernel, *rest = conv.get_weights()
        conv.set_weights([kernel[:, :, ::-1, :], *rest])
    first = len(base.layers) - trainable_layers
    for index, layer in enumerate(base.layers):
        frozen_norm = pretrained and isinstance(layer, keras.layers.BatchNormalization)
        layer.trainable = index >= first and not frozen_norm
    inputs = keras.Input(shape=input_shape)
    scaled = keras.layers.Rescaling(scale, list(offset), name="input_scaling")(inputs)
    return keras.Model(inputs, base(scaled), name=name)
'''
"""The script's builder for Application layers: the same model as
studio.core.model.applications.build_application (tests/core/test_code_export.py compares them)."""


def export_code(project: Project) -> str:
    """A runnable Python script that builds, compiles and trains ``project``'s model with Keras.

    Raise ModelError if the model cannot be built. A model that does not fit the project's
    dataset is still exported, with a note in the script's docstring.
    """
    graph = project.graph
    report = analyze(graph)
    if not report.ok:
        raise ModelError(report.reason)
    scale, offset = _bundled_scaling(project.dataset)
    info = describe(project.dataset)
    fit = analyze(graph, info)
    note = "" if fit.ok else (
        f"\n\nNote: the model does not fit {info.title} yet, so training will fail: {fit.reason}"
    )
    names = _variable_names(graph.ids())
    inputs, outputs = model_endpoints(graph)
    settings = project.training
    return _SCRIPT.substitute(
        title=_docstring_text(project.name),
        note=_docstring_text(note),
        dataset=info.title,
        data_path=repr(str(dataset_path(info))),
        validation_split=repr(project.dataset.validation_split),
        test_split=repr(project.dataset.test_split),
        split_seed=project.dataset.seed,
        scale=repr(scale),
        offset=repr(offset),
        seed=settings.seed,
        epochs=settings.epochs,
        batch_size=settings.batch_size,
        imported=_imported_configs(graph),
        helpers=_APPLICATION_HELPER if _has_application(graph) else "",
        layers="\n".join(
            f"    {names[node_id]} = {_layer_call(graph, graph.node(node_id), names, report)}"
            for node_id in graph.topological_order()
        ),
        inputs=_one_or_list([names[i] for i in inputs]),
        outputs=_one_or_list([names[i] for i in outputs]),
        model_name=repr(keras_model_name(project.name)),
        optimizer_doc=_docstring_text(_optimizer_doc(settings)),
        optimizer=_optimizer_code(settings),
        callbacks=_callbacks_code(settings),
        from_logits=[not probabilities for probabilities in outputs_probabilities(graph)],
        metrics=repr(list(settings.metrics)),
    )


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


def _callbacks_code(settings: TrainingSettings) -> str:
    """The ``callbacks`` argument of ``fit``, or nothing if the schedule needs none."""
    calls = callback_calls(settings)
    if not calls:
        return ""
    return _wrapped(",\n              callbacks=", f"[{', '.join(c.source() for c in calls)}]")


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


def _bundled_scaling(choice: DatasetChoice) -> tuple[float, float]:
    """The script's pixel scaling (x * scale + offset) for a bundled dataset at its own size.

    Raise ModelError for other data: the script loads only the bundled ``.npz`` files.
    """
    if choice.source != "bundled" or describe(choice) != DATASETS[choice.name]:
        raise ModelError("The exported script loads the bundled MNIST-10k at its own size "
                         "only; this project reads other data, so export is not available "
                         "for it yet.")
    if choice.normalization == "symmetric":
        return 1 / 127.5, -1.0
    if choice.normalization == "standardize":
        loaded = load(choice)
        pixels = loaded.samples.x[loaded.splits["train"]].astype(np.float64)
        mean, std = float(pixels.mean()), float(pixels.std()) or 1.0
        return 1 / std, -mean / std
    return 1 / 255, 0.0


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
    return (f"application({params['name']!r}, {input_shape!r}, weights={weights!r}, "
            f"trainable_layers={params['trainable_layers']}, scale={base.input_scale!r}, "
            f"offset={base.input_offset!r}, flip_channels_of={base.flip_channels_of!r}, "
            f"name={node.id!r})")


def _layer_call(graph: Graph, node: Node, names: dict[str, str], report: Analysis) -> str:
    """The right-hand side that makes ``node``'s output tensor."""
    if node.type == "Input":
        return f"keras.Input(shape={tuple(node.params['shape'])!r}, name={node.id!r})"
    sources = graph.inputs_of(node.id)
    args, kwargs = calling_type(node).arguments([_Name(names[src]) for src in sources])
    feeds = ", ".join([*map(repr, args), *(f"{key}={value!r}" for key, value in kwargs.items())])
    if node.type == APPLICATION.name:
        (source,) = graph.inputs_of(node.id)
        layer = _application_call(node, tuple(report.nodes[source].output_shape))
    elif node.type == OPAQUE_TYPE:
        class_name = node.params["class_name"]
        custom = f"{{{class_name!r}: {imported_class_path(class_name)}}}"
        layer = f"keras.layers.deserialize(IMPORTED[{node.id!r}], custom_objects={custom})"
    else:
        shapes = [report.nodes[src].output_shape for src in sources]
        layer = _layer_source(node.type, {**layer_kwargs(node, shapes), "name": node.id})
    return f"{layer}({feeds})"


class _Name(str):
    """A variable of the script, written as itself among a call's arguments."""

    def __repr__(self) -> str:
        return str(self)


def _layer_source(class_name: str, kwargs: dict[str, Any]) -> str:
    """``keras.layers.CLASS(key=value, ...)``, with a nested layer written the same way."""
    def source(value: Any) -> str:
        return _layer_source(value.class_name, value.kwargs) if isinstance(value, Nested) \
            else repr(value)

    arguments = ", ".join(f"{key}={source(value)}" for key, value in kwargs.items())
    return f"keras.layers.{class_name}({arguments})"


def _imported_configs(graph: Graph) -> str:
    configs = {n.id: imported_spec(n) for n in graph.nodes if n.type == OPAQUE_TYPE}
    return pprint.pformat(configs, width=96, sort_dicts=False)
