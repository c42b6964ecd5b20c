"""The Application layer: shapes and counts against keras.applications, building, weights."""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import io
import itertools
import os
import threading
import urllib.error

import keras
import numpy as np
import pytest

from studio.core.base import downloads
from studio.core.build.keras_model import build_keras_model
from studio.core.model.applications import (
    APPLICATION,
    BASES,
    WHOLE_STRIDE,
    WeightsUnavailable,
    build_application,
    cache_dir,
    chosen_part,
    fetch_weights,
)
from studio.core.model.graph import Graph, Node
from studio.core.model.layers import LayerError
from studio.core.model.weights import missing_weights, use_random_weights
from studio.core.project.templates import from_template

ODD_SHAPE = (35, 71, 3)
"""Non-square, and odd so that rounding at each halving shows."""
HDF5 = b"\x89HDF\r\n\x1a\n"
"""The signature every weights file starts with."""


def params(name: str, weights: str = "random", trainable_layers: int = 0,
           output_stride: str = "32", input_stride: str = "1") -> dict:
    return {"name": name, "weights": weights, "trainable_layers": trainable_layers,
            "output_stride": output_stride, "input_stride": input_stride}


def keras_base(name: str, shape, weights=None):
    return getattr(keras.applications, name)(include_top=False, weights=weights,
                                             input_shape=shape, pooling=None)


@pytest.mark.parametrize("name", sorted(BASES))
def test_table_matches_keras(name):
    base = keras_base(name, ODD_SHAPE)
    assert APPLICATION.output(params(name), [ODD_SHAPE]) == (
        tuple(base.output.shape[1:]), base.count_params())
    assert len(base.layers) == BASES[name].layers
    for stride, cut in BASES[name].cuts.items():
        ended = keras.Model(base.input, base.get_layer(cut.layer).output)
        assert APPLICATION.output(params(name, output_stride=str(stride)), [ODD_SHAPE]) == (
            tuple(ended.output.shape[1:]), ended.count_params()), stride
        assert len(ended.layers) == cut.layers
    strides = [*sorted(BASES[name].cuts), WHOLE_STRIDE]
    for start, end in itertools.combinations(strides, 2):
        features = base.get_layer(BASES[name].cuts[start].layer).output
        part = keras.Model(features, base.get_layer(BASES[name].cut(end).layer).output
                           if end != WHOLE_STRIDE else base.output)
        assert APPLICATION.output(
            params(name, output_stride=str(end), input_stride=str(start)),
            [tuple(features.shape[1:])]) == (tuple(part.output.shape[1:]),
                                             part.count_params()), (start, end)
        assert len(part.layers) == chosen_part(
            params(name, output_stride=str(end), input_stride=str(start))).layers
    with pytest.raises(LayerError, match="MobileNetV2 up to stride 8 has 57 layers"):
        APPLICATION.output(params("MobileNetV2", trainable_layers=58, output_stride="8"),
                           [ODD_SHAPE])


@pytest.mark.parametrize(
    ("shape", "words"),
    [((96, 96, 1), "needs colour images (3 channels) of at least 32 × 32 pixels, but its "
                   "input is 96 × 96 × 1."),
     ((31, 64, 3), "at least 32 × 32"),
     ((2048,), "at least 32 × 32")],
)
def test_images_it_cannot_read_are_explained(shape, words):
    with pytest.raises(LayerError) as error:
        APPLICATION.output(params("MobileNetV2"), [shape])
    assert words in str(error.value)


def test_more_trainable_layers_than_the_base_has_is_refused():
    assert APPLICATION.output(params("VGG16", trainable_layers=19), [(32, 32, 3)])
    with pytest.raises(LayerError, match="VGG16 has 19 layers, so at most 19 can be trainable"):
        APPLICATION.output(params("VGG16", trainable_layers=20), [(32, 32, 3)])


def test_build_application_freezes_all_but_the_last_layers():
    model = build_application(params("MobileNetV2", trainable_layers=10), (32, 32, 3), "app")
    base = model.layers[-1]
    assert model.name == "app" and model.count_params() == BASES["MobileNetV2"].params
    assert [layer.trainable for layer in base.layers] == [False] * 144 + [True] * 10
    frozen = build_application(params("MobileNetV2"), ODD_SHAPE)
    assert not frozen.trainable_weights
    assert tuple(frozen.output.shape[1:]) == APPLICATION.output(params("MobileNetV2"),
                                                                [ODD_SHAPE])[0]


def save_legacy_weights(model, path) -> None:
    """Write weights the way keras.applications publishes them (legacy HDF5)."""
    import h5py
    from keras.src.legacy.saving import legacy_h5_format

    with h5py.File(path, "w") as f:
        legacy_h5_format.save_weights_to_hdf5_group(f, model)


