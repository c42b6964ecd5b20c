"""The template gallery's models: they fit MNIST-10k and build in Keras, or say what they need."""

from __future__ import annotations

import dataclasses
import math

import pytest

from studio.core.build.analysis import analyze, output_settings
from studio.core.build.keras_model import build_keras_model, build_model, model_endpoints
from studio.core.data.bundled import MNIST_10K
from studio.core.data.sources import describe
from studio.core.model.applications import BASES
from studio.core.model.graph import Graph, Node
from studio.core.model.weights import missing_weights, use_random_weights
from studio.core.project.document import DatasetChoice, TrainingSettings
from studio.core.project.templates import TEMPLATES, TRANSFER_INPUT, blank_project, from_template
from studio.core.training.trainer import train
from tests.helpers import digit_folder

TRANSFER = {"mobilenetv2": "MobileNetV2", "resnet50": "ResNet50", "vgg16": "VGG16",
            "efficientnetb0": "EfficientNetB0"}
TEXT_TEMPLATES = ["lstm_text", "transformer_text"]
OTHER_DATA = {*TEXT_TEMPLATES, *TRANSFER}
DETECTORS = ["mobilenetv2_detector", "small_detector"]
SEGMENTERS = ["mobilenetv2_unet_segmenter", "small_unet_segmenter"]
FITS_MNIST = sorted(set(TEMPLATES) - OTHER_DATA - set(DETECTORS) - set(SEGMENTERS))
TEXT = dataclasses.replace(MNIST_10K, name="text", title="Text", sample_shape=(100,))
IMAGES = dataclasses.replace(MNIST_10K, name="images", title="Images",
                             sample_shape=tuple(TRANSFER_INPUT))


def test_the_gallery_has_every_template():
    assert FITS_MNIST == ["alexnet", "cnn", "cnn1d", "lenet5", "mlp", "mobilenet_small",
                          "resnet", "unet", "vgg"]
    for template in TEMPLATES.values():
        assert template.title and template.category and len(template.description) > 100


@pytest.mark.parametrize("name", FITS_MNIST)
def test_image_templates_fit_mnist_and_keras_counts_what_we_count(name):
    graph = from_template(name).graph
    report = analyze(graph, MNIST_10K)
    assert report.ok, report.reason
    assert build_model(graph, MNIST_10K).count_params() == report.total_params


@pytest.mark.parametrize("name", DETECTORS)
def test_detection_templates_open_on_the_detection_demo_and_keras_counts_what_we_count(name):
    project = from_template(name)
    info = describe(project.dataset)
    assert info.task == "detection" and info.num_classes == 10
    report = analyze(project.graph, info)
    assert report.ok, report.reason
    (head,) = [n for n in project.graph.nodes if n.type == "DetectionHead"]
    assert head.params["classes"] == info.num_classes
    rows, cols = output_settings(project.graph, info)["grid"]
    assert rows == cols and info.sample_shape[0] // rows in (8, 16)  # the head's stride
    use_random_weights(project.graph)  # no download in a test
    assert build_model(project.graph, info).count_params() == report.total_params


def test_the_mobilenetv2_detector_reads_the_base_at_stride_16_with_imagenet_weights():
    graph = from_template("mobilenetv2_detector").graph
    (base,) = [n for n in graph.nodes if n.type == "Application"]
    assert base.params == {"name": "MobileNetV2", "weights": "imagenet",
                           "trainable_layers": 119, "output_stride": "16"}
    assert missing_weights(graph) == ["MobileNetV2"]
    assert "without a network the base starts from random weights" in TEMPLATES[
        "mobilenetv2_detector"].description


@pytest.mark.parametrize(("name", "channels"), [("mobilenetv2_unet_segmenter", 3),
                                                 ("small_unet_segmenter", 1)])
def test_segmentation_templates_open_on_the_segmentation_demo_with_tuned_settings(
        name, channels):
    project = from_template(name)
    info = describe(project.dataset)
    assert info.task == "segmentation" and info.sample_shape == (64, 64, channels)
    assert info.num_classes == 11 and info.class_names[0] == "background"
    report = analyze(project.graph, info)
    assert report.ok, report.reason
    (output,) = model_endpoints(project.graph)[1]
    assert report.nodes[output].output_shape == (64, 64, 11)  # a class per pixel
    assert TEMPLATES[name].category == "Segmentation"
    settings = project.training
    assert settings.loss == "cross_entropy_dice" and settings.schedule.kind == "cosine"
    assert settings != TrainingSettings()
    project.graph.node(output).params["filters"] = 10  # the task's output check is on
    (problem,) = analyze(project.graph, info).problems
    assert problem.node_id == output and problem.message.endswith(
        "answers 10 classes for each pixel, but Segmentation demo (digits) has 11. Set "
        "filters to 11.")


