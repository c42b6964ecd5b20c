"""Stand-ins for the layers of an imported model that hold Python code (Lambda layers).

Keras cannot rebuild a model holding a Lambda without deserialising its function, and it calls
the function to learn its output shape. Import instead puts a stand-in in each such layer's
place before Keras sees the config: a layer that returns the output shape recorded in the file
and refuses to be called. Its class has the code layer's name, so the paths under which Keras
stores the weights of the other layers stay the same, and its config is the original one.
"""

from __future__ import annotations

import functools
from typing import Any

from studio.core.model.layers import CODE_CLASSES

_KEY = "LayerStudio>{}"
"""The registered name a stand-in for the code class ``{}`` is deserialised by."""


class ShapeUnknown(ValueError):
    """A code layer's output shape is recorded nowhere in the file; the message says which."""


def with_stand_ins(config: Any) -> Any:
    """A copy of a stored Keras model config with every code layer, in nested models too,
    replaced by a stand-in that knows its output shape; raise ShapeUnknown if one cannot."""
    if isinstance(config, list):
        return [with_stand_ins(value) for value in config]
    if not isinstance(config, dict):
        return config
    copied = {key: with_stand_ins(value) for key, value in config.items()}
    layers = copied.get("layers")
    if isinstance(layers, list):  # the config of a Sequential or functional model
        copied["layers"] = [
            _stand_in(entry, _recorded_shape(config, index))
            if isinstance(entry, dict) and entry.get("class_name") in CODE_CLASSES else entry
            for index, entry in enumerate(layers)
        ]
    return copied


def stand_in_classes() -> dict[str, type]:
    """The ``custom_objects`` Keras needs to deserialise the stand-ins, by registered name."""
    return dict(_classes())


def as_original(config: Any) -> Any:
    """A config Keras serialised from a model holding stand-ins, with each stand-in written
    back as the built-in code layer it replaces (its own config is the original already)."""
    if isinstance(config, list):
        return [as_original(value) for value in config]
    if not isinstance(config, dict):
        return config
    copied = {key: as_original(value) for key, value in config.items()}
    if copied.get("module") == __name__ and copied.get("class_name") in CODE_CLASSES:
        copied.update(module="keras.layers", registered_name=None)
    return copied


def _stand_in(entry: dict[str, Any], shape: list[Any]) -> dict[str, Any]:
    original = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    key = _KEY.format(entry["class_name"])
    settings = {name: original[name] for name in ("name", "trainable", "dtype") if name in original}
    return {**entry, "module": None, "class_name": key, "registered_name": key,
            "config": {**settings, "original": original, "output_shape": shape}}


def _recorded_shape(model_config: dict[str, Any], index: int) -> list[Any]:
    """The output shape (without the batch axis) of the code layer at ``index`` of a model
    config: set in its own config, else recorded on the tensors its consumers receive (in a
    functional model) or as the input shape of the next layer (in a Sequential one)."""
    layers = model_config["layers"]
    entry = layers[index]
    config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    name = config.get("name", "?")
    if _is_shape(config.get("output_shape")):
        return list(config["output_shape"])
    if "input_layers" in model_config:
        for other in layers:
            for tensor in _tensors(other.get("inbound_nodes") if isinstance(other, dict) else None):
                history, shape = tensor.get("keras_history"), tensor.get("shape")
                if isinstance(history, list) and history[:1] == [name] and _is_shape(shape):
                    return list(shape[1:])
    elif index + 1 < len(layers) and isinstance(layers[index + 1], dict):
        build = layers[index + 1].get("build_config")
        shape = build.get("input_shape") if isinstance(build, dict) else None
        if _is_shape(shape):
            return list(shape[1:])
    raise ShapeUnknown(
        f"the output shape of {entry['class_name']} layer {str(name)[:80]} is not recorded in "
        "the file, and Layer Studio does not run its code to find it."
    )


def _tensors(value: Any) -> list[dict[str, Any]]:
    """The configs of the Keras tensors anywhere in ``value`` (a layer's recorded calls)."""
    if isinstance(value, list):
        return [tensor for item in value for tensor in _tensors(item)]
    if not isinstance(value, dict):
        return []
    if value.get("class_name") == "__keras_tensor__" and isinstance(value.get("config"), dict):
        return [value["config"]]
    return [tensor for item in value.values() for tensor in _tensors(item)]


def _is_shape(value: Any) -> bool:
    """Whether ``value`` is a list of sizes (None for a size that varies)."""
    return isinstance(value, list) and all(
        d is None or (isinstance(d, int) and not isinstance(d, bool)) for d in value)


@functools.cache
def _classes() -> tuple[tuple[str, type], ...]:
    import keras

    class CodeStandIn(keras.layers.Layer):
        """Holds a code layer's place: its recorded output shape, no code, never called."""

        def __init__(self, original: dict[str, Any], output_shape: list[Any],
                     **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.original = original
            self.recorded_shape = tuple(output_shape)
            self.recorded_build: dict[str, Any] | None = None

        def build(self, input_shape: Any = None) -> None:
            self.built = True

        def build_from_config(self, config: dict[str, Any]) -> None:
            self.recorded_build = config  # kept, to be serialised again as it was read
            self.built = True

        def get_build_config(self) -> dict[str, Any] | None:
            return self.recorded_build

        def compute_output_shape(self, input_shape: Any) -> tuple[Any, ...]:
            return (None, *self.recorded_shape)

        def call(self, inputs: Any, mask: Any = None, training: Any = None) -> Any:
            raise RuntimeError(f"layer {self.name} holds Python code, which Layer Studio does "
                               "not run.")

        def get_config(self) -> dict[str, Any]:
            return self.original

    return tuple((_KEY.format(name), type(name, (CodeStandIn,), {"__module__": __name__}))
                 for name in sorted(CODE_CLASSES))
