"""Importing Keras models (``.keras`` and legacy ``.h5`` files) as projects, with their weights.

A Keras layer becomes a node of its registry type only if that type can express every one of
its settings: rebuilding the node must give the same Keras config. Anything else becomes an
opaque ``Keras`` node that keeps the full config and the shapes recorded here. A nested
Sequential or functional model is flattened into the graph: its layers become nodes in its
place, its inputs dissolve into the wires from what feeds it, and its output feeds what it
fed. Files are read without running code: a Lambda layer is refused unless the file is
trusted, and even then its function is never loaded (a stand-in takes its place, see
``code_stand_ins``) and its node stays opaque and is never rebuilt.
"""

from __future__ import annotations

import copy
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.archives import ArchiveRefused, check_size, read_member
from studio.core.base.messages import first_line
from studio.core.build import keras2_archive
from studio.core.build.keras_model import call_layer, input_arguments, keras_layer
from studio.core.build.legacy_config import LegacyRefused, layer_entries, modernised, refusal
from studio.core.build.stand_ins import ShapeUnknown, as_original, stand_in_classes, with_stand_ins
from studio.core.model.graph import Graph, Node
from studio.core.model.layers import OPAQUE_TYPE, InputArguments, Shape, code_layer_names
from studio.core.model.layers.keras_args import comparable_initializer, registry_values
from studio.core.model.params import format_shape
from studio.core.model.registry import REGISTRY
from studio.core.project.document import Project

SUFFIXES = (".keras", ".h5", ".hdf5")
MAX_CONFIG_DEPTH = 200
"""How deeply a model config may nest; a real one nests a few levels per nested model."""
Weights = dict[str, list[np.ndarray]]


class ImportFailure(ValueError):
    """A Keras model cannot be imported; the message names the file and the problem."""


class CodeRefused(ImportFailure):
    """The model holds Python code (Lambda layers); it imports only if the file is trusted."""


@dataclass
class _Layer:
    """One layer of the model's config, and the names of the layers feeding it, in order;
    once flattened, also the names of the nested models holding it (outermost first) and its
    Keras layer, with its sources given by their flat keys."""

    entry: dict[str, Any]
    sources: list[str]
    models: tuple[str, ...] = ()
    keras_object: Any = None

    @property
    def key(self) -> str:
        """The layer's name, unique across the nested models, as its path of names."""
        return "/".join((*self.models, self.name))

    @property
    def name(self) -> str:
        return self.entry["config"]["name"]

    @property
    def class_name(self) -> str:
        return self.entry["class_name"]


def import_model(path: str | Path, *, trust: bool = False) -> Project:
    """A project holding the Keras model saved at ``path``; raise ImportFailure if impossible.

    Without ``trust``, a model with a Lambda layer is refused, as it holds Python code.
    """
    return import_model_with_weights(path, trust=trust)[0]


def import_model_with_weights(
    path: str | Path, *, trust: bool = False
) -> tuple[Project, Weights]:
    """Like :func:`import_model`, also returning each node's Keras weights by node id.

    Every node has an entry (empty for layers without weights); see :func:`apply_weights`.
    """
    path = Path(path)
    stored = _stored_config(path)
    if not trust:
        _refuse_code(path, stored)
    model = _load(path, stored)
    try:
        graph, weights = _convert(model)
    except ImportFailure as exc:
        raise ImportFailure(f"{path.name}: {exc}") from None
    name = path.name[: -len(path.suffix)] or "Imported model"
    return Project(name=name[:200], graph=graph), weights


def load_model_file(path: str | Path) -> Any:
    """The Keras model stored in a ``.keras`` or ``.h5`` file with its weights, rebuilt in
    safe mode once what Keras 2 wrote is rewritten (see ``legacy_config``); CodeRefused if it
    holds Python code, ImportFailure with the reason, in one line, if it cannot be read."""
    path = Path(path)
    stored = _stored_config(path)
    _refuse_code(path, stored)
    return _load(path, stored)


