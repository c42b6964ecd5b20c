"""The data part of an exported script: reading, splitting and preprocessing a project's data
as Layer Studio does, for every source (bundled and Keras datasets, image folders, CSV tables
and texts).

Where Layer Studio's own reading is plain Python (the split, the image conversions, the CSV
cells), the script carries the very same functions' source, so the two cannot drift apart;
the rest is short code written here, which tests/core/test_code_export.py runs against the app.
"""

from __future__ import annotations

import ast
import inspect
import os
import pprint
import textwrap
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from studio.core.data import bundled, image_pipeline, image_reading, sources, tables
from studio.core.data.augmentation import CROP_CLASS, augmentation_specs
from studio.core.data.builtin import cache_path
from studio.core.data.table_pipeline import ADAPT_BATCH, SPLIT, STANDARDIZE, standardize
from studio.core.data.types import DataError, DatasetInfo
from studio.core.project.document import DatasetChoice
from studio.core.tasks.registry import task_for


@dataclass
class DataSection:
    """What the script needs to read a project's data: the imports it adds, its constants and
    functions (which define ``load_splits`` and ``make_datasets``), and a sentence saying
    where it reads the data from."""

    imports: list[str]
    constants: str
    functions: str
    where: str


def data_section(choice: DatasetChoice, info: DatasetInfo, seed: int, script: Path | None
                 ) -> DataSection:
    """The script's data part for ``choice`` (``info`` is what ``describe`` says it holds);
    ``seed`` is the training seed and ``script`` where the script goes (paths inside its
    folder are written relative to it). Raise DataError for a source it cannot read."""
    split = _split_constants(choice, info)
    if info.kind == "image":
        return _image_section(choice, info, seed, script, split)
    return _csv_section(choice, info, script, split)


def carried_source(function: Any) -> str:
    """A function's source as written in Layer Studio, at the script's top level."""
    return textwrap.dedent(inspect.getsource(function)).rstrip() + "\n"


def path_code(path: Path, script: Path | None) -> str:
    """``path`` as the script writes it: from the script's folder if it lies there, else
    absolute."""
    path = Path(os.path.abspath(path))
    if script is not None:
        folder = Path(os.path.abspath(script)).parent
        if path == folder or folder in path.parents:
            return f"HERE / {path.relative_to(folder).as_posix()!r}"
    return f"Path({str(path)!r})"


def _split_constants(choice: DatasetChoice, info: DatasetInfo) -> str:
    return (f"VALIDATION_SPLIT = {choice.validation_split!r}\n"
            f"TEST_SPLIT = {choice.test_split!r}\n"
            f"SPLIT_SEED = {choice.seed!r}\n"
            f"STRATIFY = {task_for(info.task).has_classes!r}\n"
            f"\"\"\"Split each class by the same fractions (classes only, not numbers).\"\"\"\n"
            f"LABEL_DTYPE = {task_for(info.task).label_dtype.__name__!r}\n")


_SPLIT = '''

SPLITS = ("train", "validation", "test")


{stratified_split}

def load_splits():
    """The samples, their labels and each split's indices."""
    samples, labels = load_samples()
    return samples, labels, stratified_split(labels, VALIDATION_SPLIT, TEST_SPLIT, SPLIT_SEED,
                                             STRATIFY)
'''


def _split_functions(separate_validation: bool) -> str:
    text = _SPLIT.format(stratified_split=carried_source(sources.stratified_split))
    if not separate_validation:
        return text
    return text.replace('''    """The samples, their labels and each split's indices."""
    samples, labels = load_samples()
    return samples, labels, stratified_split(labels, VALIDATION_SPLIT, TEST_SPLIT, SPLIT_SEED,
                                             STRATIFY)
''', '''    """The images of DATA, then those of VALIDATION_DATA (the validation split), their
    labels and each split's indices (the test split is taken from DATA's)."""
    paths, labels = labelled_files(DATA)
    validation_paths, validation_labels = labelled_files(VALIDATION_DATA)
    start = len(paths)
    samples = np.array(paths + validation_paths)
    labels = np.array(labels + validation_labels, dtype="int32")
    inner = stratified_split(labels[:start], 0.0, TEST_SPLIT, SPLIT_SEED, STRATIFY)
    return samples, labels, {"train": inner["train"], "test": inner["test"],
                             "validation": np.arange(start, len(labels))}
''')


