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


def _pool(p: dict[str, Any], window: str = "") -> str:
    stride = p["strides"]
    return _join(window or _window(p["pool_size"]), f"stride {stride}" if stride else "",
                 "same" if p["padding"] == "same" else "")


def _axis(p: dict[str, Any], name: str = "axis") -> str:
    """The axis, unless it is the usual last one."""
    return "" if p[name] == -1 else f"axis {p[name]}"


def _relu(p: dict[str, Any]) -> str:
    cap = p["max_value"]
    return _join("" if cap is None else f"max {cap:g}",
                 f"slope {p['negative_slope']:g}" if p["negative_slope"] else "",
                 f"threshold {p['threshold']:g}" if p["threshold"] else "")


def _recurrent(p: dict[str, Any]) -> str:
    return _join(f"{p['units']} units", "sequences" if p["return_sequences"] else "")


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
    "LSTM": _recurrent,
    "GRU": _recurrent,
    "MaxPooling1D": lambda p: _pool(p, f"{p['pool_size']} steps"),
    "AveragePooling1D": lambda p: _pool(p, f"{p['pool_size']} steps"),
    "SpatialDropout2D": lambda p: f"rate {p['rate']:g}",
    "GaussianNoise": lambda p: f"stddev {p['stddev']:g}",
    "LayerNormalization": _axis,
    "GroupNormalization": lambda p: _join(f"{p['groups']} groups", _axis(p)),
    "ReLU": _relu,
    "LeakyReLU": lambda p: f"slope {p['negative_slope']:g}",
    "PReLU": lambda p: (f"shared {', '.join(map(str, p['shared_axes']))}"
                        if p["shared_axes"] else ""),
    "ELU": lambda p: f"alpha {p['alpha']:g}",
    "Softmax": _axis,
    "Permute": lambda p: f"to {', '.join(map(str, p['dims']))}",
    "Dot": lambda p: _join(f"axis {p['axes']}", "normalized" if p["normalize"] else ""),
    "Application": _application,
    "Keras": lambda p: p.get("class_name", ""),
}


def key_params(node: Node) -> str:
    """The parameters worth showing at a glance, e.g. ``32 × 3×3, relu`` for a Conv2D."""
    describe = _DESCRIBERS.get(node.type)
    return describe(node.resolved_params()) if describe else ""
