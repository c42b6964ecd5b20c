"""Search spaces: dimensions over training settings and layer parameters, their grid points,
the plain-words refusals of spaces that cannot be searched, and how they are saved."""

from __future__ import annotations

import pytest

from studio.core.build.analysis import analyze
from studio.core.model.graph import Node
from studio.core.project.document import (
    DatasetChoice,
    Dimension,
    Project,
    SearchSettings,
    load_project,
    save_project,
)
from studio.core.project.templates import demo_project, from_template
from studio.core.search.space import (
    SearchSpaceError,
    apply_values,
    bypassable_layers,
    check_dimension,
    current_value,
    estimated_seconds,
    layer_target,
    metric_choices,
    param_for,
    presence_target,
    problems,
    repeats_target,
    search_metric,
    search_targets,
    searchable_params,
    searched_project,
    start_value,
    target_label,
    training_target,
    trial_count,
)

LR = training_target("learning_rate")


@pytest.fixture
def project() -> Project:
    return demo_project()


def dense_id(project: Project) -> str:
    return next(n.id for n in project.graph.nodes if n.type == "Dense")


def test_lists_and_ranges_give_their_grid_points(project):
    units = layer_target(dense_id(project), "units")
    assert check_dimension(project, Dimension(LR, values=[0.1, 0.01])) == [0.1, 0.01]
    assert check_dimension(project, Dimension(LR, low=1e-4, high=1e-1, scale="log",
                                              step=10)) == [1e-4, 1e-3, 1e-2, 1e-1]
    assert check_dimension(project, Dimension(LR, low=1e-4, high=1e-2, scale="log",
                                              count=3)) == [1e-4, 1e-3, 1e-2]
    assert check_dimension(project, Dimension(units, low=16, high=64, step=16)) == \
        [16, 32, 48, 64]
    assert check_dimension(project, Dimension(units, low=10, high=12, count=5)) == [10, 11, 12]
    assert check_dimension(project, Dimension(training_target("momentum"), low=0.0,
                                              high=0.5, count=3)) == [0.0, 0.25, 0.5]


@pytest.mark.parametrize(("dimension", "reason"), [
    (Dimension(LR, values=[0.01, -0.1]), "Learning rate must be more than 0, not -0.1."),
    (Dimension(LR, low=0.0, high=0.1, scale="log", count=3), "a log scale needs values above 0"),
    (Dimension(LR, low=0.1, high=0.01, count=2), "the lowest value 0.1 is above the highest"),
    (Dimension(LR, low=0.001, high=0.1, scale="log", step=0.5), "the step multiplies"),
    (Dimension(LR, low=0.001, high=0.1, step=0), "the step must be more than 0"),
    (Dimension(LR, low=0.001, high=0.1), "give the range a step or a number of points"),
    (Dimension(LR, values=[]), "give at least one value"),
    (Dimension(training_target("optimizer"), values=["adam", "lion"]), "must be one of"),
    (Dimension(training_target("optimizer"), low=1, high=2, count=2), "is not a number"),
    (Dimension(training_target("batch_size"), values=[32, 0]), "at least 1, not 0"),
    (Dimension(training_target("seed"), values=[1, 2]), "cannot be searched"),
])
def test_bad_dimensions_are_refused_in_plain_words(project, dimension, reason):
    with pytest.raises(SearchSpaceError, match=reason.replace(".", r"\.").replace("(", r"\(")):
        check_dimension(project, dimension)


def test_a_unit_count_of_zero_and_a_removed_layer_are_refused(project):
    units = layer_target(dense_id(project), "units")
    with pytest.raises(SearchSpaceError, match="Units must be at least 1, not 0"):
        check_dimension(project, Dimension(units, values=[0, 8]))
    with pytest.raises(SearchSpaceError, match="no longer in the model"):
        check_dimension(project, Dimension(layer_target("gone_1", "units"), values=[8]))
    with pytest.raises(SearchSpaceError, match="has no parameter"):
        check_dimension(project, Dimension(layer_target(dense_id(project), "size"),
                                           values=[8]))


def test_an_empty_or_invalid_space_lists_every_reason(project):
    assert problems(project, SearchSettings()) == [
        "The search space is empty: make at least one setting or layer parameter a search "
        "dimension."]
    search = SearchSettings(dimensions=[Dimension(LR, values=[-1.0]), Dimension(LR, values=[1.0])],
                            strategy="random", trials=0, workers=0)
    found = problems(project, search)
    assert "Learning rate is searched twice." in found
    assert "Learning rate must be more than 0, not -1." in found
    assert "The number of trials must be at least 1." in found
    assert "At least one trial must run at a time." in found
    huge = SearchSettings(dimensions=[Dimension(LR, low=1e-5, high=1.0, count=200),
                                      Dimension(training_target("batch_size"), low=1, high=100,
                                                step=1)])
    assert "combinations, more than 10,000" in problems(project, huge)[0]