# --- images ------------------------------------------------------------------------------

_IMAGE_CONSTANTS = '''\
IMAGE_SIZE = {size!r}
CHANNELS = {channels!r}
RESIZE = {resize!r}
"""How images of another size are fitted: squash, crop (centred) or pad (with black)."""
FORM = ImageForm(IMAGE_SIZE, CHANNELS, RESIZE)
NORMALIZATION = {normalization!r}
"""Pixels 0..255 become x * scale + offset: unit (0..1), symmetric (-1..1) or standardize
(the training images' mean and deviation per channel, from up to {stats} of them)."""
STATS_IMAGES = {stats}
'''

_IMAGE_FUNCTIONS = '''

{with_channels}

{centre_crop}

{fitted}

{converted}

def standard_image(image):
    """A uint8 image (H × W × C) at IMAGE_SIZE with CHANNELS channels, as Layer Studio
    brings every image to its standard form."""
    image = tf.convert_to_tensor(image, tf.uint8)
    return tf.ensure_shape(_converted(image, FORM), [*IMAGE_SIZE, CHANNELS])


def normalisation(train_images):
    """Per-channel ``scale`` and ``offset`` for NORMALIZATION; ``train_images`` is a function
    giving a batched dataset of (some) training images in the standard form."""
    if NORMALIZATION == "unit":
        return [1 / 255.0] * CHANNELS, [0.0] * CHANNELS
    if NORMALIZATION == "symmetric":
        return [1 / 127.5] * CHANNELS, [-1.0] * CHANNELS
    total = np.zeros(CHANNELS)
    squares = np.zeros(CHANNELS)
    count = 0
    for batch in train_images():
        x = tf.cast(batch, tf.float64).numpy()
        total += x.sum(axis=(0, 1, 2))
        squares += (x * x).sum(axis=(0, 1, 2))
        count += x.shape[0] * x.shape[1] * x.shape[2]
    mean = total / count
    std = np.sqrt(np.maximum(squares / count - mean**2, 0.0))
    std = [s if s > 1e-6 else 1.0 for s in std]
    return [1.0 / s for s in std], [-m / s for m, s in zip(mean, std)]
{augmentation}

def make_datasets(samples, labels, splits):
    """Batches of (float32 images, labels) for training (shuffled with SEED anew each epoch,
    then augmented), validation and test (None when empty); images are normalised last."""
    train = splits["train"]
    if len(train) > STATS_IMAGES:
        pick = np.random.default_rng(SEED).choice(len(train), STATS_IMAGES, replace=False)
        train = train[np.sort(pick)]
    scale, offset = normalisation(lambda: batches(samples, labels, train, False).map(
        lambda x, y: x))
    augment = make_augmentation()

    def normalised(images):
        return tf.cast(images, tf.float32) * scale + offset

    def training_batch(images, y):
        x = tf.cast(images, tf.float32)
        return normalised(augment(x, training=True) if augment else x), y

    def split(name):
        if not len(splits[name]):
            return None
        shuffled = name == "train"
        finish = training_batch if shuffled else (lambda images, y: (normalised(images), y))
        return batches(samples, labels, splits[name], shuffled).map(finish)

    return split("train"), split("validation"), split("test")
'''

_AUGMENTATION = '''

def make_augmentation():
    """The random changes to training images, as Keras layers (on 0..255, clipped to it)."""
    return keras.Sequential([
{layers}
        keras.layers.Lambda(lambda x: keras.ops.clip(x, 0.0, 255.0), name="clip_0_255"),
    ], name="augmentation")
'''

_NO_AUGMENTATION = '''

def make_augmentation():
    """No random changes to training images: the project augments none."""
    return None
'''

_ARRAY_BATCHES = '''

def batches(samples, labels, indices, shuffled):
    """Batches of (uint8 standard-form images, labels) of the samples at ``indices``."""
    ds = tf.data.Dataset.from_tensor_slices((samples[indices],
                                             labels[indices].astype(LABEL_DTYPE)))
    if shuffled:
        ds = ds.shuffle(len(indices), seed=SEED, reshuffle_each_iteration=True)
    return ds.map(lambda x, y: (standard_image(x), y)).batch(BATCH_SIZE)
'''