PREPROCESS = {
    "MobileNetV2": keras.applications.mobilenet_v2.preprocess_input,
    "ResNet50": keras.applications.resnet50.preprocess_input,
    "VGG16": keras.applications.vgg16.preprocess_input,
    "EfficientNetB0": keras.applications.efficientnet.preprocess_input,
}


@pytest.mark.parametrize("name", sorted(BASES))
def test_imagenet_base_reads_pixels_0_to_1_like_keras_reads_its_own_input(name, monkeypatch):
    """Our base on pixels in 0..1 equals keras.applications with weights="imagenet" on pixels
    in 0..255 put through its preprocess_input, the same weights file loaded by both."""
    shape = (32, 32, 3)
    donor = keras_base(name, shape)
    for layer in donor.layers:  # give EfficientNet's normalization real statistics
        if isinstance(layer, keras.layers.Normalization):
            layer.adapt_mean.assign([0.485, 0.456, 0.406])
            layer.adapt_variance.assign([0.052, 0.050, 0.051])
    path = cache_dir() / BASES[name].weights_name
    path.parent.mkdir(parents=True)
    save_legacy_weights(donor, path)
    monkeypatch.setattr("keras.src.utils.file_utils.get_file", lambda *a, **k: str(path))
    reference = keras_base(name, shape, weights="imagenet")
    ours = build_application(params(name, "imagenet"), shape)
    pixels = np.random.default_rng(0).random((2, *shape), dtype="float32")
    expected = np.asarray(reference(PREPROCESS[name](pixels * 255.0)))
    np.testing.assert_allclose(ours(pixels), expected, rtol=1e-3,
                               atol=1e-4 * np.abs(expected).max())


def test_a_base_ended_at_stride_16_keeps_its_imagenet_weights(monkeypatch):
    shape = (32, 32, 3)
    path = cache_dir() / BASES["MobileNetV2"].weights_name
    path.parent.mkdir(parents=True)
    save_legacy_weights(keras_base("MobileNetV2", shape), path)
    monkeypatch.setattr("keras.src.utils.file_utils.get_file", lambda *a, **k: str(path))
    whole = keras_base("MobileNetV2", shape, weights="imagenet")
    reference = keras.Model(whole.input, whole.get_layer("block_13_expand_relu").output)
    ours = build_application(params("MobileNetV2", "imagenet", 10, output_stride="16"), shape)
    base = ours.layers[-1]
    assert len(base.layers) == BASES["MobileNetV2"].cuts[16].layers
    assert not any(x.trainable for x in base.layers[:-10]) and ours.trainable_weights
    pixels = np.random.default_rng(0).random((2, *shape), dtype="float32")
    expected = np.asarray(reference(PREPROCESS["MobileNetV2"](pixels * 255.0)))
    assert expected.shape == (2, 2, 2, 576)
    np.testing.assert_allclose(ours(pixels), expected, rtol=1e-3,
                               atol=1e-4 * np.abs(expected).max())



def test_a_chain_of_parts_gives_the_base_features_each_computed_once(monkeypatch):
    """Parts from stride 1 to 2, 2 to 4, 4 to 8 and 8 to 16, each loading the ImageNet
    weights, give what the base with those weights gives at stride 16, on an odd-sized
    image."""
    donor = keras_base("MobileNetV2", ODD_SHAPE)
    for layer in donor.layers:  # keep the features from fading out through 13 blocks
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.moving_variance.assign(np.full(layer.moving_variance.shape, 0.1))
    path = cache_dir() / BASES["MobileNetV2"].weights_name
    path.parent.mkdir(parents=True)
    save_legacy_weights(donor, path)
    pixels = np.random.default_rng(0).random((2, *ODD_SHAPE), dtype="float32")
    features = pixels
    for start, end in itertools.pairwise(["1", "2", "4", "8", "16"]):
        part = build_application(params("MobileNetV2", "imagenet", output_stride=end,
                                         input_stride=start), features.shape[1:])
        assert ("input_scaling" in [x.name for x in part.layers]) == (start == "1")
        features = np.asarray(part(features))
    ended = keras.Model(donor.input, donor.get_layer("block_13_expand_relu").output)
    expected = np.asarray(ended(pixels * 2.0 - 1.0))  # as the first part scales them
    assert features.shape == expected.shape == (2, 3, 5, 576) and np.abs(expected).max() > 1
    np.testing.assert_allclose(features, expected, rtol=1e-5, atol=1e-5)


