"""Keras is the oracle: our pure-Python shapes and parameter counts must match it exactly."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import keras
import pytest

from studio.core.build.keras_model import call_layer, keras_layer
from studio.core.model.graph import Node
from studio.core.model.layers import ACTIVATIONS, LayerError
from studio.core.model.layers.base import INITIALIZERS, REGULARIZERS
from studio.core.model.registry import REGISTRY

CASES_PER_TYPE = 12


def _image(rng: random.Random) -> tuple[int, int, int]:
    return rng.randint(4, 20), rng.randint(4, 20), rng.randint(1, 5)


Case = tuple[dict, list[tuple[int, ...]]]


def _dense(rng: random.Random, act: str) -> Case:
    rank = rng.randint(1, 3)
    shape = tuple(rng.randint(1, 12) for _ in range(rank))
    return {"units": rng.randint(1, 40), "activation": act,
            "use_bias": rng.random() < 0.7, **_kernels(rng)}, [shape]


def _per_axis(rng: random.Random, low: int, high: int, axes: int = 2) -> int | list[int]:
    """One size for every axis, or (half the time) one per axis."""
    if axes == 1 or rng.random() < 0.5:
        return rng.randint(low, high)
    return [rng.randint(low, high) for _ in range(axes)]


def _kernels(rng: random.Random, kernel: str = "kernel") -> dict:
    """A random initializer and regularizer for the weights called ``kernel``."""
    return {f"{kernel}_initializer": rng.choice(INITIALIZERS),
            f"{kernel}_regularizer": rng.choice(REGULARIZERS),
            f"{kernel}_regularizer_factor": rng.choice([0.0, 1e-4, 0.01])}


def _conv(axes: int, paddings: tuple[str, ...] = ("valid", "same")):
    def case(rng: random.Random, act: str) -> Case:
        shape = (*(rng.randint(3, 12 if axes < 3 else 7) for _ in range(axes)), rng.randint(1, 5))
        return {"filters": rng.randint(1, 16), "kernel_size": _per_axis(rng, 1, 5, axes),
                "strides": _per_axis(rng, 1, 3, axes), "padding": rng.choice(paddings),
                "activation": act, "use_bias": rng.random() < 0.7, **_kernels(rng)}, [shape]

    return case


def _depthwise(separable: bool):
    def case(rng: random.Random, act: str) -> Case:
        params = {"kernel_size": _per_axis(rng, 1, 5), "strides": _per_axis(rng, 1, 3),
                  "padding": rng.choice(["valid", "same"]),
                  "depth_multiplier": rng.randint(1, 3), "activation": act,
                  "use_bias": rng.random() < 0.7, **_kernels(rng, "depthwise")}
        if separable:
            params.update(filters=rng.randint(1, 16), **_kernels(rng, "pointwise"))
        return params, [_image(rng)]

    return case


def _pooling(rng: random.Random, act: str) -> Case:
    return {"pool_size": _per_axis(rng, 1, 4),
            "strides": rng.choice([None, 1, 2, 3, [1, 2], [3, 1]]),
            "padding": rng.choice(["valid", "same"])}, [_image(rng)]


def _sides(rng: random.Random) -> int | list[int]:
    """Padding or cropping in one of Keras's forms: every side, per axis or per side."""
    return rng.choice([rng.randint(0, 3), [rng.randint(0, 3) for _ in range(2)],
                       [rng.randint(0, 3) for _ in range(4)]])


def _upsampling(rng: random.Random, act: str) -> Case:
    return {"size": _per_axis(rng, 1, 3), "interpolation": rng.choice(["nearest", "bilinear"])
            }, [_image(rng)]


def _zero_padding(rng: random.Random, act: str) -> Case:
    return {"padding": _sides(rng)}, [_image(rng)]


def _cropping(rng: random.Random, act: str) -> Case:
    return {"cropping": _sides(rng)}, [_image(rng)]


def _resizing(rng: random.Random, act: str) -> Case:
    return {"height": rng.randint(1, 30), "width": rng.randint(1, 30),
            "interpolation": rng.choice(["bilinear", "nearest", "area"]),
            "crop_to_aspect_ratio": rng.random() < 0.5}, [_image(rng)]


def _global_pooling(rng: random.Random, act: str) -> Case:
    return {}, [_image(rng)]


def _flatten(rng: random.Random, act: str) -> Case:
    return {}, [tuple(rng.randint(1, 9) for _ in range(rng.randint(1, 4)))]


def _dropout(rng: random.Random, act: str) -> Case:
    return {"rate": round(rng.random() * 0.9, 3)}, [(rng.randint(1, 30),)]