_BUNDLED = '''

def load_samples():
    """All images (uint8, N × H × W × C) and their labels, from DATA."""
    with np.load(DATA, allow_pickle=False) as archive:
        x, y = archive["x"], archive["y"].astype("int32")
    return (x[..., np.newaxis] if x.ndim == 3 else x), y
'''

_KERAS = '''

def load_samples():
    """All images (uint8, N × H × W × C) and labels: training then test images, from
    Layer Studio's copy at DATA if it is there, else from keras.datasets (which downloads
    them once to ~/.keras/datasets)."""
    if DATA.exists():
        with np.load(DATA, allow_pickle=False) as archive:
            x, y = archive["x"], archive["y"]
    else:
        (x_train, y_train), (x_test, y_test) = keras.datasets.{module}.load_data()
        x, y = np.concatenate([x_train, x_test]), np.concatenate([y_train, y_test])
    return (x[..., np.newaxis] if x.ndim == 3 else x), y.reshape(-1).astype("int32")
'''

_FOLDER = '''

IMAGE_SUFFIXES = {suffixes!r}


def image_files(folder, seen=None):
    """The image files under ``folder`` (hidden ones left out), in sorted order, following
    links to folders but never into one seen before."""
    seen = set() if seen is None else seen
    real = os.path.realpath(folder)
    if real in seen:
        return []
    seen.add(real)
    found = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            found += image_files(entry.path, seen)
        elif Path(entry.name).suffix.lower() in IMAGE_SUFFIXES:
            found.append(entry.path)
    return found


def labelled_files(folder):
    """The image files of each class folder of ``folder`` and their class indices."""
    paths, labels = [], []
    for label, name in enumerate(CLASS_NAMES):
        if not (Path(folder) / name).is_dir():
            continue
        files = image_files(Path(folder) / name, {{os.path.realpath(folder)}})
        paths += files
        labels += [label] * len(files)
    return paths, labels


def load_samples():
    """The image files of DATA (one subfolder per class) and their labels."""
    paths, labels = labelled_files(DATA)
    return np.array(paths), np.array(labels, dtype="int32")


'''

_FILE_BATCHES = '''

{decode_png}

{decode_jpeg}

def decode_image(contents):
    """Image bytes as uint8 H × W × C: PNG and JPEG as Layer Studio decodes them, GIF's first
    frame, and BMP. (Layer Studio reads TIFF and WebP with Pillow: convert those to PNG.)"""
    first = tf.strings.substr(contents, 0, 1)
    return tf.case([(tf.equal(first, b"\\x89"), lambda: _decode_png(contents)),
                    (tf.equal(first, b"\\xff"), lambda: _decode_jpeg(contents))],
                   default=lambda: tf.io.decode_image(contents, expand_animations=False))


{decoder_for}

def resolved_cache(samples):
    """CACHE, with auto resolved as Layer Studio does: disk when the decoded images of every
    split take at most AUTO_DISK_BYTES, else none."""
    if CACHE != "auto":
        return CACHE
    return "disk" if len(samples) * IMAGE_BYTES <= AUTO_DISK_BYTES else "none"


def batches(samples, labels, indices, shuffled):
    """Batches of (uint8 standard-form images, labels) read from the files at ``indices``,
    shuffled (if asked) in the order Layer Studio's cache gives: without a cache the file
    names are shuffled; with one, chunks of CACHE_CHUNK images read in order are kept, then
    the chunks are shuffled and the images within a buffer."""
    decode = decoder_for([Path(p) for p in samples[indices]])
    ds = tf.data.Dataset.from_tensor_slices((samples[indices],
                                             labels[indices].astype(LABEL_DTYPE)))

    def read(path, y):
        return standard_image(decode(tf.io.read_file(path))), y

    cache = resolved_cache(samples) if shuffled else "none"
    if cache == "none":
        if shuffled:
            ds = ds.shuffle(len(indices), seed=SEED, reshuffle_each_iteration=True)
        return ds.map(read, num_parallel_calls=2, deterministic=True).batch(BATCH_SIZE)
    ds = ds.map(read, num_parallel_calls=2, deterministic=True).batch(CACHE_CHUNK)
    ds = ds.cache(os.path.join(tempfile.mkdtemp(), "images") if cache == "disk" else "")
    images = len(indices) if cache == "memory" else DISK_SHUFFLE_BYTES // 2 // IMAGE_BYTES
    ds = ds.shuffle(max(1, images // CACHE_CHUNK), seed=SEED, reshuffle_each_iteration=True)
    ds = ds.unbatch().shuffle(max(1, min(len(indices), images)), seed=SEED,
                              reshuffle_each_iteration=True)
    return ds.batch(BATCH_SIZE)
'''