def test_a_part_that_goes_on_from_a_stride_reads_only_features_of_that_stride():
    with pytest.raises(LayerError) as error:
        APPLICATION.output(params("MobileNetV2", output_stride="16", input_stride="8"),
                           [(8, 8, 3)])
    assert str(error.value) == (
        "MobileNetV2 from stride 8 goes on from the features of its layer block_6_expand_relu, "
        "as a MobileNetV2 ended at stride 8 gives them (192 channels, at least 4 × 4), but its "
        "input is 8 × 8 × 3.")
    with pytest.raises(LayerError, match="at least 4 × 4"):
        APPLICATION.output(params("MobileNetV2", output_stride="16", input_stride="8"),
                           [(3, 8, 192)])
    with pytest.raises(LayerError, match="^MobileNetV2 must end at a larger stride than it "
                                         "starts at, but it starts at 8 and ends at 8.$"):
        APPLICATION.output(params("MobileNetV2", output_stride="8", input_stride="8"),
                           [(8, 8, 192)])
    backwards = Graph.from_chain([
        Node("features", "Input", {"shape": [8, 8, 192]}),
        Node("part", "Application", {"name": "MobileNetV2", "output_stride": "2",
                                     "input_stride": "16"})])
    use_random_weights(backwards)  # as when the download fails: no negative layer count
    assert backwards.node("part").params["trainable_layers"] == 0
    with pytest.raises(LayerError, match="^MobileNetV2 from stride 8 to 16 has 63 layers, so "
                                         "at most 63 can be trainable.$"):
        APPLICATION.output(params("MobileNetV2", trainable_layers=64, output_stride="16",
                                  input_stride="8"),
                           [(8, 8, 192)])



def base_in_two_parts() -> Graph:
    """VGG16 (the quickest base to build) on 40 × 56 images in two parts: up to stride 2, and
    from there to stride 4, its last two layers learning."""
    return Graph.from_chain([
        Node("image", "Input", {"shape": [40, 56, 3]}),
        Node("early", "Application", {"name": "VGG16", "weights": "random",
                                      "output_stride": "2"}),
        Node("late", "Application", {"name": "VGG16", "weights": "random",
                                     "trainable_layers": 2, "input_stride": "2",
                                     "output_stride": "4"})])


def test_a_model_with_a_base_in_parts_saves_and_loads_as_checkpoints_do(tmp_path):
    model = build_keras_model(base_in_two_parts(), "parts")
    model.save(tmp_path / "parts.keras")
    again = keras.saving.load_model(tmp_path / "parts.keras", safe_mode=True, compile=False)
    pixels = np.random.default_rng(0).random((2, 40, 56, 3), dtype="float32")
    expected = np.asarray(model(pixels))
    assert expected.shape == (2, 10, 14, 256) and expected.any()
    np.testing.assert_array_equal(again(pixels), expected)


def test_pretrained_batch_normalization_stays_frozen(monkeypatch):
    path = cache_dir() / BASES["MobileNetV2"].weights_name
    path.parent.mkdir(parents=True)
    save_legacy_weights(keras_base("MobileNetV2", (32, 32, 3)), path)
    base = build_application(params("MobileNetV2", "imagenet", 154), (32, 32, 3)).layers[-1]
    norms = [x for x in base.layers if isinstance(x, keras.layers.BatchNormalization)]
    assert norms and not any(x.trainable for x in norms)
    assert all(x.trainable for x in base.layers if x not in norms)


def test_offline_download_fails_plainly_and_leaves_nothing(monkeypatch):
    # A closed port on this machine refuses at once, with or without a network.
    base = BASES["MobileNetV2"]
    unreachable = dataclasses.replace(base, weights_url="http://127.0.0.1:9/" + base.weights_name)
    monkeypatch.setitem(BASES, "MobileNetV2", unreachable)
    progress: list[tuple[int, int]] = []
    with pytest.raises(WeightsUnavailable) as error:
        fetch_weights("MobileNetV2", lambda *a: progress.append(a), threading.Event(),
                      timeout=2)
    assert str(error.value) == (
        "The ImageNet weights for MobileNetV2 could not be downloaded (no network?). "
        "The template still works with random initial weights."
    )
    assert not progress and not list(cache_dir().iterdir())


def test_cached_weights_are_used_without_the_network(monkeypatch):
    monkeypatch.setattr(downloads, "_open_url", pytest.fail)
    path = cache_dir() / BASES["VGG16"].weights_name
    path.parent.mkdir(parents=True)
    path.write_bytes(HDF5 + b"weights")
    assert fetch_weights("VGG16", pytest.fail, threading.Event()) == path


class FakeResponse(io.BytesIO):
    """A download of ``body`` that announces its length (or ``length``), read in small chunks."""

    def __init__(self, body: bytes, length: int | None = None) -> None:
        super().__init__(body)
        self.headers = {"Content-Length": str(len(body) if length is None else length)}


