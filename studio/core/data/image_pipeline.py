"""Images for Keras: decode, resize, cache and normalise with ``tf.data``.

Every image, from an array or a file, is first brought to one *standard form*: uint8 at the
chosen size and number of channels. Batches of standard-form images are then cast to float
(0..255), augmented (training only) and normalised as ``x * scale + offset`` per channel
(a training run chooses the form, cache and normalisation in ``data.image_reading``).
Inference (``preprocess_images``, ``preprocess_image_files``) runs the very same functions,
driven by the ``prep`` dictionary saved with each run.

TensorFlow decodes PNG (16-bit ones scaled to 0..255), JPEG and GIF (the first frame); Pillow
decodes the others: TIFF, BMP (TensorFlow reads palette BMPs as raw indices) and WebP
(TensorFlow 2.21 corrupts memory on animated WebP). Files are told apart by their first byte,
unless all of them are named .png (or all .jpg/.jpeg).

Streaming files is costly mostly per file, not per pixel: each batch of files is read in one
loop with no branch inside (see ``read_images``).
"""

from __future__ import annotations

import hashlib
import io
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.paths import workspace
from studio.core.data.types import ArraySamples, DataError, DatasetInfo, FileSamples, LoadedData
from studio.core.project.document import DatasetChoice
from studio.core.tasks.registry import task_for

DECODE_CALLS = 2
"""Batches of files (or files, when caching) read at once: fixed, as autotuning stalls
epochs on small machines."""
READ_BATCH = 256
"""Images per batch when reading outside training: for statistics and for inference."""
CACHE_CHUNK = 256
"""Images per record of a cache."""
DISK_SHUFFLE_BYTES = 256 * 2**20
"""Memory for shuffling images read back from a disk cache (the order is only partly mixed
when the training images need more)."""
ABANDONED_SECONDS = 24 * 3600
"""A disk cache left half-written this long ago belongs to a run that was interrupted."""
CACHE_VERSION = 2
_DECODER_BY_FIRST_BYTE = np.zeros(256, np.int32)
_DECODER_BY_FIRST_BYTE[[0x89, 0xFF, ord("G")]] = [1, 2, 3]
"""The branch of ``decode_image`` for a file's first byte: that of PNG, JPEG and GIF files,
or 0 for Pillow."""
_GREY_WEIGHTS = (0.299, 0.587, 0.114)


@dataclass(frozen=True)
class LabelReading:
    """Labels a task reads from files of its own with the images (a mask per image): read in
    the same map as the images, before the cache, so that they are cached with them and
    nothing is read before a batch is.

    ``read`` turns a batch of the labels the pipeline is given (int32, each sample's place)
    into the batch's labels; ``sample_bytes``: one sample's labels read, which a shuffle
    buffer holds beside its image; ``key()``: what the labels are read from (their files and
    how they are decoded), which a disk cache is keyed by beside the images."""

    read: Callable
    sample_bytes: int
    key: Callable[[], str]


@dataclass(frozen=True)
class ImageForm:
    """The standard form of every image: ``size`` (height, width), channels and resize mode."""

    size: tuple[int, int]
    channels: int
    resize: str

    @staticmethod
    def of(info: DatasetInfo, choice: DatasetChoice) -> ImageForm:
        """The form the choice reads the dataset in (``describe`` already sized it)."""
        height, width, channels = info.sample_shape
        return ImageForm((height, width), channels, choice.resize)

    @staticmethod
    def from_prep(prep: dict[str, Any]) -> ImageForm:
        """The form recorded in a run's preprocessing."""
        height, width = prep["image_size"]
        return ImageForm((height, width), {"grayscale": 1, "rgb": 3}[prep["color"]],
                         prep["resize"])


def _pillow_decode(contents: bytes) -> np.ndarray:
    """A TIFF, BMP or WebP as uint8 H × W × C (1 or 3 channels; 16-bit grey scaled to 0..255,
    alpha dropped, the first frame of several)."""
    from PIL import Image

    with Image.open(io.BytesIO(contents)) as image:
        if image.mode.startswith("I"):
            values = np.asarray(image, dtype=np.float64)
            grey = np.rint(np.clip(values, 0, 65535) / 257.0).astype(np.uint8)
            return grey[..., np.newaxis]
        mode = "L" if image.mode in ("1", "L", "LA", "La", "F") else "RGB"
        pixels = np.asarray(image.convert(mode))
    return pixels.reshape(*pixels.shape[:2], -1)


def _decode_png(contents):
    """PNG bytes as uint8, 16-bit ones scaled with rounding (TensorFlow drops the low byte)."""
    import tensorflow as tf

    values = tf.cast(tf.io.decode_png(contents, dtype=tf.uint16), tf.float32)
    return tf.cast(tf.round(values / 257.0), tf.uint8)


