"""The Keras built-in datasets: MNIST, Fashion-MNIST, CIFAR-10 and CIFAR-100.

On first use the original files are downloaded from where Keras gets them (CIFAR in its
binary version), checked, and converted once into ``<workspace>/datasets/<name>.npz``;
later uses read only that file. Everything is parsed with NumPy: nothing is unpickled.
"""

from __future__ import annotations

import errno
import gzip
import shutil
import tarfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.core.base.downloads import DownloadError, download, file_digest
from studio.core.base.events import Progress
from studio.core.base.files import atomic_file
from studio.core.base.messages import look_up
from studio.core.base.paths import workspace
from studio.core.data.types import DataError, DatasetInfo

MIRRORS = {
    "keras": "https://storage.googleapis.com/tensorflow/tf-keras-datasets/",
    "cifar": "https://www.cs.toronto.edu/~kriz/",
}
"""Where the original files are published, by mirror name."""


@dataclass(frozen=True)
class Original:
    """One published file: its mirror, exact size in bytes and, where published, its
    checksum ``(algorithm, hex digest)``."""

    mirror: str
    size: int
    checksum: tuple[str, str] | None = None


# MNIST's SHA-256 is the one keras/src/datasets/mnist.py pins; the CIFAR MD5s are those the
# CIFAR page publishes for the binary versions. Keras pins no hash for its Fashion-MNIST
# copies, so those are checked by size and by their IDX structure.
ORIGINALS: dict[str, Original] = {
    "mnist.npz": Original("keras", 11_490_434, (
        "sha256", "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1")),
    "train-labels-idx1-ubyte.gz": Original("keras", 29_515),
    "train-images-idx3-ubyte.gz": Original("keras", 26_421_880),
    "t10k-labels-idx1-ubyte.gz": Original("keras", 5_148),
    "t10k-images-idx3-ubyte.gz": Original("keras", 4_422_102),
    "cifar-10-binary.tar.gz": Original("cifar", 170_052_171, (
        "md5", "c32a1d4ab5d03f1284b67883e8d87530")),
    "cifar-100-binary.tar.gz": Original("cifar", 168_513_733, (
        "md5", "03b5dce01913d631647c71ecec9e9cb8")),
}
"""The original files by name; tests replace entries to serve small files of their own."""

Arrays = tuple[np.ndarray, np.ndarray]

_CIFAR_CREDIT = ("{title} by A. Krizhevsky, V. Nair and G. Hinton; cite A. Krizhevsky, "
                 "Learning Multiple Layers of Features from Tiny Images, 2009.")
_CIFAR100_CLASSES = (
    "apple aquarium_fish baby bear beaver bed bee beetle bicycle bottle bowl boy bridge bus "
    "butterfly camel can castle caterpillar cattle chair chimpanzee clock cloud cockroach "
    "couch crab crocodile cup dinosaur dolphin elephant flatfish forest fox girl hamster "
    "house kangaroo keyboard lamp lawn_mower leopard lion lizard lobster man maple_tree "
    "motorcycle mountain mouse mushroom oak_tree orange orchid otter palm_tree pear "
    "pickup_truck pine_tree plain plate poppy porcupine possum rabbit raccoon ray road rocket "
    "rose sea seal shark shrew skunk skyscraper snail snake spider squirrel streetcar "
    "sunflower sweet_pepper table tank telephone television tiger tractor train trout tulip "
    "turtle wardrobe whale willow_tree wolf woman worm"
).split()


def _read_idx(path: Path, dims: int) -> np.ndarray:
    """An IDX array of unsigned bytes with ``dims`` dimensions, from a gzip file."""
    with gzip.open(path, "rb") as file:
        data = file.read()
    start = 4 + 4 * dims
    if len(data) < start or data[:4] != bytes((0, 0, 0x08, dims)):
        raise ValueError("it is not an IDX file of bytes")
    shape = tuple(int(n) for n in np.frombuffer(data, ">u4", count=dims, offset=4))
    pixels = np.frombuffer(data, np.uint8, offset=start)
    if pixels.size != np.prod(shape):
        raise ValueError("it is shorter or longer than its header says")
    return pixels.reshape(shape)


def _read_mnist(paths: list[Path]) -> Arrays:
    with np.load(paths[0], allow_pickle=False) as archive:
        x = np.concatenate([archive["x_train"], archive["x_test"]])
        y = np.concatenate([archive["y_train"], archive["y_test"]])
    return x[..., np.newaxis], y


