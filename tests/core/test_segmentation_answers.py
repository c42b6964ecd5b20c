"""Answering with a segmentation model: each image's mask in its own pixels (through the
run's squash, crop or pad), its class areas, the masks written as palette PNGs with a CSV of
areas, and ``studio infer --json`` / ``--masks``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from studio.cli import main
from studio.core.inference.batch import image_files, predict_folder, write_predictions_csv
from studio.core.inference.mask_files import MASKS_CSV, MaskWriter, class_colors, write_masks
from studio.core.inference.predictor import Predictor
from studio.core.tasks.segmentation.masks import IGNORE, VOC_CLASSES, voc_palette
from tests.segmentation_runs import CLASSES, SIDE, expected_mask, segmentation_run, stripes


@pytest.fixture(scope="module")
def predictors(tmp_path_factory) -> dict[str, Predictor]:
    """The hand-made model, loaded once with each way of fitting images."""
    folder = tmp_path_factory.mktemp("segmentation-runs")
    return {resize: Predictor.load(segmentation_run(folder, resize))
            for resize in ("squash", "crop", "pad")}


def saved(folder, name: str, image: np.ndarray):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(image).save(path)
    return path


def band_classes(mask: np.ndarray, width: int) -> list[int]:
    """The class at the middle of each of ``stripes``' three bands, on the middle row."""
    row = mask[mask.shape[0] // 2]
    return [int(row[x]) for x in (width // 6, width // 2, 5 * width // 6)]


def test_a_file_is_answered_with_its_mask_and_areas_in_its_own_pixels(predictors, tmp_path):
    predictor = predictors["squash"]
    image = stripes(30, 48)  # neither the input's size nor its shape
    path = saved(tmp_path, "bands.png", image)
    (answer,) = predictor.predict_files([path])
    assert answer.error is None and answer.task == "segmentation"
    assert answer.mask.shape == (30, 48) and answer.mask.dtype == np.uint8
    assert band_classes(answer.mask, 48) == [0, 1, 2]
    # the oracle: the model's classes of the image as it was fed, squashed back by nearest
    # pixel (16 columns to 48: each input column covers 3 image columns)
    fed = predictor.standard_files([path])[0, ..., 0]
    assert (answer.mask == np.repeat(expected_mask(fed), 3, axis=1)[
        (np.arange(30) * 16 // 30)]).all()
    pixels = np.bincount(answer.mask.ravel(), minlength=3)
    assert sorted(zip(answer.labels, answer.areas, strict=True)) == sorted(
        (CLASSES[k], int(pixels[k])) for k in range(3) if pixels[k])
    assert answer.areas == sorted(answer.areas, reverse=True)
    assert sum(answer.percents) == pytest.approx(100)
    record = answer.to_dict()
    assert "mask" not in record and "class_names" not in record
    assert record["areas"] == answer.areas
    json.dumps(record)  # no pixels, nothing JSON cannot hold


def test_crop_leaves_the_cut_sides_without_a_class_and_pad_keeps_every_pixel(
        predictors, tmp_path):
    path = saved(tmp_path, "wide.png", stripes(SIDE, 2 * SIDE))
    (cropped,) = predictors["crop"].predict_files([path])
    assert cropped.mask.shape == (SIDE, 2 * SIDE)
    # the centre crop keeps columns 8..23: the outer quarters were never seen
    assert (cropped.mask[:, :8] == IGNORE).all() and (cropped.mask[:, 24:] == IGNORE).all()
    assert (cropped.mask[:, 8:24] != IGNORE).all()
    assert sum(cropped.areas) == SIDE * SIDE  # IGNORE is no class's area
    (padded,) = predictors["pad"].predict_files([path])
    assert padded.mask.shape == (SIDE, 2 * SIDE) and (padded.mask != IGNORE).all()
    assert band_classes(padded.mask, 2 * SIDE) == [0, 1, 2]


def test_in_memory_images_are_answered_in_their_own_size(predictors):
    image = stripes(24, 36)
    grey, rgb = predictors["squash"].predict_images([image, np.dstack([image] * 3)],
                                                    ["grey", "rgb"])
    for answer in (grey, rgb):
        assert answer.error is None and answer.mask.shape == (24, 36)
        assert band_classes(answer.mask, 36) == [0, 1, 2]


def test_a_folder_is_answered_and_its_masks_written_as_palette_pngs(predictors, tmp_path):
    predictor = predictors["squash"]
    images = tmp_path / "images"
    first = saved(images, "a/one.png", stripes(20, 30))
    saved(images, "b/one.png", np.zeros((12, 12), np.uint8))  # the same name elsewhere
    (images / "broken.png").write_bytes(b"not a png")
    result = predict_folder(predictor, image_files(images))
    assert [p.error is None for p in result.predictions] == [True, True, False]
    out = tmp_path / "masks"
    written = write_masks(result.predictions, out, predictor.class_names)
    assert written == [out / "a/one.png", out / "b/one.png"]
    stored = Image.open(out / "a/one.png")
    assert stored.mode == "P" and stored.size == (30, 20)
    assert (np.asarray(stored) == result.predictions[0].mask).all()
    colours = np.asarray(stored.convert("RGB"))
    assert (colours == class_colors(CLASSES)[result.predictions[0].mask]).all()
    assert (np.asarray(Image.open(out / "b/one.png")) == 0).all()
    rows = (out / MASKS_CSV).read_text().splitlines()
    assert rows[0] == "file,class,pixels,percent,seconds,problem"
    pixels = np.bincount(result.predictions[0].mask.ravel(), minlength=3)
    assert {tuple(r.split(",")[1:3]) for r in rows if r.startswith(str(first))} == {
        (CLASSES[k], str(pixels[k])) for k in range(3) if pixels[k]}
    assert rows[-1].startswith(f"{images / 'broken.png'},,,,")  # its problem, no areas
    write_predictions_csv(result.predictions, tmp_path / "same.csv")
    assert (tmp_path / "same.csv").read_text() == (out / MASKS_CSV).read_text()
    # written as each batch is answered, each mask let go once saved: the same files
    streamed = tmp_path / "streamed"
    paths = image_files(images)
    writer = MaskWriter([str(p) for p in paths], streamed, predictor.class_names)
    again = predict_folder(predictor, paths, batch_size=1, on_answers=writer.write)
    assert writer.finish(again.predictions) == [streamed / "a/one.png", streamed / "b/one.png"]
    assert all(p.mask is None for p in again.predictions)
    for name in ("a/one.png", "b/one.png"):
        assert (streamed / name).read_bytes() == (out / name).read_bytes()
    assert (streamed / MASKS_CSV).is_file()


def test_voc_classes_take_vocs_colours_and_others_distinct_ones():
    assert (class_colors(VOC_CLASSES) == voc_palette()).all()
    colours = class_colors(CLASSES)
    assert (colours[0] == 0).all() and len({tuple(c) for c in colours[:3]}) == 3
    assert (colours[IGNORE] == voc_palette()[IGNORE]).all()


def test_infer_prints_class_areas_as_json_and_writes_masks(predictors, tmp_path, capsys):
    path = saved(tmp_path / "in", "bands.png", stripes(20, 30))
    run = predictors["squash"].path.parent
    out = tmp_path / "masks"
    assert main(["infer", str(run), str(path), "--json", "--masks", str(out)]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert set(record["labels"]) == set(CLASSES) and "mask" not in record
    assert sum(record["areas"]) == 20 * 30 and sum(record["percents"]) == pytest.approx(100)
    assert np.asarray(Image.open(out / "bands.png")).shape == (20, 30)
    assert (out / MASKS_CSV).is_file()
    assert main(["infer", str(run), str(path)]) == 0
    line = capsys.readouterr().out
    assert line.startswith(f"{path}: ") and "of 20 × 30 pixels" in line
    # lines too when the masks are written (and let go) as they are answered
    assert main(["infer", str(run), str(path), "--masks", str(out)]) == 0
    line = capsys.readouterr().out
    assert line.startswith(f"{path}: ") and "of 600 pixels" in line


def test_infer_refuses_masks_it_cannot_write_in_one_line(predictors, tmp_path, capsys):
    path = saved(tmp_path, "bands.png", stripes(20, 30))
    run = predictors["squash"].path.parent
    assert main(["infer", str(run), str(path), "--masks", str(path)]) == 2
    error = capsys.readouterr().err.strip()
    assert "--masks must name a folder" in error and "\n" not in error
    other = segmentation_run(tmp_path, task="regression")  # a model of another task
    assert main(["infer", str(other), str(path), "--masks",
                 str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err.strip()
    assert "segmentation model's masks" in error and "\n" not in error
    assert not (tmp_path / "out").exists()
    # a folder that cannot be made (a file stands in its way): one line, exit 1
    blocked = tmp_path / "blocked"
    blocked.write_text("a file")
    assert main(["infer", str(run), str(path), "--masks", str(blocked / "masks")]) == 1
    error = capsys.readouterr().err.strip()
    assert f"{blocked / 'masks'} cannot be written to" in error and "\n" not in error