class BrokenResponse(FakeResponse):
    """A download whose connection breaks after the first chunk."""

    def read(self, size: int = -1) -> bytes:
        if self.tell():
            raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
        return super().read(size)


def refused() -> FakeResponse:
    """What opening the URL does when the server answers with an error."""
    raise urllib.error.HTTPError("https://example.org/w.h5", 503, "Service Unavailable", {}, None)


def serve(monkeypatch, body: bytes) -> None:
    monkeypatch.setattr(downloads, "CHUNK", 4)
    monkeypatch.setattr(downloads, "_open_url", lambda url, timeout: FakeResponse(body))


def test_download_reports_progress_and_checks_the_sum(monkeypatch):
    body = HDF5 + b"89"
    serve(monkeypatch, body)
    monkeypatch.setitem(BASES, "VGG16", BASES["VGG16"].__class__(
        **{**BASES["VGG16"].__dict__, "md5": hashlib.md5(body).hexdigest()}))
    progress: list[tuple[int, int]] = []
    path = fetch_weights("VGG16", lambda *a: progress.append(a), threading.Event())
    assert path.read_bytes() == body
    assert progress == [(0, 10), (4, 10), (8, 10), (10, 10)]
    assert missing_weights(from_template("vgg16").graph) == []


def test_damaged_or_cancelled_downloads_leave_nothing(monkeypatch):
    serve(monkeypatch, b"not the real weights")
    with pytest.raises(WeightsUnavailable, match="ResNet50 arrived damaged; try again later"):
        fetch_weights("ResNet50", lambda *a: None, threading.Event())
    stop = threading.Event()
    with pytest.raises(WeightsUnavailable, match="the download was cancelled"):
        fetch_weights("MobileNetV2", lambda *a: stop.set(), stop)
    assert not list(cache_dir().iterdir())


@pytest.mark.parametrize(
    ("response", "why"),
    [(lambda: FakeResponse(HDF5 + b"weights", length=100), "arrived damaged; try again later"),
     (lambda: FakeResponse(b"<html>Not found</html>"), "arrived damaged; try again later"),
     (lambda: BrokenResponse(HDF5 + b"weights"), "could not be downloaded (no network?)"),
     (refused, "could not be downloaded (no network?)")],
    ids=["cut short", "not HDF5", "broken connection", "server error"],
)
def test_downloads_that_are_not_whole_weights_files_leave_nothing(monkeypatch, response, why):
    monkeypatch.setattr(downloads, "CHUNK", 4)
    monkeypatch.setattr(downloads, "_open_url", lambda url, timeout: response())
    with pytest.raises(WeightsUnavailable) as error:
        fetch_weights("MobileNetV2", lambda *a: None, threading.Event())
    assert str(error.value) == (
        f"The ImageNet weights for MobileNetV2 {why}. "
        "The template still works with random initial weights."
    )
    assert not list(cache_dir().iterdir())


def test_weights_that_cannot_be_saved_are_explained(monkeypatch):
    serve(monkeypatch, HDF5 + b"weights")

    def disk_full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(WeightsUnavailable) as error:
        fetch_weights("MobileNetV2", lambda *a: None, threading.Event())
    assert str(error.value) == (
        f"The ImageNet weights for MobileNetV2 could not be saved in {cache_dir()}: "
        f"{os.strerror(errno.ENOSPC)}. The template still works with random initial weights."
    )
    assert not list(cache_dir().iterdir())


def test_a_cached_file_that_is_not_hdf5_is_downloaded_again(monkeypatch):
    path = cache_dir() / BASES["MobileNetV2"].weights_name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"x" * 100)
    serve(monkeypatch, HDF5 + b"weights")
    assert fetch_weights("MobileNetV2", lambda *a: None, threading.Event()) == path
    assert path.read_bytes() == HDF5 + b"weights"


def test_random_weights_unfreeze_the_whole_base():
    graph = from_template("efficientnetb0").graph
    assert missing_weights(graph) == ["EfficientNetB0"]
    use_random_weights(graph)
    assert missing_weights(graph) == []
    (node,) = [n for n in graph.nodes if n.type == "Application"]
    assert APPLICATION.resolved(node.params) == params("EfficientNetB0", "random",
                                                       BASES["EfficientNetB0"].layers)


def test_a_damaged_cached_file_counts_as_missing(tmp_path):
    path = cache_dir() / BASES["VGG16"].weights_name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"<html>captive portal</html>")
    assert missing_weights(from_template("vgg16").graph) == ["VGG16"]
    assert not path.exists()