def _image_section(choice: DatasetChoice, info: DatasetInfo, seed: int, script: Path | None,
                   split: str) -> DataSection:
    height, width, channels = info.sample_shape
    constants = _IMAGE_CONSTANTS.format(size=(height, width), channels=channels,
                                        resize=choice.resize,
                                        normalization=choice.normalization,
                                        stats=image_reading.STATS_IMAGES)
    functions = _IMAGE_FUNCTIONS.format(
        with_channels=carried_source(image_pipeline._with_channels),
        centre_crop=carried_source(image_pipeline._centre_crop),
        fitted=carried_source(image_pipeline._fitted),
        converted=carried_source(image_pipeline._converted),
        augmentation=_augmentation_code(choice, seed))
    form = ('ImageForm = namedtuple("ImageForm", "size channels resize")\n'
            f"_GREY_WEIGHTS = {image_pipeline._GREY_WEIGHTS!r}\n")
    imports = ["from collections import namedtuple"]
    splitting = _split_functions(bool(choice.source == "folder" and choice.validation_path))
    if choice.source == "folder":
        source, where, extra = _folder_code(choice, info, script)
        imports += ["import os", "import tempfile", "from collections.abc import Callable"]
    elif choice.source == "segmentation":
        source, where, extra = _segmentation_code(choice, info, seed, script)
        imports += ["import os", "import tempfile", "from collections.abc import Callable",
                    "from PIL import Image"]
        splitting = ""
    elif choice.source == "bundled":
        path = bundled.dataset_path(bundled.DATASETS[choice.name])
        where = f"{info.title} from {path}"
        source, extra = _BUNDLED, f"DATA = {path_code(path, script)}\n"
    else:
        path = cache_path(choice.name)
        where = (f"{info.title}, from Layer Studio's copy {path} or else keras.datasets."
                 f"{choice.name}")
        source, extra = _KERAS.format(module=choice.name), f"DATA = {path_code(path, script)}\n"
    if choice.source not in ("folder", "segmentation"):
        source += _ARRAY_BATCHES
    return DataSection(
        imports,
        f"{extra}{_data_docstring(where)}{split}{form}{constants}"
        f"CLASS_NAMES = {list(info.class_names)!r}\n",
        source + functions + splitting, where)


def _folder_code(choice: DatasetChoice, info: DatasetInfo, script: Path | None
                 ) -> tuple[str, str, str]:
    from studio.core.data.image_folder import IMAGE_EXTENSIONS

    where = f"the image folder {choice.path}"
    extra = f"DATA = {path_code(Path(choice.path), script)}\n" + _cache_constants(choice, info)
    if choice.validation_path:
        where += f", with the validation images of {choice.validation_path}"
        extra += f"VALIDATION_DATA = {path_code(Path(choice.validation_path), script)}\n"
    source = _FOLDER.format(suffixes=tuple(sorted(IMAGE_EXTENSIONS))) + _file_batches()
    return source, where, extra


def _file_batches() -> str:
    """The script's reading of image files in batches, as Layer Studio's cache orders them."""
    return _FILE_BATCHES.format(decode_png=carried_source(image_pipeline._decode_png),
                                decode_jpeg=carried_source(image_pipeline._decode_jpeg),
                                decoder_for=carried_source(image_pipeline.decoder_for))


def _cache_constants(choice: DatasetChoice, info: DatasetInfo) -> str:
    height, width, channels = info.sample_shape
    return (f"CACHE = {choice.cache!r}\n"
            '"""How Layer Studio caches decoded images (auto, none, memory or disk), which '
            'decides\nthe order it shuffles them in; this script keeps them in memory or in '
            'a temporary folder."""\n'
            f"CACHE_CHUNK = {image_pipeline.CACHE_CHUNK}\n"
            f"DISK_SHUFFLE_BYTES = {image_pipeline.DISK_SHUFFLE_BYTES}\n"
            f"AUTO_DISK_BYTES = {image_reading.AUTO_DISK_BYTES}\n"
            f"IMAGE_BYTES = {height * width * channels}\n")


