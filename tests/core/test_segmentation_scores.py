"""Segmentation's scores in NumPy (IoU, Dice, mean IoU, pixel accuracy, each image's IoU), its
evaluation record and text, the export's pixel agreement, and the task's answers, by hand."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from studio.core.tasks.segmentation.agreement import export_agreement, pixel_agreement
from studio.core.tasks.segmentation.evaluation import SegmentationEvaluation, evaluation_text
from studio.core.tasks.segmentation.fitting import mask_in_image
from studio.core.tasks.segmentation.masks import IGNORE
from studio.core.tasks.segmentation.scores import (
    class_dice,
    class_iou,
    confusion_matrix,
    image_ious,
    mean_iou,
    pixel_accuracy,
    predicted_masks,
)
from studio.core.tasks.segmentation.task import Segmentation

NAMES = ("background", "cat", "dog")


def outputs_of(masks: np.ndarray, classes: int = 3, sure: float = 0.8) -> np.ndarray:
    """Softmax-like outputs (N × H × W × classes) whose argmax is ``masks``."""
    rest = (1 - sure) / (classes - 1)
    outputs = np.full((*masks.shape, classes), rest, np.float32)
    np.put_along_axis(outputs, masks[..., None].astype(np.int64), sure, axis=-1)
    return outputs


def test_scores_of_a_small_confusion_by_hand():
    true = np.array([[0, 0, 1, 1],
                     [0, 0, 1, IGNORE]], np.uint8)
    answer = np.array([[0, 1, 1, 1],
                       [0, 0, 0, 2]], np.uint8)
    confusion = confusion_matrix(true, answer, 3)
    # background: 3 right, 1 answered cat; cat: 2 right, 1 answered background; the IGNORE
    # pixel answered dog counts nowhere
    assert confusion.tolist() == [[3, 1, 0], [1, 2, 0], [0, 0, 0]]
    assert class_iou(confusion)[:2] == pytest.approx([3 / 5, 2 / 4])
    assert class_dice(confusion)[:2] == pytest.approx([6 / 8, 4 / 6])
    assert np.isnan(class_iou(confusion)[2]) and np.isnan(class_dice(confusion)[2])
    assert mean_iou(confusion) == pytest.approx((3 / 5 + 2 / 4) / 2)  # dog left out
    assert pixel_accuracy(confusion) == pytest.approx(5 / 7)


def test_a_class_answered_but_absent_from_the_truth_scores_zero_and_counts():
    true = np.zeros((2, 2), np.uint8)
    answer = np.array([[0, 0], [0, 2]], np.uint8)
    confusion = confusion_matrix(true, answer, 3)
    assert class_iou(confusion)[[0, 2]].tolist() == [0.75, 0.0]
    assert mean_iou(confusion) == pytest.approx(0.375)


def test_masks_of_different_sizes_are_refused_and_nothing_scored_is_nan():
    with pytest.raises(ValueError, match="one size"):
        confusion_matrix(np.zeros((2, 2)), np.zeros((2, 3)), 3)
    nothing = confusion_matrix(np.full((2, 2), IGNORE, np.uint8), np.zeros((2, 2)), 3)
    assert np.isnan(mean_iou(nothing)) and np.isnan(pixel_accuracy(nothing))


def test_each_image_has_its_own_mean_iou():
    true = np.zeros((3, 2, 2), np.uint8)
    true[1] = 1
    true[2] = IGNORE
    answer = true.copy()
    answer[1, 0, 0] = 0  # three of four cat pixels right
    answer[2] = 0
    ious = image_ious(true, answer, 3)
    assert ious[0] == 1.0
    # cat 3/4, background 0/1 (answered once, absent from the truth)
    assert ious[1] == pytest.approx((3 / 4 + 0) / 2)
    assert np.isnan(ious[2])


def evaluation(**kwargs) -> SegmentationEvaluation:
    true = np.zeros((3, 4, 4), np.uint8)
    true[0, :2] = 1
    true[1, :, :1] = IGNORE
    true[2] = 1
    answer = true.copy()
    answer[answer == IGNORE] = 0
    answer[2, :2] = 0  # half the third image's cat answered background
    return SegmentationEvaluation.of_masks("validation", NAMES, true[..., None], answer, 0.25,
                                           np.array([10, 11, 12]), **kwargs)


def test_the_evaluation_record_scores_the_split_and_finds_the_worst_images():
    scored = evaluation()
    # background: 8 + 12 right, 8 more answered background; cat: 8 + 8 right
    assert scored.confusion.tolist() == [[20, 0, 0], [8, 16, 0], [0, 0, 0]]
    assert scored.ignored == 4
    assert scored.mean_iou == pytest.approx((20 / 28 + 16 / 24) / 2)
    assert scored.pixel_accuracy == pytest.approx(36 / 44)
    assert scored.lowest_iou(2).tolist() == [2, 0]  # image 1 (IoU 1 too) is after image 0
    assert scored.image_iou[2] == pytest.approx((0 + 0.5) / 2)
    assert scored.sample_indices(scored.lowest_iou(1)) == [12]
    record = scored.to_dict()
    assert record["per_class"][2] == {"class": "dog", "iou": None, "dice": None,
                                      "true_pixels": 0, "answered_pixels": 0}
    assert record["pixels"] == 44 and record["images"] == 3
    assert record["notes"] == ["dog is in neither the true masks nor the answers of this "
                               "split: its IoU is left out of the mean IoU (shown as —)."]


def test_the_evaluation_text_for_studio_evaluate():
    text = evaluation_text(evaluation(notes=["The data changed since training."]))
    assert text.splitlines() == [
        "3 images, 44 pixels scored (4 ignored): mean IoU 69.0%, pixel accuracy 81.8%, "
        "loss 0.2500",
        "",
        "class          IoU    Dice  true pixels  answered pixels",
        "background   71.4%   83.3%           20               28",
        "cat          66.7%   80.0%           24               16",
        "dog              —       —            0                0",
        "",
        "Lowest image IoU: sample 12 25.0%, sample 10 100.0%, sample 11 100.0%",
        "Note: The data changed since training.",
        "Note: dog is in neither the true masks nor the answers of this split: its IoU is "
        "left out of the mean IoU (shown as —).",
    ]


def test_pixel_agreement_and_the_mean_iou_beside_the_keras_models():
    truths = np.zeros((2, 4, 4), np.uint8)
    truths[:, :2] = 1
    keras_masks = truths.copy()
    export_masks = truths.copy()
    export_masks[0, 0, :2] = 0  # 2 of 32 pixels moved
    agreement = export_agreement(outputs_of(export_masks), outputs_of(keras_masks), truths)
    assert agreement.percent == pytest.approx(30 / 32 * 100)
    assert pixel_agreement(outputs_of(export_masks), outputs_of(keras_masks)) == \
        agreement.percent
    assert agreement.scores["keras_mean_iou"] == 1.0
    assert agreement.scores["mean_iou"] == pytest.approx((14 / 16 + 16 / 18) / 2)
    assert agreement.words == ("gives the Keras model's class to 93.75% of the pixels of 2 "
                               "validation samples")
    assert agreement.scores_words == "mean IoU 0.882, against the Keras model's 1.000."
    assert export_agreement(outputs_of(truths), outputs_of(truths), None).scores == {}
    with pytest.raises(ValueError, match="one size"):
        pixel_agreement(outputs_of(truths), outputs_of(truths[:, :2]))
    assert Segmentation().export_thresholds == (99.5, 98.0)


def test_the_answer_is_the_mask_and_each_class_area():
    masks = np.zeros((2, 4, 4), np.uint8)
    masks[0, :3] = 2
    masks[0, 3, 0] = 1
    logits = np.log(outputs_of(masks)) * 3  # logits answer as their probabilities
    task = Segmentation()
    first, second = task.answers(logits, NAMES, top_k=1)
    assert first["labels"] == ["dog", "background", "cat"]
    assert first["areas"] == [12, 3, 1]
    assert np.array_equal(first["mask"], masks[0]) and first["mask"].dtype == np.uint8
    assert second["labels"] == ["background"] and second["areas"] == [16]
    answer = SimpleNamespace(**first)
    assert task.answer_text(answer) == "dog 75.0%  background 18.8%  cat 6.2% of 4 × 4 pixels"
    assert task.csv_columns == ("class", "pixels", "percent")
    assert task.csv_rows(answer) == [["dog", "12", "75.00"], ["background", "3", "18.75"],
                                     ["cat", "1", "6.25"]]
    assert predicted_masks(logits).tolist() == masks.tolist()


def test_the_task_says_what_it_is_and_its_scores_in_percent():
    task = Segmentation()
    assert (task.name, task.label_kind) == ("segmentation", "masks")
    assert task.summary_metrics[0] == "val_mean_iou"
    assert (task.curve.metric, task.curve.bounded) == ("mean_iou", True)
    assert task.summary({"val_mean_iou": 0.712, "val_pixel_accuracy": 0.9314}) \
        == "val mean IoU 71.2% · val pixel accuracy 93.1%"
    assert task.score_text("dice_loss", 0.25) == "dice loss 0.25"
    assert task.search_metrics[:3] == task.summary_metrics
    labels = task.synthetic_labels(2, (8, 6, 3))
    assert labels.shape == (2, 8, 6) and labels.dtype == task.label_dtype == np.uint8
    with pytest.raises(ValueError, match="output map"):
        task.synthetic_labels(2, (3,))
    specs = task.loss_specs([True, False], "dice", [1, 2, 3])
    assert specs == [("LayerStudio>SegmentationLoss",
                      {"kind": "dice", "from_logits": False, "class_weights": [1.0, 2.0, 3.0]}),
                     ("LayerStudio>SegmentationLoss",
                      {"kind": "dice", "from_logits": True, "class_weights": [1.0, 2.0, 3.0]})]


def test_a_mask_is_taken_back_to_the_images_own_pixels():
    mask = np.arange(16, dtype=np.uint8).reshape(4, 4)
    # squashed: each input pixel covers 2 × 2 pixels of an 8 × 8 image
    assert np.array_equal(mask_in_image(mask, (8, 8), "squash"),
                          np.kron(mask, np.ones((2, 2), np.uint8)))
    # centre-cropped: a 4 × 8 image's middle 4 × 4 was the input; its sides have no class
    cropped = mask_in_image(mask, (4, 8), "crop")
    assert np.array_equal(cropped[:, 2:6], mask) and (cropped[:, [0, 1, 6, 7]] == IGNORE).all()
    # padded: a 2 × 4 image was shrunk to the input's width and centred in rows 1 and 2
    assert np.array_equal(mask_in_image(mask, (2, 4), "pad"), mask[1:3])


def test_answers_for_images_of_their_own_size():
    masks = np.zeros((1, 4, 4), np.uint8)
    masks[0, :, 3] = 1
    task = Segmentation()
    assert task.answers_need_image_sizes
    (answer,) = task.image_answers(outputs_of(masks), NAMES, 1, {"resize": "crop"}, [(4, 8)])
    assert answer["mask"].shape == (4, 8)
    assert answer["labels"] == ["background", "cat"] and answer["areas"] == [12, 4]
    (same,) = task.image_answers(outputs_of(masks), NAMES, 1, {"resize": "crop"})
    assert same["mask"].shape == (4, 4)


def test_the_export_readme_snippet_reads_an_output(capsys, tmp_path, monkeypatch):
    masks = np.zeros((1, 4, 4), np.uint8)
    masks[0, 0] = 2
    monkeypatch.chdir(tmp_path)  # where it saves mask.png
    exec(Segmentation().export_snippet(), {"np": np, "outputs": outputs_of(masks),  # noqa: S102
                                           "labels": list(NAMES), "prep": {}, "Image": Image,
                                           "image": Image.new("L", (8, 4))})
    assert capsys.readouterr().out == "{'background': 24, 'dog': 8}\n"  # in the 8 × 4 picture
    assert np.asarray(Image.open(tmp_path / "mask.png")).shape == (4, 8)