def _batchnorm(rng: random.Random, act: str) -> Case:
    shape = tuple(rng.randint(1, 9) for _ in range(rng.randint(1, 3)))
    return {"momentum": round(rng.uniform(0.5, 0.999), 3),
            "epsilon": rng.choice([1e-3, 1e-5])}, [shape]


def _activation(rng: random.Random, act: str) -> Case:
    return {"activation": act}, [(rng.randint(1, 9), rng.randint(1, 9))]


def _reshape(rng: random.Random, act: str) -> Case:
    dims = [rng.randint(1, 6) for _ in range(rng.randint(1, 3))]
    target = list(dims)
    rng.shuffle(target)
    if rng.random() < 0.5:
        target[rng.randrange(len(target))] = -1
    return {"target_shape": target}, [tuple(dims)]


def _rescaling(rng: random.Random, act: str) -> Case:
    return {"scale": rng.uniform(-2, 2), "offset": rng.uniform(-1, 1)}, [_image(rng)]


def _embedding(rng: random.Random, act: str) -> Case:
    return {"input_dim": rng.randint(2, 500), "output_dim": rng.randint(1, 32)}, [
        tuple(rng.randint(1, 12) for _ in range(rng.randint(1, 2)))
    ]


def _recurrent(rng: random.Random, act: str) -> Case:
    return {"units": rng.randint(1, 24), "return_sequences": rng.random() < 0.5,
            **_kernels(rng), **_kernels(rng, "recurrent")}, [
        (rng.randint(1, 10), rng.randint(1, 10))
    ]


def _simple_rnn(rng: random.Random, act: str) -> Case:
    params, shapes = _recurrent(rng, act)
    return {**params, "activation": act}, shapes


def _bidirectional(rng: random.Random, act: str) -> Case:
    params, shapes = _recurrent(rng, act)
    return {**params, "layer": rng.choice(["LSTM", "GRU", "SimpleRNN"]),
            "merge_mode": rng.choice(["concat", "sum", "mul", "ave"])}, shapes


def _time_distributed(rng: random.Random, act: str) -> Case:
    shape = tuple(rng.randint(1, 8) for _ in range(rng.randint(2, 4)))
    return {"units": rng.randint(1, 20), "activation": act, **_kernels(rng)}, [shape]


def _repeat_vector(rng: random.Random, act: str) -> Case:
    return {"n": rng.randint(1, 9)}, [(rng.randint(1, 12),)]


def _attention(rng: random.Random, act: str) -> Case:
    """Self-attention (one input), cross-attention (query and value) or a separate key,
    over sequences or images, with the key size shared out or given."""
    rank = rng.choice([2, 3])
    heads = rng.randint(1, 4)
    features = heads * rng.randint(1, 6) if rng.random() < 0.8 else rng.randint(1, 12)

    def shape(last: int, steps: tuple[int, ...] | None = None) -> tuple[int, ...]:
        return (*(steps or tuple(rng.randint(1, 7) for _ in range(rank - 1))), last)

    inputs = [shape(features)]
    count = rng.randint(1, 3)
    if count > 1:
        inputs.append(shape(rng.randint(1, 12)))
    if count > 2:
        inputs.append(shape(rng.randint(1, 12), inputs[1][:-1]))
    return {"num_heads": heads, "key_dim": rng.choice([None, None, rng.randint(1, 8)]),
            "dropout": rng.choice([0.0, 0.1]),
            "output_shape": rng.choice([None, rng.randint(1, 10)]), **_kernels(rng)}, inputs


def _elementwise(rng: random.Random, act: str) -> Case:
    shape = tuple(rng.randint(1, 8) for _ in range(rng.randint(1, 3)))
    return {}, [shape] * rng.randint(2, 4)


def _concatenate(rng: random.Random, act: str) -> Case:
    base = [rng.randint(1, 8) for _ in range(rng.randint(1, 3))]
    return {}, [(*base[:-1], rng.randint(1, 8)) for _ in range(rng.randint(2, 4))]


def _shape(rng: random.Random, largest: int = 9) -> tuple[int, ...]:
    return tuple(rng.randint(1, largest) for _ in range(rng.randint(1, 3)))


def _sequence(rng: random.Random) -> tuple[int, int]:
    return rng.randint(2, 20), rng.randint(1, 6)


def _axis(rng: random.Random, rank: int) -> int:
    """An axis as Keras counts it, from the end or the start (0, the batch, is never drawn)."""
    return rng.choice([*range(-rank, 0), *range(1, rank + 1)])


