"""Transfer learning: the Application layer, a keras.applications base without its classifier.

Shapes and parameter counts come from a small table checked against Keras
(tests/core/test_applications.py), so the editor needs no TensorFlow. The layer takes colour
images with values 0..1, as every Layer Studio pipeline delivers them, and converts them
itself to what its ImageNet weights were trained on. The weights are downloaded once into
``<workspace>/cache``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studio.core.base.paths import workspace
from studio.core.model.layers import LayerError, LayerType, Shape
from studio.core.model.params import Param, format_shape

if TYPE_CHECKING:
    from studio.core.base.downloads import DownloadError

MIN_SIZE = 32
"""The smallest height and width the bases accept."""
WHOLE_STRIDE = 32
"""Every whole base halves the image five times."""
OUTPUT_STRIDES = ("32", "16", "8", "4", "2")
"""How many times smaller than the image a base's features may be: 32 is the whole base; 16
to 2 end it at its last layer of that size."""
INPUT_STRIDES = ("1", "2", "4", "8", "16")
"""How many times smaller than the image an Application's input may be: 1 reads the image; 2
to 16 go on from a base ended there (by another Application), so that a chain of parts gives
the features at every stride, as a U-Net's decoder wants, computing each once."""
REFERENCE_PIXELS = 224 * 224
"""The image size the multiply-add counts in BASES are given for."""
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
"""The first bytes of every weights file."""

_KERAS = "https://storage.googleapis.com/tensorflow/keras-applications/"
_CAFFE_MEAN_RGB = (-123.68, -116.779, -103.939)
"""Minus ImageNet's mean pixel in 0..255, for bases trained on mean-centred BGR images."""


@dataclass(frozen=True)
class Cut:
    """A base ended early: at its layer ``layer``, whose features are ``channels`` deep, with
    ``params`` parameters in ``layers`` layers and ``mega_macs`` multiply-adds at 224 × 224."""

    layer: str
    channels: int
    params: int
    layers: int
    mega_macs: int


@dataclass(frozen=True)
class Base:
    """What Layer Studio knows about one keras.applications base, include_top=False.

    ``input_scale`` and ``input_offset`` (per colour) map pixels in 0..1 to the range the base
    expects.
    ``flip_channels_of`` names the first convolution of a base trained on BGR images: its
    ImageNet kernel is reversed over colours so that it reads RGB. ``variance_factors``
    repeats the extra per-channel scaling keras.applications adds to EfficientNet when it
    loads ImageNet weights itself, folded into its Normalization layer.
    """

    channels: int
    params: int
    layers: int
    mega_macs: int
    ceil_halving: bool
    weights_url: str
    md5: str | None
    input_scale: float
    input_offset: tuple[float, float, float]
    flip_channels_of: str | None = None
    variance_factors: tuple[float, ...] | None = None
    cuts: Mapping[int, Cut] = field(default_factory=dict)
    """The base ended at output stride 16, 8, 4 and 2 (counted with Keras,
    tests/core/test_applications.py). Nothing after one of these layers reads anything
    before it, so the layers between two of them make a part of their own."""

    def cut(self, stride: int) -> Cut:
        """The part of the base that ends at ``stride``; at 32, the whole base (``layer`` "")."""
        if stride == WHOLE_STRIDE:
            return Cut("", self.channels, self.params, self.layers, self.mega_macs)
        return self.cuts[stride]

    @property
    def weights_name(self) -> str:
        """The file name of the ImageNet weights."""
        return self.weights_url.rsplit("/", 1)[-1]


