"""Starter projects for the template gallery: model graphs with a title, category and description.

Every image template except the transfer-learning ones fits MNIST-10k as it is, and so does
the 1-D CNN, which reads an image's rows as the steps of a sequence.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from studio.core.base.messages import look_up
from studio.core.model.applications import APPLICATION, BASES, chosen_part
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project, Schedule, TrainingSettings

Layer = tuple[str, dict[str, Any]]

_IMAGE: Layer = ("Input", {"shape": [28, 28, 1]})
_CLASSIFIER: Layer = ("Dense", {"units": 10, "activation": "softmax"})
_RELU: Layer = ("Activation", {"activation": "relu"})
_RELU6: Layer = ("ReLU", {"max_value": 6.0})
_POOL: Layer = ("MaxPooling2D", {"pool_size": 2})
BLANK = "blank"
"""The gallery's name for an empty model: only an Input, fitting the current data."""
TRANSFER_INPUT = [96, 96, 3]
"""The image size of the transfer-learning templates: colour, and large enough for the bases."""


@dataclass(frozen=True)
class Template:
    """A starter model as the gallery shows it; ``build`` makes a fresh graph, ``training``
    fresh training settings (the defaults, unless the template is tuned) and ``dataset`` the
    data it is made for (MNIST-10k, unless it is another task's)."""

    title: str
    category: str
    description: str
    build: Callable[[], Graph]
    training: Callable[[], TrainingSettings] = TrainingSettings
    dataset: Callable[[], DatasetChoice] = DatasetChoice


class _Builder:
    """Adds layers to a graph under fresh ids, wiring each to the inputs it is given."""

    def __init__(self) -> None:
        self.graph = Graph()

    def add(self, layer: Layer, *inputs: str) -> str:
        layer_type, params = layer
        node = Node(self.graph.new_id(layer_type), layer_type, dict(params))
        self.graph.add(node)
        for src in inputs:
            self.graph.connect(src, node.id)
        return node.id

    def chain(self, start: str | None, *layers: Layer) -> str:
        """Add ``layers`` one after another after ``start`` (None: the first one starts)."""
        for layer in layers:
            start = self.add(layer, *([start] if start else []))
        return start


def _chain(*layers: Layer) -> Callable[[], Graph]:
    def build() -> Graph:
        builder = _Builder()
        builder.chain(None, *layers)
        return builder.graph

    return build


def _conv(filters: int, kernel: int = 3, **params: Any) -> Layer:
    return ("Conv2D", {"filters": filters, "kernel_size": kernel, "padding": "same", **params})


def _dense_head(*units: int) -> list[Layer]:
    """Flatten, then for each size a Dense layer with dropout, then the 10-class softmax."""
    hidden = [layer for n in units
              for layer in (("Dense", {"units": n, "activation": "relu"}),
                            ("Dropout", {"rate": 0.5}))]
    return [("Flatten", {}), *hidden, _CLASSIFIER]


def _tuned(epochs: int, cosine: bool = False) -> Callable[[], TrainingSettings]:
    """Training in small batches of 32 at a learning rate of 0.002 for ``epochs``, the rate
    falling along a cosine if ``cosine``."""
    return lambda: TrainingSettings(batch_size=32, learning_rate=0.002, epochs=epochs,
                                    schedule=Schedule(kind="cosine") if cosine else Schedule())


_DETECTOR_NORM: Layer = ("BatchNormalization", {"momentum": 0.9})
"""The small detector's batch normalization: its moving statistics follow the weights within
a few dozen steps (Keras's default of 0.99 takes hundreds, and validation in the first epochs
then reads statistics of weights long gone)."""


def _detector_block(layer_type: str, filters: int, kernel: int = 3, strides: int = 1
                    ) -> list[Layer]:
    """A convolution of ``layer_type`` without bias, batch normalization and ReLU."""
    conv = (layer_type, {"filters": filters, "kernel_size": kernel, "strides": strides,
                         "padding": "same", "activation": "linear", "use_bias": False})
    return [conv, _DETECTOR_NORM, _RELU]


