"""A segmentation model's output check: an H × W × classes map at the input's resolution, and
the one-click fixes that get it there (their shapes checked against Keras's)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from studio.core.build.analysis import analyze
from studio.core.model.fixes import Problem
from studio.core.model.graph import Graph, Node
from studio.core.tasks.segmentation.output_check import upsampling_factor
from studio.core.tasks.segmentation.task import Segmentation

FACTS = SimpleNamespace(title="Pets", sample_shape=(8, 8, 3), num_classes=3,
                        class_names=("background", "cat", "dog"))


def conv(filters: int, activation: str = "relu", kernel: int = 3) -> tuple[str, dict]:
    return ("Conv2D", {"filters": filters, "kernel_size": kernel, "padding": "same",
                       "activation": activation})


POOL = ("MaxPooling2D", {"pool_size": 2})


def chain(*layers, side: int = 8) -> Graph:
    nodes = [("Input", {"shape": [side, side, 3]}), *layers]
    return Graph.from_chain([Node(f"n{i}", t, dict(p)) for i, (t, p) in enumerate(nodes)])


def problems(graph: Graph, facts=FACTS) -> list[Problem]:
    """The output check of each of ``graph``'s outputs, as the analysis makes it for a dataset
    of the segmentation task."""
    report = analyze(graph)
    assert report.ok, report.problems
    shapes = {node: r.output_shape for node, r in report.nodes.items()}
    sinks = graph.sinks()
    return [problem for out in sinks for problem in
            Segmentation().check_output(graph, out, shapes, facts, len(sinks) > 1)]


def fixed_by_hand(graph: Graph) -> tuple[Graph, list[str]]:
    """``graph`` after applying, one by one, the first fix of the first problem that has one,
    the check run again after each, as a person clicking them does; and the fixes' labels."""
    graph, clicked = graph.copy(), []
    while fixable := [p for p in problems(graph) if p.fixes]:
        fix = fixable[0].fixes[0]
        fix.apply(graph)
        clicked.append(fix.label)
    return graph, clicked


@pytest.mark.parametrize(("pools", "factor"), [(1, 2), (2, 4)])
def test_a_smaller_map_with_other_channels_is_upsampled_and_given_a_class_per_channel(
        pools, factor):
    graph = chain(conv(16), *[POOL] * pools, conv(8))
    side = 8 // factor
    resolution, channels = problems(graph)
    assert resolution.message == (
        f"The model's output map is {side} × {side}, {factor} times smaller than the 8 × 8 "
        f"input: upsample it ×{factor} to answer for each pixel.")
    assert [f.label for f in resolution.fixes] == [f"Upsample ×{factor} to match"]
    assert channels.message == (
        "The model's output has 8 channels, but Pets has 3 classes: end it in one channel per "
        "class, a 1×1 Conv2D with 3 filters and softmax.")
    assert [f.label for f in channels.fixes] == ["Add a 1×1 Conv2D with 3 filters and softmax"]
    fixed, clicked = fixed_by_hand(graph)
    assert clicked == [f"Upsample ×{factor} to match",
                       "Add a 1×1 Conv2D with 3 filters and softmax"]
    assert problems(fixed) == []
    assert analyze(fixed).nodes[fixed.sinks()[0]].output_shape == (8, 8, 3)
    assert graph.sinks() == [f"n{pools + 2}"], "the fixes edit only the graph they are given"


def test_a_softmax_convolution_with_other_filters_is_given_the_classes():
    (problem,) = problems(chain(conv(16), conv(5, "softmax", kernel=1)))
    assert problem.message == ("This layer answers 5 classes for each pixel, but Pets has 3. "
                               "Set filters to 3.")
    fixed, clicked = fixed_by_hand(chain(conv(16), conv(5, "softmax", kernel=1)))
    assert clicked == ["Set filters to 3"] and problems(fixed) == []


def test_a_map_the_input_size_is_no_power_of_two_of_gets_no_fix():
    graph = chain(conv(16), ("MaxPooling2D", {"pool_size": 3}), conv(3, "softmax"), side=24)
    (problem,) = problems(graph, SimpleNamespace(**{**vars(FACTS), "sample_shape": (24, 24, 3)}))
    assert problem.message.startswith("The model's output map is 8 × 8, but it must answer for "
                                      "each pixel of the 24 × 24 input")
    assert problem.fixes == ()
    larger = chain(conv(16), ("UpSampling2D", {"size": 2}), conv(3, "softmax"))
    (problem,) = problems(larger)
    assert "output map is 16 × 16" in problem.message and problem.fixes == ()


def test_a_model_made_for_another_task_is_the_cause():
    (flat,) = problems(chain(("Flatten", {}), ("Dense", {"units": 3, "activation": "softmax"})))
    assert flat.cause and flat.fixes == ()
    assert flat.message == (
        "The model ends in Dense with output 3, which answers one thing per image, but Pets is "
        "a segmentation dataset (a class for each pixel): end the model in an output of "
        "8 × 8 × 3, one channel per class (a 1×1 Conv2D with 3 filters and softmax on a feature "
        "map of the input's size).")
    (head,) = problems(chain(conv(8), ("DetectionHead", {"classes": 3})))
    assert head.cause and "DetectionHead with output 8 × 8 × 7, which finds boxes" in head.message


def test_a_model_with_several_outputs_says_each_sink_is_one():
    graph = chain(conv(4))
    graph.add(Node("side", "Conv2D", {"filters": 3, "kernel_size": 1, "activation": "softmax"}))
    graph.connect("n0", "side")
    (problem,) = problems(graph)
    assert problem.message.endswith("(Every layer that feeds nothing is an output of the model.)")


def test_a_right_model_has_no_problem_with_softmax_or_logits():
    assert problems(chain(conv(16), conv(3, "softmax", kernel=1))) == []
    assert problems(chain(conv(16), conv(3, "linear", kernel=1))) == []


def test_the_upsampling_factor_is_a_power_of_two_alike_down_and_across():
    assert upsampling_factor((64, 32), (16, 8)) == 4
    assert [upsampling_factor((64, 64), s) for s in ((64, 64), (21, 21), (16, 8), (8, 8))] == \
        [None, None, None, 8]
    assert upsampling_factor((48, 48), (16, 16)) is None  # three times
    assert upsampling_factor((8, 8), (0, 0)) is None


def test_the_fixed_models_shapes_are_keras_own():
    from studio.core.build.keras_model import build_keras_model

    fixed, _ = fixed_by_hand(chain(conv(4), POOL, POOL, conv(8)))
    model = build_keras_model(fixed)
    assert tuple(model.output_shape) == (None, 8, 8, 3)
    for layer in model.layers:
        assert tuple(layer.output.shape[1:]) == analyze(fixed).nodes[layer.name].output_shape
