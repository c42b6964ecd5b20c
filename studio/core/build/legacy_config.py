"""Rewriting the model configs Keras 2 wrote into the form Keras 3 reads, as plain JSON.

Keras 3 refuses many files Keras 2.x (and tools built on it, such as Teachable Machine's
Keras export) wrote, over settings that changed name or form: a ``DepthwiseConv2D`` with
``"groups": 1``, a ``batch_input_shape`` on a Sequential model's first layer, a dtype policy
stored as ``{"class_name": "Policy", ...}``, initializers without a ``module``, a functional
model named ``Model``. Those known keys are rewritten here, before Keras's safe
deserialisation sees the config; nothing is built and no code is run. Layers that only ever
held TensorFlow code (``TFOpLambda``, ``SlicingOpLambda``) are refused with the reason.
"""

from __future__ import annotations

import re
from typing import Any

REFUSED_CLASSES = {
    "TFOpLambda": "a TensorFlow function",
    "SlicingOpLambda": "a TensorFlow slicing operation",
    "TensorFlowOpLayer": "a TensorFlow operation",
}
"""Keras 2 layers that stand for a TensorFlow call, by what they call: Keras 3 has no such
layer, and rebuilding the call would mean running what the file names."""

MODEL_CLASSES = ("Sequential", "Functional", "Model")
_POLICY_CLASSES = ("Policy", "PolicyV1", "DTypePolicy", "FloatDTypePolicy")
_SETTING_MODULES = {"_initializer": "keras.initializers", "_regularizer": "keras.regularizers",
                    "_constraint": "keras.constraints"}
"""The Keras 3 module of the objects stored under a layer setting ending with each suffix."""

_UNKNOWN_SETTING = (
    re.compile(r"Unrecognized keyword arguments passed to \w+: \{'([^']+)'"),
    re.compile(r"unexpected keyword argument '([^']+)'"),
)


class LegacyRefused(ValueError):
    """A stored config Keras 3 cannot read; the message names the layer and the key."""


def modernised(config: dict[str, Any], *, modules: bool) -> dict[str, Any]:
    """A copy of a stored model config with every known Keras 2 form rewritten for Keras 3,
    in nested models too; LegacyRefused for a layer Keras 3 cannot rebuild.

    ``modules`` adds the ``module`` Keras 3's own reader (``.keras`` files) needs to find a
    built-in class; Keras's reader of legacy ``.h5`` files looks classes up by name alone.
    """
    return _layer(config, modules)


def layer_entries(config: Any) -> list[dict[str, Any]]:
    """Every layer entry of a stored model config that is not itself a model, nested ones
    included, in order: the layers a failed load can be narrowed down to."""
    if not isinstance(config, dict):
        return []
    inner = config.get("config")
    layers = inner.get("layers") if isinstance(inner, dict) else None
    if config.get("class_name") in MODEL_CLASSES and isinstance(layers, list):
        return [entry for layer in layers for entry in layer_entries(layer)]
    return [config] if isinstance(inner, dict) else []


def refusal(entry: dict[str, Any], error: BaseException) -> str:
    """One line saying why Keras 3 refused to build the layer ``entry``: the setting it does
    not know, when its message names one."""
    text = str(error)
    if "Could not locate class" in text or "not a KerasSaveable subclass" in text:
        return (f"{_who(entry)} is of a class Keras does not know: it was saved from custom "
                "Python code, which is not in the file")
    for pattern in _UNKNOWN_SETTING:
        found = pattern.search(text)
        if found:
            return (f"{_who(entry)} has the setting '{found[1][:80]}', which Keras 3 does not "
                    "know")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return f"{_who(entry)} cannot be built ({(lines[-1] if lines else type(error).__name__)[:160]})"


def _who(entry: dict[str, Any]) -> str:
    config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    return f"layer {str(config.get('name', '?'))[:80]} ({str(entry.get('class_name'))[:80]})"


def _layer(entry: Any, modules: bool) -> Any:
    """A layer (or model) entry rewritten; anything else is returned as it was."""
    if not (isinstance(entry, dict) and isinstance(entry.get("config"), dict)):
        return entry
    class_name = entry.get("class_name")
    if class_name in REFUSED_CLASSES:
        function = entry["config"].get("function")
        what = f" ({str(function)[:80]})" if isinstance(function, str) else ""
        raise LegacyRefused(
            f"{_who(entry)} calls {REFUSED_CLASSES[class_name]}{what}, recorded by Keras 2 "
            "as code: Keras 3 cannot rebuild it, and Layer Studio does not run code from files."
        )
    entry = {**entry, "config": _settings(entry, modules)}
    if class_name == "Model" and "input_layers" in entry["config"]:
        entry["class_name"] = "Functional"  # what Keras 2.4 and later call a functional model
    if modules and _keras2_module(entry):
        entry["module"] = "keras" if class_name in MODEL_CLASSES else "keras.layers"
        entry.setdefault("registered_name", None)
    return entry