def _refuse_code(path: Path, stored: dict[str, Any]) -> None:
    code = list(code_layer_names(stored))
    if code:
        several = len(code) > 1
        raise CodeRefused(
            f"{path.name} contains {'Lambda layers' if several else 'a Lambda layer'} "
            f"({', '.join(code)}), which {'hold' if several else 'holds'} Python code. Layer "
            "Studio does not run code from files unless you trust the file."
        )


def apply_weights(model: Any, weights: Weights) -> None:
    """Give each layer of a model built from an imported project its imported weights."""
    for node_id, values in weights.items():
        if values:
            model.get_layer(node_id).set_weights(values)


def _stored_config(path: Path) -> dict[str, Any]:
    """The model config stored in the file, read as plain JSON without building anything."""
    if not path.exists():
        raise ImportFailure(f"{path.name}: the file does not exist.")
    if path.suffix.lower() not in SUFFIXES or not path.is_file():
        raise ImportFailure(
            f"{path.name}: not a Keras model file. Layer Studio imports .keras and .h5 files."
        )
    try:
        if path.suffix.lower() == ".keras":
            text = read_member(path, "config.json").decode("utf-8")
        else:
            import h5py

            with h5py.File(path, "r") as h5:
                text = h5.attrs.get("model_config")
            if isinstance(text, str | bytes):  # attributes are stored uncompressed
                check_size(path, "model config", len(text))
        stored = None if text is None else json.loads(text)
    except ArchiveRefused as exc:
        raise ImportFailure(str(exc)) from None
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise ImportFailure(
            f"{path.name}: not a readable Keras model file ({first_line(exc)})."
        ) from None
    except (TypeError, RecursionError):  # not JSON text, or JSON nested too deeply to read
        raise ImportFailure(
            f"{path.name}: the file holds no readable model configuration."
        ) from None
    if stored is None:
        raise ImportFailure(f"{path.name}: the file holds no model, only weights.")
    if not isinstance(stored, dict):
        raise ImportFailure(f"{path.name}: the model config is not an object.")
    if _depth(stored) > MAX_CONFIG_DEPTH:  # what reads it, here and in Keras, recurses
        raise ImportFailure(f"{path.name}: the model config is nested more than "
                            f"{MAX_CONFIG_DEPTH} levels deep, which no Keras model needs.")
    return stored


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in JSON data, counted without recursing."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth)
            items = value.values() if isinstance(value, dict) else value
            stack += [(item, depth + 1) for item in items]
    return deepest


def _load(path: Path, stored: dict[str, Any]) -> Any:
    """The model stored at ``path`` with its weights, built in Keras's safe mode from the
    config read here, with stand-ins for the code layers: no code from the file is loaded."""
    import keras

    try:
        config = with_stand_ins(modernised(stored, modules=path.suffix.lower() == ".keras"))
    except (ShapeUnknown, LegacyRefused) as exc:
        raise ImportFailure(f"{path.name}: {exc}") from None
    try:
        model = _from_config(path, copy.deepcopy(config))
    except Exception as exc:
        raise ImportFailure(f"{path.name}: {_build_failure(path, config, exc)}.") from None
    try:
        if getattr(model, "built", False):  # a model never built has no weights to load
            _load_weights(model, path)
    except Exception as exc:
        raise ImportFailure(f"{path.name}: Keras cannot load it ({first_line(exc)}).") from None
    if not isinstance(model, keras.Model):
        raise ImportFailure(f"{path.name}: the file holds no model.")
    return model


def _load_weights(model: Any, path: Path) -> None:
    if path.suffix.lower() == ".keras" and keras2_archive.written_by_keras_2(path):
        keras2_archive.load_weights(model, path)  # stored where Keras 3 does not look
    else:
        model.load_weights(path)


def _build_failure(path: Path, config: dict[str, Any], error: Exception) -> str:
    """Why Keras could not build the model of ``config``, naming the first layer that cannot
    be built on its own (and the setting that stopped it, when Keras names one)."""
    for entry in layer_entries(config):
        try:
            _from_config(path, copy.deepcopy(entry))
        except Exception as exc:  # noqa: BLE001 - this layer is the one to name
            return refusal(entry, exc)
    return f"Keras cannot load it ({first_line(error)})"


