"""The segmentation templates' graphs: a small U-Net from scratch and a U-Net whose encoder is
MobileNetV2 in parts. Keras counts what the analysis counts; the outputs are one softmax over
the classes per pixel, at the input's size."""

from __future__ import annotations

import pytest

from studio.core.build.analysis import analyze
from studio.core.build.keras_model import build_keras_model, model_endpoints
from studio.core.model.applications import BASES
from studio.core.model.describe import key_params
from studio.core.model.graph import Graph, Node
from studio.core.model.weights import missing_weights, use_random_weights
from studio.core.project.templates import mobilenetv2_unet_segmenter, small_unet_segmenter

SMALL_UNET_LAYERS = {"Input", "Conv2D", "BatchNormalization", "Activation", "MaxPooling2D",
                     "Conv2DTranspose", "Concatenate"}


def per_pixel_output(graph: Graph) -> tuple[Node, tuple[int, ...]]:
    """The graph's one output layer and its output shape; the graph must analyse."""
    report = analyze(graph)
    assert report.ok, report.reason
    (output,) = model_endpoints(graph)[1]
    return graph.node(output), report.nodes[output].output_shape


@pytest.mark.parametrize(("shape", "classes"), [((64, 64, 1), 11), ((32, 48, 3), 5)])
def test_the_small_unet_gives_every_pixel_a_softmax_over_the_classes(shape, classes):
    graph = small_unet_segmenter(shape, classes)
    output, output_shape = per_pixel_output(graph)
    assert output_shape == (*shape[:2], classes)
    assert output.type == "Conv2D" and output.params["kernel_size"] == 1
    assert output.params["activation"] == "softmax"
    assert {node.type for node in graph.nodes} <= SMALL_UNET_LAYERS
    skips = [node for node in graph.nodes if node.type == "Concatenate"]
    assert len(skips) == 2 and sum(node.type == "MaxPooling2D" for node in graph.nodes) == 2



def test_the_small_unet_can_have_two_convolutions_per_level_as_the_original():
    counts = {n: sum(node.type == "Conv2D" for node in small_unet_segmenter(convolutions=n).nodes)
              for n in (1, 2)}
    assert counts == {1: 4 + 2 + 1, 2: 8 + 2 + 1}  # levels down and up, the bottom, the head
    assert per_pixel_output(small_unet_segmenter(convolutions=2))[1] == (64, 64, 11)


def test_keras_builds_the_small_unet_analysis_counts():
    graph = small_unet_segmenter()
    model = build_keras_model(graph, "small_unet")
    assert model.count_params() == analyze(graph).total_params < 150_000
    assert model.output_shape == (None, 64, 64, 11)


def test_the_mobilenetv2_unet_runs_its_encoder_once_and_reads_it_at_every_stride():
    graph = mobilenetv2_unet_segmenter()
    output, output_shape = per_pixel_output(graph)
    assert output_shape == (64, 64, 11) and output.params["activation"] == "softmax"
    parts = [graph.node(i) for i in graph.topological_order()
             if graph.node(i).type == "Application"]
    assert [(p.params["input_stride"], p.params["output_stride"]) for p in parts] == [
        ("1", "2"), ("2", "4"), ("4", "8"), ("8", "16"), ("16", "32")]
    assert graph.inputs_of(parts[0].id) == model_endpoints(graph)[0]
    for before, part in zip(parts, parts[1:], strict=False):
        assert graph.inputs_of(part.id) == [before.id]  # the base runs once, part after part
        assert {graph.node(i).type for i in graph.outputs_of(before.id)} == {
            "Application", "Concatenate"}  # and hands its features to the decoder too
    assert all(p.params["weights"] == "imagenet" for p in parts)
    learning = [p.params["trainable_layers"] for p in parts]
    assert learning == [12, 19, 28, 63, 36]  # every layer, each part with its own input
    assert sum(learning) == BASES["MobileNetV2"].layers + len(parts) - 1
    assert key_params(parts[1]) == "MobileNetV2, strides 2 to 4, ImageNet, last 19 layers learn"
    assert missing_weights(graph) == ["MobileNetV2"]


def test_the_mobilenetv2_unet_counts_the_work_and_weights_of_one_base():
    graph = mobilenetv2_unet_segmenter()
    report = analyze(graph)
    parts = [n.id for n in graph.nodes if n.type == "Application"]
    whole = analyze(Graph.from_chain([
        Node("image", "Input", {"shape": [64, 64, 3]}),
        Node("base", "Application", {"name": "MobileNetV2"})])).nodes["base"]
    assert sum(report.nodes[i].params for i in parts) == whole.params
    assert abs(sum(report.nodes[i].flops for i in parts) - whole.flops) <= len(parts)
    use_random_weights(graph)  # no download in a test
    model = build_keras_model(graph, "mobilenetv2_unet")
    assert model.count_params() == report.total_params
    assert model.output_shape == (None, 64, 64, 11)