def small_detector(shape: Sequence[int] = (128, 128, 1), classes: int = 10) -> Graph:
    """A small detector from scratch for images of ``shape`` (height, width, channels), as
    for the detection demo set, then a DetectionHead of ``classes`` at a stride of 8.

    Made to learn much from few CPU seconds: a 4 × 4 convolution with stride 4 cuts the image
    into patches (a tenth of the work of two stride-2 3 × 3 convolutions), a separable
    convolution mixes them, a stride-2 convolution widens to 128 channels, and three separable
    3 × 3 convolutions (a depthwise filter and a 1 × 1 mix: an eighth of a full convolution's
    work) let each cell see 68 pixels, more than the largest demo digit. Each is followed by
    batch normalization and ReLU, which let it learn at a high rate. On the demo set, on a
    2-core machine shared with other work (load average 5 to 6), it reached mAP@0.5 0.90 in
    its 6th epoch, 220 to 279 s into training, where three plain stride-2 convolutions without
    normalization had reached 0.51 after 4 epochs (``bench/detection_accuracy.py``)."""
    blocks = [*_detector_block("Conv2D", 32, 4, strides=4),
              *_detector_block("SeparableConv2D", 64),
              *_detector_block("Conv2D", 128, strides=2),
              *[layer for _ in range(3) for layer in _detector_block("SeparableConv2D", 128)]]
    return _chain(("Input", {"shape": list(shape)}), *blocks,
                  ("DetectionHead", {"classes": classes}))()


def small_detector_training() -> TrainingSettings:
    """The small detector's training settings (the gallery's ``training`` for it): Adam at
    0.004 in batches of 32, falling along a cosine over 8 epochs, which on the demo set fit in
    5 minutes on 2 CPU cores."""
    return TrainingSettings(batch_size=32, learning_rate=0.004, epochs=8,
                            schedule=Schedule(kind="cosine"))


def _vgg_block(filters: int) -> list[Layer]:
    return [_conv(filters), _conv(filters), _POOL]


def _conv_bn(filters: int, kernel: int, strides: int = 1, relu: bool = True) -> list[Layer]:
    """A convolution without bias, batch normalization and, if ``relu``, a ReLU."""
    conv = _conv(filters, kernel, strides=strides, activation="linear", use_bias=False)
    return [conv, ("BatchNormalization", {}), *([_RELU] if relu else [])]


def _residual(builder: _Builder, start: str, filters: int, downsample: bool) -> str:
    """Two 3×3 convolutions whose result is added to a shortcut, then a ReLU.

    The shortcut is the block's input itself, or, where the block halves the image and
    changes the number of channels, a 1×1 convolution that brings the input to that shape.
    """
    strides = 2 if downsample else 1
    main = builder.chain(start, *_conv_bn(filters, 3, strides),
                         *_conv_bn(filters, 3, relu=False))
    shortcut = start
    if downsample:
        shortcut = builder.chain(start, *_conv_bn(filters, 1, strides, relu=False))
    return builder.chain(builder.add(("Add", {}), main, shortcut), _RELU)


def _resnet() -> Graph:
    builder = _Builder()
    x = builder.chain(None, _IMAGE, *_conv_bn(32, 3))
    x = _residual(builder, x, 32, downsample=False)
    x = _residual(builder, x, 64, downsample=True)
    x = _residual(builder, x, 128, downsample=True)
    builder.chain(x, ("GlobalAveragePooling2D", {}), _CLASSIFIER)
    return builder.graph


UNET_FILTERS = (16, 32, 64)
"""The U-Net's channels at full, half and quarter resolution (the bottom of the U)."""


def _u(builder: _Builder, x: str, block: Callable[[int], list[Layer]],
       bottom: Callable[[int], list[Layer]] | None = None,
       widths: Sequence[int] = UNET_FILTERS) -> str:
    """A U-Net after ``x`` with ``widths`` channels from full size down to its bottom (each
    level half the size of the one before), returning its full-size features;
    ``block(filters)`` is the layers of a level, ``bottom(filters)`` those of the bottom
    (``block``'s if None).

    Going down, a block per level and max pooling; going up, a transposed convolution
    doubles the size, a Concatenate joins the encoder's features of that level (the skip
    connection) and a block mixes them.
    """
    skips = []
    for filters in widths[:-1]:
        skip = builder.chain(x, *block(filters))
        skips.append(skip)
        x = builder.chain(skip, _POOL)
    x = builder.chain(x, *(bottom or block)(widths[-1]))
    for filters, skip in zip(reversed(widths[:-1]), reversed(skips), strict=True):
        up = builder.chain(x, ("Conv2DTranspose", {"filters": filters, "kernel_size": 2,
                                                   "strides": 2, "padding": "same"}))
        x = builder.chain(builder.add(("Concatenate", {}), up, skip), *block(filters))
    return x