def _pooling1d(rng: random.Random, act: str) -> Case:
    return {"pool_size": rng.randint(1, 5), "strides": rng.choice([None, 1, 2, 3]),
            "padding": rng.choice(["valid", "same"])}, [_sequence(rng)]


def _global_pooling1d(rng: random.Random, act: str) -> Case:
    return {}, [_sequence(rng)]


def _spatial_dropout(rng: random.Random, act: str) -> Case:
    return {"rate": round(rng.random() * 0.9, 3)}, [_image(rng)]


def _gaussian_noise(rng: random.Random, act: str) -> Case:
    return {"stddev": round(rng.random(), 3)}, [_shape(rng)]


def _normalization(rng: random.Random, shape: tuple[int, ...]) -> dict:
    return {"axis": _axis(rng, len(shape)), "epsilon": rng.choice([1e-3, 1e-5]),
            "center": rng.random() < 0.7, "scale": rng.random() < 0.7}


def _layernorm(rng: random.Random, act: str) -> Case:
    shape = _shape(rng)
    return _normalization(rng, shape), [shape]


def _groupnorm(rng: random.Random, act: str) -> Case:
    groups = rng.randint(1, 6)
    shape = list(_shape(rng))
    params = {"groups": groups, **_normalization(rng, tuple(shape))}
    if rng.random() < 0.8:  # mostly channels that the groups divide
        shape[params["axis"] % (len(shape) + 1) - 1] = groups * rng.randint(1, 4)
    return params, [tuple(shape)]


def _relu(rng: random.Random, act: str) -> Case:
    return {"max_value": rng.choice([None, 6.0, round(rng.uniform(0, 10), 2)]),
            "negative_slope": rng.choice([0.0, round(rng.random(), 2)]),
            "threshold": rng.choice([0.0, round(rng.random(), 2)])}, [_shape(rng)]


def _leaky_relu(rng: random.Random, act: str) -> Case:
    return {"negative_slope": round(rng.uniform(0, 1), 3)}, [_shape(rng)]


def _prelu(rng: random.Random, act: str) -> Case:
    shape = _shape(rng)
    axes = rng.sample(range(1, len(shape) + 2), rng.randint(1, len(shape)))  # may name one too many
    return {"shared_axes": rng.choice([None, sorted(axes)])}, [shape]


def _elu(rng: random.Random, act: str) -> Case:
    return {"alpha": round(rng.uniform(0, 3), 3)}, [_shape(rng)]


def _softmax(rng: random.Random, act: str) -> Case:
    shape = _shape(rng)
    return {"axis": _axis(rng, len(shape))}, [shape]


def _permute(rng: random.Random, act: str) -> Case:
    shape = _shape(rng)
    dims = list(range(1, len(shape) + 1))
    rng.shuffle(dims)
    if rng.random() < 0.2:  # not a permutation
        dims[0] = rng.randint(1, len(shape) + 1)
    return {"dims": dims}, [shape]


def _subtract(rng: random.Random, act: str) -> Case:
    return {}, [_shape(rng, 8)] * 2


def _dot(rng: random.Random, act: str) -> Case:
    first, second = list(_shape(rng, 6)), list(_shape(rng, 6))
    rank = min(len(first), len(second))
    axes = rng.choice([-1, *range(1, rank + 1)])
    if rng.random() < 0.8:  # mostly the same size along the axis
        second[axes % (len(second) + 1) - 1] = first[axes % (len(first) + 1) - 1]
    return {"axes": axes, "normalize": rng.random() < 0.5}, [tuple(first), tuple(second)]


def _detection_head(rng: random.Random, act: str) -> Case:
    """The decoding settings change nothing in the layer; a sequence input is refused."""
    shape = _image(rng) if rng.random() < 0.8 else _sequence(rng)
    return {"classes": rng.randint(1, 12), "score_threshold": round(rng.random(), 2),
            "nms_iou": round(rng.random(), 2), "max_boxes": rng.randint(1, 300)}, [shape]