def _from_config(path: Path, config: dict[str, Any]) -> Any:
    """The model (or layer) of a config, as ``keras.saving.load_model`` builds it for the
    file's format (but with ``compile=False``), always in safe mode."""
    import keras

    stand_ins = stand_in_classes()
    if path.suffix.lower() == ".keras":
        return keras.saving.deserialize_keras_object(
            {**config, "compile_config": None}, custom_objects=stand_ins, safe_mode=True)
    # Keras reads the config of a legacy .h5 file with its legacy reader, which has no public
    # name; these are the calls its load_model makes.
    from keras.src.legacy.saving import saving_options, saving_utils
    from keras.src.saving import serialization_lib

    with saving_options.keras_option_scope(use_legacy_config=True), \
            serialization_lib.SafeModeScope(True):
        return saving_utils.model_from_config(config, custom_objects=stand_ins)


def _convert(model: Any) -> tuple[Graph, Weights]:
    layers, input_keys, output_keys = _flattened(model)
    _check_endpoints(layers, input_keys, output_keys)
    by_key = {layer.key: layer for layer in layers}
    ids = _node_ids([layer.models + (layer.name,) for layer in layers])
    keys = {node_id: layer.key for layer, node_id in zip(layers, ids, strict=True)}
    id_of = {key: node_id for node_id, key in keys.items()}
    middle = [k for k in by_key if k not in input_keys and k not in output_keys]
    order = [id_of[k] for k in input_keys + middle + output_keys]
    wiring = Graph(
        nodes=[Node(node_id, OPAQUE_TYPE) for node_id in order],
        edges=[(id_of[src], node_id) for node_id in order for src in by_key[keys[node_id]].sources],
    )
    nodes: dict[str, Node] = {}
    shapes: dict[str, Shape] = {}
    weights: Weights = {}
    for node_id in wiring.topological_order():
        inputs = [shapes[src] for src in wiring.inputs_of(node_id)]
        layer = by_key[keys[node_id]]
        nodes[node_id], shapes[node_id], weights[node_id] = _node(node_id, layer, inputs)
    return Graph(nodes=[nodes[node_id] for node_id in order], edges=wiring.edges), weights


def _flattened(model: Any, models: tuple[str, ...] = (), feeds: list[str] | None = None
               ) -> tuple[list[_Layer], list[str], list[str]]:
    """The layers of ``model`` with those of its nested models in their place, each knowing
    its Keras layer and fed by the flat keys of its sources; and the keys of the model's
    inputs and outputs. A nested model (``models`` names it and those holding it) has no
    inputs of its own: its InputLayers stand for the layers ``feeds`` names."""
    import keras

    layers, input_names, output_names = _structure(model)
    if feeds is not None and len(feeds) != len(input_names):
        raise ImportFailure(
            f"nested model {models[-1]} takes {len(input_names)} inputs but is given "
            f"{len(feeds)}, which Layer Studio cannot record."
        )
    keys = dict(zip(input_names, feeds or [], strict=False))
    flat: list[_Layer] = []
    for layer in layers:
        if layer.name in keys:  # a nested model's input: the wire from what feeds it
            continue
        missing = [source for source in layer.sources if source not in keys]
        if missing:
            raise ImportFailure(f"layer {layer.name} is listed before {missing[0]}, which "
                                "feeds it, so Layer Studio cannot read the model's order.")
        sources = [keys[source] for source in layer.sources]
        keras_object = None if layer.class_name == "InputLayer" else model.get_layer(layer.name)
        if isinstance(keras_object, keras.Model):
            inner, _, outputs = _flattened(keras_object, (*models, layer.name), sources)
            if len(outputs) != 1:
                raise ImportFailure(
                    f"nested model {layer.name} has {len(outputs)} outputs; Layer Studio "
                    "flattens only nested models with one output."
                )
            flat += inner
            keys[layer.name] = outputs[0]
            continue
        flat.append(_Layer(layer.entry, sources, models, keras_object))
        keys[layer.name] = flat[-1].key
    return flat, [keys[name] for name in input_names], [keys[name] for name in output_names]