def _unet() -> Graph:
    """A U-Net of two 3×3 convolutions per level; the classification head reads the
    full-resolution features."""
    builder = _Builder()
    x = _u(builder, builder.chain(None, _IMAGE), lambda filters: [_conv(filters)] * 2)
    builder.chain(x, _conv(32, 1), ("GlobalAveragePooling2D", {}), _CLASSIFIER)
    return builder.graph


def _per_pixel_classes(classes: int) -> Layer:
    """The segmenters' head: a 1 × 1 convolution with a softmax over ``classes`` per pixel."""
    return _conv(classes, 1, activation="softmax")


def small_unet_segmenter(shape: Sequence[int] = (64, 64, 1), classes: int = 11,
                         convolutions: int = 1, widths: Sequence[int] = UNET_FILTERS) -> Graph:
    """A small U-Net from scratch that gives every pixel of images of ``shape`` (height and
    width multiples of 4) one of ``classes`` (11 fits the segmentation demo set: background
    and the ten digits).

    Levels of ``widths`` channels (by default three, of 16, 32 and 64; the height and width
    must be multiples of 2 to the power of the levels below the first); each level is
    ``convolutions`` 3 × 3 convolutions without bias, each followed by batch normalization
    (following the weights quickly, as the small detector's does) and ReLU, and the bottom
    two; then a 1 × 1 convolution with a softmax over the classes, at the input's
    resolution. With one convolution per level and three levels each output pixel sees
    32 × 32 pixels of the image. Two per level, as in the original U-Net, do 1.6 times the
    work (0.10 G multiply-adds per 64 × 64 image against 0.06 G);
    ``bench/segmenter_epoch.py`` times an epoch of each."""
    builder = _Builder()
    x = _u(builder, builder.chain(None, ("Input", {"shape": list(shape)})),
           lambda filters: _detector_block("Conv2D", filters) * convolutions,
           lambda filters: _detector_block("Conv2D", filters) * 2, widths)
    builder.chain(x, _per_pixel_classes(classes))
    return builder.graph


def _conv1d(filters: int) -> Layer:
    return ("Conv1D", {"filters": filters, "kernel_size": 3, "padding": "same"})


def _depthwise_separable(filters: int, strides: int) -> list[Layer]:
    """MobileNet's block: a 3×3 depthwise convolution filters each channel on its own, then
    a 1×1 convolution mixes the channels; each is followed by batch normalization and ReLU6."""
    return [("DepthwiseConv2D", {"kernel_size": 3, "strides": strides, "padding": "same",
                                 "activation": "linear", "use_bias": False}),
            ("BatchNormalization", {}), _RELU6,
            _conv(filters, 1, activation="linear", use_bias=False),
            ("BatchNormalization", {}), _RELU6]


def _mobilenet() -> Graph:
    stem = _conv(16, 3, strides=2, activation="linear", use_bias=False)
    separable = ("SeparableConv2D", {"filters": 128, "kernel_size": 3, "padding": "same",
                                     "activation": "linear", "use_bias": False})
    return _chain(_IMAGE, stem, ("BatchNormalization", {}), _RELU6,
                  *_depthwise_separable(32, 1), *_depthwise_separable(64, 2),
                  *_depthwise_separable(64, 1),
                  separable, ("BatchNormalization", {}), _RELU6,
                  ("GlobalAveragePooling2D", {}), ("Dropout", {"rate": 0.2}), _CLASSIFIER)()


