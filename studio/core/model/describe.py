"""One-line descriptions of a layer's key parameters, as the canvas and list show them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studio.core.model.graph import Node
from studio.core.model.params import format_shape


def _window(size: int | list[int], axes: int = 2) -> str:
    """``3×3`` for a square size, ``3×1`` for one per axis; sides (top, bottom, ...) as
    ``0,1×0,1``."""
    if isinstance(size, int):
        return "×".join([str(size)] * axes)
    if len(size) == 2 * axes:
        return "×".join(f"{size[i]},{size[i + 1]}" for i in range(0, len(size), 2))
    return "×".join(str(s) for s in size)


def _stride(strides: int | list[int] | None) -> str:
    if strides is None or strides == 1:
        return ""
    return f"stride {strides if isinstance(strides, int) else _window(strides)}"


def _activation(params: dict[str, Any]) -> str:
    activation = params["activation"]
    return "" if activation == "linear" else activation


def _join(*parts: str) -> str:
    return ", ".join(part for part in parts if part)


def _dense(p: dict[str, Any]) -> str:
    return _join(f"{p['units']} units", _activation(p))


def _conv(axes: int) -> Callable[[dict[str, Any]], str]:
    def describe(p: dict[str, Any]) -> str:
        pad = "" if p["padding"] == "valid" else p["padding"]
        window = _window(p["kernel_size"], axes)
        size = f"{p['filters']} × {window}" if "filters" in p else window
        multiplier = p.get("depth_multiplier", 1)
        return _join(size, f"× {multiplier} per channel" if multiplier != 1 else "",
                     _stride(p["strides"]), pad, _activation(p))

    return describe


def _pool(p: dict[str, Any], window: str = "") -> str:
    return _join(window or _window(p["pool_size"]), _stride(p["strides"]),
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
    start, end = p["input_stride"], p["output_stride"]
    span = (f"strides {start} to {end}" if start != "1"
            else f"stride {end}" if end != "32" else "")
    return _join(p["name"], span, "ImageNet" if p["weights"] == "imagenet" else "random",
                 learning)


_DESCRIBERS = {
    "Input": lambda p: format_shape(p["shape"]),
    "Dense": _dense,
    "Conv2D": _conv(2),
    "Conv1D": _conv(1),
    "Conv3D": _conv(3),
    "Conv2DTranspose": _conv(2),
    "SeparableConv2D": _conv(2),
    "DepthwiseConv2D": _conv(2),
    "UpSampling2D": lambda p: f"× {_window(p['size'])}, {p['interpolation']}",
    "ZeroPadding2D": lambda p: _window(p["padding"]),
    "Cropping2D": lambda p: _window(p["cropping"]),
    "Resizing": lambda p: f"to {p['height']} × {p['width']}",
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
    "DetectionHead": lambda p: _join(f"{p['classes']} classes",
                                     f"score ≥ {p['score_threshold']:g}",
                                     f"NMS IoU {p['nms_iou']:g}"),
    "Application": _application,
    "Keras": lambda p: p.get("class_name", ""),
}


def key_params(node: Node) -> str:
    """The parameters worth showing at a glance, e.g. ``32 × 3×3, relu`` for a Conv2D."""
    describe = _DESCRIBERS.get(node.type)
    return describe(node.resolved_params()) if describe else ""