CASES: dict[str, Callable[[random.Random, str], Case]] = {
    "Dense": _dense,
    "Conv2D": _conv(2),
    "Conv1D": _conv(1, ("valid", "same", "causal")),
    "Conv3D": _conv(3),
    "Conv2DTranspose": _conv(2),
    "SeparableConv2D": _depthwise(separable=True),
    "DepthwiseConv2D": _depthwise(separable=False),
    "MaxPooling2D": _pooling,
    "AveragePooling2D": _pooling,
    "GlobalAveragePooling2D": _global_pooling,
    "UpSampling2D": _upsampling,
    "ZeroPadding2D": _zero_padding,
    "Cropping2D": _cropping,
    "Resizing": _resizing,
    "Flatten": _flatten,
    "Dropout": _dropout,
    "BatchNormalization": _batchnorm,
    "Activation": _activation,
    "Reshape": _reshape,
    "Rescaling": _rescaling,
    "Embedding": _embedding,
    "SimpleRNN": _simple_rnn,
    "LSTM": _recurrent,
    "GRU": _recurrent,
    "Bidirectional": _bidirectional,
    "TimeDistributed": _time_distributed,
    "RepeatVector": _repeat_vector,
    "MultiHeadAttention": _attention,
    "Add": _elementwise,
    "Multiply": _elementwise,
    "Average": _elementwise,
    "Concatenate": _concatenate,
    "MaxPooling1D": _pooling1d,
    "AveragePooling1D": _pooling1d,
    "GlobalMaxPooling2D": _global_pooling,
    "GlobalAveragePooling1D": _global_pooling1d,
    "GlobalMaxPooling1D": _global_pooling1d,
    "SpatialDropout2D": _spatial_dropout,
    "GaussianNoise": _gaussian_noise,
    "LayerNormalization": _layernorm,
    "GroupNormalization": _groupnorm,
    "ReLU": _relu,
    "LeakyReLU": _leaky_relu,
    "PReLU": _prelu,
    "ELU": _elu,
    "Softmax": _softmax,
    "Permute": _permute,
    "Subtract": _subtract,
    "Maximum": _elementwise,
    "Minimum": _elementwise,
    "Dot": _dot,
    "DetectionHead": _detection_head,
}
"""Per layer type: random parameters and input shapes (they may still be invalid), from the
random source and a random activation drawn first."""


def _case(name: str, rng: random.Random) -> Case:
    """Random parameters and input shapes for one layer type (they may still be invalid)."""
    act = rng.choice(ACTIVATIONS)
    return CASES[name](rng, act)


def _keras_layer(name: str, params: dict, shapes: list[tuple[int, ...]]):
    """The Keras layer of type ``name``, built by calling it on inputs of ``shapes``, and
    its output."""
    inputs = [keras.Input(shape=s) for s in shapes]
    node = Node(f"{name.lower()}_x", name, params)
    layer = keras_layer(node, shapes)
    return layer, call_layer(node, layer, inputs)


def _keras_result(name: str, params: dict, shapes: list[tuple[int, ...]]):
    layer, out = _keras_layer(name, params, shapes)
    return tuple(out.shape[1:]), layer.count_params()


ELSEWHERE = {"Input", "Application", "Keras"}
"""Input has no output to compare; Application has its own oracle in test_applications.py,
and Keras (imported layers) in test_imported_layer.py."""
TESTED = [n for n in REGISTRY if n not in ELSEWHERE]


def test_every_layer_type_has_cases():
    assert ELSEWHERE <= set(REGISTRY)
    assert set(CASES) == set(REGISTRY) - ELSEWHERE


@pytest.mark.parametrize("name", TESTED)
def test_shapes_params_and_weight_shapes_match_keras(name):
    """Output shape, parameter count and each weight's shape (in ``get_weights()`` order,
    which imported weights follow) equal those of the Keras layer built for the case."""
    rng = random.Random(f"oracle-{name}")
    checked = 0
    for _ in range(CASES_PER_TYPE * 3):
        params, shapes = _case(name, rng)
        try:
            ours = REGISTRY[name].output(params, shapes)
        except LayerError:
            continue
        layer, out = _keras_layer(name, params, shapes)
        assert ours == (tuple(out.shape[1:]), layer.count_params()), (params, shapes)
        weights = [shape for _, shape in REGISTRY[name].weight_shapes(params, shapes)]
        assert weights == [w.shape for w in layer.get_weights()], (params, shapes)
        assert sum(math.prod(shape) for shape in weights) == ours[1]
        checked += 1
        if checked == CASES_PER_TYPE:
            break
    assert checked == CASES_PER_TYPE, f"only {checked} valid cases for {name}"