def _check_endpoints(layers: list[_Layer], input_keys: list[str], output_keys: list[str]
                     ) -> None:
    """Refuse outputs the graph cannot have: an input, a layer feeding another, or one
    listed twice."""
    if set(input_keys) & set(output_keys):
        raise ImportFailure("the model has no layers between its input and output.")
    for layer in layers:
        used = [out for out in output_keys if out in layer.sources]
        if used:
            raise ImportFailure(
                f"layer {used[0].rsplit('/', 1)[-1]} is both an output and the input of "
                f"{layer.name}; Layer Studio models output only from layers that feed nothing."
            )
    if len(set(output_keys)) != len(output_keys):
        raise ImportFailure("the same layer is listed twice among the model's outputs.")


def _node(node_id: str, layer: _Layer, inputs: list[Shape]
          ) -> tuple[Node, Shape, list[np.ndarray]]:
    """The node for one layer, its output shape and its weights."""
    if layer.class_name == "InputLayer":
        shape = _input_shape(layer)
        return Node(node_id, "Input", {"shape": list(shape)}), shape, []
    keras_object = layer.keras_object
    shape = _output_shape(keras_object, layer, inputs)
    config = _plain(layer.entry["config"], layer.name)
    known = _known_params(node_id, layer.class_name, config, inputs)
    if known is not None:
        node = Node(node_id, layer.class_name, known)
    else:
        node = Node(node_id, OPAQUE_TYPE, {
            "class_name": layer.class_name,
            "config": config,
            "output_shape": list(shape),
            "param_count": int(keras_object.count_params()),
            "input_shapes": [list(s) for s in inputs],
        })
    return node, shape, keras_object.get_weights()


def _structure(model: Any) -> tuple[list[_Layer], list[str], list[str]]:
    """The model's layers with their sources, and the names of its input and output layers."""
    config = as_original(model.get_config())
    entries = config.get("layers")
    if not isinstance(entries, list) or not entries:
        raise ImportFailure("the model's structure is not stored as layers, so it cannot be read.")
    if "input_layers" not in config:  # a Sequential model: a chain after its InputLayer
        if entries[0]["class_name"] != "InputLayer":
            raise ImportFailure("the Sequential model was never built, so its input shape is "
                                "unknown.")
        names = [e["config"]["name"] for e in entries]
        layers = [_Layer(e, names[i - 1 : i]) for i, e in enumerate(entries)]
        return layers, names[:1], names[-1:]
    names = {layer.name for layer in model.layers}
    for entry in entries:
        if entry["class_name"] != "InputLayer" and entry["config"]["name"] not in names:
            raise ImportFailure(
                f"the model applies the operation {entry['class_name']} "
                f"({entry['config']['name']}) outside any layer; Layer Studio imports layers "
                "only."
            )
    layers = [_Layer(e, _sources(e)) for e in entries]
    return layers, _endpoints(config["input_layers"]), _endpoints(config["output_layers"])


def _endpoints(refs: list[Any]) -> list[str]:
    """Layer names of a functional config's ``input_layers`` or ``output_layers``."""
    refs = [refs] if refs and isinstance(refs[0], str) else refs
    for name, _, tensor_index in refs:
        _require_first_output(name, tensor_index)
    return [name for name, _, _ in refs]


def _require_first_output(name: str, tensor_index: int) -> None:
    if tensor_index != 0:
        raise ImportFailure(
            f"the model uses output {tensor_index + 1} of layer {name}; Layer Studio layers "
            "have one output."
        )