def test_trials_are_the_grid_size_or_the_number_asked(project):
    units = layer_target(dense_id(project), "units")
    search = SearchSettings(dimensions=[Dimension(LR, values=[0.1, 0.01]),
                                        Dimension(units, low=16, high=64, step=16)])
    assert problems(project, search) == []
    assert trial_count(project, search) == 8
    search.strategy, search.trials = "random", 5
    assert trial_count(project, search) == 5


def test_the_time_estimate_counts_waves_of_parallel_trials(project):
    epochs = training_target("epochs")
    search = SearchSettings(dimensions=[Dimension(epochs, values=[2, 4]),
                                        Dimension(LR, values=[0.1, 0.01, 0.001])], workers=2)
    # six trials of three epochs on average, two at a time: three waves of 3 × 2 s + 1 s
    assert estimated_seconds(project, search, 2.0, cores=2) == pytest.approx(21.0)
    assert estimated_seconds(project, search, 2.0, cores=1) == pytest.approx(42.0)


def test_values_are_applied_to_a_copy(project):
    units = layer_target(dense_id(project), "units")
    kind = training_target("schedule.kind")
    changed = apply_values(project, {LR: 0.05, units: 12, kind: "step"})
    assert current_value(changed, LR) == 0.05 and current_value(changed, units) == 12
    assert changed.training.schedule.kind == "step"
    assert current_value(project, LR) == 0.002 and project.training.schedule.kind == "cosine"
    assert target_label(kind) == "Schedule" and target_label(LR) == "Learning rate"
    assert target_label(units) == f"{dense_id(project)} · Units"


def with_dropout(project: Project) -> Project:
    """``project`` with a Dropout between its first Dense layer and the next."""
    dense = dense_id(project)
    project.graph.insert_between(dense, project.graph.outputs_of(dense)[0],
                                 Node("dropout_1", "Dropout", {"rate": 0.5}))
    return project


def test_a_trial_without_a_layer_wires_its_input_to_its_outputs(project):
    project = with_dropout(project)
    present = presence_target("dropout_1")
    assert bypassable_layers(project) == ["conv2d_3", "dropout_1"]  # each keeps its shape
    assert present in search_targets(project)
    assert check_dimension(project, Dimension(present, values=[True, False])) == [True, False]
    assert current_value(project, present) is True
    assert target_label(present) == "dropout_1 · Present"
    kept = apply_values(project, {present: True})
    assert kept.graph.edges == project.graph.edges
    dense = dense_id(project)
    left_out = apply_values(project, {present: False, layer_target("dropout_1", "rate"): 0.2})
    assert "dropout_1" not in left_out.graph.ids() and current_value(left_out, present) is False
    assert left_out.graph.outputs_of(dense) == ["dense_2"]
    assert analyze(left_out.graph).ok and "dropout_1" in project.graph.ids()


def test_a_layer_that_changes_the_shape_cannot_be_left_out(project):
    space = SearchSettings(dimensions=[Dimension(presence_target("conv2d_1"),
                                                 values=[True, False])])
    assert problems(project, space) == [
        "conv2d_1 cannot be left out of the model: it changes the shape from 28 × 28 × 1 to "
        "28 × 28 × 32."]
    with pytest.raises(SearchSpaceError, match="input_1 cannot be left out"):
        param_for(project, presence_target("input_1"))


def test_a_marked_block_s_repeats_are_a_dimension_each_count_checked_to_build(project):
    project.graph.blocks = {"block_1": ["conv2d_2", "max_pooling2d_2"]}
    repeats = repeats_target("block_1")
    assert repeats == search_targets(project)[-1] and target_label(repeats) == "block_1 · Repeats"
    assert current_value(project, repeats) == 1
    # 14 × 14 pooled to 7, 3, then 1 × 1: a fourth copy has nothing left to pool
    assert check_dimension(project, Dimension(repeats, values=[0, 1, 2, 3])) == [0, 1, 2, 3]
    message = ("block_1 cannot be in the model 4 times: copy 4's max_pooling2d_2: ")
    with pytest.raises(SearchSpaceError, match=message):
        check_dimension(project, Dimension(repeats, values=[1, 4]))
    # a sampled range may draw every whole number in it, so every one is checked
    space = SearchSettings(dimensions=[Dimension(repeats, low=1, high=5, count=2)],
                           strategy="random", trials=4)
    assert problems(project, space)[0].startswith("block_1 cannot be in the model 4 times")
    trial = apply_values(project, {repeats: 3, layer_target("conv2d_2", "filters"): 16})
    analysis = analyze(trial.graph)
    assert analysis.nodes["flatten_1"].output_shape == (64,)  # 1 × 1 × 64 from conv2d_3
    assert [analysis.nodes[i].output_shape for i in ("conv2d_2", "conv2d_4", "conv2d_5")] == [
        (14, 14, 16), (7, 7, 16), (3, 3, 16)]  # every copy takes the trial's filters
    assert project.graph.ids().count("conv2d_4") == 0  # the project itself is untouched