# URLs and MD5 sums as in keras/src/applications; multiply-adds at 224 × 224 from the papers.
BASES: dict[str, Base] = {
    "MobileNetV2": Base(
        channels=1280, params=2_257_984, layers=154, mega_macs=300, ceil_halving=True,
        weights_url=_KERAS + "mobilenet_v2/"
        "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_1.0_224_no_top.h5",
        md5=None, input_scale=2.0, input_offset=(-1.0, -1.0, -1.0),
        cuts={16: Cut("block_13_expand_relu", 576, 616_256, 119, 221),
              8: Cut("block_6_expand_relu", 192, 65_920, 57, 118),
              4: Cut("block_3_expand_relu", 144, 21_040, 30, 87),
              2: Cut("block_1_expand_relu", 96, 3_904, 12, 40)},
    ),
    "ResNet50": Base(
        channels=2048, params=23_587_712, layers=175, mega_macs=3_860, ceil_halving=True,
        weights_url=_KERAS + "resnet/resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5",
        md5="4d473c1dd8becc155b73f8504c6f6626", input_scale=255.0,
        input_offset=_CAFFE_MEAN_RGB, flip_channels_of="conv1_conv",
        cuts={16: Cut("conv4_block6_out", 1024, 8_589_184, 143, 3_124),
              8: Cut("conv3_block4_out", 512, 1_460_096, 81, 1_736),
              4: Cut("conv2_block3_out", 256, 229_760, 39, 786),
              2: Cut("conv1_relu", 64, 9_728, 5, 118)},
    ),
    "VGG16": Base(
        channels=512, params=14_714_688, layers=19, mega_macs=15_350, ceil_halving=False,
        weights_url=_KERAS + "vgg16/vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5",
        md5="6d6bbae143d832006294945121d1f1fc", input_scale=255.0,
        input_offset=_CAFFE_MEAN_RGB, flip_channels_of="block1_conv1",
        cuts={16: Cut("block5_conv3", 512, 14_714_688, 18, 15_347),
              8: Cut("block4_conv3", 512, 7_635_264, 14, 13_959),
              4: Cut("block3_conv3", 256, 1_735_488, 10, 9_335),
              2: Cut("block2_conv2", 128, 260_160, 6, 4_711)},
    ),
    "EfficientNetB0": Base(
        channels=1280, params=4_049_571, layers=237, mega_macs=390, ceil_halving=True,
        weights_url="https://storage.googleapis.com/keras-applications/efficientnetb0_notop.h5",
        md5="50bc09e76180e00e4465e1a485ddc09d", input_scale=255.0,
        input_offset=(0.0, 0.0, 0.0),
        variance_factors=(0.229, 0.224, 0.225),
        cuts={16: Cut("block6a_expand_activation", 672, 945_927, 165, 258),
              8: Cut("block4a_expand_activation", 240, 79_209, 78, 121),
              4: Cut("block3a_expand_activation", 144, 24_345, 49, 87),
              2: Cut("block2a_expand_activation", 96, 4_463, 20, 40)},
    ),
}


@dataclass(frozen=True)
class Part:
    """The layers of a base an Application uses: those after its layer ``start`` ("": from
    the image) up to its layer ``layer`` ("": its last), which read ``in_channels`` and give
    ``channels``, with ``params`` parameters in ``layers`` layers (its own input layer
    included, as Keras counts them) and ``mega_macs`` multiply-adds at 224 × 224."""

    start: str
    layer: str
    in_channels: int
    channels: int
    params: int
    layers: int
    mega_macs: int


def chosen_part(params: dict[str, Any]) -> Part:
    """The part of its base an Application layer (``params`` resolved) uses: the whole base
    up to its output stride less what comes before its input stride."""
    base = BASES[params["name"]]
    end = base.cut(int(params["output_stride"]))
    input_stride = int(params["input_stride"])
    if input_stride == 1:
        return Part("", end.layer, 3, end.channels, end.params, end.layers, end.mega_macs)
    start = base.cuts[input_stride]
    return Part(start.layer, end.layer, start.channels, end.channels, end.params - start.params,
                end.layers - start.layers + 1, end.mega_macs - start.mega_macs)


def _span(params: dict[str, Any]) -> str:
    """How messages name the part of the base: "", " up to stride 8", " from stride 4 to 8"."""
    if params["input_stride"] != "1":
        return f" from stride {params['input_stride']} to {params['output_stride']}"
    return f" up to stride {params['output_stride']}" if params["output_stride"] != "32" else ""


class WeightsUnavailable(RuntimeError):
    """The ImageNet weights of a base could not be had; the message is meant for a person."""


def _output_side(size: int, base: Base, halvings: int) -> int:
    for _ in range(halvings):
        size = (size + 1) // 2 if base.ceil_halving else size // 2
    return size