def test_the_small_unet_template_reads_the_digits_at_an_eighth_of_the_image():
    graph = from_template("small_unet_segmenter").graph
    report = analyze(graph)
    pools = [n.id for n in graph.nodes if n.type == "MaxPooling2D"]
    joins = [n.id for n in graph.nodes if n.type == "Concatenate"]
    assert len(pools) == len(joins) == 3
    assert report.nodes[pools[-1]].output_shape == (8, 8, 32)  # the bottom's input
    assert [report.nodes[j].output_shape for j in joins] == [(16, 16, 64), (32, 32, 32),
                                                              (64, 64, 16)]


def test_the_mobilenetv2_unet_template_asks_for_imagenet_weights():
    graph = from_template("mobilenetv2_unet_segmenter").graph
    assert missing_weights(graph) == ["MobileNetV2"]
    assert {n.params["weights"] for n in graph.nodes if n.type == "Application"} == {"imagenet"}
    assert "without a network the base starts from random weights" in TEMPLATES[
        "mobilenetv2_unet_segmenter"].description


@pytest.mark.parametrize("name", TEXT_TEMPLATES)
def test_text_templates_build_for_a_text_dataset(name):
    graph = from_template(name).graph
    report = analyze(graph, TEXT)
    assert report.ok, report.reason
    assert build_model(graph, TEXT).count_params() == report.total_params


def test_the_transformer_is_a_self_attention_block_with_skip_connections():
    graph = from_template("transformer_text").graph
    (attention,) = [n.id for n in graph.nodes if n.type == "MultiHeadAttention"]
    assert graph.inputs_of(attention) == ["embedding_1"]  # one input: self-attention
    adds = [n.id for n in graph.nodes if n.type == "Add"]
    assert [graph.inputs_of(a) for a in adds] == [
        ["embedding_1", attention], [graph.outputs_of(adds[0])[0], "dense_2"]]
    assert [graph.outputs_of(a) for a in adds] == [
        ["layer_normalization_1"], ["layer_normalization_2"]]
    assert graph.outputs_of("layer_normalization_2") == ["global_average_pooling1d_1"]
    report = analyze(graph, TEXT)
    assert report.nodes[attention].output_shape == (100, 64)
    assert report.nodes["global_average_pooling1d_1"].output_shape == (64,)
    assert report.nodes[attention].params == 4 * 16 * (3 * 64 + 3) + 4 * 16 * 64 + 64


def test_the_transformer_trains_an_epoch_on_a_small_csv_of_texts(tmp_path):
    rows = [f"word{i % 10} thing{i % 10} and some filler {i},topic{i % 10}" for i in range(60)]
    path = tmp_path / "texts.csv"
    path.write_text("text,topic\n" + "\n".join(rows) + "\n")
    project = from_template("transformer_text")
    project.dataset = DatasetChoice(source="csv", path=str(path), text_column="text")
    project.training.epochs = 1
    result = train(project, tmp_path / "runs")
    assert result.status == "finished"
    assert len(result.epochs) == 1 and math.isfinite(result.epochs[0]["loss"])


def test_resnet_has_identity_and_projection_shortcuts():
    graph = from_template("resnet").graph
    adds = [n.id for n in graph.nodes if n.type == "Add"]
    shortcut_types = [graph.node(graph.inputs_of(a)[1]).type for a in adds]
    assert shortcut_types == ["Activation", "BatchNormalization", "BatchNormalization"]
    projections = [n for n in graph.nodes if n.type == "Conv2D" and n.params["kernel_size"] == 1]
    assert [p.params["strides"] for p in projections] == [2, 2]


def test_the_unet_joins_each_encoder_level_to_the_decoder_at_the_same_size():
    graph = from_template("unet").graph
    report = analyze(graph, MNIST_10K)
    shape = {i: r.output_shape for i, r in report.nodes.items()}
    joins = [n.id for n in graph.nodes if n.type == "Concatenate"]
    assert len(joins) == 2
    for join in joins:
        up, skip = graph.inputs_of(join)
        assert graph.node(up).type == "Conv2DTranspose"
        assert graph.node(skip).type == "Conv2D" and graph.outputs_of(skip)[0].startswith(
            "max_pooling2d")  # the encoder's features just before it pools them
        assert shape[up][:2] == shape[skip][:2]
    assert [shape[j] for j in joins] == [(14, 14, 64), (28, 28, 32)]
    assert shape["conv2d_6"] == (7, 7, 64)  # the bottom of the U
    # The classification head reads the full-resolution features; a per-pixel head will
    # take its place when segmentation arrives.
    head = graph.topological_order()[-3:]
    assert [graph.node(i).type for i in head] == ["Conv2D", "GlobalAveragePooling2D", "Dense"]
    assert graph.node(head[0]).params["kernel_size"] == 1 and shape[head[0]][:2] == (28, 28)
    assert "segmentation" in TEMPLATES["unet"].description


def test_the_1d_cnn_reads_image_rows_as_steps():
    graph = from_template("cnn1d").graph
    report = analyze(graph, MNIST_10K)
    assert graph.nodes[1].type == "Reshape" and report.nodes["reshape_1"].output_shape == (28, 28)
    convs = [n.id for n in graph.nodes if n.type == "Conv1D"]
    assert [report.nodes[c].output_shape for c in convs] == [(28, 32), (28, 32), (14, 64),
                                                              (14, 64)]
    assert report.nodes["global_average_pooling1d_1"].output_shape == (64,)
    assert "row" in TEMPLATES["cnn1d"].description and "CSV" in TEMPLATES["cnn1d"].description