_TOKENS = 100
"""The text templates read 100 token ids, as a CSV of texts is read by default."""
_WIDTH = 64
"""Features per token in the transformer template."""
_LAYER_NORM: Layer = ("LayerNormalization", {})
def _transformer() -> Graph:
    """Token embeddings, one self-attention block and a feed-forward block, each added to
    its input and normalised token by token, then the tokens' mean into a classifier."""
    builder = _Builder()
    tokens = builder.chain(None, ("Input", {"shape": [_TOKENS]}),
                           ("Embedding", {"input_dim": 10_000, "output_dim": _WIDTH}))
    attended = builder.add(("MultiHeadAttention", {"num_heads": 4}), tokens)
    x = builder.chain(builder.add(("Add", {}), tokens, attended), _LAYER_NORM)
    fed = builder.chain(x, ("Dense", {"units": 2 * _WIDTH, "activation": "relu"}),
                        ("Dense", {"units": _WIDTH, "activation": "linear"}))
    x = builder.chain(builder.add(("Add", {}), x, fed), _LAYER_NORM)
    builder.chain(x, ("GlobalAveragePooling1D", {}), ("Dropout", {"rate": 0.1}), _CLASSIFIER)
    return builder.graph


def _transfer(name: str) -> Callable[[], Graph]:
    return _chain(
        ("Input", {"shape": list(TRANSFER_INPUT)}),
        ("Application", {"name": name, "weights": "imagenet", "trainable_layers": 0}),
        ("GlobalAveragePooling2D", {}),
        ("Dropout", {"rate": 0.2}),
        _CLASSIFIER,
    )


def _transfer_text(about: str) -> str:
    return (
        f"{about} Here it is a frozen feature extractor, pre-trained on ImageNet's photos of "
        "1,000 kinds of objects, and only the new head learns: global average pooling, dropout "
        "and a 10-class softmax layer. To fine-tune, raise the base's trainable layers. The "
        "ImageNet weights are downloaded once; without a network the base starts from random "
        "weights. The model reads 96 × 96 colour images, so it does not fit MNIST-10k's small "
        "grey digits: the Input shows this until image-folder datasets arrive."
    )