def _read_fashion(paths: list[Path]) -> Arrays:
    train_y, train_x, test_y, test_x = (_read_idx(path, dims)
                                        for path, dims in zip(paths, (1, 3, 1, 3), strict=True))
    if len(train_x) != len(train_y) or len(test_x) != len(test_y):
        raise ValueError("its images and labels do not pair up")
    return np.concatenate([train_x, test_x])[..., np.newaxis], np.concatenate([train_y, test_y])


def _cifar_reader(members: tuple[str, ...], label_bytes: int) -> Callable[[list[Path]], Arrays]:
    """A reader of a CIFAR binary archive: records of ``label_bytes`` label bytes (the last
    one is the class) and 3072 pixel bytes, colour planes first, read from ``members`` in
    order, without extracting anything."""
    record = label_bytes + 32 * 32 * 3

    def read(paths: list[Path]) -> Arrays:
        parts: dict[str, Arrays] = {}
        with tarfile.open(paths[0], "r:gz") as archive:
            for member in archive:
                if member.name in members and member.isfile():
                    data = archive.extractfile(member).read()
                    if len(data) % record:
                        raise ValueError(f"{member.name} does not hold whole records")
                    rows = np.frombuffer(data, np.uint8).reshape(-1, record)
                    parts[member.name] = (
                        rows[:, label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1),
                        rows[:, label_bytes - 1])
        missing = [name for name in members if name not in parts]
        if missing:
            raise ValueError(f"it lacks {', '.join(missing)}")
        return (np.concatenate([parts[name][0] for name in members]),
                np.concatenate([parts[name][1] for name in members]))

    return read


@dataclass(frozen=True)
class Builtin:
    """A built-in dataset: what it holds, its original files and how to read them."""

    info: DatasetInfo
    files: tuple[str, ...]
    read: Callable[[list[Path]], Arrays]


_DATASETS = (
    Builtin(DatasetInfo(
        name="mnist", title="MNIST", sample_shape=(28, 28, 1), num_classes=10,
        class_names=tuple(str(i) for i in range(10)), num_samples=70_000,
        credit="MNIST by Y. LeCun, C. Cortes and C. J. C. Burges, CC BY-SA 3.0."),
        ("mnist.npz",), _read_mnist),
    Builtin(DatasetInfo(
        name="fashion_mnist", title="Fashion-MNIST", sample_shape=(28, 28, 1), num_classes=10,
        class_names=("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                     "Sneaker", "Bag", "Ankle boot"), num_samples=70_000,
        credit="Fashion-MNIST by H. Xiao, K. Rasul and R. Vollgraf, Zalando Research, "
               "MIT licence."),
        ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
         "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"), _read_fashion),
    Builtin(DatasetInfo(
        name="cifar10", title="CIFAR-10", sample_shape=(32, 32, 3), num_classes=10,
        class_names=("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
                     "ship", "truck"), num_samples=60_000,
        credit=_CIFAR_CREDIT.format(title="CIFAR-10")),
        ("cifar-10-binary.tar.gz",), _cifar_reader(
            (*(f"cifar-10-batches-bin/data_batch_{i}.bin" for i in range(1, 6)),
             "cifar-10-batches-bin/test_batch.bin"), label_bytes=1)),
    Builtin(DatasetInfo(
        name="cifar100", title="CIFAR-100", sample_shape=(32, 32, 3), num_classes=100,
        class_names=tuple(_CIFAR100_CLASSES), num_samples=60_000,
        credit=_CIFAR_CREDIT.format(title="CIFAR-100")),
        ("cifar-100-binary.tar.gz",), _cifar_reader(
            ("cifar-100-binary/train.bin", "cifar-100-binary/test.bin"), label_bytes=2)),
)
_BY_NAME = {builtin.info.name: builtin for builtin in _DATASETS}
BUILTINS: tuple[str, ...] = tuple(_BY_NAME)
"""The built-in datasets' names, in the order to show them."""
_LOCKS = {name: threading.Lock() for name in BUILTINS}


def _builtin(name: str) -> Builtin:
    return look_up(_BY_NAME, name, "Keras dataset", DataError)