def test_a_block_and_the_presence_of_its_layer_go_together(project):
    project.graph.blocks = {"block_1": ["conv2d_3"]}
    trial = apply_values(project, {repeats_target("block_1"): 3,
                                   presence_target("conv2d_3"): False})
    assert trial.graph.inputs_of("flatten_1") == ["max_pooling2d_2"]
    assert not any(n.startswith("conv2d_") and n > "conv2d_2" for n in trial.graph.ids())
    with pytest.raises(SearchSpaceError, match="The block 'block_9' is no longer in the model"):
        param_for(project, repeats_target("block_9"))


def test_the_search_is_saved_with_the_project(project, tmp_path):
    project.search = SearchSettings(
        dimensions=[Dimension(LR, low=1e-4, high=1e-1, scale="log", count=4),
                    Dimension(training_target("optimizer"), values=["adam", "sgd"])],
        strategy="bayes", trials=12, seed=3, workers=2, metric="val_loss", startup_trials=5)
    path = tmp_path / "p.studio.json"
    save_project(project, path)
    assert load_project(path).search == project.search
    assert project.search.minimize


def test_what_a_search_can_vary_is_one_fact_for_the_menus_and_the_checks():
    assert [p.name for p in searchable_params("Dense")][:2] == ["units", "activation"]
    assert searchable_params("Reshape") == []  # its target shape is a shape: not searchable
    project = demo_project()
    project.graph.nodes.append(Node("reshape_1", "Reshape", {"target_shape": [-1]}))
    with pytest.raises(SearchSpaceError, match="target shape cannot be searched"):
        param_for(project, layer_target("reshape_1", "target_shape"))


def test_a_size_per_axis_is_searched_one_size_for_every_axis(project, tmp_path):
    kernel = layer_target("conv2d_1", "kernel_size")
    project.graph.node("conv2d_1").params["kernel_size"] = [5, 1]
    assert current_value(project, kernel) == [5, 1]
    assert start_value(project, kernel) == 5  # the search starts from the largest axis
    assert check_dimension(project, Dimension(kernel, low=1, high=5, count=3)) == [1, 3, 5]
    assert check_dimension(project, Dimension(kernel, values=[3, 5])) == [3, 5]
    with pytest.raises(SearchSpaceError, match="Kernel size must be at most 64, not 65"):
        check_dimension(project, Dimension(kernel, values=[65]))
    changed = apply_values(project, {kernel: 3})
    assert current_value(changed, kernel) == 3
    project.search = SearchSettings(dimensions=[Dimension(kernel, values=[1, 3])])
    assert problems(project, project.search) == []
    save_project(project, tmp_path / "p.studio.json")
    assert load_project(tmp_path / "p.studio.json").graph.node("conv2d_1").params[
        "kernel_size"] == [5, 1]


def test_a_search_optimises_what_its_task_logs_its_default_first():
    classifier = demo_project()
    assert metric_choices(classifier) == ("val_accuracy", "val_loss", "accuracy", "loss")
    detector = from_template("small_detector")
    assert metric_choices(detector) == ("val_map50", "val_map", "val_loss", "loss")
    assert detector.search.metric == "val_accuracy" and search_metric(detector) == "val_map50"
    snapshot = searched_project(detector)
    assert snapshot.search.metric == "val_map50" and not snapshot.search.minimize
    assert detector.search.metric == "val_accuracy"  # the project itself is left alone
    detector.search.metric = "val_loss"
    assert search_metric(detector) == "val_loss" and searched_project(detector).search.minimize
    regressor = Project(dataset=DatasetChoice(task="regression"))
    assert metric_choices(regressor) == ("val_mae", "val_loss", "mae", "loss")
    assert searched_project(regressor).search.minimize  # an error, like a loss
