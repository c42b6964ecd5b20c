"""How a layer type's parameters become the keyword arguments of its Keras class, and how a
Keras config becomes parameters again (for import).

Most parameters are Keras arguments of the same name; per-axis sizes and sides change form
(see ``Param.to_keras``), and a regularizer choice and its factor make one Keras regularizer.
The result is plain data, so the code export can write it out as Python.
"""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import FACTOR, INITIALIZERS, LayerType

_REGULARIZER_CLASSES = {"l1": ("L1", ("l1",)), "l2": ("L2", ("l2",)),
                        "l1_l2": ("L1L2", ("l1", "l2"))}
"""Each regularizer choice: its Keras class and the factors that class takes."""
_INITIALIZER_NAMES = {"".join(part.capitalize() for part in name.split("_")): name
                      for name in INITIALIZERS}
"""Keras's initializer class names (``HeNormal``) to the names Keras takes (``he_normal``)."""
_VARIANCE_SCALINGS = {(1.0, "fan_avg", "uniform"): "glorot_uniform",
                      (1.0, "fan_avg", "truncated_normal"): "glorot_normal",
                      (2.0, "fan_in", "uniform"): "he_uniform",
                      (2.0, "fan_in", "truncated_normal"): "he_normal",
                      (1.0, "fan_in", "uniform"): "lecun_uniform",
                      (1.0, "fan_in", "truncated_normal"): "lecun_normal"}
"""The named initializers that are a VarianceScaling, by scale, mode and distribution, as Keras
defines them: files written by Keras 2 (MobileNet's, Teachable Machine's) spell them out."""


def initializer_name(config: Any) -> Any:
    """The name Keras takes for an initializer's config (``he_normal`` for HeNormal, or for the
    unseeded VarianceScaling that is the same thing), or the config itself if it has none."""
    if not isinstance(config, dict):
        return config
    class_name = config.get("class_name")
    if class_name == "VarianceScaling":
        settings = _set(config)
        if set(settings) != {"scale", "mode", "distribution"}:
            return config
        key = (float(settings["scale"]), settings["mode"], settings["distribution"])
        return _VARIANCE_SCALINGS.get(key, config)
    return _INITIALIZER_NAMES.get(class_name, config)


def comparable_initializer(config: Any) -> Any:
    """An initializer's config in a form that is equal for equal initializers: its name and
    the settings it sets, a VarianceScaling behind a name taking that name alone."""
    name = initializer_name(config)
    if not isinstance(name, str) or not isinstance(config, dict):
        return config
    return name, {} if config.get("class_name") == "VarianceScaling" else _set(config)


def _set(config: dict[str, Any]) -> dict[str, Any]:
    """An initializer's settings that are set: an unset seed, or the axes newer Keras versions
    record, change nothing."""
    return {k: v for k, v in (config.get("config") or {}).items() if v is not None}


def _regularized(layer_type: LayerType) -> list[str]:
    """The names of the type's regularizer choices that have a factor parameter."""
    names = {p.name for p in layer_type.params}
    return [name[: -len(FACTOR)] for name in names
            if name.endswith(FACTOR) and name[: -len(FACTOR)] in names]


def keras_kwargs(layer_type: LayerType, params: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for the Keras class of ``layer_type`` from its resolved ``params``."""
    kwargs = {p.name: p.to_keras(params[p.name]) for p in layer_type.params}
    for name in _regularized(layer_type):
        factor = kwargs.pop(name + FACTOR)
        choice = kwargs[name]
        if choice == "none":
            kwargs[name] = None
        else:
            class_name, factors = _REGULARIZER_CLASSES[choice]
            kwargs[name] = {"class_name": class_name,
                            "config": {key: factor for key in factors}}
    return kwargs


def registry_values(layer_type: LayerType, config: dict[str, Any]) -> dict[str, Any] | None:
    """The type's parameters read from a Keras layer's ``config``, or None if one is missing.

    The values may still not rebuild the same layer (a seeded initializer, an L1L2 with two
    different factors): the importer compares the rebuilt config with the original.
    """
    regularized = _regularized(layer_type)
    values: dict[str, Any] = {}
    for param in layer_type.params:
        if param.name.endswith(FACTOR) and param.name[: -len(FACTOR)] in regularized:
            continue
        if param.name not in config:
            return None
        value = param.from_keras(config[param.name])
        if param.name.endswith("_initializer") and isinstance(value, dict):
            value = initializer_name(value)
        values[param.name] = value
    for name in regularized:
        values[name], values[name + FACTOR] = _regularizer(
            config[name], layer_type.param(name + FACTOR).default)
    return values


def _regularizer(config: Any, default: float) -> tuple[Any, Any]:
    """A Keras regularizer config as a choice and a factor (for L1L2, its L1 factor)."""
    if config is None:
        return "none", default
    if not isinstance(config, dict):
        return config, default
    for choice, (class_name, factors) in _REGULARIZER_CLASSES.items():
        if config.get("class_name") == class_name:
            return choice, (config.get("config") or {}).get(factors[0], default)
    return config.get("class_name"), default
