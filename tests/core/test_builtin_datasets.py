"""The Keras built-in datasets, served from small files in the real formats on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import errno
import gzip
import hashlib
import io
import pickle
import subprocess
import sys
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from studio.core.base import downloads
from studio.core.data import builtin as builtin_datasets
from studio.core.data.builtin import (
    BUILTINS,
    MIRRORS,
    ORIGINALS,
    builtin_info,
    cache_path,
    datasets_dir,
    is_cached,
    load_builtin,
    originals_dir,
)
from studio.core.data.sources import describe, load
from studio.core.data.types import DataError
from studio.core.project.document import DatasetChoice

OFFLINE = "http://127.0.0.1:9/"
"""A closed port: refused at once, with or without a network."""
RNG = np.random.default_rng(4)


def npz_bytes(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def idx_gz(array: np.ndarray) -> bytes:
    header = bytes((0, 0, 0x08, array.ndim)) + np.asarray(array.shape, ">u4").tobytes()
    return gzip.compress(header + array.tobytes(), mtime=0)


def tar_gz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def images(n: int, shape: tuple[int, ...]) -> np.ndarray:
    return RNG.integers(0, 256, (n, *shape), dtype=np.uint8)


def labels(n: int, classes: int) -> np.ndarray:
    return RNG.integers(0, classes, n).astype(np.uint8)


def cifar_records(x: np.ndarray, *label_columns: np.ndarray) -> bytes:
    """Binary CIFAR records: the label bytes, then the pixels colour plane by colour plane."""
    planes = x.transpose(0, 3, 1, 2).reshape(len(x), -1)
    return np.column_stack([*label_columns, planes]).astype(np.uint8).tobytes()


def synthetic(name: str) -> tuple[dict[str, bytes], np.ndarray, np.ndarray]:
    """Small original files of dataset ``name``, and the samples and labels they hold."""
    if name in ("mnist", "fashion_mnist"):
        train_x, test_x = images(5, (28, 28)), images(3, (28, 28))
        train_y, test_y = labels(5, 10), labels(3, 10)
        x = np.concatenate([train_x, test_x])[..., np.newaxis]
        y = np.concatenate([train_y, test_y])
        if name == "mnist":
            return {"mnist.npz": npz_bytes(x_train=train_x, y_train=train_y, x_test=test_x,
                                           y_test=test_y)}, x, y
        return {"train-labels-idx1-ubyte.gz": idx_gz(train_y),
                "train-images-idx3-ubyte.gz": idx_gz(train_x),
                "t10k-labels-idx1-ubyte.gz": idx_gz(test_y),
                "t10k-images-idx3-ubyte.gz": idx_gz(test_x)}, x, y
    if name == "cifar10":
        parts = [(images(2, (32, 32, 3)), labels(2, 10)) for _ in range(6)]
        names = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
        records = {f"cifar-10-batches-bin/{n}": cifar_records(px, ys)
                   for n, (px, ys) in zip(names, parts, strict=True)}
        # Stored out of order, between the label names: the order of the batches counts.
        members = {"cifar-10-batches-bin/batches.meta.txt": b"airplane\nautomobile\n",
                   **dict(reversed(records.items()))}
        return ({"cifar-10-binary.tar.gz": tar_gz(members)},
                np.concatenate([px for px, _ in parts]), np.concatenate([ys for _, ys in parts]))
    train_x, test_x = images(4, (32, 32, 3)), images(3, (32, 32, 3))
    train_y, test_y = labels(4, 100), labels(3, 100)
    members = {"cifar-100-binary/fine_label_names.txt": b"apple\naquarium_fish\n",
               "cifar-100-binary/test.bin": cifar_records(test_x, labels(3, 20), test_y),
               "cifar-100-binary/coarse_label_names.txt": b"aquatic_mammals\nfish\n",
               "cifar-100-binary/train.bin": cifar_records(train_x, labels(4, 20), train_y)}
    return ({"cifar-100-binary.tar.gz": tar_gz(members)}, np.concatenate([train_x, test_x]),
            np.concatenate([train_y, test_y]))


class Mirror:
    """The files served on 127.0.0.1, and which were asked for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.files: dict[str, bytes] = {}
        self.cut: set[str] = set()
        self.hits: list[str] = []

    def publish(self, name: str, served: dict[str, bytes] | None = None, *,
                expected: bytes | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Serve small files of dataset ``name`` and make them the expected originals, with
        a checksum of the same kind as the real one (or of ``expected`` instead)."""
        files, x, y = synthetic(name)
        for file, data in (files if served is None else served).items():
            self.files[file] = data
            self.expect(file, data if expected is None else expected)
        return x, y

    def expect(self, file: str, data: bytes) -> None:
        original = ORIGINALS[file]
        checksum = original.checksum and (
            original.checksum[0], hashlib.new(original.checksum[0], data).hexdigest())
        self.monkeypatch.setitem(ORIGINALS, file, dataclasses.replace(
            original, size=len(data), checksum=checksum))


@pytest.fixture
def mirror(monkeypatch):
    served = Mirror(monkeypatch)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the name http.server calls)
            name = self.path.rsplit("/", 1)[-1]
            served.hits.append(name)
            body = served.files.get(name)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2] if name in served.cut else body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,))
    thread.start()
    for key in MIRRORS:
        monkeypatch.setitem(MIRRORS, key, f"http://127.0.0.1:{server.server_address[1]}/")
    yield served
    server.shutdown()
    server.server_close()
    thread.join()


def offline(monkeypatch) -> None:
    for key in MIRRORS:
        monkeypatch.setitem(MIRRORS, key, OFFLINE)


def files_left() -> list[str]:
    """Every file under the datasets folder (empty folders do not count)."""
    return sorted(str(p.relative_to(datasets_dir())) for p in datasets_dir().rglob("*")
                  if p.is_file())


def no_progress(what: str, done: int, total: int) -> None:
    pass


def load_quietly(name: str, stop: threading.Event | None = None):
    return load_builtin(name, no_progress, stop or threading.Event())


@pytest.mark.parametrize(("name", "title", "shape", "classes", "samples"), [
    ("mnist", "MNIST", (28, 28, 1), 10, 70_000),
    ("fashion_mnist", "Fashion-MNIST", (28, 28, 1), 10, 70_000),
    ("cifar10", "CIFAR-10", (32, 32, 3), 10, 60_000),
    ("cifar100", "CIFAR-100", (32, 32, 3), 100, 60_000),
])
def test_what_each_builtin_holds(name, title, shape, classes, samples):
    info = builtin_info(name)
    assert (info.name, info.title, info.sample_shape, info.num_classes, info.num_samples) == (
        name, title, shape, classes, samples)
    assert len(set(info.class_names)) == classes
    assert title.split("-")[0] in info.credit
    assert describe(DatasetChoice(source="keras", name=name)) == info


def test_builtins_in_display_order_with_their_real_class_names():
    assert BUILTINS == ("mnist", "fashion_mnist", "cifar10", "cifar100")
    assert builtin_info("fashion_mnist").class_names[::9] == ("T-shirt/top", "Ankle boot")
    assert builtin_info("cifar10").class_names[:3] == ("airplane", "automobile", "bird")
    fine = builtin_info("cifar100").class_names
    # The fine labels are in alphabetical order, as in fine_label_names.txt.
    assert list(fine) == sorted(fine) and (fine[0], fine[-1]) == ("apple", "worm")
    assert "sweet_pepper" in fine and "willow_tree" in fine


def test_an_unknown_name_lists_the_choices():
    message = "Unknown Keras dataset 'svhn': choose one of mnist, fashion_mnist, cifar10, cifar100."
    with pytest.raises(DataError, match=message):
        builtin_info("svhn")
    with pytest.raises(DataError, match=message):
        load_quietly("svhn")


def test_describing_loads_no_tensorflow():
    code = ("import sys; from studio.core.data.builtin import BUILTINS, builtin_info;"
            "[builtin_info(n) for n in BUILTINS];"
            "print('tensorflow' in sys.modules, 'keras' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("name", BUILTINS)
def test_first_load_downloads_with_progress_and_decodes_every_sample(mirror, name):
    x, y = mirror.publish(name)
    progress: list[tuple[str, int, int]] = []
    loaded_x, loaded_y = load_builtin(name, lambda *a: progress.append(a), threading.Event())
    np.testing.assert_array_equal(loaded_x, x)
    np.testing.assert_array_equal(loaded_y, y)
    assert loaded_x.dtype == np.uint8 and loaded_y.dtype == np.int32
    title = builtin_info(name).title
    downloading = [(done, total) for what, done, total in progress
                   if what == f"Downloading {title}"]
    total = sum(map(len, mirror.files.values()))
    assert downloading[0] == (0, total) and downloading[-1] == (total, total)
    assert [done for done, _ in downloading] == sorted(done for done, _ in downloading)
    assert progress[-1] == (f"Preparing {title}", 1, 1)
    assert sorted(mirror.hits) == sorted(mirror.files)
    # Only the converted file stays: the downloaded originals are deleted once converted.
    assert files_left() == [f"{name}.npz"] and is_cached(name)


def test_later_loads_read_only_the_cache(mirror, monkeypatch):
    x, y = mirror.publish("cifar10")
    load_quietly("cifar10")
    offline(monkeypatch)
    loaded_x, loaded_y = load_builtin("cifar10", pytest.fail, threading.Event())
    np.testing.assert_array_equal(loaded_x, x)
    np.testing.assert_array_equal(loaded_y, y)
    assert mirror.hits == ["cifar-10-binary.tar.gz"]
    assert not loaded_x.flags.writeable


def test_two_loads_at_once_download_once(mirror):
    mirror.publish("mnist")
    results = []
    threads = [threading.Thread(target=lambda: results.append(load_quietly("mnist")))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2 and mirror.hits == ["mnist.npz"]
    np.testing.assert_array_equal(results[0][0], results[1][0])


def test_cancelling_mid_download_leaves_nothing_to_trust(mirror, monkeypatch):
    monkeypatch.setattr(downloads, "CHUNK", 64)
    x, _ = mirror.publish("cifar10")
    stop = threading.Event()
    seen: list[int] = []

    def on_progress(what, done, total):
        seen.append(done)
        if done:
            stop.set()

    with pytest.raises(DataError, match=r"^Downloading CIFAR-10 was cancelled\.$"):
        load_builtin("cifar10", on_progress, stop)
    assert seen == [0, 64] and files_left() == []
    np.testing.assert_array_equal(load_quietly("cifar10")[0], x)


def test_offline_says_what_to_do_instead(monkeypatch):
    offline(monkeypatch)
    with pytest.raises(DataError) as error:
        load_builtin("cifar10", pytest.fail, threading.Event())
    assert str(error.value) == (
        "Could not download CIFAR-10: no connection to 127.0.0.1. Connect to the internet "
        f"and pick it again, or place cifar-10-binary.tar.gz (from {OFFLINE}) in "
        f"{originals_dir('cifar10')}, or train on the bundled MNIST-10k or an image folder.")
    assert originals_dir("cifar10").is_dir() and files_left() == []


def test_offline_message_names_every_fashion_file(monkeypatch):
    offline(monkeypatch)
    with pytest.raises(DataError, match=(
            r"place train-labels-idx1-ubyte\.gz, train-images-idx3-ubyte\.gz, "
            r"t10k-labels-idx1-ubyte\.gz and t10k-images-idx3-ubyte\.gz \(from ")):
        load_quietly("fashion_mnist")


@pytest.mark.parametrize("name", ["cifar10", "fashion_mnist"])
def test_original_files_placed_by_hand_work_offline(monkeypatch, name):
    files, x, y = synthetic(name)
    mirror = Mirror(monkeypatch)
    for file, data in files.items():
        mirror.expect(file, data)
        originals_dir(name).mkdir(parents=True, exist_ok=True)
        (originals_dir(name) / file).write_bytes(data)
    offline(monkeypatch)
    loaded_x, loaded_y = load_quietly(name)
    np.testing.assert_array_equal(loaded_x, x)
    np.testing.assert_array_equal(loaded_y, y)
    # The person's files stay where they put them.
    assert files_left() == sorted([f"{name}.npz", *(f"{name}/{file}" for file in files)])


def test_a_placed_file_that_is_not_the_original_is_refused(monkeypatch):
    files, _, _ = synthetic("cifar10")
    Mirror(monkeypatch).expect("cifar-10-binary.tar.gz", files["cifar-10-binary.tar.gz"])
    placed = originals_dir("cifar10") / "cifar-10-binary.tar.gz"
    placed.parent.mkdir(parents=True)
    placed.write_bytes(b"x" * len(files["cifar-10-binary.tar.gz"]))
    with pytest.raises(DataError, match=(
            r"^cifar-10-binary\.tar\.gz in .* is not the original CIFAR-10 file \(its size "
            r"or checksum differs\)\. Delete it")):
        load_quietly("cifar10")
    assert placed.is_file()


def test_placed_files_that_cannot_be_read_are_named_and_kept(monkeypatch):
    files, _, _ = synthetic("fashion_mnist")
    files["t10k-images-idx3-ubyte.gz"] = gzip.compress(b"not an IDX file")
    mirror = Mirror(monkeypatch)
    originals_dir("fashion_mnist").mkdir(parents=True)
    for file, data in files.items():
        mirror.expect(file, data)
        (originals_dir("fashion_mnist") / file).write_bytes(data)
    offline(monkeypatch)
    with pytest.raises(DataError, match=(
            r"^Fashion-MNIST cannot be read from train-labels-idx1-ubyte\.gz and .* \(it is "
            r"not an IDX file of bytes\)\. Delete them and pick Fashion-MNIST again")):
        load_quietly("fashion_mnist")
    assert len(files_left()) == 4


def test_a_download_that_cannot_be_read_is_not_kept(mirror):
    files, _, _ = synthetic("fashion_mnist")
    files["train-labels-idx1-ubyte.gz"] = idx_gz(np.zeros((2, 2), np.uint8))
    mirror.publish("fashion_mnist", served=files)
    with pytest.raises(DataError, match=(
            r"^Fashion-MNIST arrived damaged \(it is not an IDX file of bytes\)\. Pick it "
            r"again to download it anew, or place")):
        load_quietly("fashion_mnist")
    assert files_left() == []


def test_a_download_with_the_wrong_checksum_is_not_kept(mirror):
    mirror.publish("cifar100", expected=b"the real archive")
    mirror.files["cifar-100-binary.tar.gz"] = mirror.files["cifar-100-binary.tar.gz"][:16]
    with pytest.raises(DataError, match=(
            r"^Could not download CIFAR-100: cifar-100-binary\.tar\.gz arrived damaged \(it "
            r"is not the expected file\)\. Try again later, or place")):
        load_quietly("cifar100")
    assert files_left() == []


def test_a_server_error_is_explained(mirror):
    mirror.publish("mnist", served={})
    with pytest.raises(DataError, match=(
            r"^Could not download MNIST: 127\.0\.0\.1 answered 404 Not Found\. Try again "
            r"later, or place mnist\.npz")):
        load_quietly("mnist")
    assert files_left() == []


def test_a_download_cut_short_is_not_kept(mirror):
    mirror.publish("fashion_mnist")
    mirror.cut.add("train-images-idx3-ubyte.gz")
    size = len(mirror.files["train-images-idx3-ubyte.gz"])
    with pytest.raises(DataError, match=(
            rf"^Could not download Fashion-MNIST: the download from 127\.0\.0\.1 stopped after "
            rf"{size // 2:,} of {size:,} bytes\. Try again later")):
        load_quietly("fashion_mnist")
    # The file downloaded whole before it stays, checked, for the next try.
    assert files_left() == ["fashion_mnist/train-labels-idx1-ubyte.gz"]
    mirror.cut.clear()
    load_quietly("fashion_mnist")
    assert mirror.hits.count("train-labels-idx1-ubyte.gz") == 1


@pytest.mark.parametrize("damage", ["garbage", "cut", "wrong shape", "pickled"])
def test_a_damaged_cache_is_made_again(mirror, damage):
    x, y = mirror.publish("mnist")
    load_quietly("mnist")
    whole = cache_path("mnist").read_bytes()
    cache_path("mnist").write_bytes({
        "garbage": b"not a zip file",
        "cut": whole[:len(whole) // 2],
        "wrong shape": npz_bytes(x=np.zeros((2, 5, 5, 1), np.uint8), y=np.zeros(2, np.int32)),
        "pickled": npz_bytes(x=np.array([object()]), y=np.zeros(1, np.int32)),
    }[damage])
    loaded_x, loaded_y = load_quietly("mnist")
    np.testing.assert_array_equal(loaded_x, x)
    np.testing.assert_array_equal(loaded_y, y)
    assert mirror.hits == ["mnist.npz", "mnist.npz"]


def test_nothing_is_ever_unpickled(mirror, monkeypatch):
    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, pytest.fail)
    for name in BUILTINS:
        x, _ = mirror.publish(name)
        np.testing.assert_array_equal(load_quietly(name)[0], x)
        np.testing.assert_array_equal(load_quietly(name)[0], x)


def test_an_original_holding_pickled_objects_is_refused(mirror):
    files, _, _ = synthetic("mnist")
    evil = npz_bytes(x_train=np.array([object()]), y_train=np.zeros(1, np.uint8),
                     x_test=np.zeros((1, 28, 28), np.uint8), y_test=np.zeros(1, np.uint8))
    mirror.publish("mnist", served={"mnist.npz": evil})
    with pytest.raises(DataError, match=(
            r"^MNIST arrived damaged \(Object arrays cannot be loaded when allow_pickle=False"
            r"\)\. Pick it again to download it anew")):
        load_quietly("mnist")
    assert files_left() == []


def test_not_enough_disk_space_is_said_before_downloading(mirror, monkeypatch):
    mirror.publish("cifar10")
    monkeypatch.setattr(builtin_datasets.shutil, "disk_usage",
                        lambda path: dataclasses.make_dataclass("U", ["free"])(5_000_000))
    with pytest.raises(DataError, match=(
            r"^There is not enough free disk space for CIFAR-10: it needs about 185 MB and "
            r".* has 5 MB free\. Free some space, or set LAYER_STUDIO_HOME")):
        load_quietly("cifar10")
    assert mirror.hits == []


@pytest.mark.parametrize(("error", "message"), [
    (OSError(errno.ENOSPC, "No space left on device"), r"^The disk holding .* is full, so "
     r"CIFAR-10 cannot be saved\. Free some space and pick it again\.$"),
    (PermissionError(errno.EACCES, "Permission denied"), r"^Layer Studio may not write to "
     r".*, so CIFAR-10 cannot be saved\. Allow writing there, or set LAYER_STUDIO_HOME"),
])
def test_a_disk_that_cannot_take_the_cache_is_explained(mirror, monkeypatch, error, message):
    x, _ = mirror.publish("cifar10")

    def fail(*args, **kwargs):
        raise error

    with monkeypatch.context() as patch:
        patch.setattr(builtin_datasets.np, "savez", fail)
        with pytest.raises(DataError, match=message):
            load_quietly("cifar10")
    # Nothing half-written; the checked download is kept and used once there is room.
    assert files_left() == ["cifar10/cifar-10-binary.tar.gz"]
    np.testing.assert_array_equal(load_quietly("cifar10")[0], x)
    assert mirror.hits == ["cifar-10-binary.tar.gz"]


def test_a_workspace_that_is_not_a_folder_is_explained(monkeypatch, tmp_path):
    home = tmp_path / "home"
    home.write_text("a file, not a folder")
    monkeypatch.setenv("LAYER_STUDIO_HOME", str(home))
    with pytest.raises(DataError, match=r"^MNIST cannot be saved in .*home/datasets: "):
        load_quietly("mnist")


def test_loading_a_builtin_through_the_data_core(mirror):
    x, y = mirror.publish("cifar10")
    loaded = load(DatasetChoice(source="keras", name="cifar10", validation_split=0.25,
                                seed=3))
    assert loaded.info.title == "CIFAR-10"
    np.testing.assert_array_equal(loaded.samples.x, x)
    np.testing.assert_array_equal(loaded.labels, y)
    together = np.sort(np.concatenate(list(loaded.splits.values())))
    np.testing.assert_array_equal(together, np.arange(len(y)))


def test_a_download_the_caller_rejects_leaves_nothing(mirror, tmp_path):
    mirror.files["weights.h5"] = b"<html>"
    target = tmp_path / "weights.h5"
    with pytest.raises(downloads.DownloadError) as error:
        downloads.download(MIRRORS["keras"] + "weights.h5", target, lambda *a: None,
                           threading.Event(), verify=lambda path: Path(path).read_bytes()
                           .startswith(b"\x89HDF"))
    assert error.value.reason == "damaged" and list(tmp_path.iterdir()) == []