def _decode_jpeg(contents):
    """JPEG bytes as uint8, with the accurate DCT (the fast default is off by up to 50 levels
    on fine detail)."""
    import tensorflow as tf

    return tf.io.decode_jpeg(contents, dct_method="INTEGER_ACCURATE")


def decode_image(contents):
    """Encoded image bytes (a scalar string tensor) as uint8 H × W × C, C from 1 to 4;
    16-bit images are scaled to 0..255."""
    import tensorflow as tf

    def with_pillow():
        image = tf.numpy_function(_pillow_decode, [contents], tf.uint8, stateful=False)
        image.set_shape([None, None, None])
        return image

    first = tf.io.decode_raw(tf.strings.substr(contents, 0, 1), tf.uint8, fixed_length=1)[0]
    kind = tf.gather(_DECODER_BY_FIRST_BYTE, tf.cast(first, tf.int32))
    return tf.switch_case(kind, [with_pillow, lambda: _decode_png(contents),
                                 lambda: _decode_jpeg(contents),
                                 lambda: tf.io.decode_gif(contents)[0]])


def decoder_for(paths: list[Path]) -> Callable:
    """How to decode these files: by their content (``decode_image``), or, when all are named
    .png (or all .jpg/.jpeg), straight with that format's decoder, which spares a branch per
    file (TensorFlow's decoders also read the other one of the two formats)."""
    suffixes = {path.suffix.lower() for path in paths}
    if suffixes == {".png"}:
        return _decode_png
    if suffixes and suffixes <= {".jpg", ".jpeg"}:
        return _decode_jpeg
    return decode_image


