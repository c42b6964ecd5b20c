"""One-click fixes: offered at the layer that needs them, and each one solves its problem."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from studio.core.build.analysis import Analysis, analyze, analyze_project
from studio.core.data.bundled import MNIST_10K
from studio.core.data.detection import demo as detection_demo
from studio.core.data.segmentation import demo as segmentation_demo
from studio.core.model.fixes import DataFix, Fix, Problem
from studio.core.model.graph import Graph, Node
from studio.core.project.templates import demo_project, from_template

IMAGE = ("Input", {"shape": [28, 28, 1]})
SOFTMAX = ("Dense", {"units": 10, "activation": "softmax"})


def chain(*layers) -> Graph:
    return Graph.from_chain([Node(f"n{i}", t, dict(p)) for i, (t, p) in enumerate(layers)])


def problem_with_fixes(report: Analysis, node_id: str) -> Problem:
    (problem,) = [p for p in report.problems if p.node_id == node_id and p.fixes]
    return problem


def labels(problem: Problem) -> list[str]:
    return [fix.label for fix in problem.fixes]


def assert_each_fix_solves(graph: Graph, node_id: str) -> None:
    problem = problem_with_fixes(analyze(graph, MNIST_10K), node_id)
    for fix in problem.fixes:
        fixed = graph.copy()
        fix.apply(fixed)
        report = analyze(fixed, MNIST_10K)
        assert report.ok, (fix.label, report.problems)


def demo_without_flatten() -> Graph:
    graph = demo_project().graph
    graph.remove("flatten_1")
    return graph


def test_a_dense_layer_fed_an_image_gets_its_own_problem_and_fixes():
    report = analyze(demo_without_flatten(), MNIST_10K)
    problem = problem_with_fixes(report, "dense_1")
    assert problem.message == (
        "This Dense layer receives a 7 × 7 × 64 image, so its output keeps those dimensions. "
        "Flatten it first."
    )
    assert labels(problem) == [
        "Insert Flatten before dense_1",
        "Insert GlobalAveragePooling2D before dense_1",
    ]
    assert report.reason.startswith("dense_1: "), "the cause comes before the symptom"
    assert "The model's output is 7 × 7 × 10" in (report.problem_at("dense_2") or "")
    assert_each_fix_solves(demo_without_flatten(), "dense_1")


def test_applying_a_fix_edits_only_the_graph_it_is_given():
    graph = demo_without_flatten()
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "dense_1")
    fixed = graph.copy()
    problem.fixes[0].apply(fixed)
    assert "flatten_1" not in graph.ids()
    assert fixed.inputs_of("dense_1") == ["flatten_1"]
    assert fixed.inputs_of("flatten_1") == ["conv2d_3"]
    assert fixed.chain() is not None


def test_when_the_output_dense_is_fed_an_image_the_fixes_are_on_the_output_problem():
    graph = chain(IMAGE, ("Conv2D", {"filters": 8}), SOFTMAX)
    report = analyze(graph, MNIST_10K)
    assert len(report.problems) == 1
    problem = problem_with_fixes(report, "n2")
    assert "Add Flatten or GlobalAveragePooling2D" in problem.message
    assert labels(problem) == [
        "Insert Flatten before n2",
        "Insert GlobalAveragePooling2D before n2",
    ]
    assert_each_fix_solves(graph, "n2")


def test_a_dense_layer_fed_a_sequence_is_only_offered_flatten():
    graph = chain(IMAGE, ("Reshape", {"target_shape": [28, 28]}), ("Dense", {"units": 32}),
                  SOFTMAX)
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n2")
    assert problem.message.startswith("This Dense layer receives a 28 × 28 sequence")
    assert labels(problem) == ["Insert Flatten before n2"]
    assert_each_fix_solves(graph, "n2")


def test_wrong_units_on_a_softmax_classifier():
    graph = chain(IMAGE, ("Flatten", {}), ("Dense", {"units": 12, "activation": "softmax"}))
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n2")
    assert labels(problem) == ["Set units to 10"]
    assert_each_fix_solves(graph, "n2")


def test_a_softmax_activation_layer_has_no_units_to_set():
    graph = chain(IMAGE, ("Flatten", {}), ("Dense", {"units": 12, "activation": "linear"}),
                  ("Activation", {"activation": "softmax"}))
    report = analyze(graph, MNIST_10K)
    assert "softmax classifier has 12 outputs" in (report.problem_at("n3") or "")
    assert all(not p.fixes for p in report.problems)


def test_input_shape_that_does_not_match_the_dataset():
    graph = chain(("Input", {"shape": [32, 32, 3]}), ("Flatten", {}), SOFTMAX)
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n0")
    assert labels(problem) == ["Set the input shape to 28 × 28 × 1"]
    assert_each_fix_solves(graph, "n0")


def test_an_image_output_without_a_dense_layer_gets_a_classifier_head():
    graph = chain(IMAGE, ("Conv2D", {"filters": 8}))
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n1")
    assert labels(problem) == [
        "Add Flatten and Dense(10, softmax) after n1",
        "Add GlobalAveragePooling2D and Dense(10, softmax) after n1",
    ]
    assert_each_fix_solves(graph, "n1")


def test_a_flat_output_of_the_wrong_size_gets_a_classifier_layer():
    graph = chain(IMAGE, ("Flatten", {}), ("Dense", {"units": 64, "activation": "relu"}))
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n2")
    assert labels(problem) == ["Add Dense(10, softmax) after n2"]
    assert_each_fix_solves(graph, "n2")


def test_a_branching_model_is_fixed_at_the_right_wire():
    graph = Graph(
        [Node("in", "Input", {"shape": [28, 28, 1]}), Node("a", "Conv2D", {"padding": "same"}),
         Node("b", "Conv2D", {"padding": "same"}), Node("sum", "Add", {}),
         Node("head", "Dense", {"units": 10, "activation": "softmax"})],
        [("in", "a"), ("in", "b"), ("a", "sum"), ("b", "sum"), ("sum", "head")],
    )
    assert_each_fix_solves(graph, "head")


def test_valid_models_offer_no_fixes():
    assert analyze(demo_project().graph, MNIST_10K).problems == []


def test_fix_is_a_frozen_value_and_problems_have_none_by_default():
    fix = Fix("Set units to 10", lambda graph: None)
    with pytest.raises(AttributeError):
        fix.label = "other"  # type: ignore[misc]
    assert Problem("n1", "message").fixes == ()


def test_the_message_reads_well_for_sizes_said_with_a_vowel():
    graph = chain(IMAGE, ("Conv2D", {"filters": 4, "kernel_size": 5, "strides": 3}),
                  ("Dense", {"units": 16}), SOFTMAX)
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n2")
    assert problem.message.startswith("This Dense layer receives an 8 × 8 × 4 image,")


@pytest.mark.parametrize(
    ("layers", "node", "words", "fix"),
    [
        ([("Conv1D", {"filters": 4})], "n1", "Conv1D expects a sequence of steps × channels, "
         "but its input has shape 28 × 28 × 1 (3 dimensions). Add a Reshape to 28 × 28 first.",
         "Insert Reshape to 28 × 28 before n1"),
        ([("Flatten", {}), ("Conv1D", {"filters": 4})], "n2", "Add a Reshape to 784 × 1",
         "Insert Reshape to 784 × 1 before n2"),
        ([("Flatten", {}), ("Conv2D", {"filters": 4})], "n2", "Add a Reshape to 28 × 28 × 1",
         "Insert Reshape to 28 × 28 × 1 before n2"),
        ([("Conv3D", {"filters": 4, "padding": "same"})], "n1",
         "Add a Reshape to 28 × 28 × 1 × 1",
         "Insert Reshape to 28 × 28 × 1 × 1 before n1"),
    ],
)
def test_a_convolution_given_the_wrong_number_of_dimensions_offers_a_reshape(
        layers, node, words, fix):
    graph = chain(IMAGE, *layers, ("Flatten", {}), SOFTMAX)
    problem = problem_with_fixes(analyze(graph, MNIST_10K), node)
    assert words in problem.message
    assert labels(problem) == [fix]
    assert_each_fix_solves(graph, node)


def test_a_flat_input_that_is_not_square_is_not_guessed_into_an_image():
    graph = chain(IMAGE, ("Flatten", {}), ("Dense", {"units": 50}), ("Conv2D", {}),
                  ("Flatten", {}), SOFTMAX)
    report = analyze(graph, MNIST_10K)
    assert "Add a Reshape layer first, e.g. to 28, 28, 1." in (report.problem_at("n3") or "")
    assert not report.problems[0].fixes


@pytest.mark.parametrize(
    ("layer", "words", "fixes"),
    [
        (("Conv2D", {"kernel_size": [9, 3]}),
         "The kernel size of 9 × 3 is larger than this Conv2D's input of 6 × 6 pixels.",
         ["Set padding to same", "Set kernel size to 6 × 3"]),
        (("Conv2D", {"kernel_size": 9}), "kernel size of 9 × 9",
         ["Set padding to same", "Set kernel size to 6"]),
        (("MaxPooling2D", {"pool_size": [2, 8]}),
         "The pool size of 2 × 8 is larger than this MaxPooling2D's input of 6 × 6 pixels.",
         ["Set padding to same", "Set pool size to 2 × 6"]),
        (("SeparableConv2D", {"kernel_size": 7}), "larger than this SeparableConv2D's input",
         ["Set padding to same", "Set kernel size to 6"]),
    ],
)
def test_a_window_larger_than_its_input_offers_same_padding_or_a_window_that_fits(
        layer, words, fixes):
    graph = chain(IMAGE, ("Conv2D", {"filters": 4, "kernel_size": 5, "strides": 4}), layer,
                  ("Flatten", {}), SOFTMAX)
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n2")
    assert words in problem.message
    assert labels(problem) == fixes
    assert_each_fix_solves(graph, "n2")


def test_a_conv1d_after_a_sequence_reshape_reports_a_kernel_longer_than_the_sequence():
    graph = chain(IMAGE, ("Reshape", {"target_shape": [4, 196]}),
                  ("Conv1D", {"kernel_size": 5}), ("Flatten", {}), SOFTMAX)
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n2")
    assert problem.message.startswith(
        "The kernel size of 5 is larger than this Conv1D's input of 4 steps.")
    assert labels(problem) == ["Set padding to same", "Set kernel size to 4"]
    assert_each_fix_solves(graph, "n2")


@pytest.mark.parametrize(
    ("layers", "words", "fixes"),
    [
        ((("Conv2D", {"filters": 24}), ("GroupNormalization", {"groups": 32})),
         "GroupNormalization cannot split 24 channels into 32 equal groups: there are more "
         "groups than channels. Set groups to a divisor of 24, such as 24.",
         "Set groups to 24"),
        ((("Conv2D", {"filters": 24}), ("GroupNormalization", {"groups": 10})),
         "GroupNormalization cannot split 24 channels into 10 equal groups: 10 does not divide "
         "24. Set groups to a divisor of 24, such as 8.",
         "Set groups to 8"),
        ((("MaxPooling1D", {}),),
         "MaxPooling1D expects a sequence of steps × features, but its input has shape "
         "28 × 28 × 1 (3 dimensions). Add a Reshape to 28 × 28 first.",
         "Insert Reshape to 28 × 28 before n1"),
        ((("Flatten", {}), ("GlobalAveragePooling1D", {})),
         "GlobalAveragePooling1D expects a sequence of steps × features, but its input has "
         "shape 784 (1 dimension). Add a Reshape to 784 × 1 first.",
         "Insert Reshape to 784 × 1 before n2"),
        ((("Reshape", {"target_shape": [28, 28]}), ("AveragePooling1D", {"pool_size": 40})),
         "The pool size of 40 is larger than this AveragePooling1D's input of 28 steps. Use a "
         "smaller pool size, padding 'same', or less pooling before it.",
         ["Set padding to same", "Set pool size to 28"]),
        ((("Softmax", {"axis": 4}),),
         "Axis 4 is not an axis of this Softmax's input 28 × 28 × 1: use 1 to 3 (or -1 for the "
         "last), as axis 0 is the batch.",
         "Set axis to -1"),
    ],
)
def test_layer_shape_problems_offer_the_obvious_change(layers, words, fixes):
    graph = chain(IMAGE, *layers, ("Flatten", {}), SOFTMAX)
    node_id = f"n{len(layers)}"
    problem = problem_with_fixes(analyze(graph, MNIST_10K), node_id)
    expected = [fixes] if isinstance(fixes, str) else fixes
    assert (problem.message, labels(problem)) == (words, expected)
    assert_each_fix_solves(graph, node_id)


def test_a_permute_that_is_not_a_permutation_says_what_it_takes():
    graph = chain(IMAGE, ("Permute", {"dims": [3, 1]}), ("Flatten", {}), SOFTMAX)
    assert analyze(graph, MNIST_10K).problem_at("n1") == (
        "Dims must name each axis of the input 28 × 28 × 1 once, in the new order: 1, 2 and 3 "
        "in any order (1 is the first axis after the batch), but got 3, 1.")


def _own_folder(task: str, root: Path) -> Path:
    """A few of ``task``'s demo images written as a person's folder (YOLO for detection),
    which Auto reads as RGB."""
    if task == "segmentation":
        segmentation_demo.write_demo(root, segmentation_demo.generate(train=2, validation=1))
    else:
        detection_demo.write_demo(root, "yolo", detection_demo.generate(train=2, validation=1))
    return root


@pytest.mark.parametrize(("template", "task", "side"),
                         [("small_unet_segmenter", "segmentation", 64),
                          ("small_detector", "detection", 128)])
def test_a_grey_template_given_an_rgb_folder_offers_a_colour_input_or_grey_reading(
        tmp_path, template, task, side):
    project = from_template(template)
    project.dataset.path = str(_own_folder(task, tmp_path / "own"))
    assert project.dataset.color == "auto"
    (problem,) = analyze_project(project).problems
    assert problem.node_id == "input_1"
    assert problem.message == (f"The input shape {side} × {side} × 1 does not match own, whose "
                               f"samples are {side} × {side} × 3.")
    assert labels(problem) == [f"Set the input shape to {side} × {side} × 3",
                               "Read the images as grayscale"]
    model_fix, data_fix = problem.fixes
    assert isinstance(data_fix, DataFix) and data_fix.changes == {"color": "grayscale"}

    coloured = project.copy()
    model_fix.apply(coloured.graph)
    assert analyze_project(coloured).ok
    grey = project.copy()
    grey.dataset = replace(grey.dataset, **data_fix.changes)
    assert analyze_project(grey).ok and grey.graph == project.graph


def test_a_colour_input_given_grey_images_offers_reading_them_as_rgb():
    graph = chain(("Input", {"shape": [28, 28, 3]}), ("Flatten", {}), SOFTMAX)
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n0")
    assert labels(problem) == ["Set the input shape to 28 × 28 × 1", "Read the images as RGB"]


def test_images_of_another_size_are_not_offered_another_colour():
    graph = chain(("Input", {"shape": [32, 32, 3]}), ("Flatten", {}), SOFTMAX)
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n0")
    assert labels(problem) == ["Set the input shape to 28 × 28 × 1"]


def test_a_model_made_for_other_images_still_offers_reading_them_with_its_channels():
    graph = chain(("Input", {"shape": [28, 28, 3]}), ("Reshape", {"target_shape": [2352]}),
                  SOFTMAX)
    problem = problem_with_fixes(analyze(graph, MNIST_10K), "n0")
    assert "This model is made for other data" in problem.message
    assert labels(problem) == ["Read the images as RGB"]