@pytest.mark.parametrize(
    ("name", "params", "shape"),
    [
        ("Conv2D", {"kernel_size": 5}, (4, 4, 1)),
        ("MaxPooling2D", {"pool_size": 3}, (2, 9, 3)),
        ("Reshape", {"target_shape": [7, 7]}, (10,)),
        ("Conv2D", {}, (28, 28)),
        ("Conv2D", {"kernel_size": [3, 7]}, (8, 6, 1)),
        ("Conv1D", {"kernel_size": 5}, (4, 2)),
        ("Conv1D", {}, (28, 28, 1)),
        ("Conv3D", {"kernel_size": [1, 1, 4]}, (4, 4, 3, 2)),
        ("Conv3D", {}, (8, 8, 3)),
        ("DepthwiseConv2D", {"kernel_size": [1, 5]}, (6, 4, 3)),
        ("SeparableConv2D", {}, (12,)),
        ("AveragePooling2D", {"pool_size": [1, 3]}, (2, 2, 3)),
        ("Cropping2D", {"cropping": [2, 0, 0, 2]}, (2, 9, 3)),
        ("Cropping2D", {"cropping": [0, 3]}, (9, 6, 3)),
        ("MaxPooling1D", {"pool_size": 5}, (3, 2)),
        ("GlobalMaxPooling1D", {}, (8, 8, 3)),
        ("SpatialDropout2D", {"rate": 0.2}, (10, 4)),
        ("GroupNormalization", {"groups": 3}, (4, 4, 8)),
        ("GroupNormalization", {"groups": 16}, (4, 4, 8)),
        ("LayerNormalization", {"axis": 3}, (5, 4)),
        ("PReLU", {"shared_axes": [3]}, (5, 4)),
        ("Permute", {"dims": [1, 1]}, (5, 4)),
        ("Permute", {"dims": [2, 1]}, (5, 4, 3)),
        ("LSTM", {}, (28, 28, 1)),
        ("Bidirectional", {"layer": "SimpleRNN"}, (12,)),
        ("RepeatVector", {}, (4, 4)),
        ("TimeDistributed", {}, (4,)),
        ("DetectionHead", {}, (12,)),
        ("DetectionHead", {}, (4, 4, 4, 2)),
    ],
)
def test_what_we_reject_keras_rejects_too(name, params, shape):
    _both_reject(name, params, [shape])


def _both_reject(name: str, params: dict, shapes: list[tuple[int, ...]]) -> None:
    with pytest.raises(LayerError):
        REGISTRY[name].output(params, shapes)
    with pytest.raises(Exception):  # noqa: B017 - Keras raises various types
        _keras_result(name, params, shapes)


@pytest.mark.parametrize(
    ("name", "params", "shapes", "words"),
    [
        ("Dot", {"axes": -1}, [(4, 3), (4, 5)],
         "Dot multiplies its inputs along axis -1 and sums, so both must have the same size "
         "there, but 4 × 3 has 3 and 4 × 5 has 5."),
        ("Subtract", {}, [(8, 8, 16), (8, 8, 32)],
         "Subtract needs inputs of the same shape, but got 8 × 8 × 16 and 8 × 8 × 32."),
        ("Subtract", {}, [(4,), (4,), (4,)], "Subtract needs exactly 2 inputs, but 3 are "
                                             "connected."),
        ("Maximum", {}, [(3, 2), (2, 3)],
         "Maximum needs inputs of the same shape, but got 3 × 2 and 2 × 3."),
        ("Minimum", {}, [(5,), (6,)], "Minimum needs inputs of the same shape, but got 5 and 6."),
        ("Dot", {"axes": 1}, [(4,)], "Dot needs exactly 2 inputs, but 1 is connected."),
    ],
)
def test_merges_that_do_not_fit_say_why(name, params, shapes, words):
    with pytest.raises(LayerError) as ours:
        REGISTRY[name].output(params, shapes)
    assert str(ours.value) == words
    _both_reject(name, params, shapes)


def test_attention_keys_and_values_of_different_lengths_are_rejected_by_keras_too():
    shapes = [(5, 4), (3, 6), (2, 6)]
    with pytest.raises(LayerError, match="must have the same steps"):
        REGISTRY["MultiHeadAttention"].output({"num_heads": 2}, shapes)
    _both_reject("MultiHeadAttention", {"num_heads": 2}, shapes)


@pytest.mark.parametrize("name", ["Add", "Multiply", "Average"])
def test_elementwise_merges_name_every_shape_when_they_differ(name):
    with pytest.raises(LayerError) as two:
        REGISTRY[name].output({}, [(8, 8, 16), (8, 8, 32)])
    assert str(two.value) == (
        f"{name} needs inputs of the same shape, but got 8 × 8 × 16 and 8 × 8 × 32."
    )
    with pytest.raises(LayerError, match=r"got 4, 4, 5 and 4\.$"):
        REGISTRY[name].output({}, [(4,), (4,), (5,), (4,)])
    with pytest.raises(Exception):  # noqa: B017 - Keras raises various types
        _keras_result(name, {}, [(8, 8, 16), (8, 8, 32)])
    assert REGISTRY[name].category == "Merge"
    assert (REGISTRY[name].min_inputs, REGISTRY[name].max_inputs) == (2, 64)
