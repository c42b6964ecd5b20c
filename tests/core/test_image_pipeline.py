"""Image pipelines: decoding every format, resizing, caching, normalising, augmenting, and
inference reading files exactly as training did."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from studio.core.data import image_reading
from studio.core.data import sources as data
from studio.core.data.image_pipeline import (
    ImageForm,
    disk_cache_prefix,
    preprocess_image_files,
    preprocess_images,
)
from studio.core.data.image_reading import image_datasets
from studio.core.data.types import ArraySamples, DatasetInfo, LoadedData
from studio.core.project.document import Augmentation, DatasetChoice

RNG = np.random.default_rng(0)
RGB = RNG.integers(0, 256, (6, 8, 3), dtype=np.uint8)
GREY = RGB[..., 0]


def raw_prep(size=(6, 8), color: str = "rgb", resize: str = "squash") -> dict:
    """A preprocessing record that leaves values in 0..255."""
    channels = 1 if color == "grayscale" else 3
    return {"image_size": list(size), "color": color, "resize": resize,
            "scale": [1.0] * channels, "offset": [0.0] * channels}


def read(path: Path, **prep) -> np.ndarray:
    """One file as the pipeline reads it, in 0..255."""
    return preprocess_image_files(raw_prep(**prep), [path])[0]


def save(path: Path, image: Image.Image, **params) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, **params)
    return path


def grey_rgb(grey: np.ndarray) -> np.ndarray:
    return np.repeat(grey[..., np.newaxis], 3, axis=-1)


@pytest.mark.parametrize("name", ["a.png", "a.bmp", "a.tif", "a.webp"])
def test_lossless_rgb_formats_read_exactly(tmp_path, name):
    params = {"lossless": True} if name.endswith(".webp") else {}
    path = save(tmp_path / name, Image.fromarray(RGB), **params)
    assert np.array_equal(read(path), RGB)


def test_jpeg_reads_close_to_its_pixels(tmp_path):
    path = save(tmp_path / "a.jpg", Image.fromarray(RGB), quality=100, subsampling=0)
    expected = np.asarray(Image.open(path).convert("RGB"))
    assert np.abs(read(path) - expected).max() <= 2


def test_cmyk_jpeg_reads_as_rgb(tmp_path):
    path = save(tmp_path / "cmyk.jpg", Image.fromarray(RGB).convert("CMYK"), quality=100,
                subsampling=0)
    expected = np.asarray(Image.open(path).convert("RGB")).astype(float)
    assert np.abs(read(path) - expected).max() <= 3


@pytest.mark.parametrize("name", ["p.png", "p.bmp", "p.gif"])
def test_palette_images_read_as_their_colours(tmp_path, name):
    image = Image.fromarray(RGB).convert("P")
    path = save(tmp_path / name, image)
    assert np.array_equal(read(path), np.asarray(image.convert("RGB")))


def test_animated_gif_and_webp_read_their_first_frame(tmp_path):
    frames = [Image.fromarray(RGB), Image.fromarray(255 - RGB)]
    for name, params in (("anim.gif", {}), ("anim.webp", {"lossless": True})):
        path = save(tmp_path / name, frames[0], save_all=True, append_images=frames[1:],
                    duration=100, **params)
        assert np.array_equal(read(path), np.asarray(Image.open(path).convert("RGB"))), name


@pytest.mark.parametrize("name, params", [("rgba.png", {}), ("rgba.webp", {"lossless": True}),
                                          ("rgba.tif", {})])
def test_alpha_is_dropped(tmp_path, name, params):
    path = save(tmp_path / name, Image.fromarray(np.dstack([RGB, GREY])), **params)
    assert np.array_equal(read(path), RGB)


def test_grey_and_grey_with_alpha_become_rgb_or_stay_grey(tmp_path):
    grey = save(tmp_path / "l.png", Image.fromarray(GREY))
    grey_alpha = save(tmp_path / "la.png", Image.fromarray(np.dstack([GREY, RGB[..., 1]]), "LA"))
    for path in (grey, grey_alpha):
        assert np.array_equal(read(path), grey_rgb(GREY))
        assert np.array_equal(read(path, color="grayscale")[..., 0], GREY)


def test_rgb_becomes_grey_with_the_usual_weights(tmp_path):
    path = save(tmp_path / "a.png", Image.fromarray(RGB))
    expected = np.asarray(Image.fromarray(RGB).convert("L")).astype(float)
    out = read(path, color="grayscale")
    assert out.shape == (6, 8, 1)
    assert np.abs(out[..., 0] - expected).max() <= 1


@pytest.mark.parametrize("name", ["deep.png", "deep.tif"])
def test_16_bit_images_are_scaled_to_0_255(tmp_path, name):
    values = np.array([[0, 257, 1000, 50000, 65535, 32896]], dtype=np.uint16)
    path = save(tmp_path / name, Image.fromarray(values))
    assert Image.open(path).mode == "I;16"
    assert read(path, size=(1, 6), color="grayscale")[0, :, 0].tolist() == [0, 1, 4, 195, 255,
                                                                             128]


def make_folder(root: Path, per_class: int = 6, size=(16, 16), names=("cats", "dogs")) -> Path:
    """A folder with a subfolder of seeded random RGB PNGs per class."""
    rng = np.random.default_rng(1)
    for label, name in enumerate(names):
        for i in range(per_class):
            pixels = rng.integers(0, 256, (*size, 3), dtype=np.uint8)
            pixels[..., label] = 255 - label * 40  # a class shows in a channel
            save(root / name / f"{i}.png", Image.fromarray(pixels))
    return root


def folder_choice(root: Path, **options) -> DatasetChoice:
    return DatasetChoice(source="folder", path=str(root), image_size=[16, 16], **options)


def datasets(choice: DatasetChoice, batch_size: int = 4, seed: int = 0):
    return image_datasets(data.load(choice), choice, batch_size, seed)


def gather(dataset) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = zip(*((x.numpy(), y.numpy()) for x, y in dataset), strict=True)
    return np.concatenate(xs), np.concatenate(ys)


def test_names_with_spaces_and_non_ascii_characters_are_read(tmp_path):
    for name in ("chat noir", "狗"):
        for i in range(3):
            save(tmp_path / "pets" / name / f"ü {i} ß.png", Image.fromarray(RGB))
    train, validation, test, prep = datasets(folder_choice(tmp_path / "pets"))
    x, y = gather(train)
    assert x.shape == (4, 16, 16, 3) and sorted(y.tolist()) == [0, 0, 1, 1]
    assert test is None and prep["class_names"] == ["chat noir", "狗"]


def test_prep_records_the_steps_and_batches_have_the_recorded_shape(tmp_path):
    choice = folder_choice(make_folder(tmp_path / "f"), color="grayscale", resize="pad",
                           test_split=0.2, augmentation=Augmentation(zoom=0.1))
    train, validation, test, prep = datasets(choice)
    assert prep["kind"] == "image" and prep["task"] == "classification"
    assert prep["class_names"] == ["cats", "dogs"] and prep["input_dtype"] == "float32"
    assert prep["sample_shape"] == [16, 16, 1] and prep["image_size"] == [16, 16]
    assert (prep["color"], prep["resize"], prep["normalization"]) == ("grayscale", "pad", "unit")
    assert prep["augmentation"]["zoom"] == 0.1
    for dataset, n in ((train, 8), (validation, 2), (test, 2)):
        x, y = gather(dataset)
        assert x.shape == (n, 16, 16, 1) and x.dtype == np.float32 and y.dtype == np.int32


def wide_image(root: Path) -> Path:
    """One class folder per class, each with a 8 × 16 image: columns 50 | 200 (8) | 100."""
    pixels = np.full((8, 16, 3), 200, np.uint8)
    pixels[:, :4], pixels[:, 12:] = 50, 100
    for name in ("a", "b"):
        for i in range(3):
            save(root / name / f"{i}.png", Image.fromarray(pixels))
    return root


def test_resize_modes(tmp_path):
    root = wide_image(tmp_path / "wide")
    shown = {}
    for mode in ("squash", "crop", "pad"):
        choice = replace(folder_choice(root, resize=mode), image_size=[8, 8])
        _, validation, _, _ = datasets(choice)
        x, _ = gather(validation)
        assert x.shape == (2, 8, 8, 3)
        shown[mode] = np.rint(x[0, ..., 0] * 255)
    squash, crop, pad = shown["squash"], shown["crop"], shown["pad"]
    assert squash[:, 0].max() < 100 and squash[:, 3:5].min() == 200 and squash[:, 7].min() < 150
    assert np.all(crop == 200)  # only the centre is kept
    assert np.all(pad[:2] == 0) and np.all(pad[6:] == 0)  # zero bars above and below
    assert pad[2:6, 3:5].min() == 200 and pad[2:6, 0].max() < 100


def test_unit_and_symmetric_normalisation(tmp_path):
    root = make_folder(tmp_path / "f")
    _, validation, _, unit_prep = datasets(folder_choice(root))
    _, symmetric, _, prep = datasets(folder_choice(root, normalization="symmetric"))
    unit, _ = gather(validation)
    assert unit_prep["scale"] == [1 / 255] * 3 and unit_prep["offset"] == [0.0] * 3
    assert prep["scale"] == [1 / 127.5] * 3 and prep["offset"] == [-1.0] * 3
    assert 0 <= unit.min() and unit.max() <= 1
    assert np.allclose(gather(symmetric)[0], np.rint(unit * 255) / 127.5 - 1, atol=1e-6)


def test_standardize_uses_the_training_split(tmp_path):
    choice = folder_choice(make_folder(tmp_path / "f"), normalization="standardize")
    train, validation, _, prep = datasets(choice)
    x, _ = gather(train)
    assert np.allclose(x.mean(axis=(0, 1, 2)), 0, atol=1e-4)
    assert np.allclose(x.std(axis=(0, 1, 2)), 1, atol=1e-4)
    assert prep["statistics"]["images"] == 10 == prep["statistics"]["training_images"]
    raw = np.rint(gather(validation)[0] / prep["scale"] - np.divide(prep["offset"],
                                                                    prep["scale"]))
    assert np.allclose(raw.mean(axis=(0, 1, 2)), prep["statistics"]["mean"], atol=30)


def test_standardize_samples_a_large_training_split(tmp_path, monkeypatch):
    monkeypatch.setattr(image_reading, "STATS_IMAGES", 4)
    choice = folder_choice(make_folder(tmp_path / "f"), normalization="standardize")
    _, _, _, prep = datasets(choice)
    assert prep["statistics"]["images"] == 4 and prep["statistics"]["training_images"] == 10
    assert all(s > 0 for s in prep["scale"])


def test_cache_none_memory_and_disk_give_the_same_batches(tmp_path, private_workspace):
    root = make_folder(tmp_path / "f")
    results = {}
    for cache in ("none", "memory", "disk"):
        train, validation, _, _ = datasets(folder_choice(root, cache=cache))
        epochs = [gather(train) for _ in range(2)]  # the second epoch reads the cache
        results[cache] = epochs, gather(validation)
    (first, second), validation = results["none"]
    assert not np.array_equal(first[1], second[1]) or not np.array_equal(first[0], second[0])
    for cache in ("memory", "disk"):
        epochs, other = results[cache]
        for (x, y), (x2, y2) in zip((first, second), epochs, strict=True):
            assert np.array_equal(x, x2) and np.array_equal(y, y2), cache
        assert np.array_equal(validation[0], other[0]), cache
    assert len(list((private_workspace / "cache").glob("*/*.index"))) == 2  # train, validation


def test_disk_cache_survives_a_run_that_left_it_half_written(tmp_path, private_workspace):
    root = make_folder(tmp_path / "f")
    paths = sorted(root.rglob("*.png"))
    form = ImageForm((16, 16), 3, "squash")
    prefix = Path(disk_cache_prefix(paths, form))
    stale = [Path(f"{prefix}_0.lockfile"), Path(f"{prefix}_0.data-00000-of-00001.tempstate1")]
    for path in stale:
        path.write_text("Created at: 0")
    new_prefix = disk_cache_prefix(paths, form)
    assert new_prefix != str(prefix)
    day_ago = time.time() - 2 * 24 * 3600
    for path in stale:
        os.utime(path, (day_ago, day_ago))
    disk_cache_prefix(paths, form)
    assert not any(path.exists() for path in stale)


def test_disk_cache_is_not_reused_when_a_file_changes(tmp_path, private_workspace):
    root = make_folder(tmp_path / "f")
    choice = folder_choice(root, cache="disk")
    _, validation, _, _ = datasets(choice)
    before, _ = gather(validation)
    changed = data.load(choice).samples.paths[data.load(choice).splits["validation"][0]]
    Image.new("RGB", (16, 16), (9, 9, 9)).save(changed)
    _, validation, _, _ = datasets(choice)
    after, _ = gather(validation)
    assert np.allclose(after[0], 9 / 255) and np.array_equal(after[1:], before[1:])


def test_augmentation_applies_to_training_only(tmp_path):
    root = make_folder(tmp_path / "f")
    aug = Augmentation(flip_horizontal=True, rotation=20.0, noise=0.05)
    plain_train, plain_val, _, _ = datasets(folder_choice(root))
    train, validation, _, _ = datasets(folder_choice(root, augmentation=aug))
    assert np.array_equal(gather(plain_val)[0], gather(validation)[0])
    (x, y), (plain_x, plain_y) = gather(train), gather(plain_train)
    assert np.array_equal(y, plain_y) and not np.allclose(x, plain_x, atol=0.01)
    assert 0 <= x.min() and x.max() <= 1


def random_sizes_folder(root: Path, formats=(".png",)) -> Path:
    """Two classes of seeded random RGB images of random sizes, cycling through ``formats``."""
    rng = np.random.default_rng(2)
    for name in ("a", "b"):
        for i in range(6):
            size = (int(rng.integers(10, 40)), int(rng.integers(10, 40)))
            pixels = rng.integers(0, 256, (*size, 3), dtype=np.uint8)
            suffix = formats[i % len(formats)]
            params = {"lossless": True} if suffix == ".webp" else {}
            save(root / name / f"{i}{suffix}", Image.fromarray(pixels), **params)
    return root


@pytest.mark.parametrize("resize", ["squash", "crop", "pad"])
def test_inference_reads_a_file_exactly_as_validation_did(tmp_path, resize):
    choice = folder_choice(random_sizes_folder(tmp_path / "f"), resize=resize,
                           color="grayscale", normalization="standardize",
                           validation_split=0.5)
    loaded = data.load(choice)
    _, validation, _, prep = image_datasets(loaded, choice, 4, 0)
    paths = [loaded.samples.paths[i] for i in loaded.splits["validation"]]
    x = gather(validation)[0]
    assert np.array_equal(x, preprocess_image_files(prep, paths))
    assert np.array_equal(x, preprocess_image_files(prep, paths, batch_size=1))  # one by one


def test_batches_of_mixed_formats_and_sizes_read_as_single_files_do(tmp_path):
    formats = (".png", ".jpg", ".bmp", ".gif", ".webp", ".tif")
    choice = folder_choice(random_sizes_folder(tmp_path / "f", formats), validation_split=0.5)
    loaded = data.load(choice)
    assert loaded.size("validation") == 6 and not loaded.notes
    paths = [loaded.samples.paths[i] for i in loaded.splits["validation"]]
    single = None  # each file read alone, with the decoder of its own format
    for cache in ("none", "memory"):  # read in batches, or one file at a time
        _, validation, _, prep = image_datasets(loaded, replace(choice, cache=cache), 4, 0)
        if single is None:
            single = np.concatenate([preprocess_image_files(prep, [path]) for path in paths])
        assert np.array_equal(gather(validation)[0], single), cache


def test_no_files_give_an_empty_batch():
    assert preprocess_image_files(raw_prep(), []).shape == (0, 6, 8, 3)


def test_bundled_arrays_are_converted_as_asked_and_inference_agrees():
    choice = DatasetChoice(image_size=[32, 32], color="rgb", resize="pad", validation_split=0.01)
    loaded = data.load(choice)
    _, validation, _, prep = image_datasets(loaded, choice, 256, 0)
    x, y = gather(validation)
    assert x.shape == (loaded.size("validation"), 32, 32, 3) and prep["color"] == "rgb"
    assert x[:, :2].any()  # square in, square out: no zero bars
    raw = loaded.samples.x[loaded.splits["validation"]]
    assert np.array_equal(x, preprocess_images(prep, raw))
    assert np.array_equal(y, loaded.labels[loaded.splits["validation"]])


def test_native_arrays_pass_unchanged_and_colour_arrays_become_grey():
    native = DatasetChoice(validation_split=0.01)
    loaded = data.load(native)
    _, validation, _, prep = image_datasets(loaded, native, 256, 0)
    raw = loaded.samples.x[loaded.splits["validation"]]
    assert prep["color"] == "grayscale"
    assert np.array_equal(np.rint(gather(validation)[0] * 255), raw)
    rgb = np.random.default_rng(3).integers(0, 256, (10, 5, 5, 3), dtype=np.uint8)
    info = replace(loaded.info, sample_shape=(5, 5, 1))
    splits = {"train": np.arange(8), "validation": np.arange(8, 10), "test": np.arange(0)}
    colour = LoadedData(info, ArraySamples(rgb), np.arange(10) % 2, splits)
    _, validation, _, prep = image_datasets(colour, DatasetChoice(color="grayscale"), 4, 0)
    expected = np.asarray([Image.fromarray(im).convert("L") for im in rgb[8:]], float)
    assert np.abs(gather(validation)[0][..., 0] * 255 - expected).max() <= 1


@pytest.mark.parametrize(("task", "cache"), [("classification", "disk"),
                                             ("segmentation", "none")])
def test_the_auto_cache_counts_the_masks_cached_beside_the_images(monkeypatch, task, cache):
    """10 grey images of 4 × 4 take 160 bytes decoded; a segmentation set caches a mask of as
    many bytes beside each, 320 in all: over a line of 200 bytes, it is not cached."""
    monkeypatch.setattr(image_reading, "AUTO_DISK_BYTES", 200)
    info = DatasetInfo("t", "t", (4, 4, 1), 2, ("a", "b"), 10, task=task)
    splits = {"train": np.arange(8), "validation": np.arange(8, 10), "test": np.arange(0)}
    loaded = LoadedData(info, ArraySamples(np.zeros((10, 4, 4, 1), np.uint8)),
                        np.arange(10) % 2, splits)
    form = ImageForm((4, 4), 1, "squash")
    assert image_reading.resolved_cache("auto", loaded, form) == cache
    assert image_reading.resolved_cache("memory", loaded, form) == "memory"
