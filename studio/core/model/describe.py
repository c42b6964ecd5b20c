"""One-line descriptions of a layer's key parameters, as the canvas and list show them."""

from __future__ import annotations

from typing import Any

from studio.core.model.graph import Node
from studio.core.model.params import format_shape


def _window(size: int) -> str:
    return f"{size}×{size}"


def _activation(params: dict[str, Any]) -> str:
    activation = params["activation"]
    return "" if activation == "linear" else activation


def _join(*parts: str) -> str:
    return ", ".join(part for part in parts if part)


def _dense(p: dict[str, Any]) -> str:
    return _join(f"{p['units']} units", _activation(p))


def _conv2d(p: dict[str, Any]) -> str:
    stride = f"stride {p['strides']}" if p["strides"] != 1 else ""
    pad = "same" if p["padding"] == "same" else ""
    return _join(f"{p['filters']} × {_window(p['kernel_size'])}", stride, pad, _activation(p))


def _pool(p: dict[str, Any]) -> str:
    stride = p["strides"]
    return _join(_window(p["pool_size"]), f"stride {stride}" if stride else "",
                 "same" if p["padding"] == "same" else "")


def _recurrent(p: dict[str, Any]) -> str:
    return _join(f"{p['units']} units", "sequences" if p["return_sequences"] else "")


def _bidirectional(p: dict[str, Any]) -> str:
    merge = p["merge_mode"] if p["merge_mode"] != "concat" else ""
    return _join(f"{p['layer']} ×2", _recurrent(p), merge)


def _attention(p: dict[str, Any]) -> str:
    key = f"key {p['key_dim']}" if p["key_dim"] else ""
    return _join(f"{p['num_heads']} heads", key,
                 f"dropout {p['dropout']:g}" if p["dropout"] else "")


def _application(p: dict[str, Any]) -> str:
    count = p["trainable_layers"]
    learning = f"last {count} layers learn" if count else "frozen"
    return _join(p["name"], "ImageNet" if p["weights"] == "imagenet" else "random", learning)


_DESCRIBERS = {
    "Input": lambda p: format_shape(p["shape"]),
    "Dense": _dense,
    "Conv2D": _conv2d,
    "MaxPooling2D": _pool,
    "AveragePooling2D": _pool,
    "Dropout": lambda p: f"rate {p['rate']:g}",
    "Activation": lambda p: p["activation"],
    "Reshape": lambda p: f"to {format_shape(p['target_shape'])}",
    "Rescaling": lambda p: _join(f"× {p['scale']:.4g}",
                                 f"+ {p['offset']:g}" if p["offset"] else ""),
    "Embedding": lambda p: f"{p['input_dim']:,} → {p['output_dim']}",
    "SimpleRNN": _recurrent,
    "LSTM": _recurrent,
    "GRU": _recurrent,
    "Bidirectional": _bidirectional,
    "TimeDistributed": _dense,
    "RepeatVector": lambda p: f"× {p['n']}",
    "MultiHeadAttention": _attention,
    "Application": _application,
    "Keras": lambda p: p.get("class_name", ""),
}


def key_params(node: Node) -> str:
    """The parameters worth showing at a glance, e.g. ``32 × 3×3, relu`` for a Conv2D."""
    describe = _DESCRIBERS.get(node.type)
    return describe(node.resolved_params()) if describe else ""