TEMPLATES: dict[str, Template] = {
    "mlp": Template(
        "Multi-layer perceptron", "Basics",
        "The simplest network for images: it unrolls each 28 × 28 digit into 784 numbers and "
        "passes them through one hidden layer of 128 neurons to 10 outputs, one per digit. A "
        "good first model; it reaches about 95% on MNIST-10k in a few seconds.",
        _chain(_IMAGE, ("Flatten", {}), ("Dense", {"units": 128, "activation": "relu"}),
               ("Dropout", {"rate": 0.2}), _CLASSIFIER),
    ),
    "cnn": Template(
        "Small CNN", "Basics",
        "A small convolutional network, the app's demo. Convolutions slide little filters "
        "over the image to find strokes and curves, and pooling shrinks the image between "
        "them, so later layers see larger shapes. Two dense layers then decide the digit. It "
        "learns in small batches of 32 with a learning rate that falls along a cosine, and "
        "reaches about 98% on MNIST-10k in five epochs.",
        _chain(_IMAGE,
               _conv(32), ("MaxPooling2D", {"pool_size": 2}),
               _conv(64), ("MaxPooling2D", {"pool_size": 2}),
               _conv(64), ("Flatten", {}),
               ("Dense", {"units": 64, "activation": "relu"}), _CLASSIFIER),
        _tuned(5, cosine=True),
    ),
    "lenet5": Template(
        "LeNet-5", "Classic architectures",
        "Yann LeCun's network from 1998, one of the first convolutional networks, built to "
        "read handwritten digits on bank cheques. Two convolutions with average pooling, then "
        "three dense layers, all with tanh activations as in the original.",
        _chain(_IMAGE,
               _conv(6, 5, activation="tanh"), ("AveragePooling2D", {"pool_size": 2}),
               ("Conv2D", {"filters": 16, "kernel_size": 5, "activation": "tanh"}),
               ("AveragePooling2D", {"pool_size": 2}), ("Flatten", {}),
               ("Dense", {"units": 120, "activation": "tanh"}),
               ("Dense", {"units": 84, "activation": "tanh"}), _CLASSIFIER),
    ),
    "alexnet": Template(
        "AlexNet (small)", "Classic architectures",
        "The network that won ImageNet in 2012 and started the deep-learning boom, scaled "
        "down for 28 × 28 digits: five convolutions with overlapping 3 × 3 max pooling, batch "
        "normalization where the original normalized its responses, and two large dense "
        "layers with dropout, which AlexNet made popular against overfitting.",
        _chain(_IMAGE,
               _conv(32, 5), ("BatchNormalization", {}),
               ("MaxPooling2D", {"pool_size": 3, "strides": 2}),
               _conv(64, 5), ("BatchNormalization", {}),
               ("MaxPooling2D", {"pool_size": 3, "strides": 2}),
               _conv(96), _conv(96), _conv(64),
               ("MaxPooling2D", {"pool_size": 3, "strides": 2}),
               *_dense_head(256, 256)),
    ),
    "vgg": Template(
        "VGG (small)", "Classic architectures",
        "VGG (Oxford, 2014) showed that depth matters and that small filters suffice: it "
        "repeats one simple block, two 3 × 3 convolutions followed by 2 × 2 max pooling, "
        "doubling the number of filters each time the image halves. This version has three "
        "such blocks and a dense layer with dropout.",
        _chain(_IMAGE, *_vgg_block(32), *_vgg_block(64), *_vgg_block(128),
               *_dense_head(256)),
    ),
    "resnet": Template(
        "ResNet (small)", "Classic architectures",
        "ResNet (Microsoft, 2015) adds each block's input to its output through a skip "
        "connection (the Add layers), so a block only learns a correction and very deep "
        "networks still train. Where a block halves the image and doubles its channels, a "
        "1 × 1 convolution reshapes the shortcut to match. Three blocks, then global average "
        "pooling instead of Flatten.",
        _resnet,
    ),
    "unet": Template(
        "U-Net (small)", "Classic architectures",
        "U-Net (Freiburg, 2015) was made to outline cells in microscope images, one answer "
        "per pixel. Its encoder goes down the U: pairs of 3 × 3 convolutions, with max "
        "pooling halving the image each time. Its decoder comes back up: transposed "
        "convolutions double the image again, and at each size a Concatenate joins the "
        "encoder's features of that size (the skip connections), so fine detail lost by "
        "pooling comes back. Here it sorts digits: a 1 × 1 convolution, global average "
        "pooling and a 10-class softmax read the full-size features. When segmentation "
        "arrives, a per-pixel head replaces those last three layers.",
        _unet,
        _tuned(6, cosine=True),
    ),
    "mobilenet_small": Template(
        "MobileNet-style (small)", "Classic architectures",
        "MobileNet (Google, 2017) made convolutional networks small and fast enough for "
        "phones. A normal convolution filters and mixes channels at once; MobileNet splits "
        "that in two: a depthwise convolution filters each channel on its own, then a 1 × 1 "
        "convolution mixes the channels, for a fraction of the weights and work. After a "
        "strided stem that halves the image, three such blocks (each with batch "
        "normalization and ReLU capped at 6, ReLU6) and a SeparableConv2D, which is the "
        "same pair in one layer, lead to global average pooling, dropout and the classifier.",
        _mobilenet,
        _tuned(5),
    ),
    "cnn1d": Template(
        "1-D CNN for sequences", "Sequences",
        "A convolutional network for sequences: each Conv1D slides its filters along the "
        "steps, finding short patterns wherever they occur, and max pooling halves the "
        "steps between blocks. Global average pooling over the steps then feeds the "
        "classifier. Here it reads each 28 × 28 digit row by row: the Reshape makes every "
        "image row a time step of 28 values. It suits signals too, such as sensor readings "
        "or audio, from a CSV table: set the Input (and Reshape) to the steps and values "
        "of one sample.",
        _chain(_IMAGE, ("Reshape", {"target_shape": [28, 28]}),
               _conv1d(32), _conv1d(32), ("MaxPooling1D", {"pool_size": 2}),
               _conv1d(64), _conv1d(64), ("MaxPooling1D", {"pool_size": 2}),
               ("GlobalAveragePooling1D", {}), ("Dense", {"units": 64, "activation": "relu"}),
               ("Dropout", {"rate": 0.3}), _CLASSIFIER),
        _tuned(8),
    ),
    "lstm_text": Template(
        "LSTM text classifier", "Text",
        "Sorts a text into one of 10 classes, such as topics. The text arrives as a sequence "
        "of 100 token ids, whole numbers that each stand for a word. The Embedding layer turns "
        "every id into a learned vector, and the LSTM reads those vectors in order, keeping a "
        "memory of what matters. Pick a CSV of texts and labels in the Data view: its "
        "texts are turned into token ids with a vocabulary of 10,000 words.",
        _chain(("Input", {"shape": [100]}),
               ("Embedding", {"input_dim": 10_000, "output_dim": 64}),
               ("LSTM", {"units": 64}), ("Dropout", {"rate": 0.5}), _CLASSIFIER),
    ),
    "transformer_text": Template(
        "Tiny transformer text classifier", "Text",
        "Sorts a text of 100 token ids into one of 10 classes with one transformer block, "
        "the building block of today's language models. The Embedding turns every id into a "
        "vector of 64 numbers; in the MultiHeadAttention layer every word then looks at every "
        "other word, with four heads each looking for different links, and a feed-forward "
        "pair of Dense layers works on each word. Each part is added to its input (a skip "
        "connection) and normalised, and the words' average decides the class. It has no "
        "position embedding, so it sees which words occur together but not their order. "
        "Pick a CSV of texts and labels in the Data view.",
        _transformer,
    ),
    "mobilenetv2": Template(
        "MobileNetV2 transfer learning", "Transfer learning",
        _transfer_text("MobileNetV2 (Google, 2018) is a light network made for phones: 2.3 "
                       "million parameters, fast even without a graphics card."),
        _transfer("MobileNetV2"),
    ),
    "resnet50": Template(
        "ResNet50 transfer learning", "Transfer learning",
        _transfer_text("ResNet50 is the 50-layer ResNet (2015) with skip connections: 23.6 "
                       "million parameters, a strong and widely used feature extractor."),
        _transfer("ResNet50"),
    ),
    "vgg16": Template(
        "VGG16 transfer learning", "Transfer learning",
        _transfer_text("VGG16 (2014) is 13 convolutions in five blocks: simple to understand, "
                       "but 14.7 million parameters and slow without a graphics card."),
        _transfer("VGG16"),
    ),
    "efficientnetb0": Template(
        "EfficientNetB0 transfer learning", "Transfer learning",
        _transfer_text("EfficientNetB0 (Google, 2019) balances depth, width and image size "
                       "for high accuracy with 4 million parameters."),
        _transfer("EfficientNetB0"),
    ),
}