def _with_channels(x, channels: int):
    """Float images with 1 to 4 channels as ``channels`` (1 or 3); alpha is dropped.

    Grey is 0.299 R + 0.587 G + 0.114 B. Without a known channel count this holds no branch:
    the channels are first gathered as RGB (grey repeated).
    """
    import tensorflow as tf

    known = x.shape[-1]
    if known is not None and known < 3:
        return x[..., :1] if channels == 1 else tf.repeat(x[..., :1], 3, axis=-1)
    if known is not None:
        rgb = x[..., :3]
    else:
        count = tf.shape(x)[-1]
        rgb = tf.gather(x, tf.minimum([0, 1, 2], count // 3 * 2), axis=-1)
    if channels == 3:
        return rgb
    return tf.reduce_sum(rgb * _GREY_WEIGHTS, axis=-1, keepdims=True)


def _centre_crop(x, height: int, width: int):
    """The largest centred window of float images with the aspect ratio height : width."""
    import tensorflow as tf

    shape = tf.shape(x)
    h, w = shape[-3], shape[-2]
    crop_h = tf.clip_by_value(tf.cast(tf.round(tf.cast(w, tf.float32) * height / width),
                                      tf.int32), 1, h)
    crop_w = tf.clip_by_value(tf.cast(tf.round(tf.cast(h, tf.float32) * width / height),
                                      tf.int32), 1, w)
    return tf.image.crop_to_bounding_box(x, (h - crop_h) // 2, (w - crop_w) // 2,
                                         crop_h, crop_w)


def _fitted(x, form: ImageForm):
    """Float images resized to ``form.size``: squashed, centre-cropped or padded with zeros
    (antialiased; at the same size each mode leaves the images as they are)."""
    import tensorflow as tf

    height, width = form.size
    known = x.shape[-3:-1]
    if known.is_fully_defined() and tuple(known) == form.size:
        return x
    if form.resize == "pad":
        return tf.image.resize_with_pad(x, height, width, antialias=True)
    source = _centre_crop(x, height, width) if form.resize == "crop" else x
    return tf.image.resize(source, form.size, antialias=True)


def _converted(images, form: ImageForm):
    """uint8 images with other sizes or channels in the standard form."""
    import tensorflow as tf

    x = _fitted(_with_channels(tf.cast(images, tf.float32), form.channels), form)
    return tf.cast(tf.round(tf.clip_by_value(x, 0.0, 255.0)), tf.uint8)


def standard_images(images, form: ImageForm):
    """uint8 images (one H × W × C or a batch) in the standard form: uint8 at the form's
    size and channels. Images already in it pass untouched."""
    import tensorflow as tf

    images = tf.convert_to_tensor(images, tf.uint8)
    target = [*form.size, form.channels]
    known = images.shape[-3:]
    if known.is_fully_defined():
        out = images if known.as_list() == target else _converted(images, form)
    else:
        same = tf.reduce_all(tf.shape(images)[-3:] == target)
        out = tf.cond(same, lambda: images, lambda: _converted(images, form))
    return tf.ensure_shape(out, [*images.shape[:-3], *target])


def normalised(images, scale: list[float], offset: list[float]):
    """Standard-form images as the model's float32 input: ``x * scale + offset`` per channel."""
    import tensorflow as tf

    return tf.cast(images, tf.float32) * scale + offset


def file_stats(paths: list[Path]) -> list[list[Any]]:
    """Each file's name, size and modification time: what tells that it changed."""
    files = []
    for path in paths:
        stat = path.stat()
        files.append([str(path), stat.st_size, stat.st_mtime_ns])
    return files


def _file_key(paths: list[Path], form: ImageForm, labels: str = "") -> str:
    """A hash of the files (``file_stats``), the form they are read in and the ``key()`` of
    labels read with them, if any (without, the key of the images alone, as caches already
    written were keyed)."""
    text = json.dumps([CACHE_VERSION, asdict(form), file_stats(paths), *filter(None, [labels])])
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def disk_cache_prefix(paths: list[Path], form: ImageForm, labels: str = "") -> str:
    """Where ``tf.data`` caches these files read in this form (with the labels whose
    ``key()`` is ``labels``), under the workspace.

    A complete cache is reused; otherwise each pipeline writes under a fresh name, so a cache
    an interrupted run left half-written (with its lock file) never blocks the next one, and
    such leftovers are removed once they are a day old.
    """
    folder = workspace() / "cache" / f"images-{_file_key(paths, form, labels)}"
    folder.mkdir(parents=True, exist_ok=True)
    complete = sorted(folder.glob("*.index"), key=lambda p: p.stat().st_mtime)
    complete = [p for p in complete if "_" not in p.name]  # name_0.* are shards being written
    if complete:
        return str(complete[-1].with_suffix(""))
    for part in folder.glob("*_*"):
        try:
            if time.time() - part.stat().st_mtime > ABANDONED_SECONDS:
                part.unlink()
        except OSError:
            continue
    return str(folder / uuid.uuid4().hex)


def read_images(paths, form: ImageForm, decode: Callable = decode_image):
    """A batch of image files (a string vector) in the standard form.

    The files are decoded in a loop; when all come out in the standard form already (as in
    most folders) they are stacked as they are, else each is converted. Either way, the loop
    itself holds no branch: a branch per file costs more than decoding a small image.
    """
    import tensorflow as tf

    n = tf.shape(paths)[0]
    target = [*form.size, form.channels]

    def read(i, pixels, shapes):
        image = decode(tf.io.read_file(paths[i]))
        return i + 1, pixels.write(i, tf.reshape(image, [-1])), shapes.write(i, tf.shape(image))

    _, pixels, shapes = tf.while_loop(
        lambda i, *_: i < n, read,
        (0, tf.TensorArray(tf.uint8, n, infer_shape=False), tf.TensorArray(tf.int32, n)))
    flat, shapes = pixels.concat(), shapes.stack()

    def converted():
        ends = tf.cumsum(tf.reduce_prod(shapes, axis=1))
        starts = ends - tf.reduce_prod(shapes, axis=1)
        return tf.map_fn(
            lambda i: _converted(tf.reshape(flat[starts[i]:ends[i]], shapes[i]), form),
            tf.range(n), fn_output_signature=tf.TensorSpec(target, tf.uint8))

    uniform = tf.reduce_all(shapes == target)
    images = tf.cond(uniform, lambda: tf.reshape(flat, [n, *target]), converted)
    return tf.ensure_shape(images, [None, *target])


def _file_batches(paths: list[Path], labels: np.ndarray, form: ImageForm, cache: str,
                  batch_size: int, shuffle_seed: int | None,
                  label_reading: LabelReading | None = None):
    """Batches of (standard-form images, labels) read from files, shuffled if a seed is given;
    ``label_reading`` reads each batch's labels with its images.

    Without a cache the file names are shuffled and batched, and each batch is read in one
    go (DECODE_CALLS batches at once: far less overhead than one file at a time). With one,
    the files are read in chunks of CACHE_CHUNK in their own order, the chunks are cached (in
    memory or on disk: a few large records read back much faster than one per image), and
    the images are shuffled after; from disk with at most DISK_SHUFFLE_BYTES held for it.
    """
    import tensorflow as tf

    names = tf.constant([str(p) for p in paths], tf.string)
    ds = tf.data.Dataset.from_tensor_slices((names, labels))
    n = len(paths)
    decode = decoder_for(paths)
    read_labels = label_reading.read if label_reading else (lambda y: y)

    def read(batch):
        return batch.map(lambda p, y: (read_images(p, form, decode), read_labels(y)),
                         num_parallel_calls=DECODE_CALLS, deterministic=True)

    if cache == "none":
        if shuffle_seed is not None:
            ds = ds.shuffle(n, seed=shuffle_seed, reshuffle_each_iteration=True)
        return read(ds.batch(batch_size))
    labels_key = label_reading.key() if label_reading and cache == "disk" else ""
    ds = read(ds.batch(CACHE_CHUNK)).cache(
        disk_cache_prefix(paths, form, labels_key) if cache == "disk" else "")
    if shuffle_seed is None:
        return ds.unbatch().batch(batch_size)
    sample_bytes = form.size[0] * form.size[1] * form.channels
    sample_bytes += label_reading.sample_bytes if label_reading else 0
    images = n if cache == "memory" else DISK_SHUFFLE_BYTES // 2 // sample_bytes
    chunks = max(1, images // CACHE_CHUNK)
    ds = ds.shuffle(chunks, seed=shuffle_seed, reshuffle_each_iteration=True).unbatch()
    ds = ds.shuffle(max(1, min(n, images)), seed=shuffle_seed, reshuffle_each_iteration=True)
    return ds.batch(batch_size)


def _array_batches(x: np.ndarray, labels: np.ndarray, form: ImageForm, batch_size: int,
                   shuffle_seed: int | None, label_reading: LabelReading | None = None):
    """Batches of (standard-form images, labels) from uint8 arrays, converted per batch (and
    their labels read by ``label_reading``)."""
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensor_slices((x, labels))
    if shuffle_seed is not None:
        ds = ds.shuffle(len(x), seed=shuffle_seed, reshuffle_each_iteration=True)
    ds = ds.batch(batch_size)
    if x.shape[1:] != (*form.size, form.channels):
        ds = ds.map(lambda images, y: (standard_images(images, form), y),
                    num_parallel_calls=DECODE_CALLS, deterministic=True)
    if label_reading is not None:
        ds = ds.map(lambda images, y: (images, label_reading.read(y)),
                    num_parallel_calls=DECODE_CALLS, deterministic=True)
    return ds


def split_batches(loaded: LoadedData, indices: np.ndarray, form: ImageForm, cache: str,
                  batch_size: int, shuffle_seed: int | None, labels: np.ndarray | None = None,
                  label_reading: LabelReading | None = None):
    """Batches of (standard-form images, labels) of the samples at ``indices``: their own
    labels, or ``labels`` (one per index) in their place, read by ``label_reading`` if
    given."""
    if labels is None:
        labels = loaded.labels[indices].astype(task_for(loaded.info.task).label_dtype)
    samples = loaded.samples
    if isinstance(samples, ArraySamples):
        return _array_batches(samples.x[indices], labels, form, batch_size, shuffle_seed,
                              label_reading)
    if isinstance(samples, FileSamples):
        paths = [samples.paths[i] for i in indices]
        return _file_batches(paths, labels, form, cache, batch_size, shuffle_seed,
                             label_reading)
    raise DataError("This dataset does not hold images; choose an image dataset or folder.")


def preprocess_images(prep: dict[str, Any], images: np.ndarray) -> np.ndarray:
    """uint8 N × H × W × C images (any size, 1, 3 or 4 channels) as a run's model input."""
    x = standard_images(np.asarray(images, dtype=np.uint8), ImageForm.from_prep(prep))
    return normalised(x, prep["scale"], prep["offset"]).numpy()


def standard_image_files(prep: dict[str, Any], paths: list[str | Path],
                         batch_size: int = READ_BATCH):
    """Image files read as training reads them, in the standard form of a run's
    preprocessing: uint8 batches (N × H × W × C), in the order of ``paths``."""
    form = ImageForm.from_prep(prep)
    paths = [Path(p) for p in paths]
    batches = _file_batches(paths, np.zeros(len(paths), np.int32), form, "none", batch_size,
                            None)
    return batches.map(lambda x, _: x)


def preprocess_image_files(prep: dict[str, Any], paths: list[str | Path],
                           batch_size: int = READ_BATCH) -> np.ndarray:
    """Image files as a run's model input (float32 N × H × W × C), read as in training,
    ``batch_size`` files at a time."""
    form = ImageForm.from_prep(prep)
    if not paths:
        return np.zeros((0, *form.size, form.channels), np.float32)
    return np.concatenate([normalised(x, prep["scale"], prep["offset"]).numpy()
                           for x in standard_image_files(prep, paths, batch_size)])