def builtin_info(name: str) -> DatasetInfo:
    """What built-in dataset ``name`` holds; raise DataError for an unknown name."""
    return _builtin(name).info


def datasets_dir() -> Path:
    """Where the built-in datasets are kept: ``<workspace>/datasets``."""
    return workspace() / "datasets"


def cache_path(name: str) -> Path:
    """The converted dataset: ``<workspace>/datasets/<name>.npz`` (arrays ``x`` and ``y``)."""
    return datasets_dir() / f"{_builtin(name).info.name}.npz"


def originals_dir(name: str) -> Path:
    """The folder the original files are downloaded to, where a person may also place them."""
    return datasets_dir() / _builtin(name).info.name


def is_cached(name: str) -> bool:
    """Whether the dataset is converted already, so that loading it needs no download."""
    return cache_path(name).is_file()


def _check(info: DatasetInfo, x: np.ndarray, y: np.ndarray) -> None:
    if x.dtype != np.uint8 or x.shape[1:] != info.sample_shape:
        raise ValueError(f"its images are {x.dtype} {x.shape[1:]}, not uint8 "
                         f"{info.sample_shape}")
    if y.shape != (len(x),) or not np.issubdtype(y.dtype, np.integer):
        raise ValueError("it does not hold one whole-number label per image")
    if len(y) and not 0 <= y.min() <= y.max() < info.num_classes:
        raise ValueError(f"its labels are not all in 0..{info.num_classes - 1}")


def _read_cache(builtin: Builtin) -> Arrays | None:
    """The converted arrays, or None if there are none; a damaged file is deleted."""
    path = cache_path(builtin.info.name)
    if not path.is_file():
        return None
    try:
        with path.open("rb") as file, np.load(file, allow_pickle=False) as archive:
            x, y = archive["x"], archive["y"]
        _check(builtin.info, x, y)
    except (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile, zlib.error):
        path.unlink()
        return None
    return x, y.astype(np.int32)


def _write_cache(builtin: Builtin, x: np.ndarray, y: np.ndarray) -> None:
    with atomic_file(cache_path(builtin.info.name)) as out:
        np.savez(out, x=x, y=y)


def _damaged(builtin: Builtin, paths: list[Path], downloaded: list[Path],
             why: Exception) -> DataError:
    title, placed = builtin.info.title, [path for path in paths if path not in downloaded]
    if not placed:
        return DataError(f"{title} arrived damaged ({why}). Pick it again to download it "
                         f"anew, or {_alternatives(builtin)}")
    names = " and ".join(path.name for path in placed)
    return DataError(f"{title} cannot be read from {names} in {paths[0].parent} ({why}). "
                     f"Delete {'it' if len(placed) == 1 else 'them'} and pick {title} again, "
                     "or place the original files there.")


def _read_originals(builtin: Builtin, paths: list[Path], downloaded: list[Path]) -> Arrays:
    """The arrays in the original files; raise DataError if they are damaged, deleting the
    ones just downloaded."""
    try:
        x, y = builtin.read(paths)
        x, y = np.ascontiguousarray(x), y.astype(np.int32)
        _check(builtin.info, x, y)
    except PermissionError:
        raise
    except (ValueError, KeyError, EOFError, OSError, tarfile.TarError, zipfile.BadZipFile,
            zlib.error) as exc:
        for path in downloaded:
            path.unlink()
        raise _damaged(builtin, paths, downloaded, exc) from None
    return x, y


def _alternatives(builtin: Builtin) -> str:
    files = builtin.files
    names = files[0] if len(files) == 1 else f"{', '.join(files[:-1])} and {files[-1]}"
    source = MIRRORS[ORIGINALS[files[0]].mirror]
    return (f"place {names} (from {source}) in {originals_dir(builtin.info.name)}, "
            "or train on the bundled MNIST-10k or an image folder.")


def _download_error(builtin: Builtin, exc: DownloadError) -> DataError:
    title = builtin.info.title
    if exc.reason == "cancelled":
        return DataError(f"Downloading {title} was cancelled.")
    retry = ("Connect to the internet and pick it again" if exc.reason == "connection"
             else "Try again later")
    return DataError(f"Could not download {title}: {exc}. {retry}, or "
                     f"{_alternatives(builtin)}")