def from_template(name: str) -> Project:
    """A new project from the template called ``name``; raise KeyError if there is none."""
    template = look_up(TEMPLATES, name, "template", KeyError)
    return Project(name=template.title, graph=template.build(), training=template.training(),
                   dataset=template.dataset())


def blank_project(dataset: DatasetChoice, input_shape: Sequence[int] | None) -> Project:
    """A new project on ``dataset`` whose model is only an Input of ``input_shape`` (the
    shape of the dataset's samples; None, while they are unknown: MNIST-10k's)."""
    shape = list(input_shape) if input_shape else list(_IMAGE[1]["shape"])
    return Project(name="Untitled", graph=_chain(("Input", {"shape": shape}))(),
                   dataset=copy.deepcopy(dataset))


def demo_project() -> Project:
    """The project the app opens on: the small CNN on MNIST-10k."""
    return from_template("cnn")


DETECTOR_BACKBONE_STRIDE = "16"
"""Where the MobileNetV2 detector ends its base: at its last layer 16 times smaller than the
image (block 13's expansion, 576 channels), as detectors commonly read it."""


def mobilenetv2_detector(shape: Sequence[int] = (128, 128, 3), classes: int = 10) -> Graph:
    """A detector on a MobileNetV2 base for colour images of ``shape``: the base, with ImageNet
    weights and all its layers learning, ended at stride 16; a 1 × 1 convolution narrows its
    576 channels to 128 and a stride-2 transposed convolution brings the map to stride 8, fine
    enough for objects a tenth of the image wide, before a DetectionHead of ``classes``."""
    backbone = ("Application", {"name": "MobileNetV2", "weights": "imagenet",
                                "trainable_layers": BASES["MobileNetV2"].cuts[16].layers,
                                "output_stride": DETECTOR_BACKBONE_STRIDE})
    upsample = ("Conv2DTranspose", {"filters": 64, "kernel_size": 3, "strides": 2,
                                    "padding": "same", "activation": "relu"})
    return _chain(("Input", {"shape": list(shape)}), backbone,
                  _conv(128, 1, activation="relu"), upsample,
                  ("DetectionHead", {"classes": classes}))()