_SEGMENTATION = '''

IGNORE = {ignore}
"""The mask value of pixels of no class: they count in no loss and no metric."""


def read_mask(path):
    """A mask file's class at each pixel (uint8 H × W): its values (grey levels or palette
    indices) through MASK_VALUES."""
    pixels = np.asarray(Image.open(path))
    if pixels.ndim != 2:
        raise SystemExit(f"{{path}} is a colour mask: this script reads masks of class values.")
    return MASK_VALUES[pixels]


{fitted_masks}

def load_splits():
    """The image files, their masks fitted to IMAGE_SIZE (uint8 N × H × W) and each split's
    indices, as Layer Studio split them."""
    samples = np.array([str(DATA / image) for image, _ in PAIRS])
    masks = np.stack([fitted_masks(read_mask(DATA / mask), FORM).numpy() for _, mask in PAIRS])
    return samples, masks, {{name: np.array(SPLIT_INDICES[name], dtype="int64")
                            for name in ("train", "validation", "test")}}
'''


def _segmentation_code(choice: DatasetChoice, info: DatasetInfo, seed: int,
                       script: Path | None) -> tuple[str, str, str]:
    """The script's reading of a segmentation folder: its pairs of image and mask files and
    its splits as Layer Studio reads them now, written out; DataError for what the script
    cannot read as the app does (the drawn demo set, colour masks, augmentation)."""
    from studio.core.data.segmentation import pipeline
    from studio.core.tasks.segmentation.masks import IGNORE

    if not choice.path:
        raise DataError("The segmentation demo set is drawn by Layer Studio, not read from "
                        "files: choose a folder of images and masks to export a script.")
    if augmentation_specs(choice.augmentation, seed):
        raise DataError("An exported script does not yet move masks with their images: turn "
                        "augmentation off in Data to export this project as a script.")
    loaded = sources.load(choice)
    decoder = loaded.labels.decoder
    if decoder.table is not None:
        raise DataError(f"{choice.path} has colour masks, which an exported script does not "
                        "read yet: save the masks as class values (grey or palette PNGs).")
    root = Path(os.path.abspath(choice.path))

    def named(path: Path) -> str:
        path = Path(os.path.abspath(path))
        return path.relative_to(root).as_posix() if root in path.parents else str(path)

    pairs = [(named(image), named(mask))
             for image, mask in zip(loaded.samples.paths, loaded.labels.masks, strict=True)]
    splits = {name: [int(i) for i in loaded.splits[name]]
              for name in ("train", "validation", "test")}
    where = f"the segmentation folder {choice.path}"
    values = pprint.pformat(decoder.values.tolist(), width=80, compact=True)
    extra = (f"DATA = {path_code(root, script)}\n{_cache_constants(choice, info)}"
             f"PAIRS = {pprint.pformat(pairs, width=96, compact=True)}\n"
             '"""Each image file and its mask, from DATA, as Layer Studio paired them."""\n'
             f"SPLIT_INDICES = {pprint.pformat(splits, width=96, compact=True)}\n"
             f"MASK_VALUES = np.array({values}, dtype=np.uint8)\n"
             '"""The class (or IGNORE) of each mask value."""\n')
    source = _SEGMENTATION.format(ignore=IGNORE,
                                  fitted_masks=carried_source(pipeline.fitted_masks))
    source += _file_batches()
    return source, where, extra


def _augmentation_code(choice: DatasetChoice, seed: int) -> str:
    """The script's ``make_augmentation``: the same layers as ``augmentation_layers``."""
    specs = augmentation_specs(choice.augmentation, seed)
    if not specs:
        return _NO_AUGMENTATION
    lines = []
    for name, kwargs in specs:
        arguments = ", ".join(f"{key}={value!r}" for key, value in kwargs.items())
        where = "" if name == CROP_CLASS else "keras.layers."
        lines.append(f"        {where}{name}({arguments}),")
    code = _AUGMENTATION.format(layers="\n".join(lines))
    if any(name == CROP_CLASS for name, _ in specs):
        code = "\n\n" + _crop_classcarried_source() + code
    return code