def _check_placed(builtin: Builtin, path: Path) -> None:
    """Raise DataError if a file found in the originals folder is not the published one."""
    original = ORIGINALS[path.name]
    if path.stat().st_size == original.size and (
            not original.checksum or file_digest(path, original.checksum[0])
            == original.checksum[1].lower()):
        return
    raise DataError(f"{path.name} in {path.parent} is not the original {builtin.info.title} "
                    f"file (its size or checksum differs). Delete it and pick "
                    f"{builtin.info.title} again, or place the original file there.")


def _check_space(builtin: Builtin, missing: list[str]) -> None:
    info = builtin.info
    converted = info.num_samples * (int(np.prod(info.sample_shape)) + 4)
    needed = converted + sum(ORIGINALS[name].size for name in missing)
    folder = datasets_dir()
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise DataError(f"There is not enough free disk space for {info.title}: it needs "
                        f"about {needed / 1e6:,.0f} MB and {folder} has "
                        f"{free / 1e6:,.0f} MB free. Free some space, or set "
                        "LAYER_STUDIO_HOME to a folder on a larger disk.")


def _fetch(builtin: Builtin, on_progress: Progress, stop: threading.Event
           ) -> tuple[list[Path], list[Path]]:
    """The original files, downloading those not there yet: (all paths, downloaded ones)."""
    folder = originals_dir(builtin.info.name)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / name for name in builtin.files]
    missing = [path for path in paths if not path.is_file()]
    for path in paths:
        if path not in missing:
            _check_placed(builtin, path)
    _check_space(builtin, [path.name for path in missing])
    what = f"Downloading {builtin.info.title}"
    total = sum(ORIGINALS[path.name].size for path in missing)
    start = 0
    for path in missing:
        original = ORIGINALS[path.name]
        try:
            download(MIRRORS[original.mirror] + path.name, path,
                     lambda done, _, start=start: on_progress(what, start + done, total),
                     stop, size=original.size, checksum=original.checksum)
        except DownloadError as exc:
            raise _download_error(builtin, exc) from None
        start += original.size
    return paths, missing


def _convert(builtin: Builtin, on_progress: Progress, stop: threading.Event) -> Arrays:
    paths, downloaded = _fetch(builtin, on_progress, stop)
    what = f"Preparing {builtin.info.title}"
    on_progress(what, 0, 1)
    x, y = _read_originals(builtin, paths, downloaded)
    _write_cache(builtin, x, y)
    for path in downloaded:
        path.unlink()
    if not any(paths[0].parent.iterdir()):
        paths[0].parent.rmdir()
    on_progress(what, 1, 1)
    return x, y


def _disk_error(builtin: Builtin, exc: OSError) -> DataError:
    title, folder = builtin.info.title, datasets_dir()
    if exc.errno == errno.ENOSPC:
        return DataError(f"The disk holding {folder} is full, so {title} cannot be saved. "
                         "Free some space and pick it again.")
    if isinstance(exc, PermissionError):
        return DataError(f"Layer Studio may not write to {folder}, so {title} cannot be "
                         "saved. Allow writing there, or set LAYER_STUDIO_HOME to a folder "
                         "you can write to.")
    return DataError(f"{title} cannot be saved in {folder}: {exc.strerror or exc}.")


@contextmanager
def _exclusive(builtin: Builtin, stop: threading.Event) -> Iterator[None]:
    """One load of a dataset at a time: a second waits (cancellably) and then finds the
    first one's file."""
    lock = _LOCKS[builtin.info.name]
    while not lock.acquire(timeout=0.1):
        if stop.is_set():
            raise DataError(f"Loading {builtin.info.title} was cancelled.")
    try:
        yield
    finally:
        lock.release()


def load_builtin(name: str, on_progress: Progress, stop: threading.Event) -> Arrays:
    """All samples of built-in dataset ``name`` (uint8, N × H × W × C; training and test files
    together) and their int32 labels.

    The first call downloads and converts the original files, reporting progress; setting
    ``stop`` cancels it. Later calls read the converted file only. Raise DataError with
    what to do instead if the files cannot be had (offline, a server error, a damaged or
    cancelled download, a full or read-only disk).
    """
    builtin = _builtin(name)
    with _exclusive(builtin, stop):
        try:
            arrays = _read_cache(builtin) or _convert(builtin, on_progress, stop)
        except OSError as exc:
            raise _disk_error(builtin, exc) from None
    for array in arrays:
        array.setflags(write=False)
    return arrays