def test_the_mobilenet_is_depthwise_separable_blocks_with_relu6():
    graph = from_template("mobilenet_small").graph
    types = [n.type for n in graph.nodes]
    assert types[:4] == ["Input", "Conv2D", "BatchNormalization", "ReLU"]
    assert graph.nodes[1].params["strides"] == 2
    block = ["DepthwiseConv2D", "BatchNormalization", "ReLU", "Conv2D", "BatchNormalization",
             "ReLU"]
    assert types[4:22] == block * 3
    assert types[22:] == ["SeparableConv2D", "BatchNormalization", "ReLU",
                          "GlobalAveragePooling2D", "Dropout", "Dense"]
    assert {n.params["max_value"] for n in graph.nodes if n.type == "ReLU"} == {6.0}
    pointwise = [n for n in graph.nodes[4:] if n.type == "Conv2D"]
    assert {n.params["kernel_size"] for n in pointwise} == {1}
    report = analyze(graph, MNIST_10K)
    assert report.nodes["global_average_pooling2d_1"].output_shape == (128,)
    assert report.nodes["relu_1"].output_shape == (14, 14, 16)


@pytest.mark.parametrize("name", ["unet", "cnn1d", "mobilenet_small"])
def test_the_new_image_templates_train_an_epoch_with_their_settings(name, tmp_path):
    project = from_template(name)
    assert project.training != TrainingSettings()  # tuned for the template
    digits = digit_folder(tmp_path / "digits", per_class=3, classes="0123456789")
    project.dataset = DatasetChoice(source="folder", path=str(digits), image_size=[28, 28],
                                    color="grayscale")  # a tiny stand-in for MNIST-10k
    result = train(project, tmp_path / "runs", epochs=1)
    assert result.status == "finished"
    assert len(result.epochs) == 1 and math.isfinite(result.epochs[0]["loss"])


@pytest.mark.parametrize("name", sorted(OTHER_DATA))
def test_templates_for_other_data_say_so_at_the_input(name):
    graph = from_template(name).graph
    report = analyze(graph, MNIST_10K)
    (problem,) = report.problems
    assert problem.node_id == "input_1" and not problem.fixes
    assert "does not match MNIST-10k" in problem.message
    assert "This model is made for other data" in problem.message
    assert "in the Data view" in problem.message
    assert set(report.nodes) == set(graph.ids())  # the gallery can still count parameters
    if name in TEXT_TEMPLATES:
        assert problem.message.endswith(
            "its layers need samples of 100 token ids (text). Choose a CSV of texts with that "
            "sequence length in the Data view.")


@pytest.mark.parametrize(("name", "base"), sorted(TRANSFER.items()))
def test_transfer_templates_put_a_new_head_on_a_frozen_base(name, base):
    graph = from_template(name).graph
    assert [n.type for n in graph.nodes] == [
        "Input", "Application", "GlobalAveragePooling2D", "Dropout", "Dense"]
    assert graph.nodes[1].params == {"name": base, "weights": "imagenet", "trainable_layers": 0}
    report = analyze(graph, IMAGES)
    assert report.ok, report.reason
    head = BASES[base].channels * 10 + 10
    assert report.total_params == BASES[base].params + head


def test_an_input_fix_that_would_break_later_layers_is_not_offered():
    graph = Graph.from_chain([
        Node("in", "Input", {"shape": [32, 32, 3]}),
        Node("conv", "Conv2D", {"kernel_size": 30}),
        Node("flat", "Flatten"),
        Node("out", "Dense", {"units": 10, "activation": "softmax"}),
    ])
    (problem,) = analyze(graph, MNIST_10K).problems
    assert problem.node_id == "in" and not problem.fixes
    assert problem.message.endswith(
        "This model is made for other data: its layers need samples of 32 × 32 × 3. Choose "
        "images of that size in the Data view: an image folder, or another dataset read at "
        "that size.")


def test_a_transfer_template_with_random_weights_builds_as_counted():
    project = from_template("mobilenetv2")
    use_random_weights(project.graph)
    model = build_keras_model(project.graph, project.name)
    assert model.count_params() == analyze(project.graph).total_params
    assert model.output_shape == (None, 10)


def test_a_blank_project_is_one_input_on_the_given_data():
    dataset = DatasetChoice(source="keras", name="cifar10", seed=7)
    project = blank_project(dataset, (32, 32, 3))
    assert [(n.type, n.params) for n in project.graph.nodes] == [("Input", {"shape": [32, 32, 3]})]
    assert project.dataset == dataset and project.dataset is not dataset
    assert project.name == "Untitled" and project.training == TrainingSettings()
    unknown = blank_project(DatasetChoice(source="csv", path="/tmp/t.csv"), None)
    assert unknown.graph.nodes[0].params == {"shape": [28, 28, 1]}