def _sources(entry: dict[str, Any]) -> list[str]:
    """Names of the layers feeding a functional layer, from its one call in the config."""
    name, calls = entry["config"]["name"], entry.get("inbound_nodes", [])
    if len(calls) > 1:
        raise ImportFailure(
            f"layer {name} is used {len(calls)} times (shared weights); each Layer Studio "
            "layer is used once."
        )
    if not calls:
        return []
    args, kwargs = calls[0].get("args", []), dict(calls[0].get("kwargs", {}))
    call = input_arguments(entry["class_name"])
    if call:
        return _argument_sources(name, call, args, kwargs)
    _refuse_settings(name, kwargs)
    if len(args) == 1 and not isinstance(args[0], list):
        tensors = args
    elif len(args) == 1 and len(args[0]) > 1:
        tensors = args[0]
    else:
        raise ImportFailure(
            f"layer {name} is not called on one input or on a list of several, which Layer "
            "Studio cannot record."
        )
    return [_tensor_source(name, tensor) for tensor in tensors]


def _argument_sources(name: str, call: InputArguments, args: list[Any], kwargs: dict[str, Any]
                      ) -> list[str]:
    """The sources of a layer that takes its inputs one argument each (``call``), given by
    position or by name, such as MultiHeadAttention's ``(query, value)``: a value that is
    the query is one input, and so is a key that is the value."""
    given = list(args)
    for argument in call.names[len(given):]:
        if kwargs.get(argument) is None:
            break
        given.append(kwargs.pop(argument))
    _refuse_settings(name, kwargs)
    if not call.required <= len(given) <= len(call.names):
        raise ImportFailure(f"layer {name} is not called on its {' and '.join(call.names)}, "
                            "which Layer Studio cannot record.")
    sources = call.inputs([_tensor_source(name, tensor) for tensor in given])
    if len(set(sources)) < len(sources):
        raise ImportFailure(
            f"layer {name} takes one layer's output for two of its {', '.join(call.names)} "
            "in a way Layer Studio cannot record."
        )
    return sources


def _refuse_settings(name: str, kwargs: dict[str, Any]) -> None:
    """Refuse a call with settings other than its inputs."""
    # Keras records the training flag of the call that built the model, but a running model
    # passes its own to every layer, so the recorded one changes nothing.
    # A functional model called on several inputs records a mask of None for each.
    settings = [key for key, value in kwargs.items() if key != "training" and not (
        value is None or isinstance(value, list) and all(item is None for item in value))]
    if settings:
        raise ImportFailure(
            f"layer {name} is called with {', '.join(settings)}, which Layer Studio cannot "
            "record."
        )


def _tensor_source(name: str, tensor: Any) -> str:
    """The name of the layer whose output ``tensor`` (a call argument of layer ``name``) is."""
    if not (isinstance(tensor, dict) and tensor.get("class_name") == "__keras_tensor__"):
        raise ImportFailure(f"layer {name} is given a fixed value instead of a layer's "
                            "output, which Layer Studio cannot record.")
    source, _, tensor_index = tensor["config"]["keras_history"]
    _require_first_output(source, tensor_index)
    return source


def _node_ids(paths: list[tuple[str, ...]]) -> list[str]:
    """A valid, unique node id for each Keras layer, given as the names of the nested models
    holding it and its own: its own name where no other layer takes it first, else prefixed
    with the names of its nested models, else numbered."""
    ids: list[str] = []
    taken: set[str] = set()
    for path in paths:
        own, prefixed = _valid_id(path[-1]), _valid_id("_".join(path))
        candidate, index = own if own not in taken else prefixed, 1
        while candidate in taken:
            index += 1
            candidate = f"{prefixed}_{index}"
        ids.append(candidate)
        taken.add(candidate)
    return ids


def _valid_id(name: str) -> str:
    """``name`` as a node id: word characters only, not starting with a digit."""
    base = re.sub(r"\W", "_", name, flags=re.ASCII)[:90] or "layer"
    return base if not base[0].isdigit() else f"_{base}"


def _input_shape(layer: _Layer) -> Shape:
    config = layer.entry["config"]
    if config.get("sparse") or config.get("ragged"):
        raise ImportFailure(f"input {layer.name} is sparse or ragged; Layer Studio inputs are "
                            "dense.")
    return _fixed(config["batch_shape"][1:], f"input {layer.name}")