def _crop_classcarried_source() -> str:
    """The source of the class ``random_crop`` makes, read without importing Keras."""
    spec = find_spec("studio.core.data.random_crop")
    assert spec is not None and spec.origin is not None
    text = Path(spec.origin).read_text(encoding="utf-8")
    (node,) = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)]
    return textwrap.dedent(ast.get_source_segment(text, node, padded=True)) + "\n"


def _data_docstring(where: str) -> str:
    """The docstring of the script's DATA, saying what it reads."""
    text = textwrap.fill(f"The data: {where}.", 92, break_long_words=False,
                         break_on_hyphens=False)
    return '"""' + text.replace("\\", "\\\\").replace('"', '\\"') + '"""\n'



# --- CSV tables and texts ------------------------------------------------------------------

_CSV_CONSTANTS = '''\
ENCODING = {encoding!r}
DELIMITER = {delimiter!r}
DECIMAL_COMMA = {decimal_comma!r}
"""Whether numbers such as 1,5 are read as 1.5 (when the columns are not separated by commas)."""
COLUMNS = {columns!r}
"""The header's column names, empty or repeated ones renamed as Layer Studio names them."""
LABEL_COLUMN = {label!r}
{samples}CLASS_NAMES = {class_names!r}
"""The classes in label order: numbers sorted as numbers, other labels alphabetically."""
MISSING = {missing!r}
"""Cells that mean "no value" (compared ignoring case)."""
FLOAT32_MAX = float(np.finfo(np.float32).max)
_DECIMAL_COMMA = re.compile({decimal_pattern!r})
'''

_CSV_FUNCTIONS = '''

{is_missing}

{any_number}

{parse_number}

{fitted}

{class_labels}

def batched(x, y, split):
    """Batches of ``(x, y)`` for one split (None if it is empty); the training split is
    shuffled with SEED anew each epoch."""
    if not len(y):
        return None
    ds = tf.data.Dataset.from_tensor_slices((x, y.astype(LABEL_DTYPE)))
    if split == "train":
        ds = ds.shuffle(len(y), seed=SEED, reshuffle_each_iteration=True)
    return ds.batch(BATCH_SIZE)


def read_rows():
    """The rows of DATA with as many cells as the header, stripped; rows that hold nothing
    are skipped, and so are those whose {needed} cell is missing."""
    text = DATA.read_bytes().decode(ENCODING)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=DELIMITER)
    width = len(next(cells for cells in (_fitted(record, 0) for record in reader)
                     if any(cells)))
    needed = [COLUMNS.index(name) for name in {needed_columns!r}]
    rows = []
    for record in reader:
        cells = _fitted(record, width)
        if len(cells) == width and any(cells) and not any(is_missing(cells[i])
                                                           for i in needed):
            rows.append(cells)
    return rows


def load_samples():
    """{samples_doc} and the labels of every row of DATA."""
    rows = read_rows()
    label = COLUMNS.index(LABEL_COLUMN)
{read_samples}    cells = [row[label] for row in rows]
{read_labels}
'''

_TABLE_SAMPLES = '''\
    columns = [COLUMNS.index(name) for name in FEATURE_COLUMNS]
    values = [[parse_number(row[i], DECIMAL_COMMA) for i in columns] for row in rows]
    samples = np.array([[np.nan if v is None else v for v in row] for row in values],
                       dtype="float32")
'''

_TEXT_SAMPLES = '''\
    samples = np.array([row[COLUMNS.index(TEXT_COLUMN)] for row in rows])
'''

_CLASS_LABELS = '''\
    return samples, _class_labels(cells, DECIMAL_COMMA)[0]'''

_NUMBER_LABELS = '''\
    return samples, np.array([parse_number(cell, DECIMAL_COMMA) for cell in cells],
                             dtype="float32")'''

