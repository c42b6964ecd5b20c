"""How a training run reads a dataset's images, whatever labels them: the images' standard
form, the cache (``auto`` resolved), the normalisation and the record of it all (``prep``),
set up once in ``ImageReading`` for the image, detection and segmentation pipelines alike.

``image_datasets`` is the plain case: images with their own labels (classes or numbers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from studio.core.data.augmentation import augmentation_layers
from studio.core.data.image_pipeline import (
    READ_BATCH,
    ImageForm,
    LabelReading,
    normalised,
    split_batches,
)
from studio.core.data.types import LoadedData
from studio.core.project.document import DatasetChoice
from studio.core.tasks.registry import task_for

STATS_IMAGES = 2000
"""At most this many training images give the mean and deviation for ``standardize``."""
AUTO_DISK_BYTES = 2**30
"""The ``auto`` cache keeps decoded images on disk when they take at most this much."""


def resolved_cache(cache: str, loaded: LoadedData, form: ImageForm) -> str:
    """The cache an image dataset uses: ``auto`` is ``disk`` when the decoded images, with the
    labels cached beside them (a segmentation set's masks), take at most AUTO_DISK_BYTES
    (decoding once, as a training database would), else ``none``."""
    if cache != "auto":
        return cache
    decoded = loaded.size("train") + loaded.size("validation") + loaded.size("test")
    channels = form.channels + task_for(loaded.info.task).cached_label_channels
    decoded *= form.size[0] * form.size[1] * channels
    return "disk" if decoded <= AUTO_DISK_BYTES else "none"


def _channel_stats(batches, channels: int) -> tuple[list[float], list[float]]:
    """Per-channel mean and standard deviation (0..255) of batched images."""
    import tensorflow as tf

    def sums(images, _):
        x = tf.cast(images, tf.float64)
        pixels = tf.cast(tf.reduce_prod(tf.shape(x)[:3]), tf.float64)
        return tf.stack([tf.reduce_sum(x, [0, 1, 2]), tf.reduce_sum(x * x, [0, 1, 2]),
                         tf.fill([channels], pixels)])

    total, squares, count = batches.map(sums).reduce(
        tf.zeros([3, channels], tf.float64), lambda a, b: a + b).numpy()
    mean = total / count
    std = np.sqrt(np.maximum(squares / count - mean**2, 0.0))
    return mean.tolist(), std.tolist()


def normalisation(loaded: LoadedData, choice: DatasetChoice, form: ImageForm, seed: int
                   ) -> dict[str, Any]:
    """``scale``, ``offset`` and, for ``standardize``, the statistics they come from."""
    c = form.channels
    if choice.normalization == "unit":
        return {"scale": [1 / 255.0] * c, "offset": [0.0] * c}
    if choice.normalization == "symmetric":
        return {"scale": [1 / 127.5] * c, "offset": [-1.0] * c}
    train = loaded.splits["train"]
    if len(train) > STATS_IMAGES:
        pick = np.random.default_rng(seed).choice(len(train), STATS_IMAGES, replace=False)
        train = train[np.sort(pick)]
    batches = split_batches(loaded, train, form, "none", READ_BATCH, None, train)
    mean, std = _channel_stats(batches, c)
    std = [s if s > 1e-6 else 1.0 for s in std]
    return {
        "scale": [1.0 / s for s in std],
        "offset": [-m / s for m, s in zip(mean, std, strict=True)],
        "statistics": {"mean": mean, "std": std, "images": len(train),
                       "training_images": loaded.size("train")},
    }


def image_preprocessing(loaded: LoadedData, choice: DatasetChoice, form: ImageForm,
                        norm: dict[str, Any]) -> dict[str, Any]:
    """The record of how images of ``form`` become the model's input, normalised as ``norm``
    (from ``normalisation``) says: ``prep``, which inference reads."""
    return {
        "kind": "image",
        "task": loaded.info.task,
        "class_names": list(loaded.info.class_names),
        "sample_shape": [*form.size, form.channels],
        "input_dtype": "float32",
        "image_size": list(form.size),
        "color": "grayscale" if form.channels == 1 else "rgb",
        "resize": form.resize,
        "normalization": choice.normalization,
        **norm,
        "augmentation": asdict(choice.augmentation),
    }


@dataclass(frozen=True)
class ImageReading:
    """A dataset's images as one training run reads every split of them: in ``form``,
    cached as ``cache`` says (resolved), normalised as ``norm`` (``normalisation``) says, in
    batches of ``batch_size``, the training split shuffled with ``seed`` anew each epoch."""

    loaded: LoadedData
    choice: DatasetChoice
    form: ImageForm
    cache: str
    norm: dict[str, Any]
    batch_size: int
    seed: int

    @staticmethod
    def of(loaded: LoadedData, choice: DatasetChoice, batch_size: int, seed: int
           ) -> ImageReading:
        """How ``choice`` reads ``loaded`` (``standardize`` reads training images for it)."""
        form = ImageForm.of(loaded.info, choice)
        return ImageReading(loaded, choice, form, resolved_cache(choice.cache, loaded, form),
                            normalisation(loaded, choice, form, seed), batch_size, seed)

    def images(self, name: str, labels: np.ndarray | None = None,
               label_reading: LabelReading | None = None):
        """Batches of (standard-form images, labels) of the split ``name``: the samples' own
        labels, or ``labels`` (one per sample of the split) in their place, read by
        ``label_reading`` if given."""
        return split_batches(self.loaded, self.loaded.splits[name], self.form, self.cache,
                             self.batch_size, self.seed if name == "train" else None, labels,
                             label_reading)

    def placed_images(self, name: str, label_reading: LabelReading | None = None):
        """Batches of the split's images, each with its place in the split in place of a
        label, which a task gathers its own labels by (boxes), or which ``label_reading``
        reads them by with the images (masks). A cache of the split's files (keyed by those
        files, in order) keeps the places right whatever else the dataset holds."""
        return self.images(name, np.arange(self.loaded.size(name), dtype=np.int32),
                           label_reading)

    def normalised(self, images):
        """Images (uint8, or float 0..255 once augmented) as the model's float32 input."""
        return normalised(images, self.norm["scale"], self.norm["offset"])

    @staticmethod
    def finished(batches, finish: Callable):
        """``batches`` mapped by ``finish``, with tf.data's autotuning off (see README)."""
        import tensorflow as tf

        options = tf.data.Options()
        options.autotune.enabled = False
        return batches.map(finish).with_options(options)

    def preprocessing(self) -> dict[str, Any]:
        """The run's ``prep`` (``image_preprocessing``)."""
        return image_preprocessing(self.loaded, self.choice, self.form, self.norm)


def image_datasets(loaded: LoadedData, choice: DatasetChoice, batch_size: int, seed: int):
    """Training, validation and test (None if empty) batches of (float32 images, labels), and
    the preprocessing record ``prep``.

    The training batches are shuffled with ``seed`` (anew each epoch) and augmented; images
    are normalised last. ``standardize`` takes the mean and deviation per channel of up to
    STATS_IMAGES training images (``prep["statistics"]`` says how many). ``choice.cache``
    applies to image files (see ``resolved_cache``); arrays are in memory already.
    """
    import tensorflow as tf

    reading = ImageReading.of(loaded, choice, batch_size, seed)
    augment = augmentation_layers(choice.augmentation, seed)

    def training_batch(images, labels):
        x = tf.cast(images, tf.float32)
        return reading.normalised(augment(x, training=True)), labels

    def plain_batch(images, labels):
        return reading.normalised(images), labels

    def split(name: str):
        finish = training_batch if name == "train" and augment is not None else plain_batch
        return reading.finished(reading.images(name), finish)

    test = split("test") if loaded.size("test") else None
    return split("train"), split("validation"), test, reading.preprocessing()