def _demo(task: str, color: str = "auto") -> Callable[[], DatasetChoice]:
    """The bundled demo set of ``task`` (the DatasetChoice source of that name without a
    path), its grey images read with ``color``."""
    return lambda: DatasetChoice(source=task, task=task, color=color)


_DETECTION = "Detection"
TEMPLATES.update({
    "small_detector": Template(
        "Small detector (from scratch)", _DETECTION,
        "Finds the digits in the detection demo set's 128 × 128 images and draws a box "
        "around each. Strided convolutions shrink the image to a coarse map of cells; for "
        "each cell and class the DetectionHead says how likely an object's centre lies "
        "there, and how large the object is. Every weight starts random, and it trains on "
        "two CPU cores in minutes.",
        small_detector,
        training=small_detector_training,
        dataset=_demo("detection"),
    ),
    "mobilenetv2_detector": Template(
        "MobileNetV2 detector", _DETECTION,
        "A detector on MobileNetV2 (Google, 2018), a network pre-trained on ImageNet's "
        "photos. Its first 119 layers, ending where features are 16 times smaller than the "
        "image, turn the picture into 576 features per cell; a 1 × 1 convolution narrows "
        "them, a transposed convolution doubles the map to 16 × 16, and the DetectionHead "
        "finds the objects. The ImageNet weights are downloaded once; without a network the "
        "base starts from random weights instead, which learns, but needs more data and "
        "time. It reads the demo set's grey images as colour, as the base expects.",
        mobilenetv2_detector,
        dataset=_demo("detection", "rgb"),
    ),
})


UNET_SKIP_STRIDES = (2, 4, 8, 16)
"""Where the MobileNetV2 U-Net's encoder hands features to its decoder: its base's last
layers at 1/2, 1/4, 1/8 and 1/16 of the image (block 1, 3, 6 and 13's expansions), as in
TensorFlow's segmentation tutorial."""
UNET_DECODER_FILTERS = (96, 64, 48, 32, 16)
"""The MobileNetV2 U-Net's channels as its decoder comes up, at 1/16 to full size."""


def mobilenetv2_unet_segmenter(shape: Sequence[int] = (64, 64, 3), classes: int = 11) -> Graph:
    """A U-Net whose encoder is MobileNetV2 with ImageNet weights, all its layers learning,
    for colour images of ``shape`` (height and width multiples of 32, from 32) and
    ``classes`` per pixel.

    The base is a chain of five Application parts, each going on from the one before at
    the stride it ended (1/2 to 1/32 of the image), so that the base runs once and each
    part's features also feed the decoder. Coming up, as in TensorFlow's segmentation
    tutorial but narrower, a 3 × 3 transposed convolution with stride 2, batch normalization
    and ReLU double the map, and a Concatenate joins the encoder's features of that size; a
    last one brings the map to the input's size, and a 1 × 1 convolution with a softmax over
    the classes decides each pixel."""
    builder = _Builder()
    x = builder.chain(None, ("Input", {"shape": list(shape)}))
    skips = []
    for start, end in zip((1, *UNET_SKIP_STRIDES), (*UNET_SKIP_STRIDES, 32), strict=True):
        params = {"name": "MobileNetV2", "weights": "imagenet", "input_stride": str(start),
                  "output_stride": str(end)}
        x = builder.add(("Application", {**params, "trainable_layers": _part_layers(params)}),
                        x)
        skips.append(x)
    for filters, skip in zip(UNET_DECODER_FILTERS, [*reversed(skips[:-1]), None], strict=True):
        x = builder.chain(x, *_detector_block("Conv2DTranspose", filters, strides=2))
        if skip:
            x = builder.add(("Concatenate", {}), x, skip)
    builder.chain(x, _per_pixel_classes(classes))
    return builder.graph