def _settings(entry: dict[str, Any], modules: bool) -> dict[str, Any]:
    """A layer's config with its own legacy settings and its nested layers rewritten."""
    config = dict(entry["config"])
    class_name = entry.get("class_name")
    for key, value in config.items():
        if key == "dtype":
            config[key] = _policy(value)
        elif key == "layers" and isinstance(value, list):
            config[key] = [_layer(layer, modules) for layer in value]
        elif key in ("layer", "backward_layer"):  # a wrapper's layer (Bidirectional...)
            config[key] = _layer(value, modules)
        elif isinstance(value, dict) and any(key.endswith(end) for end in _SETTING_MODULES):
            config[key] = _setting_object(key, value, modules)
    if class_name == "DepthwiseConv2D" and "groups" in config:
        groups = config.pop("groups")
        if groups != 1:  # Keras 2 stored the Conv2D default; no depthwise layer had others
            raise LegacyRefused(f"{_who(entry)} has the setting 'groups' = {str(groups)[:80]}, "
                                "which a depthwise convolution cannot have.")
    if class_name == "InputLayer" and "batch_input_shape" in config:
        config.setdefault("batch_shape", config.pop("batch_input_shape"))
    axis = config.get("axis")
    if class_name == "BatchNormalization" and isinstance(axis, list) and len(axis) == 1:
        config["axis"] = axis[0]  # Keras 2 stored the axis list it built, Keras 3 one axis
    if class_name == "Sequential" and isinstance(config.get("layers"), list):
        config["layers"] = _with_input_layer(config["layers"])
    elif class_name in ("Functional", "Model") and isinstance(config.get("layers"), list):
        config["layers"] = [_without_input_shape(layer) for layer in config["layers"]]
        for key in ("input_layers", "output_layers"):
            if key in config:
                config[key] = _single_endpoint(config[key])
    return config


def _single_endpoint(refs: Any) -> Any:
    """A functional model's one input or output as one tensor, not a list of one: Keras 2
    listed even a single one, and unpacked it when called; Keras 3 keeps the list, which a
    model nested in a Sequential one then passes on to the next layer."""
    if (isinstance(refs, list) and len(refs) == 1 and isinstance(refs[0], list)
            and len(refs[0]) == 3 and isinstance(refs[0][0], str)):
        return refs[0]
    return refs


def _policy(value: Any) -> Any:
    """A dtype policy as Keras 3 reads it: a Keras 2 ``Policy`` object becomes its name."""
    if (isinstance(value, dict) and value.get("class_name") in _POLICY_CLASSES
            and "module" not in value and isinstance(value.get("config"), dict)
            and isinstance(value["config"].get("name"), str)):
        return value["config"]["name"]
    return value


def _setting_object(key: str, value: dict[str, Any], modules: bool) -> dict[str, Any]:
    """An initializer, regularizer or constraint stored under ``key``, for Keras 3."""
    if "class_name" not in value or not isinstance(value.get("config"), dict):
        return value
    value = {**value, "config": dict(value["config"])}
    if value["class_name"] == "VarianceScaling" and value["config"].get("distribution") == "normal":
        value["config"]["distribution"] = "truncated_normal"  # Keras 2's name for it
    if modules and _keras2_module(value):
        suffix = next(end for end in _SETTING_MODULES if key.endswith(end))
        value.update(module=_SETTING_MODULES[suffix], registered_name=None)
    return value


def _keras2_module(value: dict[str, Any]) -> bool:
    """Whether a serialised object names its module as Keras 2 did: not at all (before
    Keras 2.13) or as Keras 2's internal ``engine`` package, which Keras 3 does not have."""
    module = value.get("module")
    return module is None or str(module).startswith(("keras.engine", "keras.src.engine"))


def _shape_keys(config: dict[str, Any]) -> list[str]:
    return [key for key in ("batch_input_shape", "batch_shape") if key in config]


def _without_input_shape(entry: Any) -> Any:
    """A non-input layer without the input shape Keras 2 recorded on it (the model's
    inputs say it), or the entry as it was."""
    if (not isinstance(entry, dict) or entry.get("class_name") == "InputLayer"
            or not isinstance(entry.get("config"), dict) or not _shape_keys(entry["config"])):
        return entry
    config = {k: v for k, v in entry["config"].items() if k not in _shape_keys(entry["config"])}
    return {**entry, "config": config}


def _input_shape(entry: Any) -> Any:
    """The batch input shape a layer entry records, on itself or, for a nested model, on its
    own first (or only) input; None if it records none."""
    if not (isinstance(entry, dict) and isinstance(entry.get("config"), dict)):
        return None
    config = entry["config"]
    if _shape_keys(config):
        return config[_shape_keys(config)[0]]
    layers = config.get("layers")
    if entry.get("class_name") not in MODEL_CLASSES or not isinstance(layers, list) or not layers:
        return None
    if entry.get("class_name") == "Sequential":
        return _input_shape(layers[0])
    inputs = [layer for layer in layers
              if isinstance(layer, dict) and layer.get("class_name") == "InputLayer"]
    return _input_shape(inputs[0]) if len(inputs) == 1 else None


def _with_input_layer(layers: list[Any]) -> list[Any]:
    """A Sequential model's layers with its input shape on an InputLayer of their own:
    Keras 2 recorded it as the first layer's ``batch_input_shape`` when there was none (or
    only on the input of a nested model)."""
    first = layers[0] if layers else None
    shape = _input_shape(first)
    if shape is None or first.get("class_name") == "InputLayer":
        return [_without_input_shape(layer) if i else layer for i, layer in enumerate(layers)]
    config = first["config"]
    dtype = config.get("dtype") if isinstance(config.get("dtype"), str) else "float32"
    name = f"{str(config.get('name', 'layer'))[:200]}_input"  # the name Keras 2 gave it
    input_layer = {"class_name": "InputLayer",
                   "config": {"batch_shape": shape, "dtype": dtype, "name": name}}
    if "module" in first:
        input_layer.update(module="keras.layers", registered_name=None)
    return [input_layer, *(_without_input_shape(layer) for layer in layers)]
