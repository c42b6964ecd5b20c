"""Issue 24's segmentation pipeline: masks fitted to the input by the image's squash, crop or
pad at the nearest pixel (the padding IGNORE), agreeing with fitting.mask_in_image, which maps
them back; batches pixel-exact against masks resized by hand with Pillow; augmentation moving
the masks with the images in training batches only; class weights for the loss."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from studio.core.base.messages import first_line
from studio.core.data import sources
from studio.core.data.image_pipeline import ImageForm
from studio.core.data.pipelines import PIPELINE_BUILDERS, make_pipelines
from studio.core.data.segmentation import demo
from studio.core.data.segmentation import source as segmentation_source
from studio.core.data.segmentation.pipeline import first_masks, fitted_masks
from studio.core.data.segmentation.source import FileMasks
from studio.core.project.document import DatasetChoice
from studio.core.tasks.detection.fitting import box_mapping
from studio.core.tasks.segmentation.fitting import mask_in_image
from studio.core.tasks.segmentation.masks import IGNORE
from tests.core.test_segmentation_data import INDICES, pair

SIDE = 16
GREYS = np.zeros(256, np.uint8)
GREYS[[0, 1, 2, IGNORE]] = [60, 120, 180, 240]
"""The grey of each mask value in the training images, so that an image shows its mask."""
SIZES = {"train": [(SIDE, SIDE)] * 4, "val": [(11, 20), (20, 11), (9, 9)]}
"""Each split's image sizes (height, width): training's at the input size (never resized, so
that an augmented image still shows its mask), validation's resized each way, at sizes where
no input pixel's centre falls on the border of two image pixels (where float32 and Pillow's
float64 may round apart)."""


def random_mask(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    return rng.choice(np.array([0, 1, 2, IGNORE], np.uint8), size, p=[0.4, 0.3, 0.2, 0.1])


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """images/ and masks/ with train and val splits of three classes."""
    root = tmp_path_factory.mktemp("masks")
    rng = np.random.default_rng(7)
    for split, sizes in SIZES.items():
        for index, size in enumerate(sizes):
            mask = random_mask(rng, size)
            for kind, pixels in (("images", GREYS[mask]), ("masks", mask)):
                (root / kind / split).mkdir(parents=True, exist_ok=True)
                Image.fromarray(pixels).save(root / kind / split / f"{index}.png")
    (root / "classes.txt").write_text("a\nb\nc\n")
    return root


def by_hand(mask: np.ndarray, resize: str) -> np.ndarray:
    """``mask`` fitted to SIDE × SIDE with Pillow's nearest resizing: squashed, the largest
    centred square cropped, or shrunk to fit and centred on IGNORE."""
    image = Image.fromarray(mask)
    height, width = mask.shape
    if resize == "squash":
        return np.asarray(image.resize((SIDE, SIDE), Image.Resampling.NEAREST))
    if resize == "crop":
        side = min(height, width)
        top, left = (height - side) // 2, (width - side) // 2
        window = image.crop((left, top, left + side, top + side))
        return np.asarray(window.resize((SIDE, SIDE), Image.Resampling.NEAREST))
    ratio = max(width / SIDE, height / SIDE)  # as tf.image.resize_with_pad: the margin
    fitted = (int(width / ratio), int(height / ratio))  # before the size is cut to pixels
    canvas = np.full((SIDE, SIDE), IGNORE, np.uint8)
    left, top = int((SIDE - width / ratio) // 2), int((SIDE - height / ratio) // 2)
    canvas[top:top + fitted[1], left:left + fitted[0]] = np.asarray(
        image.resize(fitted, Image.Resampling.NEAREST))
    return canvas


def choice(root: Path, resize: str = "squash", **fields) -> DatasetChoice:
    return DatasetChoice(source="segmentation", path=str(root), task="segmentation",
                         image_size=[SIDE, SIDE], color="grayscale", resize=resize,
                         **{"cache": "memory", **fields})


def masks_read(root: Path, split: str) -> list[np.ndarray]:
    return [np.asarray(Image.open(root / "masks" / split / f"{i}.png"))
            for i in range(len(SIZES[split]))]


@pytest.mark.parametrize("resize", ["squash", "crop", "pad"])
def test_fitted_masks_sample_the_image_pixel_under_each_input_pixel(resize):
    """The oracle: each input pixel's centre taken back through detection's box mapping
    (what fitting.mask_in_image inverts) into the mask, IGNORE where it lands outside."""
    rng = np.random.default_rng(3)
    form = ImageForm((SIDE, SIDE), 1, resize)
    for size in ((12, 20), (20, 12), (9, 9), (37, 16)):
        mask = random_mask(rng, size)
        mapping = box_mapping(size, (SIDE, SIDE), resize)
        rows = np.floor((np.arange(SIDE) + 0.5 - mapping.shift[1]) / mapping.scale[1])
        cols = np.floor((np.arange(SIDE) + 0.5 - mapping.shift[0]) / mapping.scale[0])
        rows, cols = rows.astype(int)[:, None], cols.astype(int)[None, :]
        inside = (rows >= 0) & (rows < size[0]) & (cols >= 0) & (cols < size[1])
        expected = np.where(inside, mask[rows.clip(0, size[0] - 1), cols.clip(0, size[1] - 1)],
                            IGNORE)
        np.testing.assert_array_equal(fitted_masks(mask, form).numpy(), expected,
                                      err_msg=f"{resize} {size}")


@pytest.mark.parametrize(("resize", "size"), [("squash", (8, 8)), ("crop", (8, 12)),
                                              ("pad", (8, 16))])
def test_mask_in_image_takes_a_fitted_mask_back_to_the_image(resize, size):
    mask = random_mask(np.random.default_rng(5), size)
    fitted = fitted_masks(mask, ImageForm((SIDE, SIDE), 1, resize)).numpy()
    back = mask_in_image(fitted, size, resize)
    if resize == "crop":  # the sides the crop cut off have no class
        assert (back[:, :2] == IGNORE).all() and (back[:, -2:] == IGNORE).all()
        back, mask = back[:, 2:-2], mask[:, 2:-2]
    np.testing.assert_array_equal(back, mask)


def test_batches_hold_the_masks_resized_by_hand(folder):
    padding = choice(folder, "pad", class_weights=True)
    loaded = sources.load(padding)
    assert PIPELINE_BUILDERS["masks"].__name__ == "_mask_datasets"
    pipes = make_pipelines(loaded, padding, 2, 0)
    batches = list(pipes.validation.take(pipes.validation_steps))
    x = np.concatenate([b[0].numpy() for b in batches])
    y = np.concatenate([b[1].numpy() for b in batches])
    assert x.shape == (3, SIDE, SIDE, 1) and x.dtype == np.float32 and y.dtype == np.uint8
    expected = np.stack([by_hand(m, "pad") for m in masks_read(folder, "val")])
    np.testing.assert_array_equal(y, expected)
    # What an export is scored on: the first masks, as many as asked for (or there are).
    np.testing.assert_array_equal(pipes.scoring(2), expected[:2])
    np.testing.assert_array_equal(pipes.scoring(100), expected)
    assert pipes.preprocessing["task"] == "segmentation" and pipes.preprocessing["resize"] == "pad"
    for resize in ("squash", "crop"):  # the masks the batches read, made as for the pad
        made = first_masks(loaded, "validation", ImageForm((SIDE, SIDE), 1, resize), 3)
        np.testing.assert_array_equal(made, [by_hand(m, resize) for m in masks_read(folder, "val")])

    counts = np.asarray(loaded.class_counts("train"), np.float64)  # pixels, IGNORE left out
    assert counts.sum() == sum(int((m != IGNORE).sum()) for m in masks_read(folder, "train"))
    np.testing.assert_allclose(pipes.loss_class_weights, counts.sum() / (3 * counts))
    assert pipes.fit_arguments()["class_weight"] is None  # not Keras's per-sample weights


def test_augmentation_moves_masks_with_their_images_in_training_batches_only(folder):
    flipping = choice(folder)
    flipping.augmentation.flip_horizontal = True
    flipping.augmentation.flip_vertical = True
    loaded = sources.load(flipping)
    pipes = make_pipelines(loaded, flipping, 2, 0)
    plain = masks_read(folder, "train")
    moved = 0
    for x, y in pipes.train.take(8):
        images = np.rint(x.numpy()[..., 0] * 255).astype(np.uint8)
        np.testing.assert_array_equal(images, GREYS[y.numpy()])  # each image shows its mask
        moved += sum(not any(np.array_equal(m, p) for p in plain) for m in y.numpy())
    assert moved > 0
    y = np.concatenate([b[1].numpy() for b in pipes.validation.take(pipes.validation_steps)])
    np.testing.assert_array_equal(y, [by_hand(m, "squash") for m in masks_read(folder, "val")])
    assert pipes.loss_class_weights is None


def test_the_demo_sets_masks_held_in_memory_are_fitted_alike(monkeypatch):
    monkeypatch.setattr(segmentation_source, "DEMO_IMAGES", {"train": 8, "validation": 4})
    loaded = sources.load(DatasetChoice(source="segmentation", task="segmentation",
                                        image_size=[SIDE, SIDE]))
    made = first_masks(loaded, "validation", ImageForm((SIDE, SIDE), 1, "crop"), 4)
    expected = [by_hand(mask, "crop") for mask in demo.demo_set(8, 4).masks[8:]]
    np.testing.assert_array_equal(made, expected)


@pytest.mark.parametrize("cache", ["memory", "disk"])
def test_masks_are_read_as_batches_are_drawn_and_cached_with_their_images(folder, cache,
                                                                         monkeypatch):
    """No split's masks are read when the pipelines are made (none held whole in memory):
    each is read as its batch is drawn, once, the cache keeping it with its image after."""
    reads: list[str] = []
    read = FileMasks.mask

    def counted(labels: FileMasks, index: int) -> np.ndarray:
        reads.append(Path(labels.masks[index]).name)
        return read(labels, index)

    monkeypatch.setattr(FileMasks, "mask", counted)
    cached = choice(folder, cache=cache)
    pipes = make_pipelines(sources.load(cached), cached, 2, 0)
    assert reads == []
    for _ in range(2):  # two epochs: the second from the cache
        y = np.concatenate([b[1].numpy() for b in pipes.validation.take(pipes.validation_steps)])
        np.testing.assert_array_equal(y, [by_hand(m, "squash") for m in masks_read(folder, "val")])
    assert sorted(reads) == ["0.png", "1.png", "2.png"]


def test_a_mask_gone_since_the_dataset_was_read_is_named_in_one_line(tmp_path):
    for stem in "ab":
        pair(tmp_path / "images", tmp_path / "masks", stem, INDICES)
    (tmp_path / "classes.txt").write_text("a\nb\nc\n")
    gone = choice(tmp_path, validation_split=0.0)
    loaded = sources.load(gone)
    (tmp_path / "masks" / "b.png").write_bytes(b"not a png")
    pipes = make_pipelines(loaded, gone, 2, 0)  # reads no mask yet
    with pytest.raises(Exception) as refused:  # noqa: PT011 - TensorFlow's, wrapping ours
        list(pipes.train.take(pipes.steps))
    said = first_line(refused.value)  # what a run that stops on it says after "Training failed:"
    assert said.startswith("b.png cannot be read any more (")
    assert said.endswith("): read the dataset again.")