def _part_layers(params: dict[str, Any]) -> int:
    """How many layers the part of its base an Application of ``params`` uses has."""
    return chosen_part(APPLICATION.resolved(params)).layers


SEGMENTER_WIDTHS = (8, 16, 32, 128)
"""The small U-Net template's channels from full size down to its bottom at an eighth of the
image, where each pixel sees all of a demo digit, however large: to tell a digit's ink
from another's, the work is at the bottom, while the full-size levels only draw its outline.
On the segmentation demo set the three levels of 16 to 64 channels reached a validation mean
IoU of 0.43 after 2 epochs, four of 16 to 128 0.57 (both in batches of 32), and these four,
a third of the work per image (0.03 G multiply-adds), 0.68 in batches of 16
(``bench/segmentation_accuracy.py``)."""


def small_unet_template() -> Graph:
    """The gallery's small U-Net: ``small_unet_segmenter`` of SEGMENTER_WIDTHS."""
    return small_unet_segmenter(widths=SEGMENTER_WIDTHS)


def small_unet_training() -> TrainingSettings:
    """The small U-Net's training settings (the gallery's ``training`` for it): Adam at 0.004
    in batches of 16, falling along a cosine over 5 epochs, on the sum of the pixel
    cross-entropy and the Dice loss, which weighs each class's overlap alike however few its
    pixels (the digits' ink is about a tenth of the demo set's pixels). On the demo set they
    fit in 5 minutes on 2 CPU cores; batches of 16 rather than 32 take twice the steps for
    the same work, and the model learns faster in them."""
    return TrainingSettings(batch_size=16, learning_rate=0.004, epochs=5,
                            schedule=Schedule(kind="cosine"), loss="cross_entropy_dice")


def mobilenetv2_unet_training() -> TrainingSettings:
    """The MobileNetV2 U-Net's training settings: Adam at 0.001, gentler than from scratch
    so the ImageNet features are adjusted rather than overwritten, in batches of 32 falling
    along a cosine over 8 epochs, on the cross-entropy and Dice loss."""
    return TrainingSettings(batch_size=32, learning_rate=0.001, epochs=8,
                            schedule=Schedule(kind="cosine"), loss="cross_entropy_dice")


_SEGMENTATION = "Segmentation"
TEMPLATES.update({
    "small_unet_segmenter": Template(
        "Small U-Net (segmentation)", _SEGMENTATION,
        "Colours every pixel of the segmentation demo set's 64 × 64 images by what it shows: "
        "the background or the ink of one of the ten digits. Its encoder goes down the U, "
        "a 3 × 3 convolution per size with max pooling halving the image, to an eighth of "
        "its size, where each pixel sees a whole digit; its decoder comes back up with "
        "transposed convolutions, and at each size a Concatenate joins the encoder's "
        "features of that size (the skip connections), so the outlines stay sharp. "
        "A 1 × 1 convolution with a softmax then gives each pixel its class. Every weight "
        "starts random, and it trains on two CPU cores in minutes.",
        small_unet_template,
        training=small_unet_training,
        dataset=_demo("segmentation"),
    ),
    "mobilenetv2_unet_segmenter": Template(
        "MobileNetV2 U-Net (segmentation)", _SEGMENTATION,
        "A U-Net whose encoder is MobileNetV2 (Google, 2018), a network pre-trained on "
        "ImageNet's photos, in five parts: each goes on where the one before ended, halving "
        "the image, and hands its features to the decoder too. The decoder doubles the map "
        "with transposed convolutions back to the image's size, joining the encoder's "
        "features at each size, and a 1 × 1 convolution with a softmax gives each pixel its "
        "class. The ImageNet weights are downloaded once; without a network the base starts "
        "from random weights instead, which learns, but needs more data and time. It reads "
        "the demo set's grey images as colour, as the base expects.",
        mobilenetv2_unet_segmenter,
        training=mobilenetv2_unet_training,
        dataset=_demo("segmentation", "rgb"),
    ),
})