_TABLE_DATASETS = '''

{standardize}

def make_datasets(samples, labels, splits):
    """Batches of (standardised float32 features, labels) for training (shuffled with SEED
    anew each epoch), validation and test (None when empty). Each column's mean and standard
    deviation come from the training rows, ignoring missing values, which become the mean."""
    train = samples[splits["train"]].astype(np.float64)
    present = ~np.isnan(train)
    counts = np.maximum(present.sum(axis=0), 1)
    mean = np.where(present, train, 0.0).sum(axis=0) / counts
    std = np.sqrt(np.where(present, (train - mean) ** 2, 0.0).sum(axis=0) / counts)
    std = np.where(std > 1e-8 * np.maximum(1.0, np.abs(mean)), std, 1.0)
    x = standardize(samples, {{"mean": mean.tolist(), "std": std.tolist()}})
    return tuple(batched(x[splits[name]], labels[splits[name]], name) for name in SPLITS)
'''

_TEXT_DATASETS = '''

def make_datasets(samples, labels, splits):
    """Batches of (token ids, labels) for training (shuffled with SEED anew each epoch),
    validation and test (None when empty). The vocabulary is learnt from the training texts:
    the MAX_TOKENS most frequent words, lower-cased and without punctuation."""
    vectorize = keras.layers.TextVectorization(
        max_tokens=MAX_TOKENS, standardize=STANDARDIZE, split=SPLIT,
        output_sequence_length=SEQUENCE_LENGTH)
    texts = {{name: tf.constant(samples[splits[name]].tolist(), tf.string) for name in SPLITS}}
    vectorize.adapt(tf.data.Dataset.from_tensor_slices(texts["train"]).batch({adapt_batch}))
    datasets = (batched(texts[name], labels[splits[name]], name) for name in SPLITS)
    return tuple(None if ds is None else ds.map(lambda x, y: (vectorize(x), y),
                                                num_parallel_calls=2) for ds in datasets)
'''


def _csv_section(choice: DatasetChoice, info: DatasetInfo, script: Path | None, split: str
                 ) -> DataSection:
    report = tables.read_table(choice).report
    text = info.kind == "text"
    delimiter = {name: mark for mark, name in tables.DELIMITERS.items()}[report["delimiter"]]
    label = report["label_column"]
    if text:
        samples = (f"TEXT_COLUMN = {report['text_column']!r}\n"
                   f"MAX_TOKENS = {choice.max_tokens!r}\n"
                   f"SEQUENCE_LENGTH = {choice.sequence_length!r}\n"
                   f"STANDARDIZE = {STANDARDIZE!r}\nSPLIT = {SPLIT!r}\n")
        needed = [label, report["text_column"]]
        where = (f"the texts of column {report['text_column']!r} of the CSV file "
                 f"{choice.path}, labelled by column {label!r}")
    else:
        samples = f"FEATURE_COLUMNS = {report['features']!r}\n"
        needed = [label]
        where = f"the CSV file {choice.path}, its numbers labelled by column {label!r}"
    constants = _CSV_CONSTANTS.format(
        encoding={"utf-8": "utf-8-sig"}.get(report["encoding"], report["encoding"]),
        delimiter=delimiter, decimal_comma=delimiter != ",", columns=report["columns"],
        label=label, samples=samples, class_names=list(info.class_names),
        missing=tuple(sorted(tables.MISSING)),
        decimal_pattern=tables._DECIMAL_COMMA.pattern)
    functions = _CSV_FUNCTIONS.format(
        is_missing=carried_source(tables.is_missing), any_number=carried_source(tables._any_number),
        parse_number=carried_source(tables.parse_number), fitted=carried_source(tables._fitted),
        class_labels=carried_source(tables._class_labels),
        needed=" or ".join(repr(name) for name in needed), needed_columns=needed,
        samples_doc="The texts" if text else "The numbers (NaN where missing)",
        read_samples=_TEXT_SAMPLES if text else _TABLE_SAMPLES,
        read_labels=(_CLASS_LABELS if task_for(info.task).has_classes else _NUMBER_LABELS))
    if text:
        functions += _TEXT_DATASETS.format(adapt_batch=ADAPT_BATCH)
    else:
        functions += _TABLE_DATASETS.format(
            standardize=carried_source(standardize))
    return DataSection(
        ["import csv", "import io", "import re", "from typing import Any"],
        f"DATA = {path_code(Path(choice.path), script)}\n{_data_docstring(where)}"
        f"{split}{constants}",
        functions + _split_functions(False), where)