def _infer(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    name = params["name"]
    base = BASES[name]
    input_stride, output_stride = int(params["input_stride"]), int(params["output_stride"])
    if input_stride >= output_stride:
        raise LayerError(f"{name} must end at a larger stride than it starts at, but it "
                         f"starts at {input_stride} and ends at {output_stride}.")
    part = chosen_part(params)
    shape = inputs[0]
    if input_stride == 1:
        if len(shape) != 3 or shape[2] != 3 or min(shape[:2]) < MIN_SIZE:
            raise LayerError(
                f"{name} needs colour images (3 channels) of at least {MIN_SIZE} × {MIN_SIZE} "
                f"pixels, but its input is {format_shape(shape)}."
            )
    elif (len(shape) != 3 or shape[2] != part.in_channels
          or min(shape[:2]) * input_stride < MIN_SIZE):
        side = -(-MIN_SIZE // input_stride)
        raise LayerError(
            f"{name} from stride {input_stride} goes on from the features of its layer "
            f"{part.start}, as a {name} ended at stride {input_stride} gives them "
            f"({part.in_channels} channels, at least {side} × {side}), but its input is "
            f"{format_shape(shape)}."
        )
    if params["trainable_layers"] > part.layers:
        raise LayerError(f"{name}{_span(params)} has {part.layers} layers, so at most "
                         f"{part.layers} can be trainable.")
    h, w, _ = shape
    halvings = (output_stride // input_stride).bit_length() - 1
    return ((_output_side(h, base, halvings), _output_side(w, base, halvings), part.channels),
            part.params)


def image_pixels(params: dict[str, Any], inputs: list[Shape]) -> int:
    """How many pixels the image an Application's input comes from has: its input's own,
    times the square of its input stride."""
    h, w, _ = inputs[0]
    return h * w * int(params["input_stride"]) ** 2


def flops(params: dict[str, Any], inputs: list[Shape], output: Shape, weights: int) -> int:
    """Estimated operations per sample: the base's multiply-adds scaled by the pixel count."""
    return (2 * chosen_part(params).mega_macs * 10**6 * image_pixels(params, inputs)
            // REFERENCE_PIXELS)


APPLICATION = LayerType(
    "Application",
    "Transfer learning",
    "A network trained on ImageNet, without its classifier, to reuse what it learned. "
    "It takes colour images with values 0..1.",
    (
        Param("name", "choice", "MobileNetV2", "Which pre-trained network to use.",
              choices=tuple(BASES), required=True),
        Param("weights", "choice", "imagenet",
              "'imagenet' starts from weights learned on ImageNet (downloaded once); "
              "'random' starts from scratch.", choices=("imagenet", "random")),
        Param("trainable_layers", "int", 0,
              "How many of the last layers learn; 0 keeps the whole base frozen.", 0, 10_000),
        Param("output_stride", "choice", "32",
              "How many times smaller than the image its features are: 32 uses the whole "
              "base; 16 to 2 end it earlier, at finer features, as a detection head wants.",
              choices=OUTPUT_STRIDES),
        Param("input_stride", "choice", "1",
              "How many times smaller than the image its input is: 1 reads the image; 2 to 16 "
              "go on from the features of the same base ended at that stride, so a chain of "
              "parts hands a U-Net's decoder the features at every stride.",
              choices=INPUT_STRIDES),
    ),
    _infer,
    weights=None,  # those of a whole network, known once Keras builds it
)


def cache_dir() -> Path:
    """Where downloaded weights are kept: ``<workspace>/cache``."""

    return workspace() / "cache"


def cached_weights(name: str) -> Path | None:
    """The cached ImageNet weights of base ``name``, or None if not downloaded yet. A cached
    file that is not HDF5 (damaged somehow) is deleted, so it is downloaded again."""
    path = cache_dir() / BASES[name].weights_name
    if not path.is_file():
        return None
    if _is_hdf5(path):
        return path
    path.unlink()
    return None


def _is_hdf5(path: Path) -> bool:
    """Whether ``path`` starts like an HDF5 file, as weights files do."""
    with path.open("rb") as file:
        return file.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE


def _unavailable(name: str, why: str) -> WeightsUnavailable:
    return WeightsUnavailable(
        f"The ImageNet weights for {name} {why}. "
        "The template still works with random initial weights."
    )


def _why(error: DownloadError) -> str:
    """How a failed download ends the sentence "The ImageNet weights for X …"."""
    if error.reason in ("connection", "http"):
        return "could not be downloaded (no network?)"
    if error.reason == "cancelled":
        return "were not downloaded: the download was cancelled"
    return "arrived damaged; try again later"


def fetch_weights(name: str, on_progress: Callable[[int, int], None], stop: threading.Event,
                  timeout: float = 30.0) -> Path:
    """The ImageNet weights file of base ``name``, downloaded into the cache on first use.

    ``on_progress(done, total)`` reports bytes (total 0 if unknown); setting ``stop`` cancels.
    Raise WeightsUnavailable if there is no network, the download was cancelled or damaged,
    or the file cannot be saved. A cached file that is not HDF5 is downloaded again.
    """
    from studio.core.base.downloads import DownloadError, download  # not at start-up

    cached = cached_weights(name)
    if cached is not None:
        return cached
    base = BASES[name]
    target = cache_dir() / base.weights_name
    try:
        download(base.weights_url, target, on_progress, stop,
                 checksum=("md5", base.md5) if base.md5 else None, verify=_is_hdf5,
                 timeout=timeout)
    except DownloadError as exc:
        raise _unavailable(name, _why(exc)) from exc
    except OSError as exc:
        raise _unavailable(name, f"could not be saved in {target.parent}: "
                                 f"{exc.strerror or exc}") from exc
    return target


def _adapt_imagenet(base: Any, info: Base) -> None:
    """Make a base loaded with ImageNet weights read RGB and match keras.applications."""
    import keras

    if info.flip_channels_of:
        conv = base.get_layer(info.flip_channels_of)
        kernel, *rest = conv.get_weights()
        conv.set_weights([kernel[:, :, ::-1, :], *rest])
    if info.variance_factors:
        norm = next(x for x in base.layers if isinstance(x, keras.layers.Normalization))
        norm.adapt_variance.assign(norm.adapt_variance * keras.ops.array(info.variance_factors))
        norm.finalize_state()


def _set_trainable(base: Any, count: int, pretrained: bool) -> None:
    """Only the last ``count`` layers learn; pre-trained batch normalizations never do."""
    import keras

    first = len(base.layers) - count
    for index, layer in enumerate(base.layers):
        frozen_norm = pretrained and isinstance(layer, keras.layers.BatchNormalization)
        layer.trainable = index >= first and not frozen_norm


def build_application(params: dict[str, Any], input_shape: Shape,
                      name: str = "application") -> Any:
    """A Keras model for an Application layer: input scaling, then the base (or the part of
    it between its input and output strides, without the scaling if it starts later).

    ``params`` must have defaults filled in. ``input_shape`` must be the real one: bases
    built for any size round odd sizes differently. With ImageNet weights they are fetched
    first (raising WeightsUnavailable if that fails), and batch normalizations stay frozen,
    as Keras's fine-tuning guide advises.
    """
    import keras

    info = BASES[params["name"]]
    shape = tuple(input_shape)
    stride = int(params["input_stride"])
    # A part that starts later is cut from a base built for an image whose features at its
    # start have its input's size: every later layer depends only on that size.
    image = (shape[0] * stride, shape[1] * stride, 3)
    base = getattr(keras.applications, params["name"])(
        include_top=False, weights=None, input_shape=image, pooling=None
    )
    pretrained = params["weights"] == "imagenet"
    if pretrained:
        base.load_weights(fetch_weights(params["name"], lambda done, total: None,
                                        threading.Event()))
        _adapt_imagenet(base, info)
    part = chosen_part(params)
    if part.start or part.layer:  # the weights file is the whole base's: cut after loading
        start = base.get_layer(part.start).output if part.start else base.input
        end = base.get_layer(part.layer).output if part.layer else base.output
        base = keras.Model(start, end, name=base.name)
    _set_trainable(base, params["trainable_layers"], pretrained)
    inputs = keras.Input(shape=shape)
    features = inputs if part.start else keras.layers.Rescaling(
        info.input_scale, list(info.input_offset), name="input_scaling")(inputs)
    return keras.Model(inputs, base(features), name=name)