def _output_shape(keras_object: Any, layer: _Layer, inputs: list[Shape]) -> Shape:
    """The layer's output shape for ``inputs``, as Keras computes it without calling it."""
    import keras

    name = layer.name
    tensors = [keras.KerasTensor((None, *shape)) for shape in inputs]
    args, kwargs = REGISTRY.get(layer.class_name, REGISTRY[OPAQUE_TYPE]).arguments(tensors)
    try:
        output = keras_object.compute_output_spec(*args, **kwargs)
    except Exception as exc:
        raise ImportFailure(
            f"Keras cannot tell the output shape of layer {name} ({first_line(exc)})."
        ) from None
    if not isinstance(output, keras.KerasTensor):
        raise ImportFailure(f"layer {name} has several outputs; Layer Studio layers have one.")
    return _fixed(output.shape[1:], f"the output of layer {name}")


def _fixed(dims: Any, what: str) -> Shape:
    if any(not isinstance(d, int) for d in dims):
        raise ImportFailure(
            f"{what} has a size that varies ({format_shape(tuple(dims))}); Layer Studio "
            "needs fixed sizes."
        )
    return tuple(dims)


def _known_params(
    node_id: str, class_name: str, config: dict[str, Any], inputs: list[Shape]
) -> dict[str, Any] | None:
    """Parameters of the registry type ``class_name`` that rebuild exactly this layer, or None."""
    layer_type = REGISTRY.get(class_name)
    if layer_type is None or class_name in ("Input", OPAQUE_TYPE):
        return None
    values = layer_type.unwrap_config(config) if layer_type.unwrap_config else config
    params = None if values is None else registry_values(layer_type, values)
    if params is None or layer_type.check_params(params):
        return None
    target = _comparable(config, inputs)
    try:
        for rebuilt in _rebuilt_configs(Node(node_id, class_name, params), inputs):
            if _comparable(_plain(rebuilt, node_id), inputs) == target:
                return params
    except Exception:
        return None
    return None


def _rebuilt_configs(node: Node, inputs: list[Shape]) -> Iterator[dict[str, Any]]:
    """The Keras config of ``node``, then (only if asked for) that of the layer built on
    ``inputs``, as a loaded model's layers are: a few layers settle some settings only when
    built (MultiHeadAttention its attention axes), and building costs the weights."""
    import keras

    layer = keras_layer(node, inputs)
    yield layer.get_config()
    call_layer(node, layer, [keras.Input(shape=shape) for shape in inputs])
    yield layer.get_config()


def _comparable(config: dict[str, Any], inputs: list[Shape]) -> dict[str, Any]:
    """A config without its name or those of the layers nested in it, with an axis that
    counts to the last axis written as -1 and initializers by their names."""
    config = _nameless(config)
    for key, value in config.items():
        if key.endswith("_initializer"):
            config[key] = comparable_initializer(value)
    axis = config.get("axis")
    if inputs and isinstance(axis, int) and axis == len(inputs[0]):
        config["axis"] = -1
    return config


def _nameless(config: dict[str, Any]) -> dict[str, Any]:
    """A layer config without its name, nor those of the layers a wrapper holds (it names
    them after itself)."""
    config = {key: value for key, value in config.items() if key != "name"}
    for key in ("layer", "backward_layer"):
        nested = config.get(key)
        if isinstance(nested, dict) and isinstance(nested.get("config"), dict):
            config[key] = {**nested, "config": _nameless(nested["config"])}
    return config


def _plain(value: Any, name: str) -> Any:
    """``value`` as plain JSON data: tuples become lists, NumPy numbers Python numbers."""
    try:
        return json.loads(json.dumps(value, default=_json_default))
    except (TypeError, ValueError) as exc:
        raise ImportFailure(
            f"layer {name} has a setting Layer Studio cannot store ({first_line(exc)})."
        ) from None


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not plain data")
